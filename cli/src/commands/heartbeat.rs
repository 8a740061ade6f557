//! `agent-coord heartbeat`: say an agent is alive, what it works on, and its status.

use agent_coord_shared::ids::AgentId;
use agent_coord_shared::ids::BatchId;
use agent_coord_shared::ids::RepoSlug;
use agent_coord_shared::ids::Target;
use agent_coord_shared::output::writes::HeartbeatAnswer;
use agent_coord_shared::record::field as f;
use agent_coord_shared::rules::heartbeat;
use agent_coord_shared::rules::heartbeat::HeartbeatRequest;

use super::args::positive_ttl;
use super::args::MetadataArgs;
use crate::command_error::CommandError;
use crate::context::Context;
use crate::output::Report;
use crate::sync::SyncFlags;
use crate::transact::stderr_lines;
use crate::transact::write_synced;
use crate::transact::Written;

/// Record that an agent is alive (on this machine's heartbeat ref, not the state branch)
///
/// Without --status the status is in_progress. Supplying a repo, target, batch or branch
/// that differs from the last beat switches lanes and drops the old lane's metadata.
#[derive(clap::Args, Debug)]
pub(crate) struct HeartbeatArgs {
    /// The agent's stable id
    #[arg(long, value_name = "ID")]
    agent_id: AgentId,
    /// Repository of the current target, as OWNER/REPO
    #[arg(long, value_name = "OWNER/REPO")]
    repo: Option<RepoSlug>,
    /// Current issue or pull request
    #[arg(long, value_name = "ISSUE_OR_PR")]
    target: Option<Target>,
    /// Current batch
    #[arg(long, value_name = "ID")]
    batch_id: Option<BatchId>,
    /// Current branch
    #[arg(long, value_name = "BRANCH")]
    branch: Option<String>,
    /// Status, e.g. in_progress, blocked, ready, done (normalised; unknown values kept)
    #[arg(long, value_name = "STATUS")]
    status: Option<String>,
    /// Seconds the beat stays live
    #[arg(long, allow_negative_numbers = true, value_name = "SECONDS", default_value_t = heartbeat::DEFAULT_TTL_SECONDS)]
    ttl: i64,
    /// Print the result as JSON
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    metadata: MetadataArgs,
    #[command(flatten)]
    sync: SyncFlags,
}

pub(crate) fn cmd_heartbeat(cx: &Context, args: &HeartbeatArgs) -> Result<Report, CommandError> {
    let request = HeartbeatRequest {
        agent: args.agent_id.clone(),
        repo: args.repo.clone(),
        target: args.target.clone(),
        batch: args.batch_id.clone(),
        branch: args.branch.clone(),
        status: args.status.clone(),
        ttl_seconds: positive_ttl(args.ttl)?,
        metadata: args.metadata.to_record(),
    };
    let Written {
        done,
        notices,
        store,
        ..
    } = write_synced(cx, &args.sync.for_publishing(), |snap, ctx| {
        heartbeat::decide(snap, &request, ctx)
    })?;
    let record = &done.plan.outcome.record;
    let updated = f::UPDATED_AT.text(record).unwrap_or_default();
    let report = if args.json {
        Report::json(&HeartbeatAnswer {
            result: "recorded",
            heartbeat_ref: store.heartbeat_ref(),
            lane_change: done.plan.outcome.lane_change,
            heartbeat: record,
        })
    } else {
        Report::line(format!("heartbeat {} {updated}", args.agent_id))
    };
    Ok(report.with_stderr(stderr_lines(notices, &done.plan)))
}
