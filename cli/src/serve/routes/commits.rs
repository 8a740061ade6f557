//! `GET /api/batches/{id}/commits` and `GET /api/items/{owner}/{repo}/{target}/commits`: the
//! state branch commits that changed one batch's or item's records, newest first (the time
//! slider's stops; each opens the page `?at=` that commit). The walk is bounded
//! ([`DEPTH`] commits back, [`LIMIT`] answers) and says when it stopped short.

use agent_coord_shared::dashboard::inputs::paths::batch_paths;
use agent_coord_shared::dashboard::inputs::paths::item_paths;
use agent_coord_shared::dashboard::model::Touches;
use axum::extract::Path;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Json;
use axum::Router;

use super::blocking;
use crate::past;
use crate::serve::error::ApiError;
use crate::serve::error::ApiResult;
use crate::serve::model::models::Models;
use crate::serve::state::AppState;

/// How many first-parent commits back the walk looks.
const DEPTH: usize = 5_000;
/// How many touching commits it answers.
const LIMIT: usize = 500;

/// The commits routes.
pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .route("/api/batches/{id}/commits", get(commits_batch))
        .route(
            "/api/items/{owner}/{repo}/{target}/commits",
            get(commits_item),
        )
}

async fn commits_batch(
    State(s): State<Models>,
    Path(id): Path<String>,
) -> ApiResult<Json<Touches>> {
    let paths = batch_paths(&id).ok_or_else(|| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("{id:?} is not a batch id."),
        )
    })?;
    touching(s, paths).await
}

async fn commits_item(
    State(s): State<Models>,
    Path((owner, repo, target)): Path<(String, String, String)>,
) -> ApiResult<Json<Touches>> {
    let paths = item_paths(&format!("{owner}/{repo}"), &target).ok_or_else(|| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("{owner}/{repo}#{target} is not a work item."),
        )
    })?;
    touching(s, paths).await
}

async fn touching(s: Models, paths: Vec<String>) -> ApiResult<Json<Touches>> {
    blocking(move || {
        let store = s.store()?;
        Ok(Json(past::touching(&store, &paths, DEPTH, LIMIT)?))
    })
    .await
}
