//! `GET /api/health`: the lifecycle probe (is the server up, which version of the refs it
//! last saw, whether the front end is built in, how its own syncing with the remote stands,
//! whether it started from the last run's saved model).

use agent_coord_shared::dashboard::derive::freshness::SyncView;
use axum::extract::State;
use axum::routing::get;
use axum::Json;
use axum::Router;
use serde::Serialize;

use crate::serve::assets;
use crate::serve::state::AppState;

/// The health route.
pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/api/health", get(health_show))
}

/// What the probe answers.
#[derive(Debug, Serialize)]
struct Health {
    /// Always `true`: the server answered.
    ok: bool,
    /// The version of the refs last seen (empty before the first look).
    version: String,
    /// Whether the front end is compiled in.
    bundled: bool,
    /// The server's own syncing with the remote.
    sync: SyncView,
    /// Whether this run started from the model its last run saved (its first views were
    /// that model's until it derived its own).
    restored_at_start: bool,
}

async fn health_show(State(s): State<AppState>) -> Json<Health> {
    Json(Health {
        ok: true,
        version: s.models.version(),
        bundled: assets::bundled(),
        sync: s.sync.borrow().clone(),
        restored_at_start: s.models.restored_at_start(),
    })
}
