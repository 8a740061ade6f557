//! Diagnostic logs through `tracing`, to stderr, and off unless asked for: `-v` logs this
//! program's debug events (each served request among them), `-vv` everything at trace
//! level, and `RUST_LOG` (an env-filter directive) replaces either. Without both, nothing
//! is installed, so stderr carries only the command's own notices.

use tracing_subscriber::EnvFilter;

/// Installs the stderr logger for `verbose` (the count of `-v`) or `RUST_LOG`, if either
/// asks for logs.
pub(crate) fn init(verbose: u8) {
    let filter = match (std::env::var_os("RUST_LOG"), verbose) {
        (Some(_), _) => EnvFilter::from_default_env(),
        (None, 0) => return,
        (None, 1) => EnvFilter::new("agent_coord=debug,tower_http=debug"),
        (None, _) => EnvFilter::new("trace"),
    };
    // A second install (a command run from inside another) keeps the first.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}
