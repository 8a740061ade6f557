//! A coordinator task as the item page shows it: where the task is, what it waits on, and
//! its per-head evidence as a checklist.

use serde::Deserialize;
use serde::Serialize;

use super::attention::AttentionKind;
use crate::coordinator::task::Phase;
use crate::coordinator::task::TaskState;

/// The item page's "Coordinator" panel: one task checkpoint
/// (`coordinator/tasks/<owner>/<repo>/<issue>.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CoordinatorPanel {
    /// The task id.
    pub task_id: String,
    /// The worker session that owns the task.
    pub worker: String,
    /// The issue title.
    pub title: String,
    /// Active, waiting, failed, uncertain or done.
    pub state: TaskState,
    /// The current phase.
    pub phase: Phase,
    /// The phase an authorized reply resumes (while waiting).
    pub resume_phase: Option<Phase>,
    /// Why the task is in the attention queue, if it is.
    pub attention: Option<AttentionKind>,
    /// The open question or blocker (why it waits, failed or is uncertain).
    pub blocker: Option<String>,
    /// The published question or blocker comment (http(s) only).
    pub question_url: Option<String>,
    /// The draft pull request's number.
    pub pr: Option<u64>,
    /// The pull request's URL (http(s) only).
    pub pr_url: Option<String>,
    /// The latest signed head.
    pub head: Option<String>,
    /// Its first seven characters.
    pub short_head: Option<String>,
    /// How many implementers ran.
    pub rounds: u32,
    /// The head's evidence, in workflow order.
    pub checklist: Vec<ChecklistRow>,
    /// The verified human merge, once there is one.
    pub merge: Option<MergeView>,
    /// When the checkpoint last changed.
    pub updated_at: String,
}

/// One item of a head's evidence checklist.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChecklistRow {
    /// The evidence key (`checks`, `grok_quality`, …).
    pub key: String,
    /// What a person reads ("Checks on head", "Grok quality", …).
    pub label: String,
    /// Passed on exactly the task's current head.
    pub passed: bool,
    /// The short head it passed on instead, when that is another head (which counts for
    /// nothing).
    pub other_head: Option<String>,
}

/// A verified human merge.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MergeView {
    /// The merge commit.
    pub sha: String,
    /// Its first seven characters.
    pub short_sha: String,
    /// When it merged.
    pub merged_at: String,
    /// Who merged.
    pub merged_by: String,
    /// The base branch it merged into.
    pub base: String,
}
