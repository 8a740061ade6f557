//! Agents grouped by machine.

use serde::Deserialize;
use serde::Serialize;

use super::rows::LivenessView;

/// One agent on a machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentView {
    /// Agent id.
    pub id: String,
    /// Its heartbeat's liveness, `no-heartbeat` without one.
    pub liveness: LivenessView,
    /// The heartbeat's `updated_at`.
    pub heartbeat_at: Option<String>,
    /// The heartbeat status / phase.
    pub status: Option<String>,
    /// Host family.
    pub host: Option<String>,
    /// Thread handle.
    pub thread: Option<String>,
    /// Active claims held.
    pub claims: usize,
    /// Current work, `owner/repo#N`.
    pub work: Option<String>,
    /// The row id of the current work.
    pub work_row: Option<String>,
    /// Current batch.
    pub batch_id: Option<String>,
}

/// Agents grouped by machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MachineView {
    /// Machine id, or `unassigned`.
    pub id: String,
    /// Whether the id was inferred from a legacy `m<N>` agent-id token.
    pub inferred: bool,
    /// Agents, live first.
    pub agents: Vec<AgentView>,
    /// Live agents.
    pub live: usize,
    /// Stale agents.
    pub stale: usize,
    /// Dead or heartbeat-less agents.
    pub dead: usize,
    /// Active claims held by its agents.
    pub claims: usize,
}
