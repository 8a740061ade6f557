//! The whole model at one version of the state: what `GET /api/dashboard` returns, its
//! headline counts, and the notice an empty state shows.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::Serialize;

use super::annotation::Annotation;
use super::attention::Attention;
use super::batches::BatchView;
use super::events::EventView;
use super::github::SourceStatus;
use super::health::HealthItem;
use super::machines::MachineView;
use super::rows::QaItem;
use super::rows::Row;
use super::slice::Slice;
use super::spend::SpendSummary;

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
    pub slice: Option<Slice>,
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
    pub annotations: Vec<Annotation>,
    /// What the coordinator tasks' lane runs cost: total, per batch, per worker, per day.
    #[serde(default, skip_serializing_if = "SpendSummary::is_empty")]
    pub spend: SpendSummary,
    /// The coordinator operators' holds in force (pauses, drains), shown on every view.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub holds: Vec<crate::coordinator::controls::Hold>,
    /// Set on a model of the past (`?at=`): the moment it shows. Such a model is read-only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub past: Option<super::PastView>,
    /// Set on a model a starting server restored from its last run while it derives the
    /// current one: what the page says about it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restored: Option<String>,
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
