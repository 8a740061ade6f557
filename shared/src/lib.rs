//! Pure coordination rules for agent-coord.
//!
//! Everything here is a function of records and a clock: no files, no git, no network.
//! The `cli` crate reads snapshots from git, calls these rules and commits what they
//! return; the dashboard (later) renders the same model in the browser.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod coordinator;
pub mod dashboard;
#[cfg(any(test, feature = "fuzzing"))]
pub mod fuzz_checks;
pub mod git_porcelain;
pub mod ids;
pub mod manifest;
pub mod names;
pub mod output;
pub mod record;
pub mod repair;
pub mod rules;
pub mod snapshot;
pub mod time;
pub mod transfer;
