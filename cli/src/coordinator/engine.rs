//! What a tick works with while it advances tasks: the [`Engine`] (configuration, the two
//! GitHub clients, the ledger, the secrets and what the tick observed), and [`Halt`], why a
//! task stops advancing. The tick (`tick`) builds one per worker; the phases (`phases`) and
//! the effects (`effects`) act through it.

use std::sync::atomic::AtomicBool;

use agent_coord_shared::coordinator::config::CoordinatorConfig;
use agent_coord_shared::coordinator::config::WorkerConfig;
use agent_coord_shared::coordinator::controls::Controls;
use serde::Serialize;

use super::accounts::Secrets;
use super::ledger::Ledger;
use super::preflight::Ready;
use super::setup::Setup;
use crate::command_error::CommandError;
use crate::github::GitHub;
use crate::process::token::Token;

/// Why a task stops advancing in this tick.
pub(super) enum Halt {
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
pub(super) struct Engine<'a> {
    /// What the configuration binds the worker to.
    pub(super) setup: Setup<'a>,
    pub(super) ledger: Ledger<'a>,
    pub(super) gh: GitHub,
    pub(super) login: String,
    /// The review account: the formal approval only.
    pub(super) review_gh: GitHub,
    pub(super) review_login: String,
    pub(super) token: Token,
    pub(super) secrets: Secrets,
    pub(super) observations: Vec<Observation>,
    /// The tasks (repository, issue) that found every lane slot they could take in use in
    /// this tick: a waiting tick starts them again when a slot frees.
    pub(super) slot_waiters: Vec<(String, u64)>,
    /// The issues assigned to the worker as this tick knew them (for the report).
    pub(super) assigned: std::collections::BTreeSet<(String, u64)>,
    /// The operator's holds (pauses, drains) as the tick read them after its sync.
    pub(super) controls: Controls,
    pub(super) stop: &'a AtomicBool,
}

impl<'a> Engine<'a> {
    /// Builds the engine of one tick of `worker_id` (configured as `worker`) from its passed
    /// preflight.
    pub(super) fn new(
        config: &'a CoordinatorConfig,
        worker_id: &str,
        worker: &'a WorkerConfig,
        ledger: Ledger<'a>,
        ready: Ready,
        stop: &'a AtomicBool,
    ) -> Engine<'a> {
        Engine {
            setup: Setup {
                config,
                worker_id: worker_id.to_owned(),
                worker,
            },
            ledger,
            gh: ready.worker_gh,
            login: ready.worker_login,
            review_gh: ready.review_gh,
            review_login: ready.review_login,
            token: ready.worker_token,
            secrets: ready.secrets,
            observations: Vec::new(),
            slot_waiters: Vec::new(),
            assigned: std::collections::BTreeSet::new(),
            controls: Controls::default(),
            stop,
        }
    }
}

impl Engine<'_> {
    pub(super) fn observe(&mut self, task: Option<&str>, message: impl Into<String>) {
        self.observations.push(Observation {
            task: task.map(str::to_owned),
            message: self.secrets.scrub(&message.into()),
            error: false,
        });
    }

    pub(super) fn error(&mut self, task: Option<&str>, message: impl Into<String>) {
        self.observations.push(Observation {
            task: task.map(str::to_owned),
            message: self.secrets.scrub(&message.into()),
            error: true,
        });
    }
}
