//! `GET /api/find?q=`: Universal Find over the whole model (jobs, batches, machines), run on
//! the server because the page holds only the view it shows (`shared::dashboard::view::find`).

use agent_coord_shared::dashboard::view::find;
use axum::extract::Query;
use axum::extract::State;
use axum::routing::get;
use axum::Json;
use axum::Router;
use serde_json::Value;

use super::blocking;
use crate::serve::error::ApiError;
use crate::serve::error::ApiResult;
use crate::serve::model::models::Models;
use crate::serve::state::AppState;

/// The find route.
pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/api/find", get(finds_show))
}

/// `?q=` is the text typed.
#[derive(Debug, Default, serde::Deserialize)]
struct Params {
    #[serde(default)]
    q: String,
    /// Find in the model of that moment (a commit or an RFC 3339 time).
    #[serde(default)]
    at: Option<String>,
}

async fn finds_show(
    State(s): State<Models>,
    Query(params): Query<Params>,
) -> ApiResult<Json<Value>> {
    blocking(move || {
        let built = s.built_at(params.at.as_deref())?.built;
        let found = find::find(&built.model, &params.q);
        serde_json::to_value(found)
            .map(Json)
            .map_err(|e| ApiError::internal(e.to_string()))
    })
    .await
}
