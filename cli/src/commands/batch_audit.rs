//! `agent-coord batch-audit`: is every lane of a batch provably finished?

use agent_coord_shared::rules::audit;

use crate::command_error::CommandError;
use crate::context::Context;
use crate::output::Report;
use crate::past;

/// Audit a batch's lifecycle evidence: exit 0 complete, 1 incomplete, 2 unknown
///
/// A lane is complete when its event trail holds a valid claim.acquired and a valid
/// terminal signal (claim.released or lane_closed) from authorized agents.
#[derive(clap::Args, Debug)]
pub(crate) struct BatchAuditArgs {
    /// The batch to audit
    #[arg(long, value_name = "ID")]
    batch_id: String,
    /// Audit the batch as it stood at a commit or time (RFC 3339): the last state commit at
    /// or before it
    #[arg(long, value_name = "COMMIT|TIME")]
    at: Option<String>,
    /// Print the audit as JSON
    #[arg(long)]
    json: bool,
}

pub(crate) fn cmd_batch_audit(cx: &Context, args: &BatchAuditArgs) -> Result<Report, CommandError> {
    let (store, mut notices) = cx.open_store(false)?;
    let read = past::reading(&store, args.at.as_deref(), cx.now(), &mut notices)?;
    let result = audit::audit(&read.snap, &args.batch_id);
    let mut report = if args.json {
        Report::json(&result)
    } else {
        Report::text(result.to_text())
    };
    report.exit = result.verdict.exit_code();
    Ok(report.with_stderr(notices))
}
