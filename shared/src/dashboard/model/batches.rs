//! Batch views: lanes, tier, control, audit and QA counts, repairs; and a batch's detail.

use serde::Deserialize;
use serde::Serialize;

use super::events::EventView;
use super::health::HealthItem;
use super::rows::LivenessView;
use super::rows::Row;
use super::rows::RowState;
use crate::serde_name::serde_name;

/// A batch lane.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LaneView {
    /// Lane name.
    pub name: String,
    /// Owning agent.
    pub owner: Option<String>,
    /// Targets (issue/PR numbers).
    pub targets: Vec<String>,
    /// Declared dependencies (`batch:lane`, `lane` or `owner/repo#N`).
    pub depends_on: Vec<String>,
    /// Dependencies that are not complete yet.
    pub blocked_on: Vec<String>,
    /// The lane status (the owner's heartbeat status when it applies).
    pub status: String,
    /// The lane's derived state.
    pub state: RowState,
    /// Owner heartbeat liveness, `no-heartbeat` without one.
    pub liveness: LivenessView,
    /// A sentence explaining a block or wait.
    pub note: Option<String>,
    /// The row backing this lane, for links.
    pub row_id: Option<String>,
}

/// What a batch needs repaired (shown on the batch and counted on the overview).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Repair {
    /// The batch was inferred: save a plan.
    BatchPlanMissing,
    /// The plan has no launch prompt.
    PromptMissing,
    /// A stop was requested.
    StopRequested,
    /// The batch was stopped.
    Stopped,
}

impl Repair {
    /// The snake_case name used in JSON and the UI.
    pub fn as_str(self) -> &'static str {
        serde_name(&self)
    }
}

/// Where a batch came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchSource {
    /// A saved manifest (`batches/<id>.json`).
    Manifest,
    /// Inferred from claims and heartbeats that name a batch with no manifest.
    Inferred,
}

/// How urgent a batch is (reference §1.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BatchTier {
    /// Needs a decision.
    Blocked,
    /// A lane may be forgotten.
    Stuck,
    /// Lanes moving.
    Running,
    /// Every lane done.
    Archive,
}

impl BatchTier {
    /// The lowercase name used in JSON and the UI.
    pub fn as_str(self) -> &'static str {
        serde_name(&self)
    }
}

/// A batch's stop control.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ControlStatus {
    /// No stop event.
    Running,
    /// A stop was requested.
    StopRequested,
    /// The batch was stopped.
    Stopped,
}

impl ControlStatus {
    /// The snake_case name used in JSON and the UI.
    pub fn as_str(self) -> &'static str {
        serde_name(&self)
    }
}

/// Lane completion counts (the batch-audit view).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditCounts {
    /// Lanes.
    pub lanes: usize,
    /// Lanes done.
    pub done: usize,
    /// Lanes closed by a `lane_closed` closeout.
    pub closed: usize,
    /// Lanes running (running, wedged, stale, paused).
    pub active: usize,
    /// Lanes blocked.
    pub blocked: usize,
    /// Lanes dead.
    pub dead: usize,
}

/// QA counts for one batch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QaCounts {
    /// QA records.
    pub total: usize,
    /// Without a QA event.
    pub missing: usize,
    /// Requested.
    pub requested: usize,
    /// In progress.
    pub in_progress: usize,
    /// Passed.
    pub passed: usize,
    /// Failed.
    pub failed: usize,
    /// Unknown.
    pub unknown: usize,
}

/// One batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchView {
    /// Batch id.
    pub id: String,
    /// Manifest or inferred.
    pub source: BatchSource,
    /// `batches/<id>.json`, or `inferred-batches/<owner>__<repo>/<id>.json`.
    pub path: String,
    /// `owner/repo`, if single-repository.
    pub repo: Option<String>,
    /// The objective.
    pub objective: Option<String>,
    /// A short title: the objective's first sentence (≤ 68 chars), else the id.
    pub title: String,
    /// Creation time.
    pub created_at: Option<String>,
    /// The machine that created it.
    pub created_by_machine: Option<String>,
    /// The saved `$pr-batch` launch prompt.
    pub launch_prompt: Option<String>,
    /// Lanes.
    pub lanes: Vec<LaneView>,
    /// Urgency tier.
    pub tier: BatchTier,
    /// Stop control.
    pub control: ControlStatus,
    /// When the newest stop request was made.
    pub stop_requested_at: Option<String>,
    /// Events recorded for the batch.
    pub event_count: usize,
    /// The newest event time.
    pub last_event_at: Option<String>,
    /// Lane counts.
    pub audit: AuditCounts,
    /// QA counts.
    pub qa: QaCounts,
    /// Repairs needed: `batch_plan_missing`, `prompt_missing`, `stop_requested`, `stopped`.
    pub repairs: Vec<Repair>,
}

/// `GET /api/batches/{id}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchDetail {
    /// The batch.
    pub batch: BatchView,
    /// Its events, newest first.
    pub events: Vec<EventView>,
    /// Operator rows scheduled in it.
    pub rows: Vec<Row>,
    /// Its health items.
    pub health: Vec<HealthItem>,
    /// Model version this was derived at.
    pub version: String,
    /// Events older than the history window left out (0 with `?history=full`).
    #[serde(default)]
    pub omitted_events: usize,
    /// Says what the history window left out and how to get it, when it left anything out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history_notice: Option<String>,
}
