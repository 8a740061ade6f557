//! The connection loop and the request pipeline around the routes: authentication, armed faults,
//! request log and counters, the simulated rate limit, and ETags with 304 answers.
//!
//! Connections are served by hand with hyper rather than `axum::serve`, because a fault must be
//! able to close a connection without writing any response: the service then returns an error,
//! and hyper drops the connection with nothing written (see `fault_drop_*` tests).

use std::path::Path;
use std::path::PathBuf;

use axum::body::Body;
use axum::http::header;
use axum::http::HeaderMap;
use axum::http::HeaderValue;
use axum::http::Method;
use axum::http::Request;
use axum::http::Response;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use sha2::Digest;
use sha2::Sha256;
use tokio::net::TcpListener;
use tower::ServiceExt;

use super::control;
use super::error::ApiError;
use super::request::Login;
use super::request::RATE_LIMIT;
use super::routes;
use super::state::FaultMode;
use super::state::RequestLog;
use super::state::Shared;
use super::state::World;

/// The largest response body the ETag layer reads; the fake's pages are far smaller.
const MAX_BODY: usize = 64 << 20;

/// The error a service returns to make hyper close the connection without a response.
#[derive(Debug, thiserror::Error)]
#[error("connection dropped by an armed fault")]
pub struct Dropped;

/// A bound, not yet serving, fake GitHub.
pub struct Listening {
    listener: TcpListener,
    app: App,
    url: String,
}

impl Listening {
    /// Returns `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Accepts and serves connections until the future is dropped.
    pub async fn serve(self) {
        loop {
            let stream = match self.listener.accept().await {
                Ok((stream, _)) => stream,
                Err(e) => {
                    // Out of file descriptors and the like: wait instead of spinning.
                    eprintln!("fake-github: accept: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    continue;
                }
            };
            let app = self.app.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req: Request<Incoming>| {
                    let app = app.clone();
                    async move { app.handle(req.map(Body::new)).await }
                });
                // An error here is a dropped or broken connection; either way it is over.
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    }
}

/// Binds 127.0.0.1:`port` (0 = any free port) and prepares an empty world whose repositories
/// live under `root`.
pub async fn bind(root: &Path, port: u16) -> std::io::Result<Listening> {
    std::fs::create_dir_all(root)?;
    let root: PathBuf = std::fs::canonicalize(root)?;
    let listener = TcpListener::bind(("127.0.0.1", port)).await?;
    let url = format!("http://{}", listener.local_addr()?);
    let shared = Shared::new(World::new(root, url.clone()));
    let app = App {
        api: routes::router().with_state(shared.clone()),
        control: control::router().with_state(shared.clone()),
        shared,
    };
    Ok(Listening { listener, app, url })
}

/// The routers and the world they share.
#[derive(Clone)]
struct App {
    shared: Shared,
    api: Router,
    control: Router,
}

impl App {
    /// Answers one request, or returns [`Dropped`] to close the connection without an answer.
    async fn handle(&self, mut req: Request<Body>) -> Result<Response<Body>, Dropped> {
        let path = req.uri().path().to_owned();
        if path == "/_control" || path.starts_with("/_control/") {
            return Ok(call(&self.control, req).await);
        }
        let method = req.method().clone();
        let mut log = RequestLog {
            method: method.to_string(),
            path,
            query: req.uri().query().map(str::to_owned),
            status: 0,
            login: None,
            fault: None,
        };
        let auth = self.authenticate(req.headers());
        let fault = {
            let mut world = self.shared.lock();
            world.stats.requests += 1;
            if let Some(response) = world.answer.response() {
                log.status = response.status().as_u16();
                world.requests.push(log);
                return Ok(response);
            }
            match &auth {
                Ok(_) => world.take_fault(method.as_str(), &log.path),
                Err(_) => None,
            }
        };
        let login = match auth {
            Ok(login) => login,
            Err(e) => {
                let response = e.into_response();
                log.status = response.status().as_u16();
                self.shared.lock().requests.push(log);
                return Ok(response);
            }
        };
        log.login = Some(login.clone());
        log.fault = fault;
        match fault {
            Some(FaultMode::DropBeforeApply) => {
                self.shared.lock().requests.push(log);
                return Err(Dropped);
            }
            Some(FaultMode::Status500) => {
                let response = ApiError::Fault.into_response();
                log.status = response.status().as_u16();
                return Ok(self.finish(log, &login, response));
            }
            Some(FaultMode::DropAfterApply) | None => {}
        }
        let if_none_match = req.headers().get(header::IF_NONE_MATCH).cloned();
        req.extensions_mut().insert(Login(login.clone()));
        let mut response = call(&self.api, req).await;
        if fault == Some(FaultMode::DropAfterApply) {
            self.shared.lock().requests.push(log);
            return Err(Dropped);
        }
        if method == Method::GET && response.status() == StatusCode::OK {
            response = with_etag(response, if_none_match.as_ref()).await;
        }
        log.status = response.status().as_u16();
        Ok(self.finish(log, &login, response))
    }

