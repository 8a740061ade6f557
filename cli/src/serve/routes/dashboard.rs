//! `GET /api/dashboard`: the whole model, serialised once per derivation (by the first request
//! that asks for all of it) and shared; with
//! `?view=…` (what the page asks for) only what one page shows, cut from it per request
//! (`shared::dashboard::view::slice`). `?at=<commit|RFC 3339 time>` answers the same for that
//! moment (`Models::then`), marked as the past. Right after a start, while the first model
//! is derived, views are cut from the model the last run saved (`Models::served`).

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
use crate::serve::model::models::Served;
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
    // `?at=` asks for the past: a commit or an RFC 3339 time.
    let at = param("at").map(str::to_owned);
    let (derived, body, paid) = blocking(move || {
        // Only the serial of the model cached before: holding that model here would keep
        // the cache from updating it in place (it would copy it instead).
        let previous = s.last_serial();
        let (model, built) = match s.served(at.as_deref())? {
            Served::Built(built) => (built.model.clone(), Some(built)),
            Served::Restored(model) => (model, None),
        };
        // What the model's derivation cost, when this request paid for it.
        let derived = built
            .as_ref()
            .filter(|b| at.is_none() && previous != Some(b.serial))
            .map(|b| b.timing);
        // What this request serialises: its slice, or the whole model (once per derived
        // model: the first request to ask for all of it).
        let (body, paid) = match (view, &built) {
            (Some(view), _) => {
                let started = std::time::Instant::now();
                let cut = slice::slice(&model, &view);
                (to_json(&cut)?, Some(("slice", started.elapsed())))
            }
            (None, Some(built)) => {
                let (json, took) = built.json();
                (json, took.map(|t| ("json", t)))
            }
            (None, None) => {
                let started = std::time::Instant::now();
                (to_json(&*model)?, Some(("json", started.elapsed())))
            }
        };
        Ok((derived, body, paid))
    })
    .await?;
    let mut response = Response::new(Body::from(body));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    let mut timing = Vec::new();
    if let Some(t) = derived {
        // This request paid for the derivation: say what it cost (browser dev tools show it).
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

fn to_json(value: &impl serde::Serialize) -> ApiResult<Bytes> {
    serde_json::to_vec(value)
        .map(Bytes::from)
        .map_err(|e| ApiError::internal(format!("cannot serialise the model: {e}")))
}
