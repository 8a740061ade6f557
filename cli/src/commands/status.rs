//! `agent-coord status`: what is claimed, who is alive, how batches stand.

use std::io::Write;

use agent_coord_shared::output::status::StatusDocument;
use agent_coord_shared::rules::status;
use agent_coord_shared::rules::status::Scope;

use super::status_stream::render_row;
use super::status_stream::JsonStream;
use super::sync::sync_info;
use crate::command_error::CommandError;
use crate::context::Context;
use crate::output::Report;

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
    let (store, notices) = cx.open_store(false)?;
    let snap = store.snapshot()?;
    let sync = sync_info(&store);
    if args.json {
        // The report can be megabytes: print it straight to stdout, and stream the full
        // one without collecting it.
        let mut stdout = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        let written = if let Scope::All { include_archived } = scope {
            let mut stream = JsonStream::new(stdout, VERSION, include_archived, sync);
            status::stream_all(
                &snap,
                include_archived,
                cx.now(),
                &render_row,
                &mut |part| stream.part(part),
            )?;
            stream.finish()
        } else {
            let report = status::status(&snap, &scope, cx.now())?;
            let doc = StatusDocument::new(&report, VERSION, sync.as_ref());
            serde_json::to_writer_pretty(&mut stdout, &doc)
                .map_err(std::io::Error::from)
                .and_then(|()| stdout.write_all(b"\n"))
                .map(|()| stdout)
        };
        // A reader that went away (broken pipe) is not our failure.
        let _ = written.and_then(|mut w| w.flush());
        return Ok(Report::default().with_stderr(notices));
    }
    let report = status::status(&snap, &scope, cx.now())?;
    let mut text = report.to_text();
    if let Some(sync) = &sync {
        text.push_str(&sync.line());
        text.push('\n');
    }
    Ok(Report::text(text).with_stderr(notices))
}
