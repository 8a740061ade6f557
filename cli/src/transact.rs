//! The write path every command shares: open the store, run a pure rule inside a CAS
//! transaction on it, and (with `--sync`) sync before deciding and publish after.
//!
//! Below both `commands/` and `serve/`: the CLI's writes and the dashboard's two writes
//! are committed the same way.

use agent_coord_shared::rules::Ctx;
use agent_coord_shared::rules::Plan;

use crate::command_error::CommandError;
use crate::context::Context;
use crate::store::write::Committed;
use crate::store::Store;
use crate::store::StoreError;
use crate::store::TipSnapshot;
use crate::sync;
use crate::sync::Patience;
use crate::sync::Publishing;
use crate::sync::SyncError;
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

/// A write that was not committed: the rule refused it (with its own typed error `E`, for
/// each surface to word), or opening, syncing, committing or publishing failed.
#[derive(Debug)]
pub(crate) enum WriteError<E> {
    /// The rule refused; nothing was written. `notices` are what was found before it (a
    /// first sync's lost claims, store warnings), for the CLI to say after the refusal.
    Refused { error: E, notices: Vec<String> },
    /// The store or the sync failed (a failed commit says the notices after its sentence).
    Failed(CommandError),
}

impl<E> WriteError<E> {
    /// Returns the error with `lines` said after it.
    fn with_lines(self, lines: impl IntoIterator<Item = String>) -> Self {
        match self {
            WriteError::Refused { error, mut notices } => {
                notices.extend(lines);
                WriteError::Refused { error, notices }
            }
            WriteError::Failed(e) => WriteError::Failed(e.with_lines(lines)),
        }
    }
}

impl<E> From<CommandError> for WriteError<E> {
    fn from(e: CommandError) -> Self {
        WriteError::Failed(e)
    }
}

impl<E> From<StoreError> for WriteError<E> {
    fn from(e: StoreError) -> Self {
        WriteError::Failed(e.into())
    }
}

/// The CLI says a refusal in its own words ([`CommandError`]'s table), then the notices.
impl<E> From<WriteError<E>> for CommandError
where
    CommandError: From<E>,
{
    fn from(e: WriteError<E>) -> Self {
        match e {
            WriteError::Refused { error, notices } => CommandError::from(error).with_lines(notices),
            WriteError::Failed(e) => e,
        }
    }
}

/// Opens the store and runs a write rule in a CAS transaction on it.
pub(crate) fn write<T, E>(
    cx: &Context,
    decide: impl Fn(&TipSnapshot<'_>, &Ctx) -> Result<Plan<T>, E>,
) -> Result<Written<T>, WriteError<E>> {
    write_synced(cx, &SyncFlags::default(), decide)
}

/// Like [`write`], and with `--sync` (or `agent-coord.sync=true`) published as the flags'
/// [`Publishing`] says: a verdict write syncs first so the rule decides on the fleet's
/// latest state, writes, then publishes, and counts only once the remote accepted it (the
/// returned report says what reconciliation decided); a heartbeat and an append skip the
/// first sync, and an append that cannot publish soon is left for the next sync.
pub(crate) fn write_synced<T, E>(
    cx: &Context,
    flags: &SyncFlags,
    decide: impl Fn(&TipSnapshot<'_>, &Ctx) -> Result<Plan<T>, E>,
) -> Result<Written<T>, WriteError<E>> {
    let (store, mut notices) = cx.open_store(true)?;
    let remote = flags.remote(&store);
    if let (Some(remote), Publishing::Verdict) = (&remote, flags.publishing) {
        // Decide on the fleet's latest state, not on what this clone last fetched.
        let before = sync::run_sync(cx, &store, remote)?;
        notices.extend(before.lost_claims.iter().map(sync::lost_claim_line));
    }
    let session = cx.identity(&store).session_id;
    let trailer: Vec<(&str, String)> = session
        .into_iter()
        .map(|s| ("Agent-Coord-Session", s))
        .collect();
    let committed = store
        .transact(&trailer, |snap| {
            decide(snap, &cx.rule_ctx(&store)).map_err(|error| WriteError::Refused {
                error,
                notices: Vec::new(),
            })
        })
        // A refused write still says what its first sync found (a claim lost to another
        // machine is recorded by that sync's merge, and its holder must hear of it).
        .map_err(|e| e.with_lines(notices.iter().cloned().chain(store.take_warnings())))?;
    if committed.commit.is_some() || !committed.plan.heartbeats.is_empty() {
        store.keep_packed();
        crate::phase::mark("maintain");
    }
    notices.extend(store.take_warnings());
    let report = match &remote {
        Some(remote) => publish(cx, &store, remote, flags, &mut notices)?,
        None => None,
    };
    notices.extend(store.take_warnings());
    // Whichever write's sync found that a local claim lost to another machine tells its
    // holder here, not only `sync` (the `claim.lost` event records it as well).
    if let Some(report) = &report {
        notices.extend(report.lost_claims.iter().map(sync::lost_claim_line));
    }
    Ok(Written {
        done: committed,
        notices,
        store,
        synced: report,
    })
}

/// Publishes a committed write as `flags` say; `Ok(None)` when publishing was left for the
/// next sync (with a notice saying so).
fn publish(
    cx: &Context,
    store: &Store,
    remote: &str,
    flags: &SyncFlags,
    notices: &mut Vec<String>,
) -> Result<Option<SyncReport>, CommandError> {
    let unpublished = |message: &str| {
        CommandError::operational(format!(
            "written locally but not published: {message}; run `agent-coord sync` to publish it"
        ))
    };
    match flags.publishing {
        Publishing::Verdict => sync::run_sync(cx, store, remote)
            .map(Some)
            .map_err(|e| unpublished(&e.message)),
        Publishing::Append if flags.explicit() => sync::run_sync(cx, store, remote)
            .map(Some)
            .map_err(|e| unpublished(&e.message)),
        Publishing::Append => match sync::run_sync_within(cx, store, remote, Patience::brief()) {
            Ok(report) => Ok(Some(report)),
            Err(e) => {
                notices.push(format!(
                    "recorded locally, not yet published to {remote} ({}); the next `agent-coord sync` publishes it",
                    e.message
                ));
                Ok(None)
            }
        },
        Publishing::Publish => {
            match sync::sync(store, remote, &|| cx.rule_ctx(store), Patience::brief()) {
                Ok(report) => Ok(Some(report)),
                Err(SyncError::Contention { .. }) => {
                    // Only the branch races; this machine's heartbeat ref has no other writer.
                    sync::publish_heartbeat(store, remote)
                        .map_err(|e| unpublished(&e.to_string()))?;
                    notices.push(format!(
                    "heartbeat published to {remote}; the state branch is busy and waits for the next `agent-coord sync`"
                ));
                    Ok(None)
                }
                Err(e) => {
                    // A lost claim that sync found before failing is said with the error.
                    let lines: Vec<String> = std::iter::once(e.to_string())
                        .chain(store.take_warnings())
                        .collect();
                    Err(unpublished(&lines.join("\n")))
                }
            }
        }
    }
}

/// Adds the plan's warnings to the notices, in order.
pub(crate) fn stderr_lines<T>(notices: Vec<String>, plan: &Plan<T>) -> Vec<String> {
    notices
        .into_iter()
        .chain(plan.warnings.iter().cloned())
        .collect()
}
