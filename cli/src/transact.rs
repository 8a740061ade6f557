//! The write path every command shares: open the store, run a pure rule inside a CAS
//! transaction on it, and (with `--sync`) sync before deciding and publish after.
//!
//! Below both `commands/` and `serve/`: the CLI's writes and the dashboard's two writes
//! are committed the same way.

use agent_coord_shared::rules::Ctx;
use agent_coord_shared::rules::Plan;
use agent_coord_shared::rules::RuleError;

use crate::command_error::CommandError;
use crate::context::Context;
use crate::store::write::Committed;
use crate::store::Store;
use crate::store::TipSnapshot;
use crate::sync;
use crate::sync::SyncFlags;
use crate::sync::SyncReport;

/// What a write produced: the committed plan, notices for stderr, the store it was written
/// to, and (with `--sync`) what the publishing sync decided.
pub(crate) struct Written<T> {
    pub(crate) done: Committed<T>,
    pub(crate) notices: Vec<String>,
    pub(crate) store: Store,
    pub(crate) synced: Option<SyncReport>,
}

/// Opens the store and runs a write rule in a CAS transaction on it.
pub(crate) fn write<T>(
    cx: &Context,
    decide: impl Fn(&TipSnapshot<'_>, &Ctx) -> Result<Plan<T>, RuleError>,
) -> Result<Written<T>, CommandError> {
    write_synced(cx, &SyncFlags::default(), decide)
}

/// Like [`write`], and with `--sync` (or `agent-coord.sync=true`): sync first so the rule
/// decides on the fleet's latest state, write, then publish. The write counts only once
/// the remote accepted it; the returned report says what reconciliation decided.
pub(crate) fn write_synced<T>(
    cx: &Context,
    flags: &SyncFlags,
    decide: impl Fn(&TipSnapshot<'_>, &Ctx) -> Result<Plan<T>, RuleError>,
) -> Result<Written<T>, CommandError> {
    let (store, mut notices) = cx.open_store(true)?;
    let remote = flags.remote(&store);
    if let (Some(remote), false) = (&remote, flags.publish_only) {
        // Decide on the fleet's latest state, not on what this clone last fetched.
        sync::run_sync(cx, &store, remote)?;
    }
    let session = cx.identity(&store).session_id;
    let trailer: Vec<(&str, String)> = session
        .into_iter()
        .map(|s| ("Agent-Coord-Session", s))
        .collect();
    let committed = store.transact(&trailer, |snap| -> Result<_, CommandError> {
        Ok(decide(snap, &cx.rule_ctx(&store))?)
    })?;
    if committed.commit.is_some() || !committed.plan.heartbeats.is_empty() {
        store.keep_packed();
    }
    notices.extend(store.take_warnings());
    let report = match &remote {
        Some(remote) => Some(sync::run_sync(cx, &store, remote).map_err(|e| {
            CommandError::operational(format!(
                "written locally but not published: {}; run `agent-coord sync` to publish it",
                e.message
            ))
        })?),
        None => None,
    };
    Ok(Written {
        done: committed,
        notices,
        store,
        synced: report,
    })
}

/// Adds the plan's warnings to the notices, in order.
pub(crate) fn stderr_lines<T>(notices: Vec<String>, plan: &Plan<T>) -> Vec<String> {
    notices
        .into_iter()
        .chain(plan.warnings.iter().cloned())
        .collect()
}
