//! `GET /api/health`: the lifecycle probe (is the server up, which version of the refs it
//! last saw, whether the front end is built in, how its own syncing with the remote stands).

use axum::extract::State;
use axum::routing::get;
use axum::Json;
use axum::Router;
use serde_json::json;
use serde_json::Value;

use crate::serve::assets;
use crate::serve::state::AppState;

/// The health route.
pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/api/health", get(health_show))
}

async fn health_show(State(s): State<AppState>) -> Json<Value> {
    let sync = serde_json::to_value(&*s.sync.borrow()).unwrap_or(Value::Null);
    Json(json!({
        "ok": true,
        "version": s.models.version(),
        "bundled": assets::bundled(),
        "sync": sync,
    }))
}
