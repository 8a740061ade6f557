//! `POST /api/batches/stop`: asks a batch's agents to stop by appending a
//! `batch.stop_requested` event. Decided by shared's `dashboard::act::writes::stop` inside the
//! transaction (the batch must be known to the state it writes on).

use agent_coord_shared::dashboard::act::writes as dashboard_writes;
use agent_coord_shared::dashboard::act::writes::StopRequest;
use agent_coord_shared::dashboard::model::StopBody;
use agent_coord_shared::dashboard::model::StopRequested;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use axum::Json;
use axum::Router;

use super::blocking;
use crate::serve::error::ApiError;
use crate::serve::error::ApiResult;
use crate::serve::http::extract::ApiJson;
use crate::serve::http::extract::FromThisMachine;
use crate::serve::http::extract::LocalWrite;
use crate::serve::model::models::Models;
use crate::serve::state::AppState;
use crate::transact::write;

/// The stop-request route.
pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/api/batches/stop", post(stop_requests_create))
}

/// Stop requests.
pub(crate) struct Stop;

impl LocalWrite for Stop {
    const NAME: &'static str = "Batch stop requests";
}

async fn stop_requests_create(
    State(s): State<Models>,
    _: FromThisMachine<Stop>,
    ApiJson(body): ApiJson<StopBody>,
) -> ApiResult<(StatusCode, Json<StopRequested>)> {
    let out = blocking(move || {
        let request = StopRequest::from_body(&body)?;
        let scope = s.scope()?.scope;
        if !scope.is_all() {
            scope
                .check_stop(request.repo.as_deref())
                .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.to_string()))?;
            // A batch the scope hides cannot be stopped from here, whatever repo it names.
            let id = request.batch.to_string();
            if !s.built()?.model.batches.iter().any(|b| b.id == id) {
                return Err(ApiError::new(
                    StatusCode::NOT_FOUND,
                    format!("Batch {id} is not in the saved target repositories."),
                ));
            }
        }
        let cx = s.context()?;
        let written = write(&cx, |snap, ctx| dashboard_writes::stop(snap, ctx, &request))?;
        s.poll_version();
        let (path, event) = written.done.plan.outcome;
        Ok(StopRequested { event, path })
    })
    .await?;
    Ok((StatusCode::CREATED, Json(out)))
}
