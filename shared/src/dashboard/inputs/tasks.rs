//! Coordinator task checkpoints as the dashboard reads them (DESIGN §6 "State"): the
//! records at `coordinator/tasks/<owner>/<repo>/<issue>.json` read as [`Task`]. Only
//! checkpoints are read; activity records are not needed.

use crate::coordinator::task::Task;
use crate::coordinator::task::TASKS_DIR;

/// A task checkpoint as the dashboard reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct TaskIn {
    /// Record path.
    pub path: String,
    /// The checkpoint.
    pub task: Task,
}

/// Reports whether `path` is a task checkpoint: `coordinator/tasks/<owner>/<repo>/<issue>.json`.
pub fn is_task_path(path: &str) -> bool {
    path.strip_prefix(TASKS_DIR)
        .and_then(|rest| rest.strip_prefix('/'))
        .and_then(|rest| rest.strip_suffix(".json"))
        .is_some_and(|rest| {
            let parts: Vec<&str> = rest.split('/').collect();
            parts.len() == 3 && parts.iter().all(|p| !p.is_empty())
        })
}

/// Why the record at a task path is not a task checkpoint.
#[derive(Debug, thiserror::Error)]
#[error("not a coordinator task record: {source}")]
pub struct TaskInvalid {
    /// What the JSON reader said (a missing or mistyped field, or not JSON at all).
    #[from]
    pub source: serde_json::Error,
}

/// Reads the task checkpoint at `path`, or says why it is not one (unknown fields are
/// fine; a missing or mistyped field is not).
pub fn parse_task(path: &str, bytes: &[u8]) -> Result<TaskIn, TaskInvalid> {
    let task = serde_json::from_slice::<Task>(bytes)?;
    Ok(TaskIn {
        path: path.to_owned(),
        task,
    })
}
