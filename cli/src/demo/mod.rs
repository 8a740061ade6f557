//! Demo plumbing shared by `agent-coord demo` and `serve --demo`: a throwaway coordination
//! repository, a context with a pinned clock and machine, and the simulated fleet.
//!
//! The demos drive the ordinary commands by argv; the command tree passes its runner in
//! ([`RunArgv`]), so nothing here depends on `commands/`.

pub(crate) mod fleet;

use crate::command_error::CommandError;
use crate::context::Context;
use crate::context::Env;
use crate::context::GlobalArgs;
use crate::output::Report;
use crate::store::OpenOptions;
use crate::store::Store;

/// Runs one command line (without the program name) in a context: the outer error is a
/// malformed command line, the inner one the command's own result.
pub(crate) type RunArgv =
    fn(&Context, &[&str]) -> Result<Result<Report, CommandError>, CommandError>;

/// A context on the repository `dir` with the clock pinned at `now` and the machine id
/// `machine` (demos, the dashboard's simulated fleet, tests).
pub(crate) fn pinned_context(
    dir: &std::path::Path,
    now: agent_coord_shared::time::Instant,
    machine: &str,
) -> Result<Context, CommandError> {
    let globals = GlobalArgs {
        repo_dir: Some(dir.to_path_buf()),
        state_ref: None,
    };
    Context::new(
        globals,
        Env::pinned(&agent_coord_shared::time::format(now), machine),
    )
}

/// Creates a new coordination repository at `dir` whose writes come from `machine`.
pub(crate) fn create_repository(dir: &std::path::Path, machine: &str) -> Result<(), CommandError> {
    Store::open(OpenOptions {
        path: dir,
        create: true,
        state_ref: crate::store::DEFAULT_REF.to_owned(),
        machine_override: Some(machine.to_owned()),
        generate_machine: false,
    })?;
    Ok(())
}
