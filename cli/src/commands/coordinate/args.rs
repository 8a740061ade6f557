//! The flags the operator's `coordinate` subcommands share, and the configuration they read.

use std::path::PathBuf;

use agent_coord_shared::coordinator::config::CoordinatorConfig;

use crate::command_error::CommandError;
use crate::coordinator::config_file::config_path;
use crate::coordinator::config_file::load;

/// Flags every operator command has.
#[derive(clap::Args, Debug)]
pub(crate) struct Common {
    /// The coordinator configuration file
    #[arg(long, value_name = "PATH", env = "AGENT_COORD_COORDINATOR_CONFIG")]
    pub(crate) config: Option<PathBuf>,
    /// Print the result as JSON
    #[arg(long)]
    pub(crate) json: bool,
}

/// Flags of the commands that write (who runs them goes on record).
#[derive(clap::Args, Debug)]
pub(crate) struct Who {
    /// Who runs this, as recorded in the event (default: $AGENT_COORD_OPERATOR, else $USER)
    #[arg(long, value_name = "NAME")]
    pub(crate) operator: Option<String>,
    /// Why, recorded with it
    #[arg(long)]
    pub(crate) reason: Option<String>,
}

/// The configuration, when there is one (`None`: no file; an explicit `--config` that is
/// missing is a usage error).
pub(crate) fn configuration(common: &Common) -> Result<Option<CoordinatorConfig>, CommandError> {
    let at = config_path(common.config.as_deref())?;
    load(&at)
}
