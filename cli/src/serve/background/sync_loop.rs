//! `serve --sync-every`: the server keeps itself current by syncing with the fleet's remote
//! on an interval (the same sync as `agent-coord sync`, with a brief time budget), so a
//! dashboard needs no cron job beside it. Each attempt updates [`SyncView`], which
//! `/api/health` reports and `/api/stream` announces; a failure is shown, never fatal.

use std::time::Duration;

use agent_coord_shared::coordinator::redact;
use agent_coord_shared::dashboard::derive::freshness::SyncView;
use agent_coord_shared::time;
use tokio::sync::watch;

use crate::serve::model::models::Models;
use crate::sync;
use crate::sync::Patience;

/// The most of a sync error the page is shown.
const ERROR_MAX: usize = 400;

/// Syncs every `every` (the first at once) for as long as the server runs, recording each
/// attempt in `view` and announcing what it brought in through `models`.
pub(crate) async fn run(models: Models, view: watch::Sender<SyncView>, every: Duration) {
    let mut ticks = tokio::time::interval(every);
    // A slow sync delays the next one rather than queueing a burst behind it.
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let (models, view) = (models.clone(), view.clone());
        let _ = tokio::task::spawn_blocking(move || once(&models, &view)).await;
    }
}

/// Runs one sync and records its outcome.
fn once(models: &Models, view: &watch::Sender<SyncView>) {
    let attempt = attempt(models);
    let now = models.context().map(|cx| time::format(cx.now())).ok();
    view.send_modify(|view| {
        view.last_attempt_at.clone_from(&now);
        match attempt {
            Attempt::NoRemote => {
                view.remote = None;
                view.last_error = None;
            }
            Attempt::Synced(remote) => {
                view.remote = Some(remote);
                view.last_synced_at.clone_from(&now);
                view.last_error = None;
            }
            Attempt::Failed(remote, error) => {
                view.remote = remote;
                view.last_error = Some(redact::clean(&error, &[], ERROR_MAX));
            }
        }
    });
    // What the sync brought in shows at once, not at the watcher's next look.
    models.poll_version();
}

/// What one attempt came to.
enum Attempt {
    /// The repository has no remote to sync with.
    NoRemote,
    /// Synced with this remote.
    Synced(String),
    /// Failed (with the remote, when it got that far).
    Failed(Option<String>, String),
}

fn attempt(models: &Models) -> Attempt {
    let cx = match models.context() {
        Ok(cx) => cx,
        Err(e) => return Attempt::Failed(None, e.message),
    };
    let store = match cx.open_store(true) {
        Ok((store, _)) => store,
        Err(e) => return Attempt::Failed(None, e.message),
    };
    if !store.has_remote() {
        return Attempt::NoRemote;
    }
    let remote = sync::default_remote(&store);
    match sync::sync(&store, &remote, &|| cx.rule_ctx(&store), Patience::brief()) {
        Ok(_) => Attempt::Synced(remote),
        Err(e) => Attempt::Failed(Some(remote), e.to_string()),
    }
}

/// Returns the view a server starts with: syncing every `every_secs` (0: never), nothing
/// tried yet.
pub(crate) fn initial(every_secs: u64) -> SyncView {
    SyncView {
        every_secs,
        ..SyncView::default()
    }
}
