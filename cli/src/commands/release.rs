//! `agent-coord release`: give a claim up, hand it off, or close its lane for good.

use agent_coord_shared::ids::AgentId;
use agent_coord_shared::ids::RepoSlug;
use agent_coord_shared::ids::Target;
use agent_coord_shared::output::writes::CloseoutAnswer;
use agent_coord_shared::output::writes::ReleaseAnswer;
use agent_coord_shared::rules::claim;
use agent_coord_shared::rules::claim::ReleaseRequest;
use agent_coord_shared::rules::closeout;
use agent_coord_shared::rules::closeout::Closed;
use agent_coord_shared::rules::closeout::CloseoutRequest;
use agent_coord_shared::rules::closeout::Entry;
use agent_coord_shared::rules::RuleError;

use super::args::MetadataArgs;
use super::args::TerminalArgs;
use crate::command_error::CommandError;
use crate::context::Context;
use crate::output::Report;
use crate::sync::SyncFlags;
use crate::transact::stderr_lines;
use crate::transact::write_synced;
use crate::transact::Written;

/// Release a claim (optionally handing it off, or closing the lane with --terminal)
///
/// Only the holder may release. `--terminal done|abandoned|superseded` also writes the
/// lane's lane_closed record and stamps the batch, all in one commit.
#[derive(clap::Args, Debug)]
pub(crate) struct ReleaseArgs {
    /// The releasing agent (must hold the claim)
    #[arg(long, value_name = "ID")]
    agent_id: AgentId,
    /// Repository that owns the target, as OWNER/REPO
    #[arg(long, value_name = "OWNER/REPO")]
    repo: RepoSlug,
    /// Issue or pull request number
    #[arg(long, value_name = "ISSUE_OR_PR")]
    target: Target,
    /// Feature branch (overrides the stored one)
    #[arg(long, value_name = "BRANCH")]
    branch: Option<String>,
    /// Agent the work is handed to
    #[arg(long, value_name = "ID")]
    handoff_to: Option<String>,
    /// Note for whoever picks the work up
    #[arg(long, value_name = "TEXT")]
    handoff_note: Option<String>,
    /// Print the result as JSON
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    terminal: TerminalArgs,
    #[command(flatten)]
    metadata: MetadataArgs,
    #[command(flatten)]
    sync: SyncFlags,
}

pub(crate) fn cmd_release(cx: &Context, args: &ReleaseArgs) -> Result<Report, CommandError> {
    let label = format!("{}#{}", args.repo, args.target);
    let Some(terminal) = &args.terminal.terminal else {
        if let Some(flag) = args.terminal.first_terminal_only_flag() {
            return Err(CommandError::usage(format!("{flag} requires --terminal")));
        }
        let request = ReleaseRequest {
            agent: args.agent_id.clone(),
            repo: args.repo.clone(),
            target: args.target.clone(),
            branch: args.branch.clone(),
            handoff_to: args.handoff_to.clone(),
            handoff_note: args.handoff_note.clone(),
            metadata: args.metadata.to_record(),
        };
        let Written { done, notices, .. } = write_synced(cx, &args.sync, |snap, ctx| {
            claim::release(snap, &request, ctx)
        })?;
        let text = format!("released {label} by {}", args.agent_id);
        let report = if args.json {
            Report::json(&ReleaseAnswer {
                result: "released",
                path: &done.plan.outcome.path,
                claim: &done.plan.outcome.record,
            })
        } else {
            Report::line(text)
        };
        return Ok(report.with_stderr(stderr_lines(notices, &done.plan)));
    };
    if !closeout::TERMINALS.contains(&terminal.as_str()) {
        return Err(CommandError::usage(
            "--terminal must be one of: done, abandoned, superseded",
        ));
    }
    if args.handoff_to.is_some() || args.handoff_note.is_some() {
        return Err(CommandError::usage(
            "--terminal cannot be combined with --handoff-to or --handoff-note",
        ));
    }
    let request = CloseoutRequest {
        entry: Entry::Release,
        agent: args.agent_id.clone(),
        repo: args.repo.clone(),
        target: args.target.clone(),
        batch: None,
        lane: None,
        terminal: terminal.clone(),
        pr_state: args.terminal.pr_state.clone(),
        evidence_url: args.terminal.evidence_url.clone(),
        workspace: args.terminal.workspace.clone(),
        branch: args.branch.clone(),
        metadata: args.metadata.to_record(),
    };
    closeout::validate_options(&request).map_err(RuleError::from)?;
    let Written { done, notices, .. } = write_synced(cx, &args.sync, |snap, ctx| {
        closeout::decide(snap, &request, ctx)
    })?;
    let (result, text) = match done.plan.outcome {
        Closed::AlreadyClosed => ("already_closed", format!("lane already closed for {label}")),
        _ => ("released", format!("released {label} by {}", args.agent_id)),
    };
    let report = if args.json {
        Report::json(&CloseoutAnswer {
            result,
            terminal: Some(terminal.as_str()),
            commit: done.commit.map(|c| c.to_string()),
        })
    } else {
        Report::line(text)
    };
    Ok(report.with_stderr(stderr_lines(notices, &done.plan)))
}
