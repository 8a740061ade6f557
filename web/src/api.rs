//! Every HTTP call the page makes, over the browser's `fetch`.
//!
//! Errors come back as operator-facing strings: the server's `{"error": "..."}` message when
//! it sent one, else the HTTP status and a short excerpt of the body.

use serde::de::DeserializeOwned;
use serde_json::Value;
use wasm_bindgen::JsCast;
use wasm_bindgen::JsValue;
use wasm_bindgen_futures::JsFuture;
use web_sys::Headers;
use web_sys::RequestInit;
use web_sys::Response;

/// The longest body excerpt quoted in an error.
const EXCERPT: usize = 200;

/// `GET url`, decoded as JSON.
pub async fn get_json<T: DeserializeOwned>(url: &str) -> Result<T, String> {
    let init = RequestInit::new();
    init.set_method("GET");
    let (status, body) = send(url, &init).await?;
    decode(status, &body)
}

/// `POST url` with a JSON body, decoded as JSON.
pub async fn post_json<T: DeserializeOwned>(url: &str, body: &Value) -> Result<T, String> {
    send_json("POST", url, body).await
}

/// `PUT url` with a JSON body, decoded as JSON.
pub async fn put_json<T: DeserializeOwned>(url: &str, body: &Value) -> Result<T, String> {
    send_json("PUT", url, body).await
}

async fn send_json<T: DeserializeOwned>(
    method: &str,
    url: &str,
    body: &Value,
) -> Result<T, String> {
    let headers = Headers::new().map_err(js_error)?;
    headers
        .set("Content-Type", "application/json")
        .map_err(js_error)?;
    let init = RequestInit::new();
    init.set_method(method);
    init.set_headers(&headers);
    init.set_body(&JsValue::from_str(&body.to_string()));
    let (status, text) = send(url, &init).await?;
    decode(status, &text)
}

/// `DELETE url` with a JSON body; the response body is not read beyond errors.
pub async fn delete_json(url: &str, body: &Value) -> Result<(), String> {
    let headers = Headers::new().map_err(js_error)?;
    headers
        .set("Content-Type", "application/json")
        .map_err(js_error)?;
    let init = RequestInit::new();
    init.set_method("DELETE");
    init.set_headers(&headers);
    init.set_body(&JsValue::from_str(&body.to_string()));
    let (status, text) = send(url, &init).await?;
    if (200..300).contains(&status) {
        Ok(())
    } else {
        Err(server_error(status, &text))
    }
}

async fn send(url: &str, init: &RequestInit) -> Result<(u16, String), String> {
    let window = web_sys::window().ok_or_else(|| "no browser window".to_string())?;
    let response: Response = JsFuture::from(window.fetch_with_str_and_init(url, init))
        .await
        .map_err(|e| format!("network error: {}", describe(&e)))?
        .dyn_into()
        .map_err(js_error)?;
    let text = JsFuture::from(response.text().map_err(js_error)?)
        .await
        .map_err(js_error)?
        .as_string()
        .unwrap_or_default();
    Ok((response.status(), text))
}

fn decode<T: DeserializeOwned>(status: u16, body: &str) -> Result<T, String> {
    if !(200..300).contains(&status) {
        return Err(server_error(status, body));
    }
    serde_json::from_str(body).map_err(|e| format!("unreadable response (HTTP {status}): {e}"))
}

/// The server's own error message, else `HTTP <status>: <excerpt>`.
fn server_error(status: u16, body: &str) -> String {
    let message = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| v.get("error").and_then(Value::as_str).map(str::to_string));
    match message {
        Some(m) if !m.trim().is_empty() => m,
        _ => {
            let excerpt: String = body.trim().chars().take(EXCERPT).collect();
            if excerpt.is_empty() {
                format!("HTTP {status}")
            } else {
                format!("HTTP {status}: {excerpt}")
            }
        }
    }
}

fn js_error(value: JsValue) -> String {
    describe(&value)
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
