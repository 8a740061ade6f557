//! `GET /api/dashboard`: the whole model, serialised once per derivation and shared.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::header;
use axum::http::HeaderValue;
use axum::response::Response;
use axum::routing::get;
use axum::Router;

use crate::serve::error::ApiResult;
use crate::serve::state::blocking;
use crate::serve::state::AppState;

/// The dashboard route.
pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/api/dashboard", get(dashboard_show))
}

async fn dashboard_show(State(s): State<AppState>) -> ApiResult<Response> {
    let (built, fresh) = blocking(move || {
        let previous = s.last_built();
        let built = s.built()?;
        let fresh = previous.is_none_or(|p| !Arc::ptr_eq(&p, &built));
        Ok((built, fresh))
    })
    .await?;
    let mut response = Response::new(Body::from(built.json.clone()));
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if fresh {
        // This request paid for the derivation: say what it cost (browser dev tools show it).
        let t = built.timing;
        let value = format!(
            "model;dur={:.2};desc=\"{}\", json;dur={:.2}",
            t.model.as_secs_f64() * 1e3,
            if t.updated { "updated" } else { "derived" },
            t.json.as_secs_f64() * 1e3
        );
        if let Ok(v) = HeaderValue::from_str(&value) {
            response.headers_mut().insert("server-timing", v);
        }
    }
    Ok(response)
}
