//! `agent-coord coordinate`: the issue coordinator's I/O side (DESIGN §6). The rules live in
//! `agent_coord_shared::coordinator`; this module runs processes, git and GitHub for them.
//!
//! - `tick`: one bounded tick of one worker (lock, preflight, discovery, admission);
//! - `engine`: what the tick and its phases work with (`Engine`), and why a task halts;
//! - `setup`: what the configuration binds the worker to (worktrees, pins, signer, argv);
//! - `phases`: advancing one task through every phase, from acceptance to the human merge;
//! - `effects`: GitHub effects as activity records, discovered before they are posted;
//! - `ledger`: the coordination-state writes (claims, checkpoints, manifest, events);
//! - `config_file`: where the configuration file is and how it is read (also the server's);
//! - `preflight`, `accounts`: the checks before any work, tokens and secrets;
//! - `desk`: the operator's writes (cancel, retry, pause, resume, drain);
//! - `lifecycle`: removing ended tasks' worktrees after `worktree_ttl`;
//! - `notify`: running `notify_argv` for the checkpoints that deserve it;
//! - `pauses`: the worker's vendor pauses after a usage limit (a file on its machine);
//! - `git`: the worktree operations;
//! - `webhook`: the `--listen` listener whose GitHub deliveries wake tasks between polls.
//!
//! Every process it starts runs through `crate::process`'s bounded runner.

pub(crate) mod accounts;
pub(crate) mod config_file;
pub(crate) mod desk;
mod effects;
mod engine;
pub(crate) mod git;
mod ledger;
pub(crate) mod lifecycle;
mod notify;
mod pauses;
mod phases;
pub(crate) mod preflight;
pub(crate) mod running;
mod setup;
pub(crate) mod tick;
pub(crate) mod webhook;

/// The environment variable naming a point where the coordinator kills itself with SIGKILL
/// (`intent:<kind>` and `posted:<kind>` around every GitHub effect — `accept`,
/// `pull_request`, `gate_review`, `approve`, `ready_comment`, `ready`, `ack`, … — and
/// `committed`, `pushed`, `lane-finished`, `before-leave-draft`, `before-notify`): end-to-end tests use it to
/// prove that a crash at every effect boundary resumes without a second comment, review,
/// branch, pull request, Ready mutation or model.
const KILL_AT: &str = "AGENT_COORD_TEST_KILL_AT";

/// Dies here, uncleanly, if the test hook names this point.
pub(crate) fn failpoint(point: &str) {
    if std::env::var(KILL_AT).is_ok_and(|p| p == point) {
        let _ = nix::sys::signal::raise(nix::sys::signal::Signal::SIGKILL);
    }
}
