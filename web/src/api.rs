//! Every HTTP call the page makes, over the browser's `fetch`.
//!
//! Errors come back as an [`ApiError`] whose message is operator-facing: the server's
//! `{"error": "..."}` message when it sent one, else the HTTP status and a short excerpt of
//! the body.

use agent_coord_shared::dashboard::model::ErrorAnswer;
use agent_coord_shared::dashboard::model::ImportBody;
use agent_coord_shared::dashboard::model::Imported;
use agent_coord_shared::dashboard::model::LaneTranscript;
use agent_coord_shared::dashboard::model::TranscriptElsewhere;
use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::JsCast;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use web_sys::Headers;
use web_sys::RequestInit;
use web_sys::Response;

/// The longest body excerpt quoted in an error.
const EXCERPT: usize = 200;

/// Why a request to the server failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    /// The page runs without a browser window to fetch from.
    #[error("no browser window")]
    NoWindow,
    /// The request got no answer (the server is down, the network refused it).
    #[error("network error: {0}")]
    Network(String),
    /// The browser refused a step of the request (building headers, reading the body).
    #[error("{0}")]
    Browser(String),
    /// The server refused the request with a message of its own.
    #[error("{message}")]
    Server {
        /// The HTTP status.
        status: u16,
        /// The server's `error` message.
        message: String,
    },
    /// The server answered an error status without a message; `excerpt` is the start of the
    /// body, empty when there was none.
    #[error("HTTP {status}{}", excerpt_suffix(.excerpt))]
    Status {
        /// The HTTP status.
        status: u16,
        /// The first characters of the body.
        excerpt: String,
    },
    /// The request body could not be written as JSON.
    #[error("request body cannot be encoded: {0}")]
    Unencodable(String),
    /// The server's answer is not the JSON document the page expects.
    #[error("unreadable response (HTTP {status}): {reason}")]
    Unreadable {
        /// The HTTP status.
        status: u16,
        /// What the decoder said.
        reason: String,
    },
}

impl ApiError {
    /// The server's own message, when it refused the request with one.
    pub fn server_message(&self) -> Option<&str> {
        match self {
            Self::Server { message, .. } => Some(message),
            _ => None,
        }
    }
}

/// `: <excerpt>` after the status, nothing without an excerpt.
fn excerpt_suffix(excerpt: &str) -> String {
    if excerpt.is_empty() {
        String::new()
    } else {
        format!(": {excerpt}")
    }
}

/// `GET url`, decoded as JSON; on a page of the past, of that moment (`past::with_at`).
pub async fn get_json<T: DeserializeOwned>(url: &str) -> Result<T, ApiError> {
    let init = RequestInit::new();
    init.set_method("GET");
    let (status, body) = send(&crate::past::with_at(url), &init).await?;
    decode(status, &body)
}

/// What asking for a lane run's transcript answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TranscriptAnswer {
    /// The transcript, rendered.
    Here(LaneTranscript),
    /// Another machine holds it (409): the page names that machine.
    Elsewhere(TranscriptElsewhere),
}

/// `GET /api/items/{owner}/{repo}/{issue}/lane-runs/{n}/transcript`.
pub async fn transcript(repo: &str, issue: &str, n: u64) -> Result<TranscriptAnswer, ApiError> {
    let (owner, name) = repo.split_once('/').unwrap_or((repo, ""));
    let url = format!(
        "/api/items/{}/{}/{}/lane-runs/{n}/transcript",
        crate::format::encode_segment(owner),
        crate::format::encode_segment(name),
        crate::format::encode_segment(issue)
    );
    let init = RequestInit::new();
    init.set_method("GET");
    let (status, body) = send(&url, &init).await?;
    if status == 409 {
        if let Ok(elsewhere) = serde_json::from_str::<TranscriptElsewhere>(&body) {
            return Ok(TranscriptAnswer::Elsewhere(elsewhere));
        }
    }
    decode(status, &body).map(TranscriptAnswer::Here)
}

/// `POST /api/batches/import` with `body` (a launch prompt, or a draft); answers the saved
/// batch's id.
pub async fn import_batch(body: &ImportBody) -> Result<String, ApiError> {
    post_json::<Imported>("/api/batches/import", body)
        .await
        .map(|i| i.batch_id)
}

/// `POST url` with a JSON body, decoded as JSON.
pub async fn post_json<T: DeserializeOwned>(
    url: &str,
    body: &impl Serialize,
) -> Result<T, ApiError> {
    send_json("POST", url, body).await
}

/// `PUT url` with a JSON body, decoded as JSON.
pub async fn put_json<T: DeserializeOwned>(
    url: &str,
    body: &impl Serialize,
) -> Result<T, ApiError> {
    send_json("PUT", url, body).await
}

async fn send_json<T: DeserializeOwned>(
    method: &str,
    url: &str,
    body: &impl Serialize,
) -> Result<T, ApiError> {
    let (status, text) = send(url, &json_request(method, body)?).await?;
    decode(status, &text)
}

/// `DELETE url` with a JSON body; the response body is not read beyond errors.
pub async fn delete_json(url: &str, body: &impl Serialize) -> Result<(), ApiError> {
    let (status, text) = send(url, &json_request("DELETE", body)?).await?;
    if (200..300).contains(&status) {
        Ok(())
    } else {
        Err(server_error(status, &text))
    }
}

/// A `method` request carrying `body` as JSON.
fn json_request(method: &str, body: &impl Serialize) -> Result<RequestInit, ApiError> {
    let body = serde_json::to_string(body).map_err(|e| ApiError::Unencodable(e.to_string()))?;
    let headers = Headers::new().map_err(js_error)?;
    headers
        .set("Content-Type", "application/json")
        .map_err(js_error)?;
    let init = RequestInit::new();
    init.set_method(method);
    init.set_headers(&headers);
    init.set_body(&JsValue::from_str(&body));
    Ok(init)
}

async fn send(url: &str, init: &RequestInit) -> Result<(u16, String), ApiError> {
    let window = web_sys::window().ok_or(ApiError::NoWindow)?;
    let response: Response = JsFuture::from(window.fetch_with_str_and_init(url, init))
        .await
        .map_err(|e| ApiError::Network(describe(&e)))?
        .dyn_into()
        .map_err(js_error)?;
    let text = JsFuture::from(response.text().map_err(js_error)?)
        .await
        .map_err(js_error)?
        .as_string()
        .unwrap_or_default();
    Ok((response.status(), text))
}

fn decode<T: DeserializeOwned>(status: u16, body: &str) -> Result<T, ApiError> {
    if !(200..300).contains(&status) {
        return Err(server_error(status, body));
    }
    serde_json::from_str(body).map_err(|e| ApiError::Unreadable {
        status,
        reason: e.to_string(),
    })
}

/// The server's own error message, else the status and an excerpt of the body.
fn server_error(status: u16, body: &str) -> ApiError {
    match serde_json::from_str::<ErrorAnswer>(body) {
        Ok(ErrorAnswer { error: message }) if !message.trim().is_empty() => {
            ApiError::Server { status, message }
        }
        _ => ApiError::Status {
            status,
            excerpt: body.trim().chars().take(EXCERPT).collect(),
        },
    }
}

fn js_error(value: JsValue) -> ApiError {
    ApiError::Browser(describe(&value))
}

/// A readable description of a thrown JavaScript value.
pub fn describe(value: &JsValue) -> String {
    value
        .as_string()
        .or_else(|| {
            value
                .dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| "unknown browser error".to_string())
}
