//! `GET /api/dashboard`: the whole model, serialised once per derivation (by the first request
//! that asks for all of it) and shared; with
//! `?view=…` (what the page asks for) only what one page shows, cut from it per request
//! (`shared::dashboard::view::slice`).

use agent_coord_shared::dashboard::view::slice;
use agent_coord_shared::dashboard::view::slice::View;
use axum::body::Body;
use axum::body::Bytes;
use axum::extract::Query;
use axum::extract::State;
use axum::http::header;
use axum::http::HeaderValue;
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::get;
use axum::Router;

use super::blocking;
use crate::serve::error::ApiError;
use crate::serve::error::ApiResult;
use crate::serve::model::models::Models;
use crate::serve::state::AppState;

/// The dashboard route.
pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/api/dashboard", get(dashboard_show))
}

async fn dashboard_show(
    State(s): State<Models>,
    Query(params): Query<Vec<(String, String)>>,
) -> ApiResult<Response> {
    let param = |k: &str| {
        params
            .iter()
            .find(|(name, _)| name == k)
            .map(|(_, v)| v.as_str())
    };
    let view = View::from_params(param);
    if let (Some(asked), None) = (param("view"), &view) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            format!(
                "Unknown view {asked:?}; use one of summary, overview, operator, batches, machines, health, or no view for the whole model."
            ),
        ));
    }
    let (built, fresh, body, paid) = blocking(move || {
        // Only the serial of the model cached before: holding that model here would keep
        // the cache from updating it in place (it would copy it instead).
        let previous = s.last_serial();
        let built = s.built()?;
        let fresh = previous != Some(built.serial);
        // What this request serialises: its slice, or the whole model when it is the first
        // to ask for all of it.
        let (body, paid) = match view {
            Some(view) => {
                let started = std::time::Instant::now();
                let cut = slice::slice(&built.model, &view);
                let json = serde_json::to_vec(&cut)
                    .map_err(|e| ApiError::internal(format!("cannot serialise the model: {e}")))?;
                (Bytes::from(json), Some(("slice", started.elapsed())))
            }
            None => {
                let (json, took) = built.json();
                (json, took.map(|t| ("json", t)))
            }
        };
        Ok((built, fresh, body, paid))
    })
    .await?;
    let mut response = Response::new(Body::from(body));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    let mut timing = Vec::new();
    if fresh {
        // This request paid for the derivation: say what it cost (browser dev tools show it).
        let t = built.timing;
        timing.push(format!(
            "model;dur={:.2};desc=\"{}\"",
            t.model.as_secs_f64() * 1e3,
            if t.updated { "updated" } else { "derived" },
        ));
    }
    if let Some((what, took)) = paid {
        timing.push(format!("{what};dur={:.2}", took.as_secs_f64() * 1e3));
    }
    if !timing.is_empty() {
        if let Ok(v) = HeaderValue::from_str(&timing.join(", ")) {
            response.headers_mut().insert("server-timing", v);
        }
    }
    Ok(response)
}
