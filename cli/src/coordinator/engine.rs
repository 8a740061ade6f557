//! What a tick works with while it advances tasks: the [`Engine`] (configuration, the two
//! GitHub clients, the ledger, the secrets and what the tick observed), and [`Halt`], why a
//! task stops advancing. The tick (`tick`) builds one per worker; the phases (`phases`) and
//! the effects (`effects`) act through it.

use std::sync::atomic::AtomicBool;

use agent_coord_shared::coordinator::config;
use agent_coord_shared::coordinator::config::CoordinatorConfig;
use agent_coord_shared::coordinator::config::WorkerConfig;
use agent_coord_shared::ids::RepoSlug;
use serde::Serialize;

use super::accounts::Secrets;
use super::ledger::Ledger;
use super::preflight::Ready;
use crate::command_error::CommandError;
use crate::github::GitHub;
use crate::process::token::Token;

/// Why a task stops advancing in this tick.
pub(crate) enum Halt {
    /// Try again on the next tick (GitHub unreachable, a transient refusal).
    Retry { task: String, message: String },
    /// The state could not be read or written.
    Fatal(CommandError),
}

impl From<CommandError> for Halt {
    fn from(e: CommandError) -> Self {
        Halt::Fatal(e)
    }
}

/// Something a tick saw or did, for the operator (its `--json` form has these keys, in
/// this order).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Observation {
    pub(crate) task: Option<String>,
    pub(crate) message: String,
    pub(crate) error: bool,
}

/// What a tick works with.
pub(crate) struct Engine<'a> {
    pub(crate) config: &'a CoordinatorConfig,
    pub(crate) worker_id: String,
    pub(crate) worker: &'a WorkerConfig,
    pub(crate) ledger: Ledger<'a>,
    pub(crate) gh: GitHub,
    pub(crate) login: String,
    /// The review account: the formal approval only.
    pub(crate) review_gh: GitHub,
    pub(crate) review_login: String,
    pub(crate) token: Token,
    pub(crate) secrets: Secrets,
    pub(crate) observations: Vec<Observation>,
    pub(crate) stop: &'a AtomicBool,
}

impl<'a> Engine<'a> {
    /// Builds the engine of one tick of `worker_id` (configured as `worker`) from its passed
    /// preflight.
    pub(crate) fn new(
        config: &'a CoordinatorConfig,
        worker_id: &str,
        worker: &'a WorkerConfig,
        ledger: Ledger<'a>,
        ready: Ready,
        stop: &'a AtomicBool,
    ) -> Engine<'a> {
        Engine {
            config,
            worker_id: worker_id.to_owned(),
            worker,
            ledger,
            gh: ready.worker_gh,
            login: ready.worker_login,
            review_gh: ready.review_gh,
            review_login: ready.review_login,
            token: ready.worker_token,
            secrets: ready.secrets,
            observations: Vec::new(),
            stop,
        }
    }
}

impl Engine<'_> {
    pub(crate) fn observe(&mut self, task: Option<&str>, message: impl Into<String>) {
        self.observations.push(Observation {
            task: task.map(str::to_owned),
            message: self.secrets.scrub(&message.into()),
            error: false,
        });
    }

    /// The configuration of a target repository of this worker.
    pub(crate) fn repo_config(&self, repo: &str) -> Option<&'_ config::RepoConfig> {
        let slug: RepoSlug = repo.parse().ok()?;
        self.worker.repositories.get(&slug)
    }

    /// The execution identity a task on `repo` would pin now.
    pub(crate) fn pin_of(&self, repo: &str) -> Option<config::PinnedIdentity> {
        let slug: RepoSlug = repo.parse().ok()?;
        config::pin(self.config, &self.worker_id, &slug)
    }

    pub(crate) fn error(&mut self, task: Option<&str>, message: impl Into<String>) {
        self.observations.push(Observation {
            task: task.map(str::to_owned),
            message: self.secrets.scrub(&message.into()),
            error: true,
        });
    }
}
