//! Operator rows: a work item's state, scheduling, liveness and QA records.

use serde::Deserialize;
use serde::Serialize;

use super::attention::AttentionKind;
use crate::rules::liveness::Liveness;
use crate::serde_name::serde_name;

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
    /// Moved to history: terminal and idle for over a day, or a dead holder idle for over a
    /// day with no pull request that may still be open (reference `archived_view`).
    Archived,
}

impl RowState {
    /// Every state, in sort order.
    pub const ALL: [RowState; 10] = [
        RowState::Blocked,
        RowState::Wedged,
        RowState::Dead,
        RowState::Stale,
        RowState::Paused,
        RowState::Running,
        RowState::Ready,
        RowState::Unknown,
        RowState::Done,
        RowState::Archived,
    ];

    /// The lowercase name used in JSON and the UI.
    pub fn as_str(self) -> &'static str {
        serde_name(&self)
    }

    /// Reads a state name (`as_str` back).
    pub fn parse(name: &str) -> Option<RowState> {
        RowState::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// The state's position in [`RowState::ALL`] (its sort rank).
    pub fn index(self) -> usize {
        self as usize
    }

    /// Reports whether the row is finished business: done, or moved to history.
    pub fn is_terminal(self) -> bool {
        matches!(self, RowState::Done | RowState::Archived)
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
        serde_name(&self)
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
    /// Holder heartbeat liveness (never `no-heartbeat`), `None` without one.
    pub liveness: Option<LivenessView>,
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
    /// What GitHub says about the item, once GitHub answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub github: Option<super::github::GithubView>,
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
            || (self.scheduling == Scheduling::StartedNotProcessing && !self.state.is_terminal())
    }
}

/// A heartbeat's liveness as the dashboard shows it (`live`, `stale`, `dead`, `unknown`),
/// or `no-heartbeat` where a lane or agent has none.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LivenessView {
    /// Before `expires_at`.
    Live,
    /// Past `expires_at`, within the stale window.
    Stale,
    /// Timestamps missing or unparseable.
    Unknown,
    /// Past the stale window.
    Dead,
    /// No heartbeat at all.
    NoHeartbeat,
}

impl LivenessView {
    /// The name used in JSON and the UI.
    pub fn as_str(self) -> &'static str {
        serde_name(&self)
    }

    /// The view of a heartbeat's liveness, `no-heartbeat` without one.
    pub fn of(liveness: Option<Liveness>) -> LivenessView {
        match liveness {
            Some(Liveness::Live) => LivenessView::Live,
            Some(Liveness::Stale) => LivenessView::Stale,
            Some(Liveness::Unknown) => LivenessView::Unknown,
            Some(Liveness::Dead) => LivenessView::Dead,
            None => LivenessView::NoHeartbeat,
        }
    }
}