    /// Returns the login of the request's token, or the 401 GitHub would answer.
    fn authenticate(&self, headers: &HeaderMap) -> Result<String, ApiError> {
        let Some(value) = headers.get(header::AUTHORIZATION) else {
            return Err(ApiError::Unauthorized("Requires authentication"));
        };
        let value = value.to_str().unwrap_or_default().trim();
        let token = value
            .strip_prefix("Bearer ")
            .or_else(|| value.strip_prefix("token "))
            .map(str::trim);
        let world = self.shared.lock();
        token
            .and_then(|t| world.tokens.get(t))
            .cloned()
            .ok_or(ApiError::Unauthorized("Bad credentials"))
    }

    /// Charges the rate limit (304s are free), sets the rate-limit headers and logs the request.
    fn finish(&self, log: RequestLog, login: &str, mut response: Response<Body>) -> Response<Body> {
        let mut world = self.shared.lock();
        let not_modified = response.status() == StatusCode::NOT_MODIFIED;
        if not_modified {
            world.stats.not_modified += 1;
        }
        let remaining = world
            .stats
            .rate_limit_remaining
            .entry(login.to_owned())
            .or_insert(RATE_LIMIT);
        if !not_modified {
            *remaining = remaining.saturating_sub(1);
        }
        let remaining = *remaining;
        world.requests.push(log);
        drop(world);
        let headers = response.headers_mut();
        headers.insert("x-ratelimit-limit", HeaderValue::from(RATE_LIMIT));
        headers.insert("x-ratelimit-remaining", HeaderValue::from(remaining));
        headers.insert(
            "x-ratelimit-used",
            HeaderValue::from(RATE_LIMIT - remaining),
        );
        headers.insert("x-ratelimit-resource", HeaderValue::from_static("core"));
        response
    }
}

/// Runs a request through a router (whose error type is `Infallible`).
async fn call(router: &Router, req: Request<Body>) -> Response<Body> {
    match router.clone().oneshot(req).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// Adds `ETag: W/"<sha256 of body>"` to a 200 answer, or turns it into an empty 304 when the
/// request's `If-None-Match` names that tag.
async fn with_etag(
    response: Response<Body>,
    if_none_match: Option<&HeaderValue>,
) -> Response<Body> {
    let (mut parts, body) = response.into_parts();
    let bytes = match axum::body::to_bytes(body, MAX_BODY).await {
        Ok(bytes) => bytes,
        Err(e) => {
            return ApiError::Internal(format!("reading a response body: {e}")).into_response()
        }
    };
    let tag = format!("W/\"{:x}\"", Sha256::digest(&bytes));
    let Ok(tag_value) = HeaderValue::from_str(&tag) else {
        return ApiError::Internal(format!("bad ETag {tag}")).into_response();
    };
    parts.headers.insert(header::ETAG, tag_value.clone());
    if if_none_match.is_some_and(|v| etag_matches(v, &tag)) {
        let mut not_modified = Response::new(Body::empty());
        *not_modified.status_mut() = StatusCode::NOT_MODIFIED;
        not_modified.headers_mut().insert(header::ETAG, tag_value);
        return not_modified;
    }
    Response::from_parts(parts, Body::from(bytes))
}

/// Returns whether an `If-None-Match` value names `tag` (weak comparison, as GitHub does).
fn etag_matches(if_none_match: &HeaderValue, tag: &str) -> bool {
    let strip = |t: &str| t.trim().trim_start_matches("W/").to_owned();
    let wanted = strip(tag);
    if_none_match
        .to_str()
        .unwrap_or_default()
        .split(',')
        .any(|t| t.trim() == "*" || strip(t) == wanted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etags_compare_weakly_and_in_lists() {
        let tag = "W/\"abc\"";
        assert!(etag_matches(&HeaderValue::from_static("W/\"abc\""), tag));
        assert!(etag_matches(&HeaderValue::from_static("\"abc\""), tag));
        assert!(etag_matches(
            &HeaderValue::from_static("\"x\", W/\"abc\""),
            tag
        ));
        assert!(!etag_matches(&HeaderValue::from_static("\"abd\""), tag));
    }
}
