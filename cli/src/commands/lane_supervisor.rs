//! `agent-coord lane-supervisor [--detach] SPEC` (hidden): runs one coordinator lane so that
//! it outlives the coordinator that started it (`crate::lanes::supervisor`). The coordinator
//! starts it; nobody else should.

use std::path::PathBuf;

use crate::command_error::CommandError;
use crate::lanes::supervisor;
use crate::output::Report;

/// Run one coordinator lane under a detached supervisor (started by `coordinate`)
#[derive(clap::Args, Debug)]
pub(crate) struct LaneSupervisorArgs {
    /// Start the supervisor in a process group of its own, record its pid, and return
    #[arg(long)]
    detach: bool,
    /// The lane's launch file (`<stem>.launch.json` in the task's control directory)
    spec: PathBuf,
}

pub(crate) fn cmd_lane_supervisor(args: &LaneSupervisorArgs) -> Result<Report, CommandError> {
    let done = if args.detach {
        supervisor::detach(&args.spec)
    } else {
        supervisor::supervise(&args.spec)
    };
    done.map_err(CommandError::operational)?;
    Ok(Report::default())
}
