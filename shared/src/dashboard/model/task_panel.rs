//! A coordinator task as the item page shows it: where the task is, what it waits on, its
//! per-head evidence as a checklist, its lane runs and what they cost, and a vendor's
//! usage-limit pause.

use serde::Deserialize;
use serde::Serialize;

use super::attention::AttentionKind;
use super::spend::SpendView;
use crate::coordinator::lane::usage::CostSource;
use crate::coordinator::task::LaneVerdict;
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
    /// The machine that runs it (absent in checkpoints from before machines were recorded).
    #[serde(default)]
    pub machine: Option<String>,
    /// The machines that ran it before, oldest first (each a takeover from a dead machine).
    #[serde(default)]
    pub previous_machines: Vec<String>,
    /// What the task waits for now, in words (`None` while it just goes on).
    #[serde(default)]
    pub waits_for: Option<String>,
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
    /// The lane runs the checkpoint keeps, oldest first.
    #[serde(default)]
    pub lane_runs: Vec<LaneRunView>,
    /// Runs folded out of the checkpoint by its bound (counted in `spend`, not listed).
    #[serde(default)]
    pub earlier_runs: u64,
    /// Every run's tokens and cost, the folded ones included.
    #[serde(default)]
    pub spend: SpendView,
    /// A vendor's usage limit holding the task's next lane until it resets.
    #[serde(default)]
    pub paused: Option<PauseView>,
    /// The operator's commands that apply to the task now, to copy into a terminal.
    #[serde(default)]
    pub operator_commands: Vec<OperatorCommand>,
}

/// One lane run of a task as the item page lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LaneRunView {
    /// The run's number among all the task's runs, from 1 (stable when older runs are
    /// folded out of the checkpoint): `GET …/lane-runs/{n}/transcript` names it.
    pub n: u64,
    /// The lane slot (`grok:implementer`, …).
    pub slot: String,
    /// The phase that ran it.
    pub phase: Phase,
    /// The implementer round it belongs to.
    pub round: u32,
    /// The vendor CLI, when the lane reported usage.
    pub vendor: Option<String>,
    /// The model, when reported.
    pub model: Option<String>,
    /// What its answer meant.
    pub verdict: LaneVerdict,
    /// When it started (the model's timestamp format).
    pub started_at: String,
    /// When it ended.
    pub ended_at: String,
    /// Wall seconds from start to end, when both times read.
    pub duration_secs: Option<i64>,
    /// Its exit code (`None`: a signal, or it did not start).
    pub exit_code: Option<i32>,
    /// It was killed at its timeout or for silence.
    pub timed_out: bool,
    /// All four token counts.
    pub tokens: u64,
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Tokens read from or written to the prompt cache.
    pub cache_tokens: u64,
    /// Its cost in US dollars, when known.
    pub cost_usd: Option<f64>,
    /// Where the cost comes from.
    pub cost_source: CostSource,
    /// The machine holding its transcript, when the lane wrote one.
    pub transcript_machine: Option<String>,
    /// The transcript's size when the lane ended.
    pub transcript_bytes: Option<u64>,
}

/// A vendor's usage-limit pause of a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PauseView {
    /// The vendor whose limit was reached.
    pub vendor: String,
    /// When the limit resets (the model's timestamp format when it reads, else as written).
    pub until: String,
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

/// One operator command the item page offers to copy (`agent-coord coordinate …`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OperatorCommand {
    /// What it does, for the button.
    pub label: String,
    /// The command line.
    pub command: String,
}
