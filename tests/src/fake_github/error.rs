//! The one error type of the fake's handlers ([`ApiError`], answered in GitHub's JSON shape) and
//! the one JSON body extractor ([`ApiJson`]), so bad input always gets the same answer.

use axum::body::Bytes;
use axum::extract::FromRequest;
use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::Json;
use serde::de::DeserializeOwned;
use serde_json::json;

/// Why a request failed, answered as GitHub would.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// No or unknown credentials (401).
    #[error("{0}")]
    Unauthorized(&'static str),
    /// Unknown route, repository, issue or pull request (404).
    #[error("Not Found")]
    NotFound,
    /// A body that is not the JSON the route takes (400).
    #[error("Problems parsing JSON: {0}")]
    BadJson(String),
    /// A request GitHub would refuse as invalid (422), with the reason.
    #[error("Validation Failed: {0}")]
    Validation(String),
    /// A route that exists but refuses the method (405), with GitHub's message.
    #[error("{0}")]
    MethodNotAllowed(String),
    /// Something that existed and is no more, such as expired job logs (410), with the message.
    #[error("{0}")]
    Gone(String),
    /// An armed `Status500` fault (500); expected, so nothing is logged.
    #[error("armed fault")]
    Fault,
    /// The fake itself failed (500); the detail goes to stderr, not to the client.
    #[error("internal error: {0}")]
    Internal(String),
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, body) = match &self {
            ApiError::Unauthorized(message) => {
                (StatusCode::UNAUTHORIZED, json!({ "message": message }))
            }
            ApiError::NotFound => (StatusCode::NOT_FOUND, json!({ "message": "Not Found" })),
            ApiError::BadJson(detail) => (
                StatusCode::BAD_REQUEST,
                json!({ "message": "Problems parsing JSON", "detail": detail }),
            ),
            ApiError::Validation(message) => (
                StatusCode::UNPROCESSABLE_ENTITY,
                json!({
                    "message": "Validation Failed",
                    "errors": [{ "code": "custom", "message": message }],
                }),
            ),
            ApiError::MethodNotAllowed(message) => (
                StatusCode::METHOD_NOT_ALLOWED,
                json!({ "message": message }),
            ),
            ApiError::Gone(message) => (StatusCode::GONE, json!({ "message": message })),
            ApiError::Fault => (
                StatusCode::INTERNAL_SERVER_ERROR,
                json!({ "message": "Server Error" }),
            ),
            ApiError::Internal(detail) => {
                // The fake has no logger; stderr is where a test run shows server-side failures.
                eprintln!("fake-github: {detail}");
                (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    json!({ "message": "Server Error" }),
                )
            }
        };
        (status, Json(body)).into_response()
    }
}

/// A JSON body, parsed whatever its `Content-Type` (GitHub does not insist on one).
#[derive(Debug)]
pub struct ApiJson<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for ApiJson<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|e| ApiError::BadJson(e.to_string()))?;
        serde_json::from_slice(&bytes)
            .map(ApiJson)
            .map_err(|e| ApiError::BadJson(e.to_string()))
    }
}
