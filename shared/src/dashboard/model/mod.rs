//! The dashboard model: what `GET /api/dashboard` returns and what the web page renders.
//!
//! Every type here is plain data (serde, camelCase JSON), derived by [`super::build`] from
//! the coordination records and a clock. The server computes it; the browser renders it;
//! both link this crate, so they agree by construction.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::Serialize;

use crate::coordinator::task::Phase;

mod batches;
mod coordinator;
mod detail;
mod github;
mod health;
mod machines;
mod rows;

pub use batches::*;
pub use coordinator::*;
pub use detail::*;
pub use github::*;
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
    /// Set when the model was cut down for one page (`?view=`): what was left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slice: Option<crate::dashboard::slice::Slice>,
    /// How to start, when the coordination state holds nothing at all ([`SETUP_NOTICE`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<String>,
    /// How the sources besides the state branch are doing (GitHub), once one is used.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub source_status: Vec<SourceStatus>,
    /// What the saved target repositories left out, one notice per kind of record (absent
    /// when every repository is shown).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notices: Vec<String>,
    /// The saved target repositories the model is scoped to (absent: every repository).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub target_repos: Vec<String>,
    /// Operators' dismissals and snoozes, each saying whether it hides its item now.
    #[serde(default)]
    pub annotations: Vec<crate::dashboard::annotations::Annotation>,
}

/// The one notice an empty coordination state shows instead of empty boards (reference §7.1:
/// an uninitialised state root gets one setup notice and nothing else).
pub const SETUP_NOTICE: &str = "No coordination state found yet. To start, join a fleet's shared state with `agent-coord init --remote <URL>` on this machine, or let an agent claim work with `agent-coord claim --agent-id <AGENT> --repo <OWNER/REPO> --target <N>`. This page updates by itself as records arrive.";

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

/// Why a row or a coordinator task needs a person, most urgent first within each source.
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
    /// A coordinator task published a question or blocker and waits for an authorized reply.
    TaskWaitingReply,
    /// A coordinator task's lane outcome is unknown: no model starts until an operator decides.
    TaskNeedsOperator,
    /// A coordinator task's pull request is Ready and waits for a human to merge it.
    TaskAwaitingMerge,
}

impl AttentionKind {
    /// The person-facing reason.
    pub fn label(self) -> &'static str {
        match self {
            AttentionKind::BatchStopped => "Batch is stopped",
            AttentionKind::BatchStopRequested => "Batch stop is pending",
            AttentionKind::BlockedUserInput => "Waiting for operator input",
            AttentionKind::QaMissing => "QA evidence is missing or failing",
            AttentionKind::DeadHolder => "Holder is no longer live",
            AttentionKind::Wedged => "No progress for over 15 minutes",
            AttentionKind::TaskWaitingReply => "Waiting on a human reply",
            AttentionKind::TaskNeedsOperator => "Needs an operator",
            AttentionKind::TaskAwaitingMerge => "Ready, waiting for a human merge",
        }
    }

    /// 1 for the most urgent, 7 for the least. A coordinator task that waits on a person
    /// ranks with a lane waiting for operator input; a Ready pull request waiting for its
    /// merge is nothing wrong, so it comes last.
    pub fn priority(self) -> u8 {
        match self {
            AttentionKind::BatchStopped => 1,
            AttentionKind::BatchStopRequested => 2,
            AttentionKind::BlockedUserInput
            | AttentionKind::TaskWaitingReply
            | AttentionKind::TaskNeedsOperator => 3,
            AttentionKind::QaMissing => 4,
            AttentionKind::DeadHolder => 5,
            AttentionKind::Wedged => 6,
            AttentionKind::TaskAwaitingMerge => 7,
        }
    }

    /// How bad it is: a Ready pull request waiting for its merge is information, the rest
    /// are warnings.
    pub fn severity(self) -> Severity {
        match self {
            AttentionKind::TaskAwaitingMerge => Severity::Info,
            _ => Severity::Warning,
        }
    }

    /// What the entry's outside link opens (the published checkpoint or the pull request).
    pub fn link_text(self) -> &'static str {
        match self {
            AttentionKind::TaskWaitingReply => "Open the question",
            AttentionKind::TaskNeedsOperator => "Open the blocker",
            _ => "Open the pull request",
        }
    }

    /// The snake_case name used in JSON and the UI.
    pub fn as_str(self) -> &'static str {
        match self {
            AttentionKind::BatchStopped => "batch_stopped",
            AttentionKind::BatchStopRequested => "batch_stop_requested",
            AttentionKind::BlockedUserInput => "blocked_user_input",
            AttentionKind::QaMissing => "qa_missing",
            AttentionKind::DeadHolder => "dead_holder",
            AttentionKind::Wedged => "wedged",
            AttentionKind::TaskWaitingReply => "task_waiting_reply",
            AttentionKind::TaskNeedsOperator => "task_needs_operator",
            AttentionKind::TaskAwaitingMerge => "task_awaiting_merge",
        }
    }
}

/// One entry of the needs-attention queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attention {
    /// The row this is about (`target:owner/repo#N` for a coordinator task, whether or not
    /// such a row exists).
    pub row_id: String,
    /// Why.
    pub kind: AttentionKind,
    /// 1 (most urgent) … 7.
    pub priority: u8,
    /// Person-facing reason.
    pub label: String,
    /// `owner/repo#N` or `batch:lane`.
    pub subject: String,
    /// The row's (or task checkpoint's) last activity, if known.
    pub last_activity: Option<String>,
    /// What to read: a coordinator task's question or blocker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Where to act: the published question or blocker, or the pull request (http(s) only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// The phase an authorized reply resumes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_phase: Option<Phase>,
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
    fn attention_kinds_name_rank_and_weigh_themselves() {
        use AttentionKind::*;
        let all = [
            BatchStopped,
            BatchStopRequested,
            BlockedUserInput,
            QaMissing,
            DeadHolder,
            Wedged,
            TaskWaitingReply,
            TaskNeedsOperator,
            TaskAwaitingMerge,
        ];
        let ranks: Vec<u8> = all.iter().map(|k| k.priority()).collect();
        assert_eq!(ranks, [1, 2, 3, 4, 5, 6, 3, 3, 7]);
        for k in all {
            let wire = serde_json::to_value(k).expect("json");
            assert_eq!(wire.as_str(), Some(k.as_str()));
            let info = k == TaskAwaitingMerge;
            assert_eq!(k.severity() == Severity::Info, info, "{k:?}");
        }
        assert_eq!(TaskWaitingReply.link_text(), "Open the question");
        assert_eq!(TaskNeedsOperator.link_text(), "Open the blocker");
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
