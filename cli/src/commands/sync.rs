//! `agent-coord sync` and the `--sync` flag of the write commands: share the state through
//! a git remote, and report what reconciliation decided.

use agent_coord_shared::output::sync::LostClaimRow;
use agent_coord_shared::output::sync::SyncAnswer;
use agent_coord_shared::output::sync::SyncInfo;

use crate::command_error::CommandError;
use crate::context::Context;
use crate::output::Report;
use crate::progress;
use crate::store::Store;
use crate::sync;
use crate::sync::default_remote;
use crate::sync::run_sync;
use crate::sync::SyncReport;

/// Fetch, reconcile and push the coordination state through a git remote
///
/// Fetches the state branch and every machine's heartbeat ref, merges diverged histories
/// record by record (events are unioned; a claim changed on both sides keeps the remote
/// version and the local holder is told it lost the claim; lane closures from either side
/// stay), then pushes with a lease, retrying when another machine published first.
#[derive(clap::Args, Debug)]
pub(crate) struct SyncArgs {
    /// The remote to sync with (a configured remote name, or a URL or path)
    #[arg(long, value_name = "NAME")]
    remote: Option<String>,
    /// Print the result as JSON
    #[arg(long)]
    json: bool,
}

/// Renders a sync report as text lines.
pub(crate) fn report_lines(r: &SyncReport) -> Vec<String> {
    let tip = r
        .tip
        .map(|t| t.to_hex_with_len(7).to_string())
        .unwrap_or_else(|| "none".into());
    let mut lines = vec![match r.outcome {
        sync::BranchOutcome::Empty => format!("sync {}: nothing to sync yet", r.remote),
        sync::BranchOutcome::UpToDate => format!("sync {}: up to date at {tip}", r.remote),
        sync::BranchOutcome::FastForward => format!(
            "sync {}: fast-forwarded to {tip} ({} remote changes)",
            r.remote, r.remote_changes
        ),
        sync::BranchOutcome::Pushed => format!("sync {}: pushed {tip}", r.remote),
        sync::BranchOutcome::Merged => format!(
            "sync {}: merged {} local and {} remote changes; pushed {tip}",
            r.remote, r.local_changes, r.remote_changes
        ),
    }];
    lines.extend(r.lost_claims.iter().map(sync::lost_claim_line));
    for c in &r.conflicts {
        lines.push(format!("conflict {}: {}", c.path, c.detail));
    }
    if r.heartbeat_pushed {
        lines.push("heartbeats pushed".to_owned());
    }
    lines
}

/// Returns a sync report as `sync --json` prints it.
pub(crate) fn report_json(r: &SyncReport) -> SyncAnswer<'_> {
    SyncAnswer {
        remote: &r.remote,
        result: r.outcome.as_str(),
        tip: r.tip.map(|t| t.to_string()),
        local_changes: r.local_changes,
        remote_changes: r.remote_changes,
        lost_claims: r.lost_claims.iter().map(LostClaimRow::from).collect(),
        conflicts: &r.conflicts,
        heartbeat_pushed: r.heartbeat_pushed,
        rounds: r.rounds,
    }
}

pub(crate) fn cmd_sync(cx: &Context, args: &SyncArgs) -> Result<Report, CommandError> {
    let (store, _) = cx.open_store(true)?;
    let remote = args
        .remote
        .clone()
        .unwrap_or_else(|| default_remote(&store));
    let syncing = progress::spinner(format!("sync: syncing with {remote}"), args.json);
    let report = run_sync(cx, &store, &remote);
    syncing.finish_and_clear();
    let report = report?;
    Ok(if args.json {
        Report::json(&report_json(&report))
    } else {
        Report::line(report_lines(&report).join("\n"))
    })
}

/// Information about how the local state stands against a remote, for status and doctor.
pub(crate) fn sync_info(store: &Store) -> Option<SyncInfo> {
    if !store.has_remote() {
        return None;
    }
    let remote = default_remote(store);
    let ab = sync::ahead_behind(store, &remote).ok().flatten();
    Some(SyncInfo {
        ahead: ab.map(|(a, _)| a),
        behind: ab.map(|(_, b)| b),
        last_synced: sync::last_synced(store, &remote),
        remote,
    })
}
