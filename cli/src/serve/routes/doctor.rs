//! `GET /api/doctor`: the dashboard's sources and how they are doing — the state branch and
//! GitHub (status, token source, API URL, repositories, the last refresh's cost), the
//! target repositories in force, and the server's own syncing — for a
//! client on this machine only (reference §4.1). A fresh read, never a token, never GitHub's
//! raw error body.

use std::net::SocketAddr;

use agent_coord_shared::dashboard::derive::freshness::SyncView;
use agent_coord_shared::dashboard::model::SettingsView;
use agent_coord_shared::dashboard::model::SourceState;
use agent_coord_shared::dashboard::model::SourceStatus;
use axum::extract::ConnectInfo;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Extension;
use axum::Json;
use axum::Router;
use serde::Serialize;

use super::blocking;
use crate::serve::background::enrich::GithubDoctor;
use crate::serve::error::ApiError;
use crate::serve::error::ApiResult;
use crate::serve::routes::settings;
use crate::serve::state::AppState;

/// The reference's refusal for a peer on another machine.
const REMOTE: &str =
    "Coordination diagnostics can only be read from the machine running the dashboard.";

/// What the doctor answers.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Doctor {
    /// The version of the refs last seen.
    version: String,
    /// Each source's status: the state branch, then GitHub.
    per_resource: Vec<Source>,
    /// The target repositories in force, or why they cannot be read.
    scope: Scope,
    /// The GitHub enrichment in detail.
    github: Option<GithubDoctor>,
    /// The server's own syncing with the remote.
    sync: SyncView,
}

/// One source's status.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Source {
    /// The state branch.
    StateBranch(StateBranch),
    /// GitHub.
    Github(SourceStatus),
}

/// How the state branch reads.
#[derive(Debug, Serialize)]
struct StateBranch {
    /// Always `state-branch`.
    resource: &'static str,
    /// Read (`ok`) or not (`unreachable`).
    status: SourceState,
    /// The records read.
    #[serde(skip_serializing_if = "Option::is_none")]
    records: Option<usize>,
    /// The records that did not parse.
    #[serde(skip_serializing_if = "Option::is_none")]
    malformed: Option<usize>,
    /// Why it could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
}

/// The target repositories in force, or why not.
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Scope {
    /// As `GET /api/settings` answers them.
    InForce(SettingsView),
    /// The saved setting cannot be read.
    Unreadable {
        /// Why.
        error: String,
    },
}

/// The doctor route.
pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/api/doctor", get(doctor_show))
}

async fn doctor_show(
    State(s): State<AppState>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
) -> ApiResult<Json<Doctor>> {
    let peer = peer
        .map(|c| c.0 .0.ip())
        .ok_or_else(|| ApiError::internal("the connection has no peer address"))?;
    if !s.access.is_machine_local(peer) {
        return Err(ApiError::new(StatusCode::FORBIDDEN, REMOTE));
    }
    blocking(move || {
        let state_branch = match s.models.built() {
            Ok(b) => StateBranch {
                resource: "state-branch",
                status: SourceState::Ok,
                records: Some(b.inputs.len()),
                malformed: Some(b.inputs.malformed.len()),
                message: None,
            },
            Err(e) => StateBranch {
                resource: "state-branch",
                status: SourceState::Unreachable,
                records: None,
                malformed: None,
                message: Some(e.message),
            },
        };
        let github = s.github.doctor();
        let mut sources = vec![Source::StateBranch(state_branch)];
        sources.extend(github.as_ref().map(|g| Source::Github(g.status.clone())));
        let scope = match settings::current(&s.models) {
            Ok(view) => Scope::InForce(view),
            Err(e) => Scope::Unreadable { error: e.message },
        };
        Ok(Json(Doctor {
            version: s.models.version(),
            per_resource: sources,
            scope,
            github,
            sync: s.sync.borrow().clone(),
        }))
    })
    .await
}
