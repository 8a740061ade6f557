//! The dashboard model: what `GET /api/dashboard` returns and what the web page renders.
//!
//! Every type here is plain data (serde, camelCase JSON), derived by [`super::build`] from
//! the coordination records and a clock. The server computes it; the browser renders it;
//! both link this crate, so they agree by construction.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::Serialize;

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

/// The state of an operator row, in the reference's precedence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RowState {
    /// Explicitly waiting on something (a dependency, a decision).
    Blocked,
    /// Live holder, but no non-QA transition for 15 minutes.
    Wedged,
    /// The holder's heartbeat is dead, or an active claim/lane has no holder.
    Dead,
    /// The holder's heartbeat is past its expiry, within 4 × ttl.
    Stale,
    /// Paused (token or context limit, explicit pause).
    Paused,
    /// Live holder making progress.
    Running,
    /// Queued work with no holder.
    Ready,
    /// Nothing conclusive.
    Unknown,
    /// Terminal (done, merged, closed, released, …).
    Done,
}

impl RowState {
    /// Every state, in sort order.
    pub const ALL: [RowState; 9] = [
        RowState::Blocked,
        RowState::Wedged,
        RowState::Dead,
        RowState::Stale,
        RowState::Paused,
        RowState::Running,
        RowState::Ready,
        RowState::Unknown,
        RowState::Done,
    ];

    /// The lowercase name used in JSON and the UI.
    pub fn as_str(self) -> &'static str {
        match self {
            RowState::Blocked => "blocked",
            RowState::Wedged => "wedged",
            RowState::Dead => "dead",
            RowState::Stale => "stale",
            RowState::Paused => "paused",
            RowState::Running => "running",
            RowState::Ready => "ready",
            RowState::Unknown => "unknown",
            RowState::Done => "done",
        }
    }

    /// Reads a state name (`as_str` back).
    pub fn parse(name: &str) -> Option<RowState> {
        RowState::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// The state's position in [`RowState::ALL`] (its sort rank).
    pub fn index(self) -> usize {
        self as usize
    }

    /// Reports whether the row is active work (gets missing-field warnings).
    pub fn is_active(self) -> bool {
        matches!(
            self,
            RowState::Running
                | RowState::Wedged
                | RowState::Paused
                | RowState::Blocked
                | RowState::Stale
                | RowState::Dead
        )
    }
}

/// Scheduling state of a work item (reference §1.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scheduling {
    /// A live or stale heartbeat is on the item.
    InProcess,
    /// A claim, heartbeat or batch signal exists, but no live/stale holder.
    StartedNotProcessing,
    /// No active scheduling signal.
    ReadyForBatch,
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

/// QA validation status of a pull request (reference §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QaStatus {
    /// No QA event.
    Missing,
    /// QA asked for.
    Requested,
    /// QA running.
    InProgress,
    /// QA passed.
    Passed,
    /// QA failed.
    Failed,
    /// A QA event whose status says nothing recognisable.
    Unknown,
}

impl QaStatus {
    /// The lowercase name used in JSON and the UI.
    pub fn as_str(self) -> &'static str {
        match self {
            QaStatus::Missing => "missing",
            QaStatus::Requested => "requested",
            QaStatus::InProgress => "in_progress",
            QaStatus::Passed => "passed",
            QaStatus::Failed => "failed",
            QaStatus::Unknown => "unknown",
        }
    }

    /// Reports whether this is a gap the overview lists.
    pub fn is_gap(self) -> bool {
        matches!(
            self,
            QaStatus::Missing | QaStatus::Failed | QaStatus::Requested | QaStatus::InProgress
        )
    }
}

/// One QA record: a pull request in one batch lane (or unbatched).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct QaItem {
    /// `<repo>#<n>[:<batch>:<lane>]`.
    pub id: String,
    /// `owner/repo`.
    pub repo: String,
    /// The PR number.
    pub target: String,
    /// The batch signal this QA record belongs to.
    pub batch_id: Option<String>,
    /// The lane within that batch.
    pub lane: Option<String>,
    /// The status.
    pub status: QaStatus,
    /// A sentence for the UI.
    pub detail: String,
    /// The latest QA event's time.
    pub at: Option<String>,
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

/// One operator row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Row {
    /// `target:<repo>#<target>` or `lane:<batch>:<lane>`.
    pub id: String,
    /// `owner/repo`, or `UNKNOWN` for a lane whose repository is not recorded.
    pub repo: String,
    /// The issue or PR number (empty for a lane row without targets).
    pub target: String,
    /// `pull_request`, `issue` or `unknown`.
    pub kind: String,
    /// The manifest target title, if any.
    pub title: Option<String>,
    /// The derived state.
    pub state: RowState,
    /// Scheduling state.
    pub scheduling: Scheduling,
    /// Holder heartbeat liveness (`live`, `stale`, `dead`, `unknown`), `None` without one.
    pub liveness: Option<String>,
    /// The holder (claim agent, else heartbeat agent, else lane owner).
    pub agent: Option<String>,
    /// The holder's machine.
    pub machine: Option<String>,
    /// The app/runner surface (`codex`, `claude`, …).
    pub host: Option<String>,
    /// The chat thread handle.
    pub thread: Option<String>,
    /// The human operator.
    pub operator: Option<String>,
    /// The work branch.
    pub branch: Option<String>,
    /// A pull-request URL (http/https only).
    pub pr_url: Option<String>,
    /// The first batch this item is scheduled in.
    pub batch_id: Option<String>,
    /// The lane within that batch.
    pub lane: Option<String>,
    /// The newest lifecycle status (heartbeat, claim, lane or event).
    pub status: Option<String>,
    /// Lanes this row waits on.
    pub blocked_on: Vec<String>,
    /// Why it needs an operator, if it does.
    pub attention: Option<AttentionKind>,
    /// The newest activity time.
    pub last_activity: Option<String>,
    /// The latest event message (free text, never used to classify).
    pub message: Option<String>,
    /// QA status, for pull requests.
    pub qa: Option<QaStatus>,
    /// Coordination warnings about this row.
    pub warnings: Vec<String>,
}

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
    pub liveness: String,
    /// A sentence explaining a block or wait.
    pub note: Option<String>,
    /// The row backing this lane, for links.
    pub row_id: Option<String>,
}

