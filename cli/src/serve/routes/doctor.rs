//! `GET /api/doctor`: the dashboard's sources and how they are doing — the state branch and
//! GitHub (status, token source, API URL, repositories, the last refresh's cost), the
//! target repositories in force, and the server's own syncing — for a
//! client on this machine only (reference §4.1). A fresh read, never a token, never GitHub's
//! raw error body.

use std::net::SocketAddr;

use agent_coord_shared::dashboard::model::SourceState;
use axum::extract::ConnectInfo;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Extension;
use axum::Json;
use axum::Router;
use serde_json::json;
use serde_json::Value;

use super::blocking;
use crate::serve::error::ApiError;
use crate::serve::error::ApiResult;
use crate::serve::routes::settings;
use crate::serve::state::AppState;

/// The reference's refusal for a peer on another machine.
const REMOTE: &str =
    "Coordination diagnostics can only be read from the machine running the dashboard.";

/// The doctor route.
pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/api/doctor", get(doctor_show))
}

async fn doctor_show(
    State(s): State<AppState>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
) -> ApiResult<Json<Value>> {
    let peer = peer
        .map(|c| c.0 .0.ip())
        .ok_or_else(|| ApiError::internal("the connection has no peer address"))?;
    if !s.access.is_machine_local(peer) {
        return Err(ApiError::new(StatusCode::FORBIDDEN, REMOTE));
    }
    blocking(move || {
        let state_branch = match s.models.built() {
            Ok(b) => json!({"resource": "state-branch", "status": SourceState::Ok,
                "records": b.inputs.len(), "malformed": b.inputs.malformed.len()}),
            Err(e) => json!({"resource": "state-branch", "status": SourceState::Unreachable,
                "message": e.message}),
        };
        let github = s.github.doctor();
        let mut sources = vec![state_branch];
        sources.extend(github.get("status").cloned());
        // The target repositories in force (and where they came from), or why not.
        let scope = match settings::current(&s.models) {
            Ok(view) => serde_json::to_value(view).unwrap_or(Value::Null),
            Err(e) => json!({"error": e.message}),
        };
        Ok(Json(json!({
            "version": s.models.version(),
            "perResource": sources,
            "scope": scope,
            "github": github,
            "sync": *s.sync.borrow(),
        })))
    })
    .await
}
