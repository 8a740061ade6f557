//! Batch manifests from the operator's side: the `$pr-batch` launch prompt parsed into a
//! batch plan draft ([`parse`], reference dashboard §5.2), and a draft validated into the
//! manifest record that gets stored ([`validate`], reference dashboard §5.3).
//!
//! The browser runs [`parse_launch_prompt`] to preview a pasted prompt; the server runs it
//! again on import, so what was previewed is what gets saved. The dashboard's health
//! signals H6/H7 parse a stored manifest's prompt the same way.

use serde::Deserialize;
use serde::Serialize;

pub mod parse;
pub mod validate;

pub use parse::parse_launch_prompt;
pub use parse::suggest_batch_id;
pub use validate::draft_from_json;
pub use validate::import_request;
pub use validate::is_safe_batch_id;
pub use validate::validate_draft;

/// A target of a batch plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DraftTarget {
    /// `pull_request`, `issue` or `unknown`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The number.
    pub target: String,
    /// The GitHub URL, when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// A title (the item's `Context:` line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Its repository when it differs from the plan's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
}

/// A lane of a batch plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DraftLane {
    /// Lane name.
    pub name: String,
    /// Owning agent (`unassigned` until someone takes it).
    pub owner: String,
    /// Target numbers.
    pub targets: Vec<String>,
    /// Dependencies.
    #[serde(default)]
    pub depends_on: Vec<String>,
    /// Lane status.
    pub status: String,
}

/// An item deliberately left out of the batch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DraftReservation {
    /// `pull_request`, `issue` or `unknown`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The number.
    pub target: String,
    /// Why (the line's text).
    pub reason: String,
    /// Its repository when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
}

/// A batch plan before it is saved.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BatchDraft {
    /// Batch id (from `Batch id:`, else a suggestion).
    pub batch_id: String,
    /// The single repository, if there is exactly one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repo: Option<String>,
    /// `Batch objective:`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub objective: Option<String>,
    /// Targets.
    #[serde(default)]
    pub targets: Vec<DraftTarget>,
    /// Lanes.
    #[serde(default)]
    pub lanes: Vec<DraftLane>,
    /// Reservations.
    #[serde(default)]
    pub reservations: Vec<DraftReservation>,
    /// Creation time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// The creating machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_by_machine: Option<String>,
    /// The full prompt text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch_prompt: Option<String>,
}

/// Why a prompt or draft cannot become a batch plan. The message is the operator's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct PromptError(pub String);

pub(crate) fn err(msg: impl Into<String>) -> PromptError {
    PromptError(msg.into())
}

#[cfg(test)]
mod tests;
