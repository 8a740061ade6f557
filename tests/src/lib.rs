//! Helpers for end-to-end tests and benchmarks that drive the built `agent-coord` binary.
#![forbid(unsafe_code)]

pub mod call;
pub mod coord;
pub mod coord_soak;
pub mod env;
pub mod fake_github;
pub mod fake_model;
pub mod fake_vendor;
pub mod fleet;
pub mod modgraph;
pub mod remote;
pub mod server;
pub mod soak;
