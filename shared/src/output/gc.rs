//! What `gc --json` and `gc --machines --json` print.

use serde::Serialize;

use crate::rules::gc::machines::Silent;
use crate::rules::gc::Action;
use crate::rules::gc::Policy;
use crate::time;
use crate::time::Instant;

/// `gc --json`.
#[derive(Debug, Clone, Serialize)]
pub struct GcReport<'a> {
    /// `dry-run` or `execute`.
    pub mode: &'static str,
    /// The retention windows applied.
    pub policy: &'a Policy,
    /// The families selected.
    pub prefixes: &'a [&'a str],
    /// The planned (or executed) actions.
    pub actions: &'a [Action],
    /// The epoch line of a compaction, when one was started.
    pub epoch: Option<String>,
}

/// `gc --machines --json`.
#[derive(Debug, Clone, Serialize)]
pub struct MachinesReport<'a> {
    /// `dry-run` or `apply`.
    pub mode: &'static str,
    /// The retention period as given.
    pub older_than: &'a str,
    /// This machine, whose ref never goes.
    pub own_machine: &'a str,
    /// The remote pruned too, when there is one.
    pub remote: Option<&'a str>,
    /// One row per silent machine.
    pub machines: Vec<PrunedMachine<'a>>,
}

/// One silent machine and what became of its refs.
#[derive(Debug, Clone, Serialize)]
pub struct PrunedMachine<'a> {
    /// The machine id.
    pub machine: &'a str,
    /// Its last sign of life.
    pub last_seen: String,
    /// How long it has been silent.
    pub silent_seconds: i64,
    /// Every ref here that holds its heartbeats.
    pub refs: &'a [String],
    /// The remote's ref, when the remote has one.
    pub remote_ref: Option<&'a str>,
    /// Whether it was pruned (or would be, in a dry run).
    pub pruned: bool,
    /// Why it was kept, when it was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kept: Option<&'a str>,
}

impl<'a> PrunedMachine<'a> {
    /// Returns the row of `silent` at `now`; `kept` is `None` when it was pruned.
    pub fn new(
        silent: &'a Silent,
        now: Instant,
        remote_ref: Option<&'a str>,
        kept: Option<&'a str>,
    ) -> Self {
        PrunedMachine {
            machine: &silent.machine,
            last_seen: time::format(silent.last_seen),
            silent_seconds: (now - silent.last_seen).num_seconds(),
            refs: &silent.refs,
            remote_ref,
            pruned: kept.is_none(),
            kept,
        }
    }
}
