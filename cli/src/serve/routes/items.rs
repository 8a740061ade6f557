//! `GET /api/items/{owner}/{repo}/{target}`: one issue or pull request's custody timeline;
//! 404 for an item the coordination state knows nothing about. `?at=` shows it as it stood
//! then (`Models::then`).

use agent_coord_shared::dashboard::derive::pages;
use agent_coord_shared::dashboard::model::item_not_found;
use axum::extract::Path;
use axum::extract::Query;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Json;
use axum::Router;
use serde_json::Value;

use super::blocking;
use crate::serve::error::ApiError;
use crate::serve::error::ApiResult;
use crate::serve::model::models::Models;
use crate::serve::model::models::Then;
use crate::serve::state::AppState;

/// The item route.
pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/api/items/{owner}/{repo}/{target}", get(items_show))
}

/// `?at=` asks for the item as it stood then (a commit or an RFC 3339 time).
#[derive(Debug, Default, serde::Deserialize)]
struct Params {
    #[serde(default)]
    at: Option<String>,
}

async fn items_show(
    State(s): State<Models>,
    Path((owner, repo, target)): Path<(String, String, String)>,
    Query(params): Query<Params>,
) -> ApiResult<Json<Value>> {
    blocking(move || {
        if !s.scope()?.scope.contains(&format!("{owner}/{repo}")) {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                "Work item is not in the saved target repositories.",
            ));
        }
        let Then { built, clock } = s.built_at(params.at.as_deref())?;
        let d = pages::item_detail(
            &built.inputs,
            &built.model,
            &format!("{owner}/{repo}"),
            &target,
            clock,
        );
        if !d.is_known() {
            return Err(ApiError::new(
                StatusCode::NOT_FOUND,
                item_not_found(&format!("{owner}/{repo}"), &target),
            ));
        }
        serde_json::to_value(d)
            .map(Json)
            .map_err(|e| ApiError::internal(e.to_string()))
    })
    .await
}
