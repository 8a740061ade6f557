//! `GET /api/lanes/timeline?hours=6`: the lane timeline of the Lanes page — which task's lane
//! ran when on which machine over the last `hours` hours (1 to 168, default 6) before the
//! clock, and how busy each machine and vendor was (`shared::dashboard::derive::lane_timeline`).
//! Derived per request from the task checkpoints of the model in force, in time linear in
//! their lane runs, so it costs the model's own derivation nothing. `?at=` shows the window
//! that ended at that moment (`Models::then`). A `Server-Timing` header says what it took.

use agent_coord_shared::dashboard::derive::lane_timeline;
use agent_coord_shared::dashboard::derive::lane_timeline::Window;
use agent_coord_shared::dashboard::model::LaneTimeline;
use agent_coord_shared::dashboard::model::TIMELINE_HOURS;
use axum::extract::Query;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::routing::get;
use axum::Json;
use axum::Router;

use super::blocking;
use crate::serve::error::ApiError;
use crate::serve::error::ApiResult;
use crate::serve::model::models::Models;
use crate::serve::model::models::Then;
use crate::serve::state::AppState;

/// The lane routes.
pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/api/lanes/timeline", get(lanes_timeline))
}

/// `?hours=` is read here, not by the extractor, so a bad value gets the API's one error
/// shape with the accepted range.
#[derive(Debug, Default, serde::Deserialize)]
struct Params {
    #[serde(default)]
    hours: Option<String>,
    /// The window that ended at this moment (a commit or an RFC 3339 time).
    #[serde(default)]
    at: Option<String>,
}

async fn lanes_timeline(
    State(s): State<Models>,
    Query(params): Query<Params>,
) -> ApiResult<Response> {
    let (timeline, took) = blocking(move || {
        let Then { built, clock } = s.built_at(params.at.as_deref())?;
        let window = match params.hours.as_deref() {
            Some(raw) => Window::parse(clock, raw),
            None => Window::ending(clock, TIMELINE_HOURS),
        }
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.to_string()))?;
        let started = std::time::Instant::now();
        let timeline: LaneTimeline = lane_timeline::timeline(&built.inputs.tasks, &window);
        Ok((timeline, started.elapsed()))
    })
    .await?;
    let timing = format!("timeline;dur={:.2}", took.as_secs_f64() * 1e3);
    Ok(([("server-timing", timing)], Json(timeline)).into_response())
}
