//! What `agent-coord lane` needs besides its pure rules (`agent_coord_shared::coordinator::lane`):
//! a streaming runner for the vendor CLI and the bounded, redacted transcript its events go to.

pub(crate) mod runner;
pub(crate) mod transcript;

/// The variable through which the coordinator names a lane's transcript file: `agent-coord
/// lane` writes there when `--transcript` is not given, and the coordinator watches it grow
/// (a lane whose transcript grows is not stalled).
pub(crate) const TRANSCRIPT_ENV: &str = "AGENT_COORD_LANE_TRANSCRIPT";
