//! The front end compiled into the binary (see `cli/build.rs`), served as static files
//! with the single-page fallback for client routes.

use axum::extract::Request;
use axum::http::header;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::response::Response;

use super::error::ApiError;

include!(concat!(env!("OUT_DIR"), "/web_assets.rs"));

/// Returns the file `name` and its content type.
pub(crate) fn get(name: &str) -> Option<(&'static [u8], &'static str)> {
    let (_, bytes) = ASSETS.iter().find(|(n, _)| *n == name)?;
    Some((bytes, content_type(name)))
}

/// Reports whether a front-end bundle was embedded at build time.
pub(crate) fn bundled() -> bool {
    ASSETS.iter().any(|(n, _)| *n == "index.html")
}

fn content_type(name: &str) -> &'static str {
    match name.rsplit('.').next().unwrap_or_default() {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "css" => "text/css; charset=utf-8",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "json" => "application/json",
        _ => "application/octet-stream",
    }
}

/// Static files from the embedded bundle, with the SPA fallback for client routes.
pub(crate) async fn static_files(req: Request) -> Response {
    let path = req.uri().path();
    if path.starts_with("/api/") || path == "/api" {
        return ApiError::new(StatusCode::NOT_FOUND, format!("No such API route: {path}"))
            .into_response();
    }
    let name = path.trim_start_matches('/');
    if let Some((bytes, ct)) = get(name).filter(|_| !name.is_empty()) {
        let cache = if name.ends_with(".html") {
            "no-cache"
        } else {
            "public, max-age=31536000, immutable"
        };
        return (
            [(header::CONTENT_TYPE, ct), (header::CACHE_CONTROL, cache)],
            bytes,
        )
            .into_response();
    }
    match get("index.html") {
        Some((bytes, ct)) => (
            [
                (header::CONTENT_TYPE, ct),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            bytes,
        )
            .into_response(),
        None => (
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            NO_BUNDLE_PAGE,
        )
            .into_response(),
    }
}

/// The page served when the binary was built without the front end.
pub(crate) const NO_BUNDLE_PAGE: &str = "<!doctype html>
<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Agent Coordination Dashboard</title></head>
<body style=\"font-family: system-ui, sans-serif; max-width: 42rem; margin: 3rem auto; line-height: 1.5\">
<h1>Agent Coordination Dashboard</h1>
<p>This <code>agent-coord</code> binary was built without the dashboard front end, so only the
JSON API is available: <a href=\"/api/dashboard\">/api/dashboard</a>,
<a href=\"/api/health\">/api/health</a>.</p>
<p>To build the front end into the binary, from the source tree run <code>make run</code>, or
<code>make web</code> followed by <code>cargo build --release -p agent-coord</code>.</p>
</body></html>
";
