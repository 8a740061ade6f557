//! What `coordinate --json` prints when it runs no ticks: a notice that nothing is
//! configured, or `--check`'s preflight per worker.

use serde::Serialize;

/// `coordinate --json` without ticks.
#[derive(Debug, Clone, Serialize)]
pub struct CoordinateReport {
    /// One entry per worker checked (none when nothing is configured).
    pub workers: Vec<WorkerCheck>,
    /// Why nothing ran, when nothing is configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub notice: Option<String>,
}

/// One worker's preflight.
#[derive(Debug, Clone, Serialize)]
pub struct WorkerCheck {
    /// The worker's name.
    pub worker: String,
    /// Whether every check passed.
    pub ok: bool,
    /// The checks, in the order they ran.
    pub checks: Vec<PreflightCheck>,
}

/// One preflight check.
#[derive(Debug, Clone, Serialize)]
pub struct PreflightCheck {
    /// What was checked.
    pub check: String,
    /// Whether it passed.
    pub ok: bool,
    /// What was found.
    pub detail: String,
}
