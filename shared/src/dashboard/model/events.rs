//! One event as the UI shows it.

use serde::Deserialize;
use serde::Serialize;

/// One event, as the UI shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EventView {
    /// The event id (else its path).
    pub id: String,
    /// Its type.
    pub kind: String,
    /// The batch it belongs to.
    pub batch_id: Option<String>,
    /// The lane.
    pub lane: Option<String>,
    /// The agent.
    pub agent: Option<String>,
    /// `owner/repo`.
    pub repo: Option<String>,
    /// The target.
    pub target: Option<String>,
    /// Status or phase.
    pub status: Option<String>,
    /// Free text.
    pub message: Option<String>,
    /// When.
    pub at: Option<String>,
    /// The machine that wrote it.
    pub machine: Option<String>,
}
