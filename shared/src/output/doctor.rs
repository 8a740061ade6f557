//! What `doctor --json` and `doctor --stack-json` print.

use serde::Serialize;

use super::sync::SyncInfo;

/// `doctor --json`: the repository's setup and the problems found.
#[derive(Debug, Clone, Serialize)]
pub struct DoctorReport {
    /// The crate version.
    pub version: &'static str,
    /// Always `git`.
    pub backend: &'static str,
    /// The repository's path.
    pub repository: String,
    /// The state branch's ref.
    pub state_ref: String,
    /// The state branch's tip, when it exists.
    pub tip: Option<String>,
    /// How many heartbeat refs there are.
    pub heartbeat_refs: usize,
    /// The repository's remotes.
    pub remotes: Vec<String>,
    /// `local` without a remote, else `shared`.
    pub mode: &'static str,
    /// This machine's id.
    pub machine_id: String,
    /// Where the machine id came from.
    pub machine_id_source: &'static str,
    /// The session id writes are attributed to (`unset` without one).
    pub session_id: String,
    /// Where the session id came from.
    pub session_source: String,
    /// Whether every record was parsed (`--deep`).
    pub deep: bool,
    /// `ok`, or `error` when there are problems.
    pub status: &'static str,
    /// What is wrong, first one first.
    pub problems: Vec<String>,
    /// What is suspicious but not wrong.
    pub warnings: Vec<String>,
    /// How the state stands against the default remote, when there is one.
    pub sync: Option<SyncInfo>,
}

/// `doctor --stack-json`: the stack's health-check contract.
#[derive(Debug, Clone, Serialize)]
pub struct StackHealth {
    /// Always 1.
    pub schema_version: u32,
    /// Always `agent-coordination`.
    pub component: &'static str,
    /// `healthy`, `degraded` or `failed`: the worst check.
    pub status: &'static str,
    /// The checks, in the order they ran.
    pub checks: Vec<StackCheck>,
}

/// One check of `doctor --stack-json`.
#[derive(Debug, Clone, Serialize)]
pub struct StackCheck {
    /// The check's id (`repository.open`, `identity.machine`, …).
    pub id: &'static str,
    /// `healthy`, `degraded` or `failed`.
    pub status: &'static str,
    /// What was found.
    pub summary: String,
    /// Always empty: the contract's place for structured details.
    pub details: Details,
    /// What to do about it, when something is wrong.
    pub guidance: Option<String>,
}

/// The empty `details` object of a [`StackCheck`].
#[derive(Debug, Clone, Default, Serialize)]
pub struct Details {}
