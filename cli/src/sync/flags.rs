//! The `--sync`/`--no-sync` flags of the write commands, the remote they name, and running
//! one sync from a command (failures map to exit 2).

use crate::command_error::CommandError;
use crate::context::Context;
use crate::store::Store;

use super::SyncReport;

/// The `--sync`/`--no-sync` pair shared by claim, release and heartbeat.
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
    /// Set for writes that only publish (a heartbeat): no sync before deciding.
    #[arg(skip)]
    pub(crate) publish_only: bool,
}

impl SyncFlags {
    /// Returns these flags for a write that only publishes (no sync before deciding).
    pub(crate) fn for_publishing(&self) -> Self {
        SyncFlags {
            publish_only: true,
            ..self.clone()
        }
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

/// Runs a sync, mapping failures to exit 2.
pub(crate) fn run_sync(
    cx: &Context,
    store: &Store,
    remote: &str,
) -> Result<SyncReport, CommandError> {
    super::sync(store, remote, &|| cx.rule_ctx(store))
        .map_err(|e| CommandError::operational(e.to_string()))
}
