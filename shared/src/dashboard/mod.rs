//! The dashboard: its model and the derivations that build it.
//!
//! Everything is pure so the server and the browser share one implementation.

pub mod annotations;
pub mod build;
pub mod commands;
pub mod coordinator;
pub mod custody;
pub mod derive;
pub mod detail;
pub mod find;
#[cfg(any(test, feature = "fixtures"))]
#[doc(hidden)]
pub mod fixtures;
pub mod freshness;
pub mod github;
pub mod health;
pub mod history;
pub mod input;
pub mod machines;
pub mod model;
pub mod prompt;
pub mod scope;
pub mod search;
pub mod slice;
pub mod sources;
pub mod text;
pub mod writes;

pub use build::build;
