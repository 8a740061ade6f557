//! `agent-coord status`: what is claimed, who is alive, how batches stand.

use std::io::Write;

use agent_coord_shared::rules::status;
use agent_coord_shared::rules::status::Scope;

use super::status_stream::render_row;
use super::status_stream::JsonStream;
use super::sync::sync_info;
use crate::command_error::CommandError;
use crate::context::Context;
use crate::output::to_json_value;
use crate::output::Report;

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
    if let (true, Scope::All { include_archived }) = (args.json, &scope) {
        // The full report can be megabytes: stream it straight to stdout.
        let stdout = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
        let mut stream = JsonStream::new(stdout, env!("CARGO_PKG_VERSION"), *include_archived)
            .with_extra("sync", sync.as_ref().map(to_json_value));
        status::stream_all(
            &snap,
            *include_archived,
            cx.now(),
            &render_row,
            &mut |part| stream.part(part),
        )?;
        // A reader that went away (broken pipe) is not our failure.
        let _ = stream.finish().and_then(|mut w| w.flush());
        return Ok(Report::default().with_stderr(notices));
    }
    let report = status::status(&snap, &scope, cx.now())?;
    let out = if args.json {
        let mut doc = report.into_json(env!("CARGO_PKG_VERSION"));
        if let (Some(map), Some(sync)) = (doc.as_object_mut(), &sync) {
            map.shift_insert(4, "sync".to_owned(), to_json_value(sync));
        }
        Report::json_owned(doc)
    } else {
        let mut text = report.to_text();
        if let Some(sync) = &sync {
            text.push_str(&sync.line());
            text.push('\n');
        }
        Report::text(text)
    };
    Ok(out.with_stderr(notices))
}
