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

/// Why a prompt or draft cannot become a batch plan. The messages are the reference
/// dashboard's, worded for the operator who pasted or reviewed the plan.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    /// A posted draft is not a JSON object.
    #[error("Batch plan details must be an object.")]
    NotAnObject,
    /// A posted `launch_prompt` is not a string.
    #[error("launch_prompt must be a string.")]
    PromptNotAString,
    /// An item's `#N` reference names another number or kind than its GitHub URL.
    #[error("Target reference {label} #{number} does not match GitHub URL {url}.")]
    ReferenceContradictsUrl {
        /// The reference's kind as written (`PR`, `Issue`, …).
        label: String,
        /// The reference's number.
        number: String,
        /// The item's GitHub URL.
        url: String,
    },
    /// One number is listed under two different explicit repositories.
    #[error("Cannot import multi-repo prompt with duplicate PR/issue number #{number}.")]
    DuplicateNumber {
        /// The number listed twice.
        number: String,
    },
    /// The draft has no batch id.
    #[error("Batch id is required.")]
    MissingBatchId,
    /// The batch id is not a safe path segment.
    #[error("Batch id must use only letters, numbers, dot, underscore, and hyphen.")]
    UnsafeBatchId {
        /// The rejected id.
        id: String,
    },
    /// The draft has no objective.
    #[error("Objective is required.")]
    MissingObjective,
    /// The draft has no launch prompt.
    #[error("Coordination prompt is required.")]
    MissingPrompt,
    /// The launch prompt names another batch than the draft.
    #[error("Coordination prompt batch id {prompt_id} does not match batch plan id {plan_id}.")]
    BatchIdMismatch {
        /// The batch id the prompt names.
        prompt_id: String,
        /// The draft's batch id.
        plan_id: String,
    },
    /// The draft has no targets.
    #[error("At least one target is required.")]
    NoTargets,
    /// Neither the plan nor every target names a repository.
    #[error("Repo is required unless every target includes a repo.")]
    MissingRepo,
    /// A repository is not `owner/repo`.
    #[error("Repository {repo} is not a valid owner/repo.")]
    InvalidRepo {
        /// The rejected repository.
        repo: String,
    },
    /// One target number is listed under two repositories (lane targets are numbers only).
    #[error(
        "Target {target} appears in multiple repos, but lane targets are number-only. Split this into separate batch plans."
    )]
    TargetInManyRepos {
        /// The ambiguous target number.
        target: String,
    },
    /// The draft has no lanes.
    #[error("At least one lane is required.")]
    NoLanes,
    /// A lane has no targets.
    #[error("Lane {lane} must include at least one target.")]
    EmptyLane {
        /// The lane's name.
        lane: String,
    },
    /// A lane names a target the plan does not list.
    #[error("Lane {lane} references target {target} not listed in batch plan targets.")]
    UnlistedLaneTarget {
        /// The lane's name.
        lane: String,
        /// The unlisted target.
        target: String,
    },
    /// The manifest built from the draft is one the CLI would refuse.
    #[error(transparent)]
    Manifest(#[from] crate::rules::batch::ManifestError),
}

#[cfg(test)]
mod tests;
