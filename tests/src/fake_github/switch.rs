//! The answer switch: the test makes every REST request fail the way GitHub fails as a
//! whole — every token refused (401 `Bad credentials`), or the rate limit spent (403 with
//! `x-ratelimit-remaining: 0`, `x-ratelimit-reset` and `retry-after`) — until switched back.
//! Requests answered by the switch are counted and logged like any other.

use axum::body::Body;
use axum::http::HeaderValue;
use axum::http::Response;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use serde::Deserialize;
use serde::Serialize;
use serde_json::json;

use super::error::ApiError;
use super::request::RATE_LIMIT;

/// How the fake answers REST requests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "mode")]
pub enum Answer {
    /// As the routes say.
    #[default]
    Normal,
    /// 401 for every request, whatever its token.
    Unauthorized,
    /// 403 with the rate limit spent; `retry_after` seconds in `retry-after`.
    RateLimited {
        /// The `retry-after` value, in seconds.
        retry_after: u64,
    },
}

impl Answer {
    /// The response the switch gives instead of the routes' (`None`: the routes answer).
    pub fn response(self) -> Option<Response<Body>> {
        match self {
            Answer::Normal => None,
            Answer::Unauthorized => Some(ApiError::Unauthorized("Bad credentials").into_response()),
            Answer::RateLimited { retry_after } => {
                let reset =
                    chrono::Utc::now().timestamp() + i64::try_from(retry_after).unwrap_or(0);
                let mut response = (
                    StatusCode::FORBIDDEN,
                    Json(json!({ "message": "API rate limit exceeded" })),
                )
                    .into_response();
                let h = response.headers_mut();
                h.insert("x-ratelimit-limit", HeaderValue::from(RATE_LIMIT));
                h.insert("x-ratelimit-remaining", HeaderValue::from(0u64));
                h.insert("x-ratelimit-reset", HeaderValue::from(reset));
                h.insert("retry-after", HeaderValue::from(retry_after));
                Some(response)
            }
        }
    }
}
