//! What `agent-coord lane` needs besides its pure rules (`agent_coord_shared::coordinator::lane`):
//! a streaming runner for the vendor CLI and the bounded, redacted transcript its events go to.

pub(crate) mod runner;
pub(crate) mod transcript;
