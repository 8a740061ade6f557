//! `agent-coord status`: what is claimed, who is alive, how batches stand.

use std::io::Write;

use agent_coord_shared::coordinator::naming;
use agent_coord_shared::coordinator::spend::CostTotals;
use agent_coord_shared::coordinator::task::Task;
use agent_coord_shared::coordinator::task::TASKS_DIR;
use agent_coord_shared::output::status::StatusDocument;
use agent_coord_shared::rules::status;
use agent_coord_shared::rules::status::Scope;
use agent_coord_shared::snapshot::Snapshot;

use super::status_stream::render_row;
use super::status_stream::JsonStream;
use super::sync::sync_info;
use crate::command_error::CommandError;
use crate::context::Context;
use crate::output::Report;
use crate::past;

/// The version `status --json` names.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// Show claims, heartbeats, batches and events (all, one target, or one batch)
///
/// Reads the state branch tip and every machine's heartbeat ref. Exit 2 means the state
/// is UNKNOWN (unreadable); degraded notes (missing heartbeats, unresolved
/// dependencies) still exit 0.
#[derive(clap::Args, Debug)]
pub(crate) struct StatusArgs {
    /// Limit to one target's claim and its holder (needs --target)
    #[arg(long, value_name = "OWNER/REPO")]
    repo: Option<String>,
    /// Limit to one target's claim and its holder (needs --repo)
    #[arg(long, value_name = "ISSUE_OR_PR")]
    target: Option<String>,
    /// Limit to one batch, its events, lane owners and dependencies
    #[arg(long, value_name = "ID")]
    batch_id: Option<String>,
    /// Also list archived records (unscoped status only)
    #[arg(long)]
    include_archived: bool,
    /// Show the state as it stood at a commit or time (RFC 3339): the last state commit at or
    /// before it, read with that clock; liveness from this machine's heartbeat history (a day)
    #[arg(long, value_name = "COMMIT|TIME")]
    at: Option<String>,
    /// Print the report as JSON
    #[arg(long)]
    json: bool,
}

pub(crate) fn cmd_status(cx: &Context, args: &StatusArgs) -> Result<Report, CommandError> {
    let scope = Scope::from_flags(
        args.repo.as_deref(),
        args.target.as_deref(),
        args.batch_id.as_deref(),
        args.include_archived,
    )
    .map_err(|e| CommandError::usage(e.to_string()))?;
    let (store, mut notices) = cx.open_store(false)?;
    let read = past::reading(&store, args.at.as_deref(), cx.now(), &mut notices)?;
    let (snap, now) = (read.snap, read.clock);
    // How the state stands against the remote is a fact of now, not of the past.
    let sync = if read.past { None } else { sync_info(&store) };
    crate::phase::mark("snapshot");
    if args.json {
        // The report can be megabytes: print it straight to stdout, and stream the full
        // one without collecting it.
        let mut stdout = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        let written = if let Scope::All { include_archived } = scope {
            let costs = costs(&snap, &scope)?;
            crate::phase::mark("costs");
            let mut stream =
                JsonStream::new(stdout, VERSION, include_archived, sync).with_costs(costs);
            status::stream_all(&snap, include_archived, now, &render_row, &mut |part| {
                stream.part(part)
            })?;
            stream.finish()
        } else {
            let report = status::status(&snap, &scope, now)?;
            let costs = costs(&snap, &scope)?;
            let mut doc = StatusDocument::new(&report, VERSION, sync.as_ref());
            doc.head.costs = costs.as_ref();
            serde_json::to_writer_pretty(&mut stdout, &doc)
                .map_err(std::io::Error::from)
                .and_then(|()| stdout.write_all(b"\n"))
                .map(|()| stdout)
        };
        // A reader that went away (broken pipe) is not our failure.
        let _ = written.and_then(|mut w| w.flush());
        crate::phase::mark("report");
        return Ok(Report::default().with_stderr(notices));
    }
    let report = status::status(&snap, &scope, now)?;
    let mut text = report.to_text();
    if let Some(sync) = &sync {
        text.push_str(&sync.line());
        text.push('\n');
    }
    Ok(Report::text(text).with_stderr(notices))
}

/// The coordinator's lane spend in `scope` (the tasks of the scope's repository and issue,
/// or of the batch's worker), `None` when the scope holds no coordinator task.
fn costs(snap: &dyn Snapshot, scope: &Scope) -> Result<Option<CostTotals>, CommandError> {
    let records = snap.list(TASKS_DIR).map_err(|e| {
        CommandError::operational(format!("cannot read the coordinator tasks: {e}"))
    })?;
    let tasks: Vec<Task> = records
        .into_iter()
        .filter_map(|(_, record)| {
            serde_json::from_value::<Task>(serde_json::Value::Object(record)).ok()
        })
        .filter(|task| match scope {
            Scope::All { .. } => true,
            Scope::Target { repo, target } => {
                task.repo.eq_ignore_ascii_case(&repo.to_string())
                    && task.issue.to_string() == target.as_str()
            }
            Scope::Batch { batch } => naming::batch_id(&task.worker) == batch.as_str(),
        })
        .collect();
    Ok((!tasks.is_empty()).then(|| CostTotals::of(&tasks)))
}
