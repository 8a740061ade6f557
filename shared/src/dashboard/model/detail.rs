//! A work item's detail: its row, custody timeline and coordinator task.

use serde::Deserialize;
use serde::Serialize;

use super::rows::Row;
use super::task_panel::CoordinatorPanel;
use crate::serde_name::serde_name;

/// What a custody timeline entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimelineKind {
    /// A claim was acquired.
    Acquired,
    /// The holder renewed its claim.
    Renewed,
    /// Another agent took the claim over.
    TakenOver,
    /// The claim was released.
    Released,
    /// An active claim whose acquisition is not on record.
    UnknownOwnership,
    /// A phase change.
    Phase,
    /// A run of the holder's heartbeat liveness (live, stale or dead).
    Liveness,
    /// Any other event.
    Event,
}

impl TimelineKind {
    /// The snake_case name used in JSON and the UI.
    pub fn as_str(self) -> &'static str {
        serde_name(&self)
    }
}

/// One entry of an item's custody timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineEntry {
    /// What happened.
    pub kind: TimelineKind,
    /// What the UI prints.
    pub label: String,
    /// When (ISO), if known; where a span (a phase, a liveness run) starts.
    pub at: Option<String>,
    /// Where a span ends (ISO): the next phase, a custody boundary, or the clock's reading.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
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
    /// The claim's fencing (CAS) generation, when the record names one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub generation: Option<String>,
}

impl TimelineEntry {
    /// Reports whether the entry is about the claim itself (it shows a CAS generation).
    pub fn is_claim(&self) -> bool {
        matches!(
            self.kind,
            TimelineKind::Acquired
                | TimelineKind::Renewed
                | TimelineKind::TakenOver
                | TimelineKind::Released
                | TimelineKind::UnknownOwnership
        )
    }

    /// How long a span lasted (`5m`, `2h`), when it has both ends.
    pub fn duration(&self) -> Option<String> {
        let from = crate::time::parse(self.at.as_deref()?)?;
        let until = crate::time::parse(self.until.as_deref()?)?;
        Some(crate::time::age_label(Some(from), until))
    }
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
    /// The coordinator's task for this issue, if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordinator: Option<CoordinatorPanel>,
    /// Why this coordinator task record could not be read, if it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordinator_warning: Option<String>,
    /// Model version this was derived at.
    pub version: String,
    /// The resume prompt for the item's work (absent once it is finished), composed on the
    /// server from the whole model (the page holds only a view of it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_prompt: Option<String>,
    /// The takeover command, offered only while the holder is dead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub takeover_command: Option<String>,
}

impl ItemDetail {
    /// Reports whether the state knows the item at all: it has a row, custody history, or a
    /// coordinator task (readable or not). An unknown item is a 404, not an empty page.
    pub fn is_known(&self) -> bool {
        self.row.is_some()
            || !self.timeline.is_empty()
            || self.coordinator.is_some()
            || self.coordinator_warning.is_some()
    }
}

/// The message of a 404 for an item the state does not know (the server sends it, the item
/// page recognises it to say "not found" rather than "could not load").
pub fn item_not_found(repo: &str, target: &str) -> String {
    format!("Work item {repo}#{target} is not in the coordination state.")
}
