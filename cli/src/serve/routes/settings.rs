//! `GET /api/settings` and `PUT /api/settings`: the saved target repositories the
//! dashboard is scoped to (reference §4.1). Anyone may read them; only this machine may
//! change them, and a change is saved in this machine's configuration and put in force at
//! once (the next model is derived under it, and open pages are told of a new version).

use std::net::SocketAddr;

use agent_coord_shared::dashboard::model::ScopeSource;
use agent_coord_shared::dashboard::model::SettingsBody;
use agent_coord_shared::dashboard::model::SettingsView;
use agent_coord_shared::dashboard::scope::settings as rules;
use agent_coord_shared::dashboard::scope::Scope;
use axum::extract::ConnectInfo;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Json;
use axum::Router;

use super::blocking;
use crate::serve::error::ApiError;
use crate::serve::error::ApiResult;
use crate::serve::http::extract::ApiJson;
use crate::serve::http::extract::FromThisMachine;
use crate::serve::http::extract::LocalWrite;
use crate::serve::model::models::Models;
use crate::serve::model::scope::ScopeInForce;
use crate::serve::state::AppState;
use crate::store::settings as saved;

/// The settings routes.
pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/api/settings", get(settings_show).put(settings_update))
}

/// Settings changes.
pub(crate) struct Settings;

impl LocalWrite for Settings {
    const NAME: &'static str = "Settings";
    const VERB: &'static str = "changed";
}

/// The page polls nothing: it follows `/api/stream` (the reference's 0 disables polling).
const REFRESH_INTERVAL_MS: u64 = 0;

/// Returns the target repositories in force and where they came from (for `/api/doctor`
/// and the GitHub enrichment; no secrets in it).
pub(crate) fn current(models: &Models) -> ApiResult<SettingsView> {
    Ok(view(&models.scope()?, false))
}

fn view(in_force: &ScopeInForce, editable: bool) -> SettingsView {
    SettingsView {
        target_repos: in_force.scope.repos(),
        refresh_interval_ms: REFRESH_INTERVAL_MS,
        scope_id: in_force.scope.id(),
        source: in_force.source,
        editable,
    }
}

async fn settings_show(
    State(s): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
) -> ApiResult<Json<SettingsView>> {
    blocking(move || {
        let editable = s.access.is_machine_local(peer.ip());
        Ok(Json(SettingsView {
            editable,
            ..current(&s.models)?
        }))
    })
    .await
}

async fn settings_update(
    State(s): State<Models>,
    _: FromThisMachine<Settings>,
    ApiJson(body): ApiJson<SettingsBody>,
) -> ApiResult<Json<SettingsView>> {
    let repos = rules::normalize_body(&body)
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.to_string()))?;
    blocking(move || {
        let store = s.store()?;
        saved::save_target_repos(&store, &repos)?;
        let in_force = ScopeInForce {
            scope: Scope::of(&repos),
            source: ScopeSource::Saved,
        };
        s.set_scope(in_force.clone())?;
        s.poll_version();
        Ok(Json(view(&in_force, true)))
    })
    .await
}
