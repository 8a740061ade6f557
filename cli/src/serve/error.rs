//! The server's one error type: a status and one sentence, answered as `{"error": "..."}`,
//! and the one table wording the dashboard writes' typed refusals for the dashboard.
//!
//! A 4xx says what was wrong with the request. A 5xx is the server's own trouble: it is
//! logged with its details and the client gets a generic sentence (never a local path).

use agent_coord_shared::dashboard::act::annotate::AnnotateError;
use agent_coord_shared::dashboard::act::writes::ImportError;
use agent_coord_shared::dashboard::act::writes::StopError;
use agent_coord_shared::dashboard::model::ErrorAnswer;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::Json;

use crate::command_error::CommandError;
use crate::command_error::ErrorKind;
use crate::store::StoreError;
use crate::transact::WriteError;

/// What a client sees of a 503: the state could not be read or written just now.
const UNAVAILABLE: &str =
    "The coordination state is unavailable right now; try again (the server log has details).";
/// What a client sees of a 500.
const INTERNAL: &str = "The dashboard server failed; the server log has details.";

/// An API error: a status and one sentence.
#[derive(Debug)]
pub(crate) struct ApiError {
    pub(crate) status: StatusCode,
    pub(crate) message: String,
}

/// A handler's result.
pub(crate) type ApiResult<T> = Result<T, ApiError>;

impl ApiError {
    /// Returns an error with `status` and `message`.
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
        }
    }

    /// Returns a 500 whose `message` only the server log sees.
    pub(crate) fn internal(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }

    /// Returns a 400 saying what was wrong with the request.
    fn bad_request(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    /// Returns a 503 whose cause only the server log sees.
    fn unavailable(cause: &impl std::error::Error) -> Self {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, cause.to_string())
    }
}

impl From<ImportError> for ApiError {
    fn from(e: ImportError) -> Self {
        match e {
            ImportError::InvalidPlan(e) => ApiError::bad_request(e.to_string()),
            ImportError::InvalidBatchId(e) => ApiError::bad_request(e.to_string()),
            ImportError::Exists { path } => ApiError::new(
                StatusCode::CONFLICT,
                format!("Batch plan {path} already exists."),
            ),
            ImportError::Unreadable(e) => ApiError::unavailable(&e),
        }
    }
}

impl From<StopError> for ApiError {
    fn from(e: StopError) -> Self {
        match e {
            StopError::MissingBatchId => ApiError::bad_request("Batch id is required."),
            StopError::UnsafeBatchId { .. } => ApiError::bad_request(
                "Batch id must use only letters, numbers, dot, underscore, and hyphen.",
            ),
            StopError::InvalidBatchId(e) => ApiError::bad_request(e.to_string()),
            StopError::UnknownBatch { batch } => ApiError::new(
                StatusCode::NOT_FOUND,
                format!("Batch {batch} is not in the coordination state."),
            ),
            StopError::Unreadable(e) => ApiError::unavailable(&e),
            // Reading the state or drawing an event id: the server's trouble, not the request's.
            StopError::Recording(e) => ApiError::unavailable(&e),
        }
    }
}

impl From<AnnotateError> for ApiError {
    fn from(e: AnnotateError) -> Self {
        match e {
            AnnotateError::Invalid(e) => ApiError::bad_request(e.to_string()),
            AnnotateError::Unreadable(e) => ApiError::unavailable(&e),
        }
    }
}

/// A refused write answers with the refusal; the notices before it are the CLI's stderr
/// lines and are left to the server log.
impl<E> From<WriteError<E>> for ApiError
where
    ApiError: From<E>,
{
    fn from(e: WriteError<E>) -> Self {
        match e {
            WriteError::Refused { error, notices } => {
                for notice in notices {
                    tracing::info!(%notice, "before a refused write");
                }
                ApiError::from(error)
            }
            WriteError::Failed(e) => <ApiError as From<CommandError>>::from(e),
        }
    }
}

impl From<CommandError> for ApiError {
    fn from(e: CommandError) -> Self {
        let status = match e.kind {
            ErrorKind::Usage | ErrorKind::StackUsage => StatusCode::BAD_REQUEST,
            ErrorKind::ClaimRefused => StatusCode::CONFLICT,
            ErrorKind::Operational => StatusCode::SERVICE_UNAVAILABLE,
        };
        ApiError::new(status, e.message)
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        ApiError::from(CommandError::from(e))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let message = if self.status.is_server_error() {
            tracing::error!(status = self.status.as_u16(), error = %self.message, "request failed");
            if self.status == StatusCode::SERVICE_UNAVAILABLE {
                UNAVAILABLE.to_owned()
            } else {
                INTERNAL.to_owned()
            }
        } else {
            self.message
        };
        (self.status, Json(ErrorAnswer { error: message })).into_response()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    async fn body_of(e: ApiError) -> (StatusCode, String) {
        let resp = e.into_response();
        let status = resp.status();
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .expect("body");
        (status, String::from_utf8_lossy(&bytes).into_owned())
    }

    #[tokio::test]
    async fn server_errors_never_show_their_details() {
        let e = ApiError::from(CommandError::operational(
            "cannot open coordination repository at /home/me/state.git: gone",
        ));
        let (status, body) = body_of(e).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(!body.contains("/home/me"), "{body}");
        assert!(body.contains(UNAVAILABLE), "{body}");
        let (status, body) = body_of(ApiError::internal("join error at /tmp/x")).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(body, json!({ "error": INTERNAL }).to_string());
    }

    #[tokio::test]
    async fn dashboard_refusals_say_the_dashboard_words() {
        let cases: [(ApiError, StatusCode, &str); 4] = [
            (
                ImportError::Exists {
                    path: "batches/b-live.json".into(),
                }
                .into(),
                StatusCode::CONFLICT,
                "Batch plan batches/b-live.json already exists.",
            ),
            (
                StopError::UnknownBatch {
                    batch: "b-inf".parse().expect("batch id"),
                }
                .into(),
                StatusCode::NOT_FOUND,
                "Batch b-inf is not in the coordination state.",
            ),
            (
                StopError::UnsafeBatchId { id: "../x".into() }.into(),
                StatusCode::BAD_REQUEST,
                "Batch id must use only letters, numbers, dot, underscore, and hyphen.",
            ),
            (
                StopError::MissingBatchId.into(),
                StatusCode::BAD_REQUEST,
                "Batch id is required.",
            ),
        ];
        for (e, status, message) in cases {
            assert_eq!(
                body_of(e).await,
                (status, json!({ "error": message }).to_string())
            );
        }
    }

    #[tokio::test]
    async fn client_errors_say_what_was_wrong() {
        let (status, body) =
            body_of(ApiError::from(CommandError::usage("Batch id is required."))).await;
        assert_eq!(
            (status, body.as_str()),
            (
                StatusCode::BAD_REQUEST,
                r#"{"error":"Batch id is required."}"#
            )
        );
    }
}
