//! The models the server answers with: derived from the refs (and GitHub's facts) under the
//! target repositories in force, cached by the tips they came from, derived on one thread,
//! and announced by version when the refs move.
//!
//! Nothing here knows HTTP beyond the error type: handlers and background tasks reach the
//! models through [`models::Models`], a handle they clone.

mod beats;
pub(crate) mod cache;
mod deriver;
pub(crate) mod models;
pub(crate) mod scope;
mod snapshot;
pub(crate) mod watcher;
