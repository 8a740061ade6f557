//! The dashboard model: what `GET /api/dashboard` returns and what the web page renders.
//!
//! Every type here is plain data (serde, camelCase JSON), derived by [`super::build`] from
//! the coordination records and a clock. The server computes it; the browser renders it;
//! both link this crate, so they agree by construction.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::Serialize;

mod batches;
mod detail;
mod health;
mod machines;
mod rows;

pub use batches::*;
pub use detail::*;
pub use health::*;
pub use machines::*;
pub use rows::*;

/// The whole dashboard at one version of the state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DashboardModel {
    /// Identifies the refs the model was derived from; changes whenever any ref moves.
    pub version: String,
    /// The clock reading the model was derived at (ISO-8601 UTC).
    pub generated_at: String,
    /// Headline counts for the overview.
    pub counts: Counts,
    /// Work that needs an operator, most urgent first.
    pub attention: Vec<Attention>,
    /// One operator row per work item (repo + target), or per batch lane without targets.
    pub rows: Vec<Row>,
    /// Saved (manifest) and inferred batches.
    pub batches: Vec<BatchView>,
    /// Agents grouped by machine.
    pub machines: Vec<MachineView>,
    /// Telemetry health signals (the contract's "Dashboard Health Signals").
    pub health: Vec<HealthItem>,
    /// QA validation status of every open pull-request item.
    pub qa: Vec<QaItem>,
    /// The newest events across all batches (at most [`RECENT_EVENTS`]).
    pub recent_events: Vec<EventView>,
    /// Problems reading the state itself (malformed records); the rest still renders.
    pub warnings: Vec<String>,
}

/// How many events [`DashboardModel::recent_events`] carries.
pub const RECENT_EVENTS: usize = 40;

/// Headline counts.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    /// Operator rows by state name (every state present, zeros included).
    pub rows_by_state: BTreeMap<String, usize>,
    /// All operator rows.
    pub rows: usize,
    /// Items in the needs-attention queue.
    pub needs_attention: usize,
    /// Batches (manifest and inferred).
    pub batches: usize,
    /// Batches that need an operator (blocked tier).
    pub batches_blocked: usize,
    /// Batches needing repair: inferred, prompt missing, or stop requested/stopped.
    pub batch_repairs: usize,
    /// Agents seen anywhere.
    pub agents: usize,
    /// Agents whose heartbeat is live.
    pub agents_live: usize,
    /// Machines seen.
    pub machines: usize,
    /// Health items of warning severity.
    pub health_warnings: usize,
    /// Health items of info severity.
    pub health_notices: usize,
    /// QA items that are missing, failed, requested or in progress.
    pub qa_gaps: usize,
    /// Records that could not be parsed.
    pub malformed: usize,
}

/// Why a row needs an operator, in priority order (first is most urgent).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttentionKind {
    /// The batch was stopped.
    BatchStopped,
    /// A stop was requested for the batch and is pending.
    BatchStopRequested,
    /// The lane waits for operator input.
    BlockedUserInput,
    /// QA failed, or is missing for work that is ready for QA.
    QaMissing,
    /// The holder's heartbeat is dead.
    DeadHolder,
    /// No progress for over 15 minutes.
    Wedged,
}

impl AttentionKind {
    /// The operator-facing reason.
    pub fn label(self) -> &'static str {
        match self {
            AttentionKind::BatchStopped => "Batch is stopped",
            AttentionKind::BatchStopRequested => "Batch stop is pending",
            AttentionKind::BlockedUserInput => "Waiting for operator input",
            AttentionKind::QaMissing => "QA evidence is missing or failing",
            AttentionKind::DeadHolder => "Holder is no longer live",
            AttentionKind::Wedged => "No progress for over 15 minutes",
        }
    }

    /// 1 for the most urgent.
    pub fn priority(self) -> u8 {
        self as u8 + 1
    }
}

/// One entry of the needs-attention queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attention {
    /// The row this is about.
    pub row_id: String,
    /// Why.
    pub kind: AttentionKind,
    /// 1 (most urgent) … 6.
    pub priority: u8,
    /// Operator-facing reason.
    pub label: String,
    /// `owner/repo#N` or `batch:lane`.
    pub subject: String,
    /// The row's last activity, if known.
    pub last_activity: Option<String>,
}

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dashboard::fixtures;

    #[test]
    fn state_names_and_ranks_round_trip() {
        for (i, s) in RowState::ALL.into_iter().enumerate() {
            assert_eq!(s.index(), i);
            assert_eq!(RowState::parse(s.as_str()), Some(s));
        }
        assert_eq!(RowState::parse("bogus"), None);
        assert_eq!(ControlStatus::StopRequested.as_str(), "stop_requested");
        assert_eq!(BatchTier::Archive.as_str(), "archive");
        assert_eq!(Severity::Info.as_str(), "info");
    }

    #[test]
    fn active_and_recoverable_work() {
        let row = |state, scheduling| Row {
            kind: "unknown".into(),
            state,
            scheduling,
            ..fixtures::row("a/b", "1")
        };
        assert!(row(RowState::Wedged, Scheduling::InProcess).is_active_work());
        assert!(!row(RowState::Dead, Scheduling::InProcess).is_active_work());
        assert!(row(RowState::Dead, Scheduling::InProcess).is_recoverable());
        assert!(row(RowState::Blocked, Scheduling::StartedNotProcessing).is_recoverable());
        assert!(!row(RowState::Done, Scheduling::StartedNotProcessing).is_recoverable());
        assert!(!row(RowState::Running, Scheduling::InProcess).is_recoverable());
    }
}
