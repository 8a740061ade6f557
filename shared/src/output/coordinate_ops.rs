//! What the operator's `coordinate` commands print with `--json`: `tasks`, `cancel`,
//! `retry`, and the holds (`pause`, `resume`, `drain`). `explain` prints
//! [`crate::coordinator::explain::Explanation`] as it is.

use serde::Serialize;

use crate::coordinator::controls::Hold;
use crate::coordinator::task::Phase;
use crate::coordinator::task::TaskState;

/// `coordinate tasks --json`.
#[derive(Debug, Clone, Serialize)]
pub struct TasksReport {
    /// Every task (of `--worker`, when given), in path order.
    pub tasks: Vec<TaskLine>,
    /// The operator's holds in force.
    pub holds: Vec<Hold>,
    /// Task records that could not be read (path: why).
    pub unreadable: Vec<String>,
}

/// One task as `coordinate tasks` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct TaskLine {
    /// The task id.
    pub task_id: String,
    /// `owner/repo#N`.
    pub issue: String,
    /// The worker.
    pub worker: String,
    /// The machine that runs it.
    pub machine: Option<String>,
    /// The phase.
    pub phase: Phase,
    /// The state.
    pub state: TaskState,
    /// What it waits for now, in words (none while it just goes on, or once it is over).
    pub waits_for: Option<String>,
    /// Seconds since it was admitted.
    pub age_seconds: Option<i64>,
    /// How many implementers ran.
    pub rounds: u32,
    /// Lane runs, all told.
    pub runs: u64,
    /// What they cost (USD, the priced runs).
    pub cost_usd: f64,
    /// The pull request.
    pub pr_url: Option<String>,
    /// Bytes its worktree and control folder take on this machine (none when they are on
    /// another machine or not known).
    pub disk_bytes: Option<u64>,
}

/// `coordinate cancel|retry --json`.
#[derive(Debug, Clone, Serialize)]
pub struct TaskChange {
    /// `cancel` or `retry`.
    pub action: &'static str,
    /// The task id.
    pub task_id: String,
    /// Its state now.
    pub state: TaskState,
    /// Its phase now.
    pub phase: Phase,
    /// Who ran the command.
    pub by: String,
    /// What happened besides the record (lanes stopped, the comment, where it goes on).
    pub notes: Vec<String>,
}

/// `coordinate pause|resume|drain --json`.
#[derive(Debug, Clone, Serialize)]
pub struct HoldChange {
    /// `pause`, `resume` or `drain`.
    pub action: &'static str,
    /// The hold set (pause, drain).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub set: Option<Hold>,
    /// The holds lifted or replaced.
    pub lifted: Vec<Hold>,
    /// The holds in force now.
    pub holds: Vec<Hold>,
}
