//! `GET /api/batches/{id}[?history=full][&at=…]`: one batch with its events (the last 7 days'
//! unless `history=full`, see `shared::dashboard::derive::history`), rows and health items;
//! `at` shows it as it stood then (`Models::then`).

use agent_coord_shared::dashboard::derive::history;
use agent_coord_shared::dashboard::derive::pages;
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

/// The batch route.
pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/api/batches/{id}", get(batches_show))
}

/// `?history=full` asks for every event, not only the history window's.
#[derive(Debug, Default, serde::Deserialize)]
struct Params {
    #[serde(default)]
    history: Option<String>,
    /// The batch as it stood then (a commit or an RFC 3339 time).
    #[serde(default)]
    at: Option<String>,
}

async fn batches_show(
    State(s): State<Models>,
    Path(id): Path<String>,
    Query(params): Query<Params>,
) -> ApiResult<Json<Value>> {
    blocking(move || {
        let Then { built, clock } = s.built_at(params.at.as_deref())?;
        let mut d = pages::batch_detail(&built.inputs, &built.model, &id).ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                format!("Batch {id} is not in the coordination state."),
            )
        })?;
        if params.history.as_deref() != Some("full") {
            let (events, omitted) = history::window(std::mem::take(&mut d.events), clock);
            d.events = events;
            d.omitted_events = omitted;
            d.history_notice = (omitted > 0).then(|| history::notice(omitted));
        }
        serde_json::to_value(d)
            .map(Json)
            .map_err(|e| ApiError::internal(e.to_string()))
    })
    .await
}
