//! `agent-coord batch-audit`: is every lane of a batch provably finished?

use agent_coord_shared::rules::audit;

use crate::command_error::CommandError;
use crate::context::Context;
use crate::output::Report;

/// Audit a batch's lifecycle evidence: exit 0 complete, 1 incomplete, 2 unknown
///
/// A lane is complete when its event trail holds a valid claim.acquired and a valid
/// terminal signal (claim.released or lane_closed) from authorized agents.
#[derive(clap::Args, Debug)]
pub(crate) struct BatchAuditArgs {
    /// The batch to audit
    #[arg(long, value_name = "ID")]
    batch_id: String,
    /// Print the audit as JSON
    #[arg(long)]
    json: bool,
}

pub(crate) fn cmd_batch_audit(cx: &Context, args: &BatchAuditArgs) -> Result<Report, CommandError> {
    let (store, notices) = cx.open_store(false)?;
    let snap = store.snapshot()?;
    let result = audit::audit(&snap, &args.batch_id);
    let mut report = if args.json {
        Report::json(&result)
    } else {
        Report::text(result.to_text())
    };
    report.exit = result.verdict.exit_code();
    Ok(report.with_stderr(notices))
}
