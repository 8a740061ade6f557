//! `agent-coord claim`: take (or renew) ownership of an issue or pull request.

use agent_coord_shared::ids::AgentId;
use agent_coord_shared::ids::BatchId;
use agent_coord_shared::ids::RepoSlug;
use agent_coord_shared::ids::Target;
use agent_coord_shared::output::writes::ClaimAnswer;
use agent_coord_shared::record::Claim;
use agent_coord_shared::rules::claim;
use agent_coord_shared::rules::claim::ClaimKind;
use agent_coord_shared::rules::claim::ClaimRequest;
use agent_coord_shared::snapshot::Snapshot;

use super::args::positive_ttl;
use super::args::MetadataArgs;
use crate::command_error::CommandError;
use crate::command_error::ErrorKind;
use crate::context::Context;
use crate::output::Report;
use crate::sync::SyncFlags;
use crate::transact::stderr_lines;
use crate::transact::write_synced;
use crate::transact::Written;

/// Claim an issue or pull request for an agent
///
/// Refused with exit 3 (CLAIM_REFUSED) while another agent holds it and its heartbeat is
/// live or stale; a dead holder, or an expired claim whose holder never beat, is taken
/// over. The same agent claiming again on the same lane renews the claim.
#[derive(clap::Args, Debug)]
pub(crate) struct ClaimArgs {
    /// The claiming agent's stable id
    #[arg(long, value_name = "ID")]
    agent_id: AgentId,
    /// Repository that owns the target, as OWNER/REPO
    #[arg(long, value_name = "OWNER/REPO")]
    repo: RepoSlug,
    /// Issue or pull request number (or another repo-scoped id)
    #[arg(long, value_name = "ISSUE_OR_PR")]
    target: Target,
    /// Batch this work belongs to
    #[arg(long, value_name = "ID")]
    batch_id: Option<BatchId>,
    /// Feature branch of the work
    #[arg(long, value_name = "BRANCH")]
    branch: Option<String>,
    /// Seconds until the claim expires without renewal
    #[arg(long, allow_negative_numbers = true, value_name = "SECONDS", default_value_t = claim::DEFAULT_TTL_SECONDS)]
    ttl: i64,
    /// Print the result as JSON
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    metadata: MetadataArgs,
    #[command(flatten)]
    sync: SyncFlags,
}

pub(crate) fn cmd_claim(cx: &Context, args: &ClaimArgs) -> Result<Report, CommandError> {
    let request = ClaimRequest {
        agent: args.agent_id.clone(),
        repo: args.repo.clone(),
        target: args.target.clone(),
        batch: args.batch_id.clone(),
        branch: args.branch.clone(),
        ttl_seconds: positive_ttl(args.ttl)?,
        metadata: args.metadata.to_record(),
    };
    let Written {
        done,
        mut notices,
        synced,
        store,
    } = write_synced(cx, &args.sync, |snap, ctx| {
        claim::decide(snap, &request, ctx)
    })?;
    let outcome = &done.plan.outcome;
    if let Some(report) = &synced {
        // The claim stands only if it is still ours in the state the remote accepted, however
        // that state came about (this process's merge, or another sync that ran meanwhile).
        let published: Option<Claim> = store.snapshot()?.read_as(&outcome.path)?;
        let holder = published.as_ref().and_then(Claim::active_holder);
        if holder != Some(args.agent_id.as_str()) {
            return Err(CommandError::new(
                ErrorKind::ClaimRefused,
                format!(
                    "CLAIM_REFUSED: active claim for {}#{} held by {}; it reached remote {} first",
                    args.repo,
                    args.target,
                    holder.unwrap_or("another agent (since released)"),
                    report.remote
                ),
            ));
        }
        notices.push(format!("published to {}", report.remote));
    }
    let expires = outcome.record.expires_at().unwrap_or_default();
    let report = if args.json {
        let kind = match outcome.kind {
            ClaimKind::New => "acquired",
            ClaimKind::Renewed => "renewed",
            ClaimKind::Unchanged => "unchanged",
            ClaimKind::LaneChange => "lane_change",
            ClaimKind::Takeover => "takeover",
        };
        Report::json(&ClaimAnswer {
            result: kind,
            path: &outcome.path,
            previous_holder: outcome.previous_holder.as_deref(),
            commit: done.commit.map(|c| c.to_string()),
            claim: &outcome.record,
        })
    } else {
        Report::line(format!(
            "claimed {}#{} by {} until {expires}",
            args.repo, args.target, args.agent_id
        ))
    };
    Ok(report.with_stderr(stderr_lines(notices, &done.plan)))
}
