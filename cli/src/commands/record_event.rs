//! `agent-coord record-event`: append an event to a batch's history (or close a lane).

use agent_coord_shared::ids::AgentId;
use agent_coord_shared::ids::BatchId;
use agent_coord_shared::ids::EventType;
use agent_coord_shared::ids::LaneName;
use agent_coord_shared::ids::RepoSlug;
use agent_coord_shared::ids::Target;
use agent_coord_shared::output::writes::CloseoutAnswer;
use agent_coord_shared::output::writes::EventAnswer;
use agent_coord_shared::record::field as f;
use agent_coord_shared::record::EventKind;
use agent_coord_shared::record::Record;
use agent_coord_shared::rules::closeout;
use agent_coord_shared::rules::closeout::Closed;
use agent_coord_shared::rules::closeout::CloseoutRequest;
use agent_coord_shared::rules::closeout::Entry;
use agent_coord_shared::rules::event;
use agent_coord_shared::rules::event::EventRequest;
use agent_coord_shared::rules::event::TypedFields;
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

/// Append an event to a batch's history
///
/// Four types validate their own fields: help_requested (--reason), escalation_requested
/// (--from-route, --to-route, --evidence), error (--severity, --category, --message) and
/// human_intervention (--kind). `--type lane_closed` with --terminal closes a lane.
///
/// With --sync (or agent-coord.sync=true) an event is written locally first and then
/// published; if the remote stays busy or unreachable it is kept and a notice says the
/// next sync publishes it (exit 0; with an explicit --sync, exit 2). A lane_closed syncs
/// first, like release.
#[derive(clap::Args, Debug)]
pub(crate) struct RecordEventArgs {
    /// The batch the event belongs to
    #[arg(long, value_name = "ID")]
    batch_id: BatchId,
    /// Event type, e.g. phase, blocked, qa.validation_passed, lane_closed
    #[arg(long = "type", value_name = "TYPE")]
    kind: EventType,
    /// Lane name (no ':')
    #[arg(long, value_name = "NAME")]
    lane: Option<String>,
    /// Agent the event is about
    #[arg(long, value_name = "ID")]
    agent_id: Option<String>,
    /// Repository, as OWNER/REPO
    #[arg(long, value_name = "OWNER/REPO")]
    repo: Option<String>,
    /// Issue or pull request
    #[arg(long, value_name = "ISSUE_OR_PR")]
    target: Option<String>,
    /// Branch
    #[arg(long, value_name = "BRANCH")]
    branch: Option<String>,
    /// Status (normalised to the canonical vocabulary when given)
    #[arg(long, value_name = "STATUS")]
    status: Option<String>,
    /// Free-text message
    #[arg(long, value_name = "TEXT")]
    message: Option<String>,
    /// help_requested: blocked-user-input, question or permission
    #[arg(long, value_name = "REASON", help_heading = "Typed events")]
    reason: Option<String>,
    /// escalation_requested: the route escalated from
    #[arg(long, value_name = "ROUTE", help_heading = "Typed events")]
    from_route: Option<String>,
    /// escalation_requested: the route escalated to
    #[arg(long, value_name = "ROUTE", help_heading = "Typed events")]
    to_route: Option<String>,
    /// escalation_requested: why
    #[arg(long, value_name = "TEXT", help_heading = "Typed events")]
    evidence: Option<String>,
    /// error: P0, P1, P2 or P3
    #[arg(long, value_name = "P0-P3", help_heading = "Typed events")]
    severity: Option<String>,
    /// error: category
    #[arg(long, value_name = "NAME", help_heading = "Typed events")]
    category: Option<String>,
    /// human_intervention: takeover, supersede, manual-fix or drain
    #[arg(long = "kind", value_name = "KIND", help_heading = "Typed events")]
    kind_of_intervention: Option<String>,
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

pub(crate) fn cmd_record_event(
    cx: &Context,
    args: &RecordEventArgs,
) -> Result<Report, CommandError> {
    let lane = args
        .lane
        .as_deref()
        .map(str::parse::<LaneName>)
        .transpose()
        .map_err(|e| CommandError::usage(e.to_string()))?;
    if args.kind.known() == Some(EventKind::LaneClosed) {
        return lane_closed(cx, args, lane);
    }
    if args.terminal.terminal.is_some() || args.terminal.first_terminal_only_flag().is_some() {
        return Err(CommandError::usage(
            "terminal-only options require --type lane_closed",
        ));
    }
    let mut fields = Record::new();
    for (key, value) in [
        (f::AGENT_ID, &args.agent_id),
        (f::REPO, &args.repo),
        (f::TARGET, &args.target),
        (f::BRANCH, &args.branch),
        (f::MESSAGE, &args.message),
    ] {
        if let Some(v) = value {
            key.set(&mut fields, v.as_str());
        }
    }
    fields.extend(args.metadata.to_record());
    let request = EventRequest {
        batch: args.batch_id.clone(),
        kind: args.kind.clone(),
        lane,
        fields,
        status: args.status.clone(),
        typed: TypedFields {
            reason: args.reason.clone(),
            from_route: args.from_route.clone(),
            to_route: args.to_route.clone(),
            evidence: args.evidence.clone(),
            severity: args.severity.clone(),
            category: args.category.clone(),
            kind: args.kind_of_intervention.clone(),
        },
    };
    // Validate typed fields before opening the store: bad input writes nothing.
    event::validate_typed(
        request.kind.as_str(),
        &request.typed,
        args.message.as_deref(),
    )?;
    // An event is an append: written locally first, published now or by the next sync.
    let Written { done, notices, .. } =
        write_synced(cx, &args.sync.for_appending(), |snap, ctx| {
            event::decide(snap, &request, ctx)
        })?;
    let out = &done.plan.outcome;
    let report = if args.json {
        Report::json(&EventAnswer {
            result: "recorded",
            path: &out.path,
            event: done.plan.state.first().map(|(_, e)| e),
        })
    } else {
        Report::line(format!("recorded event {} {}", out.batch, out.event_id))
    };
    Ok(report.with_stderr(stderr_lines(notices, &done.plan)))
}

fn lane_closed(
    cx: &Context,
    args: &RecordEventArgs,
    lane: Option<LaneName>,
) -> Result<Report, CommandError> {
    let need = |v: &Option<String>, flag: &str| {
        v.clone()
            .ok_or_else(|| CommandError::usage(format!("missing required {flag}")))
    };
    let terminal = need(&args.terminal.terminal, "--terminal")?;
    let (agent, repo, target) = (
        need(&args.agent_id, "--agent-id")?,
        need(&args.repo, "--repo")?,
        need(&args.target, "--target")?,
    );
    if !closeout::TERMINALS.contains(&terminal.as_str()) {
        return Err(CommandError::usage(
            "--terminal must be one of: done, abandoned, superseded",
        ));
    }
    let agent: AgentId = agent.parse()?;
    let repo = RepoSlug::parse_as(&repo, "terminal closeout repo")?;
    let target: Target = target.parse()?;
    let label = format!("{repo}#{target}");
    let request = CloseoutRequest {
        entry: Entry::RecordEvent,
        agent,
        repo,
        target,
        batch: Some(args.batch_id.clone()),
        lane,
        terminal,
        pr_state: args.terminal.pr_state.clone(),
        evidence_url: args.terminal.evidence_url.clone(),
        workspace: args.terminal.workspace.clone(),
        branch: args.branch.clone(),
        metadata: args.metadata.to_record(),
    };
    closeout::validate_options(&request).map_err(RuleError::from)?;
    // A closeout decides on the lane's trail and claim: it syncs first, like release.
    let Written { done, notices, .. } = write_synced(cx, &args.sync, |snap, ctx| {
        closeout::decide(snap, &request, ctx)
    })?;
    let (result, text) = match &done.plan.outcome {
        Closed::Recorded { batch, event_id } => {
            ("recorded", format!("recorded event {batch} {event_id}"))
        }
        Closed::Reconciled => (
            "reconciled",
            format!("reconciled terminal closeout for {label}"),
        ),
        _ => ("already_closed", format!("lane already closed for {label}")),
    };
    let report = if args.json {
        Report::json(&CloseoutAnswer {
            result,
            terminal: None,
            commit: done.commit.map(|c| c.to_string()),
        })
    } else {
        Report::line(text)
    };
    Ok(report.with_stderr(stderr_lines(notices, &done.plan)))
}