impl Row {
    /// Reports whether the row belongs in the overview's active work: a live holder
    /// (running, wedged, stale or paused).
    pub fn is_active_work(&self) -> bool {
        matches!(
            self.state,
            RowState::Running | RowState::Wedged | RowState::Stale | RowState::Paused
        )
    }

    /// Reports whether the row belongs in the overview's recoverable work: a dead holder,
    /// or started work nobody is processing.
    pub fn is_recoverable(&self) -> bool {
        self.state == RowState::Dead
            || (self.scheduling == Scheduling::StartedNotProcessing && self.state != RowState::Done)
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
        match self {
            BatchTier::Blocked => "blocked",
            BatchTier::Stuck => "stuck",
            BatchTier::Running => "running",
            BatchTier::Archive => "archive",
        }
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
        match self {
            ControlStatus::Running => "running",
            ControlStatus::StopRequested => "stop_requested",
            ControlStatus::Stopped => "stopped",
        }
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
    pub repairs: Vec<String>,
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

/// One agent on a machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentView {
    /// Agent id.
    pub id: String,
    /// `live`, `stale`, `dead`, `unknown` or `no-heartbeat`.
    pub liveness: String,
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

/// Severity of a health item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Needs fixing now (nothing emits this today).
    Critical,
    /// A telemetry bug.
    Warning,
    /// Worth knowing.
    Info,
}

impl Severity {
    /// The lowercase name used in JSON and the UI.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// One health signal occurrence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HealthItem {
    /// Stable id.
    pub id: String,
    /// `H1` … `H9` (reference §2.1), or `R1` for an unreadable record.
    pub signal: String,
    /// The exact title.
    pub title: String,
    /// Severity.
    pub severity: Severity,
    /// `machine`, `heartbeat`, `claim`, `batch`, `history` or `state`.
    pub category: String,
    /// The detail sentence.
    pub detail: String,
    /// Agent concerned.
    pub agent: Option<String>,
    /// Batch concerned.
    pub batch_id: Option<String>,
    /// Lane concerned.
    pub lane: Option<String>,
    /// Repository concerned.
    pub repo: Option<String>,
    /// Target concerned.
    pub target: Option<String>,
}

/// One entry of an item's custody timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineEntry {
    /// `acquired`, `renewed`, `taken_over`, `released`, `unknown_ownership`, `phase`,
    /// `liveness` or `event`.
    pub kind: String,
    /// What the UI prints.
    pub label: String,
    /// When (ISO), if known.
    pub at: Option<String>,
    /// The agent.
    pub agent: Option<String>,
    /// The previous holder, for takeovers.
    pub previous_agent: Option<String>,
    /// The machine.
    pub machine: Option<String>,
    /// The batch.
    pub batch_id: Option<String>,
    /// Status/phase text.
    pub status: Option<String>,
}

/// `GET /api/items/{owner}/{repo}/{target}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemDetail {
    /// `owner/repo`.
    pub repo: String,
    /// Target.
    pub target: String,
    /// The operator row, if the item is coordinated.
    pub row: Option<Row>,
    /// The current holder (active claim, else live/stale heartbeat).
    pub holder: Option<String>,
    /// Custody chain, oldest first.
    pub timeline: Vec<TimelineEntry>,
    /// Model version this was derived at.
    pub version: String,
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
}

#[cfg(test)]
mod tests {
    use super::*;

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
            id: "target:a/b#1".into(),
            repo: "a/b".into(),
            target: "1".into(),
            kind: "unknown".into(),
            title: None,
            state,
            scheduling,
            liveness: None,
            agent: None,
            machine: None,
            host: None,
            thread: None,
            operator: None,
            branch: None,
            pr_url: None,
            batch_id: None,
            lane: None,
            status: None,
            blocked_on: vec![],
            attention: None,
            last_activity: None,
            message: None,
            qa: None,
            warnings: vec![],
        };
        assert!(row(RowState::Wedged, Scheduling::InProcess).is_active_work());
        assert!(!row(RowState::Dead, Scheduling::InProcess).is_active_work());
        assert!(row(RowState::Dead, Scheduling::InProcess).is_recoverable());
        assert!(row(RowState::Blocked, Scheduling::StartedNotProcessing).is_recoverable());
        assert!(!row(RowState::Done, Scheduling::StartedNotProcessing).is_recoverable());
        assert!(!row(RowState::Running, Scheduling::InProcess).is_recoverable());
    }
}
