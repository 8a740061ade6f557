//! The dashboard: its model, the derivations that build it, and the launch-prompt parser.
//!
//! Everything is pure so the server and the browser share one implementation.

pub mod build;
pub mod derive;
pub mod health;
pub mod input;
pub mod machines;
pub mod model;
pub mod prompt;
pub mod search;
pub mod text;

pub use build::build;
pub mod detail;
