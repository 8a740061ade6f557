//! `GET /api/batches/{id}`: one batch with its events, rows and health items.

use agent_coord_shared::dashboard::detail;
use axum::extract::Path;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::Json;
use axum::Router;
use serde_json::Value;

use crate::serve::error::ApiError;
use crate::serve::error::ApiResult;
use crate::serve::state::blocking;
use crate::serve::state::AppState;

/// The batch route.
pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/api/batches/{id}", get(batches_show))
}

async fn batches_show(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    blocking(move || {
        let built = s.built()?;
        let d = detail::batch_detail(&built.inputs, &built.model, &id).ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                format!("Batch {id} is not in the coordination state."),
            )
        })?;
        serde_json::to_value(d)
            .map(Json)
            .map_err(|e| ApiError::internal(e.to_string()))
    })
    .await
}
