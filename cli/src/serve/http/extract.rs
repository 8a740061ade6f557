//! The extractors the two writes run through, in order: the peer is on this machine
//! ([`FromThisMachine`]), then the body is JSON of at most [`BODY_LIMIT`] bytes
//! ([`ApiJson`]). Each refusal is an [`ApiError`], so bad input always gets one shape.

use std::marker::PhantomData;
use std::net::SocketAddr;

use axum::extract::ConnectInfo;
use axum::extract::FromRef;
use axum::extract::FromRequest;
use axum::extract::FromRequestParts;
use axum::extract::Request;
use axum::http::header;
use axum::http::request::Parts;
use axum::http::StatusCode;
use serde::de::DeserializeOwned;

use super::guard;
use super::guard::Access;
use super::limits::Limits;
use crate::serve::error::ApiError;

/// Largest request body a write accepts.
pub(crate) const BODY_LIMIT: usize = 256 * 1024;

/// A write that only this machine may send; its name starts the refusal.
pub(crate) trait LocalWrite {
    /// What the write sends, as the refusal names it ("Batch plans").
    const NAME: &'static str;
    /// What the refusal says cannot be done to it ("sent", "changed").
    const VERB: &'static str = "sent";
}

/// Admits a request only from a peer on this machine (loopback, or an address of one of
/// its interfaces): the kernel's peer address decides, never a forwarded header.
pub(crate) struct FromThisMachine<W>(PhantomData<W>);

impl<S, W> FromRequestParts<S> for FromThisMachine<W>
where
    S: Send + Sync,
    Access: FromRef<S>,
    W: LocalWrite,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, s: &S) -> Result<Self, ApiError> {
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0.ip())
            .ok_or_else(|| ApiError::internal("the connection has no peer address"))?;
        if !Access::from_ref(s).is_machine_local(peer) {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                format!(
                    "{} can only be {} from the machine running the dashboard. Remote viewers have read-only access.",
                    W::NAME,
                    W::VERB
                ),
            ));
        }
        Ok(FromThisMachine(PhantomData))
    }
}

/// A JSON request body: `Content-Type: application/json` (else 415), at most
/// [`BODY_LIMIT`] bytes (else 413), received in full (else 400) within the body timeout
/// (else 408), valid JSON (else 400: not UTF-8, or nested deeper than serde_json's
/// recursion limit) of `T`'s shape (else 400, saying so).
pub(crate) struct ApiJson<T>(pub(crate) T);

impl<S, T> FromRequest<S> for ApiJson<T>
where
    S: Send + Sync,
    Limits: FromRef<S>,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, s: &S) -> Result<Self, ApiError> {
        let timeout = Limits::from_ref(s).body_timeout;
        let content_type = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok());
        if !guard::is_json_content_type(content_type) {
            return Err(ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "Writes require Content-Type: application/json.",
            ));
        }
        let declared = req
            .headers()
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > BODY_LIMIT as u64) {
            return Err(too_large());
        }
        let reading = axum::body::to_bytes(req.into_body(), BODY_LIMIT);
        let bytes =
            match tokio::time::timeout(timeout, reading).await {
                Err(_) => {
                    return Err(ApiError::new(
                        StatusCode::REQUEST_TIMEOUT,
                        format!(
                            "Request body was not received within {} s.",
                            timeout.as_secs()
                        ),
                    ))
                }
                Ok(Err(e)) if is_over_limit(&e) => return Err(too_large()),
                Ok(Err(_)) => return Err(ApiError::new(
                    StatusCode::BAD_REQUEST,
                    "Request body was cut short (the connection ended before all of it arrived).",
                )),
                Ok(Ok(bytes)) => bytes,
            };
        serde_json::from_slice(&bytes).map(ApiJson).map_err(|e| {
            let message = match e.classify() {
                serde_json::error::Category::Data => {
                    format!("Request body does not fit this write: {e}")
                }
                _ => format!("Request body is not valid JSON: {e}"),
            };
            ApiError::new(StatusCode::BAD_REQUEST, message)
        })
    }
}

fn too_large() -> ApiError {
    ApiError::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("Request body is larger than {} KiB.", BODY_LIMIT / 1024),
    )
}

/// Reports whether reading a body failed because it passed the limit (rather than being
/// cut short).
fn is_over_limit(e: &axum::Error) -> bool {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if err.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        source = err.source();
    }
    false
}
