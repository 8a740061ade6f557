//! Where the coordinator configuration is read from and how: `--config` (for `serve`,
//! `--coordinator-config`), else `AGENT_COORD_COORDINATOR_CONFIG` (clap reads it), else
//! `$XDG_CONFIG_HOME/agent-coord/coordinator.json` (`~/.config/…`). Shared by `coordinate`
//! and the dashboard server, which reads a worker's workspace root from it.

use std::path::Path;
use std::path::PathBuf;

use agent_coord_shared::coordinator::config;
use agent_coord_shared::coordinator::config::CoordinatorConfig;

use crate::command_error::CommandError;

/// Where the configuration is read from.
#[derive(Debug, Clone)]
pub(crate) struct ConfigPath {
    /// The file.
    pub(crate) path: PathBuf,
    /// Named by a flag or `AGENT_COORD_COORDINATOR_CONFIG`: it must exist. Only the
    /// default location may be absent (no worker).
    pub(crate) explicit: bool,
}

/// The configuration's location: `explicit` when a flag (or its variable) named one, else
/// the default under `$XDG_CONFIG_HOME` or `$HOME/.config`.
pub(crate) fn config_path(explicit: Option<&Path>) -> Result<ConfigPath, CommandError> {
    if let Some(p) = explicit {
        return Ok(ConfigPath {
            path: p.to_path_buf(),
            explicit: true,
        });
    }
    let var = |n: &str| std::env::var(n).ok().filter(|v| v.starts_with('/'));
    let base = match (var("XDG_CONFIG_HOME"), var("HOME")) {
        (Some(x), _) => PathBuf::from(x),
        (None, Some(h)) => PathBuf::from(h).join(".config"),
        _ => {
            return Err(CommandError::usage(
                "cannot find the coordinator configuration; pass --config PATH",
            ))
        }
    };
    Ok(ConfigPath {
        path: base.join("agent-coord").join("coordinator.json"),
        explicit: false,
    })
}

/// Reads the configuration; `None` when the default file is absent. An explicitly named
/// file that does not exist is a usage error naming it, never a silent "no worker".
pub(crate) fn load(at: &ConfigPath) -> Result<Option<CoordinatorConfig>, CommandError> {
    let path = &at.path;
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && at.explicit => {
            return Err(CommandError::usage(format!(
                "the coordinator configuration {} does not exist (named by --config or AGENT_COORD_COORDINATOR_CONFIG)",
                path.display()
            )))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(CommandError::operational(format!(
                "cannot read {}: {e}",
                path.display()
            )))
        }
    };
    config::parse(&text)
        .map(Some)
        .map_err(|e| CommandError::usage(format!("{}: {e}", path.display())))
}
