//! `agent-coord coordinate`: the issue coordinator's I/O side (DESIGN §6). The rules live in
//! `agent_coord_shared::coordinator`; this module runs processes, git and GitHub for them.
//!
//! - `tick`: one bounded tick of one worker (lock, preflight, discovery, admission);
//! - `phases`: advancing one task through the phases this release drives;
//! - `effects`: GitHub effects as activity records, discovered before they are posted;
//! - `ledger`: the coordination-state writes (claims, checkpoints, manifest, events);
//! - `preflight`, `accounts`: the checks before any work, tokens and secrets;
//! - `process`, `git`: the bounded runner and the worktree operations.

mod accounts;
mod effects;
pub(crate) mod git;
mod ledger;
mod phases;
pub(crate) mod preflight;
pub(crate) mod process;
pub(crate) mod tick;

/// The environment variable naming a point where the coordinator kills itself with SIGKILL
/// (`intent:accept`, `posted:accept`, `committed`, `pushed`, `intent:pull_request`,
/// `posted:pull_request`, `lane-finished`): end-to-end tests use it to prove that a crash
/// at every effect boundary resumes without a second comment, branch, pull request or model.
const KILL_AT: &str = "AGENT_COORD_TEST_KILL_AT";

/// Dies here, uncleanly, if the test hook names this point.
pub(crate) fn failpoint(point: &str) {
    if std::env::var(KILL_AT).is_ok_and(|p| p == point) {
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
    }
}
