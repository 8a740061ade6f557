//! The dashboard: its model, the derivations that build it, and the launch-prompt parser.
//!
//! Everything is pure so the server and the browser share one implementation.

pub mod model;
pub mod prompt;
pub mod text;
pub mod search;
