//! The `--sync`/`--no-sync` flags of the write commands, the remote they name, how each
//! command publishes, and running one sync from a command (failures map to exit 2).

use crate::command_error::CommandError;
use crate::context::Context;
use crate::store::Store;

use super::Patience;
use super::SyncReport;

/// How a write goes through the remote when it syncs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum Publishing {
    /// Sync before deciding (the rule decides on the fleet's latest state), publish after,
    /// and count only once the remote accepted it: claim, release.
    #[default]
    Verdict,
    /// No sync before deciding; publish after: heartbeat (its ref has one writer, so when
    /// the branch is contended the heartbeat ref is pushed alone).
    Publish,
    /// An append that needs no verdict: no sync before, write locally, then publish if the
    /// remote lets it soon; otherwise the next sync publishes it (a notice says so, exit 0
    /// unless --sync was given explicitly): record-event, register-batch.
    Append,
}

/// The `--sync`/`--no-sync` pair shared by claim, release, heartbeat, record-event and
/// register-batch.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Sync")]
pub(crate) struct SyncFlags {
    /// Publish through the remote: done only once the remote accepted the push (default
    /// when the repository sets agent-coord.sync=true)
    #[arg(long, conflicts_with = "no_sync")]
    sync: bool,
    /// Write locally only, even if agent-coord.sync=true
    #[arg(long)]
    no_sync: bool,
    /// The remote for --sync [default: agent-coord.remote, else origin]
    #[arg(long = "sync-remote", value_name = "NAME")]
    remote: Option<String>,
    /// How this command publishes (set by the command, not a flag).
    #[arg(skip)]
    pub(crate) publishing: Publishing,
}

impl SyncFlags {
    /// Returns these flags for a write that only publishes (no sync before deciding).
    pub(crate) fn for_publishing(&self) -> Self {
        SyncFlags {
            publishing: Publishing::Publish,
            ..self.clone()
        }
    }

    /// Returns these flags for an append (write locally, publish now or later).
    pub(crate) fn for_appending(&self) -> Self {
        SyncFlags {
            publishing: Publishing::Append,
            ..self.clone()
        }
    }

    /// Reports whether `--sync` was given (not just configured).
    pub(crate) fn explicit(&self) -> bool {
        self.sync
    }

    /// Returns the remote to sync with, or `None` for a local-only write.
    pub(crate) fn remote(&self, store: &Store) -> Option<String> {
        let configured = store
            .repo
            .config_snapshot()
            .boolean("agent-coord.sync")
            .unwrap_or(false);
        (self.sync || (configured && !self.no_sync))
            .then(|| self.remote.clone().unwrap_or_else(|| default_remote(store)))
    }
}

/// Returns the remote named by `agent-coord.remote`, else `origin`.
pub(crate) fn default_remote(store: &Store) -> String {
    store
        .repo
        .config_snapshot()
        .string("agent-coord.remote")
        .map(|s| s.to_string())
        .unwrap_or_else(|| "origin".to_owned())
}

/// Runs a sync with the full time budget, mapping failures to exit 2.
pub(crate) fn run_sync(
    cx: &Context,
    store: &Store,
    remote: &str,
) -> Result<SyncReport, CommandError> {
    run_sync_within(cx, store, remote, Patience::full())
}

/// Runs a sync within `patience`, mapping failures to exit 2.
pub(crate) fn run_sync_within(
    cx: &Context,
    store: &Store,
    remote: &str,
    patience: Patience,
) -> Result<SyncReport, CommandError> {
    super::sync(store, remote, &|| cx.rule_ctx(store), patience).map_err(|e| {
        // A failed sync may still have merged, and lost a claim: say so with the error.
        let lines: Vec<String> = std::iter::once(e.to_string())
            .chain(store.take_warnings())
            .collect();
        CommandError::operational(lines.join("\n"))
    })
}
