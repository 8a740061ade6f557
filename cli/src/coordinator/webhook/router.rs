//! The webhook's one route, `POST /webhook`, and how each delivery is answered, in the
//! order it is checked:
//!
//! | answer | when |
//! |---|---|
//! | 429 (`Retry-After: 1`) | over the request rate (a token bucket, before the body is read) |
//! | 413 | the body is over the limit (1 MiB by default) |
//! | 408 | the body took longer than the body timeout to arrive |
//! | 401 | `X-Hub-Signature-256` is missing, malformed or wrong (logged without the body) |
//! | 400 | no `X-GitHub-Event`, no usable `X-GitHub-Delivery`, or a payload that is not JSON of its event's shape |
//! | 200 | a duplicate `X-GitHub-Delivery` (a replay or a redelivery: nothing woken again), or `ping` |
//! | 202 | accepted: the affected task is woken, or nothing is (an unconfigured repository, logged; an event of no interest) |
//! | 503 | the `--follow` loop no longer takes wakes, or [`WAKES_QUEUED`] wait for it already (the delivery is not remembered, so its redelivery counts) |
//!
//! Only a verified delivery's id is remembered, so an unsigned request cannot make a real
//! delivery look like a duplicate. The answer is a short line of text that GitHub shows in
//! the hook's "Recent Deliveries".

use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::mpsc::SyncSender;
use std::sync::mpsc::TrySendError;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use std::time::Instant;

use agent_coord_shared::coordinator::webhook::dedupe;
use agent_coord_shared::coordinator::webhook::dedupe::Deliveries;
use agent_coord_shared::coordinator::webhook::rate::TokenBucket;
use agent_coord_shared::coordinator::webhook::route;
use agent_coord_shared::coordinator::webhook::route::Route;
use agent_coord_shared::coordinator::webhook::route::Wake;
use agent_coord_shared::coordinator::webhook::signature;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::extract::Request;
use axum::extract::State;
use axum::http::header;
use axum::http::HeaderMap;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::routing::post;
use axum::Router;

/// The path GitHub posts to (the hook's payload URL ends with it).
pub(crate) const PATH: &str = "/webhook";

/// How much a listener takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Limits {
    /// The largest body read, in bytes.
    pub(crate) body: usize,
    /// How long a body may take to arrive.
    pub(crate) body_timeout: Duration,
    /// Requests taken at once before the rate applies.
    pub(crate) burst: u32,
    /// Requests taken per second, sustained.
    pub(crate) per_second: u32,
    /// Delivery ids remembered for duplicates.
    pub(crate) remembered: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            // GitHub caps payloads at 25 MB, but the events a task is woken by are a few
            // kilobytes (a comment is at most 65,536 characters); a lost wake costs one
            // poll_seconds, a 25 MB buffer per unauthenticated request costs memory.
            body: 1 << 20,
            body_timeout: Duration::from_secs(10),
            burst: 30,
            per_second: 10,
            remembered: 4096,
        }
    }
}

/// The listener's state: the secret, the configured repositories, the limits, where wakes
/// go, and what it remembers between deliveries.
#[derive(Clone)]
pub(crate) struct Hooks {
    inner: Arc<Inner>,
}

struct Inner {
    secret: Vec<u8>,
    repos: Vec<String>,
    limits: Limits,
    wakes: SyncSender<Wake>,
    origin: Instant,
    memory: Mutex<Memory>,
}

/// What changes from one delivery to the next.
struct Memory {
    seen: Deliveries,
    bucket: TokenBucket,
    /// Requests refused for the rate since the last notice, and when that was.
    refused: u64,
    noticed: Option<Instant>,
}

/// Wakes that may wait for the `--follow` loop at once (it takes all waiting ones in one
/// tick, so this is only reached while a tick runs long under a flood).
pub(crate) const WAKES_QUEUED: usize = 1024;

/// At most one rate notice on stderr per this long.
const NOTICE_EVERY: Duration = Duration::from_secs(10);

impl Hooks {
    /// Returns the state of a listener that checks deliveries against `secret`, wakes tasks
    /// of `repos` only, and sends each wake to `wakes`.
    pub(crate) fn new(
        secret: Vec<u8>,
        repos: Vec<String>,
        limits: Limits,
        wakes: SyncSender<Wake>,
    ) -> Hooks {
        let memory = Memory {
            seen: Deliveries::new(limits.remembered),
            bucket: TokenBucket::new(limits.burst, limits.per_second),
            refused: 0,
            noticed: None,
        };
        Hooks {
            inner: Arc::new(Inner {
                secret,
                repos,
                limits,
                wakes,
                origin: Instant::now(),
                memory: Mutex::new(memory),
            }),
        }
    }

    fn memory(&self) -> std::sync::MutexGuard<'_, Memory> {
        // A panic while holding it leaves nothing half-written worth refusing service for.
        self.inner
            .memory
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The webhook's router: `POST /webhook`.
pub(crate) fn router(hooks: Hooks) -> Router {
    Router::new()
        .route(PATH, post(deliveries_create))
        .with_state(hooks)
}

/// A delivery's answer: a status and one line of text.
fn answer(status: StatusCode, text: impl Into<String>) -> Response {
    let mut line = text.into();
    line.push('\n');
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        line,
    )
        .into_response()
}

/// Writes one line to stderr (a closed stderr must not take the listener down).
fn log(line: &str) {
    tracing::info!("{line}");
    let _ = writeln!(std::io::stderr(), "{line}");
}

/// Takes one delivery: rate, body, signature, id, then routing (see the module's table).
async fn deliveries_create(State(hooks): State<Hooks>, req: Request) -> Response {
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or_else(|| "-".to_owned(), |c| c.0.to_string());
    if let Some(refused) = over_rate(&hooks) {
        return refused;
    }
    let (parts, body) = req.into_parts();
    let headers = parts.headers;
    let limit = hooks.inner.limits.body;
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return too_large(limit);
    }
    let body = match read_body(body, limit, hooks.inner.limits.body_timeout).await {
        Ok(body) => body,
        Err(refused) => return refused,
    };
    let event = text(&headers, "x-github-event");
    let id = dedupe::check_id(text(&headers, "x-github-delivery"));
    let signed = signature::verify(
        &hooks.inner.secret,
        &body,
        text(&headers, signature::HEADER),
    );
    if let Err(why) = signed {
        // Never the body: it is whatever an unauthenticated sender chose.
        log(&format!(
            "webhook: 401 for delivery {} ({}) from {peer}: {why}",
            id.as_deref().unwrap_or("-"),
            shown_event(event)
        ));
        return answer(StatusCode::UNAUTHORIZED, why.to_string());
    }
    let Some(event) = event.filter(|e| plain_event(e)) else {
        return answer(StatusCode::BAD_REQUEST, "no usable X-GitHub-Event header");
    };
    let id = match id {
        Ok(id) => id.to_owned(),
        Err(why) => return answer(StatusCode::BAD_REQUEST, why.to_string()),
    };
    if !hooks.memory().seen.first_time(&id) {
        tracing::debug!(delivery = %id, event, "duplicate webhook delivery");
        return answer(
            StatusCode::OK,
            format!("duplicate delivery {id}: already taken, nothing woken again"),
        );
    }
    let repos: Vec<&str> = hooks.inner.repos.iter().map(String::as_str).collect();
    match route::route(event, &body, &repos) {
        Ok(Route::Ping) => answer(StatusCode::OK, "pong"),
        Ok(Route::Wake(wake)) => {
            let said = describe(&wake);
            if let Err(e) = hooks.inner.wakes.try_send(wake) {
                // Not acted on: a redelivery of it must not count as a duplicate.
                hooks.memory().seen.forget(&id);
                let why = match e {
                    TrySendError::Full(_) => {
                        "the coordinator is behind on wakes; its next poll reads GitHub"
                    }
                    TrySendError::Disconnected(_) => {
                        "the coordinator is stopping; its next start polls"
                    }
                };
                return answer(StatusCode::SERVICE_UNAVAILABLE, why);
            }
            tracing::debug!(delivery = %id, event, "webhook wakes {said}");
            answer(StatusCode::ACCEPTED, format!("accepted: wakes {said}"))
        }
        Ok(Route::UnknownRepository { repo }) => {
            let repo = shown(&repo, 140);
            log(&format!(
                "webhook: delivery {id} ({event}) is for {repo}, which no followed worker is configured for; ignored"
            ));
            answer(
                StatusCode::ACCEPTED,
                format!("ignored: {repo} is not a configured repository"),
            )
        }
        Ok(Route::Ignored { why }) => answer(StatusCode::ACCEPTED, format!("ignored: {why}")),
        Err(why) => answer(StatusCode::BAD_REQUEST, why.to_string()),
    }
}

/// Takes a token from the bucket; `Some(429)` when there is none (with a notice on stderr
/// at most every [`NOTICE_EVERY`]).
fn over_rate(hooks: &Hooks) -> Option<Response> {
    let now_ms = u64::try_from(hooks.inner.origin.elapsed().as_millis()).unwrap_or(u64::MAX);
    let mut memory = hooks.memory();
    if memory.bucket.admit(now_ms) {
        return None;
    }
    memory.refused += 1;
    if memory.noticed.is_none_or(|t| t.elapsed() >= NOTICE_EVERY) {
        let limits = &hooks.inner.limits;
        log(&format!(
            "webhook: refused {} request(s) over the rate ({} at once, {} per second)",
            memory.refused, limits.burst, limits.per_second
        ));
        memory.refused = 0;
        memory.noticed = Some(Instant::now());
    }
    drop(memory);
    let mut refused = answer(StatusCode::TOO_MANY_REQUESTS, "over the request rate");
    refused
        .headers_mut()
        .insert(header::RETRY_AFTER, header::HeaderValue::from_static("1"));
    Some(refused)
}

/// Reads the body, at most `limit` bytes within `timeout`.
async fn read_body(body: Body, limit: usize, timeout: Duration) -> Result<Vec<u8>, Response> {
    match tokio::time::timeout(timeout, axum::body::to_bytes(body, limit)).await {
        Err(_) => Err(answer(
            StatusCode::REQUEST_TIMEOUT,
            "the body took too long to arrive",
        )),
        Ok(Ok(bytes)) => Ok(bytes.to_vec()),
        Ok(Err(e)) => {
            let over = std::error::Error::source(&e)
                .is_some_and(|s| s.is::<http_body_util::LengthLimitError>())
                || e.to_string().contains("length limit");
            if over {
                Err(too_large(limit))
            } else {
                Err(answer(
                    StatusCode::BAD_REQUEST,
                    "the body could not be read",
                ))
            }
        }
    }
}

fn too_large(limit: usize) -> Response {
    answer(
        StatusCode::PAYLOAD_TOO_LARGE,
        format!("the body is over {limit} bytes"),
    )
}

/// A header's value as text, if it is present and text.
fn text<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Whether an event name is one GitHub could send (lowercase letters and `_`, short).
fn plain_event(event: &str) -> bool {
    !event.is_empty()
        && event.len() <= 64
        && event.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
}

/// An event name fit for a log line.
fn shown_event(event: Option<&str>) -> &str {
    event.filter(|e| plain_event(e)).unwrap_or("-")
}

/// A payload's text fit for a log line: printable, at most `max` characters.
fn shown(s: &str, max: usize) -> String {
    s.chars().filter(|c| !c.is_control()).take(max).collect()
}

/// What a wake wakes, for the answer and the log.
fn describe(wake: &Wake) -> String {
    use agent_coord_shared::coordinator::webhook::route::Target;
    match wake {
        Wake::Rediscover { repo } => format!("a discovery of {repo}'s assigned issues"),
        Wake::Tasks { repo, targets } => {
            let named: Vec<String> = targets
                .iter()
                .map(|t| match t {
                    Target::Number(n) => format!("{repo}#{n}"),
                    Target::Head(sha) => format!("{repo}@{}", &sha[..sha.len().min(12)]),
                })
                .collect();
            format!("the tasks of {}", named.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::mpsc::Receiver;

    use axum::http::Request;
    use http_body_util::BodyExt as _;
    use serde_json::json;
    use tower::ServiceExt as _;

    use super::*;

    const SECRET: &[u8] = b"a webhook secret of high entropy";
    const GUID: &str = "72d3162e-cc78-11e3-81ab-4c9367dc0958";

    fn hooks(limits: Limits) -> (Hooks, Receiver<Wake>) {
        let (tx, rx) = std::sync::mpsc::sync_channel(WAKES_QUEUED);
        let hooks = Hooks::new(SECRET.to_vec(), vec!["acme/widget".into()], limits, tx);
        (hooks, rx)
    }

    fn comment(repo: &str, issue: u64) -> Vec<u8> {
        json!({
            "action": "created",
            "issue": {"number": issue},
            "comment": {"id": 5, "body": "Use feature.txt.", "user": {"login": "alice"}},
            "repository": {"full_name": repo},
        })
        .to_string()
        .into_bytes()
    }

    fn delivery(event: &str, id: &str, body: &[u8], signature: Option<String>) -> Request<Body> {
        let mut req = Request::post(PATH)
            .header("content-type", "application/json")
            .header("x-github-event", event)
            .header("x-github-delivery", id);
        if let Some(sig) = signature {
            req = req.header("x-hub-signature-256", sig);
        }
        req.body(Body::from(body.to_vec())).unwrap()
    }

    fn signed(event: &str, id: &str, body: &[u8]) -> Request<Body> {
        delivery(event, id, body, Some(signature::sign(SECRET, body)))
    }

    async fn send(hooks: &Hooks, req: Request<Body>) -> (StatusCode, String) {
        let resp = router(hooks.clone()).oneshot(req).await.unwrap();
        let status = resp.status();
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    #[tokio::test]
    async fn a_signed_comment_is_accepted_and_wakes_its_task() {
        let (hooks, rx) = hooks(Limits::default());
        let (status, text) = send(
            &hooks,
            signed("issue_comment", GUID, &comment("Acme/Widget", 7)),
        )
        .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{text}");
        assert_eq!(text, "accepted: wakes the tasks of acme/widget#7\n");
        assert_eq!(
            rx.try_recv().unwrap(),
            Wake::Tasks {
                repo: "acme/widget".into(),
                targets: vec![route::Target::Number(7)]
            }
        );
    }

    #[tokio::test]
    async fn a_bad_or_missing_signature_is_401_and_wakes_nothing() {
        let (hooks, rx) = hooks(Limits::default());
        let body = comment("acme/widget", 7);
        let forged = signature::sign(b"another secret", &body);
        let (status, text) =
            send(&hooks, delivery("issue_comment", GUID, &body, Some(forged))).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert!(text.contains("does not match"), "{text}");
        let (status, text) = send(&hooks, delivery("issue_comment", GUID, &body, None)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert!(text.contains("no X-Hub-Signature-256"), "{text}");
        // The signature of another body does not carry over.
        let other = signature::sign(SECRET, &comment("acme/widget", 8));
        let (status, _) = send(&hooks, delivery("issue_comment", GUID, &body, Some(other))).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        assert!(rx.try_recv().is_err());
        // A refused delivery's id is not remembered: the real one still wakes.
        let (status, _) = send(&hooks, signed("issue_comment", GUID, &body)).await;
        assert_eq!(status, StatusCode::ACCEPTED);
        assert!(rx.try_recv().is_ok());
    }

    #[tokio::test]
    async fn a_replayed_delivery_id_is_answered_but_wakes_nothing_again() {
        let (hooks, rx) = hooks(Limits::default());
        let body = comment("acme/widget", 7);
        assert_eq!(
            send(&hooks, signed("issue_comment", GUID, &body)).await.0,
            StatusCode::ACCEPTED
        );
        let (status, text) = send(&hooks, signed("issue_comment", GUID, &body)).await;
        assert_eq!(status, StatusCode::OK);
        assert!(text.starts_with("duplicate delivery"), "{text}");
        assert_eq!(rx.try_iter().count(), 1);
    }

    #[tokio::test]
    async fn an_oversized_body_is_413_before_its_signature_is_checked() {
        let (hooks, rx) = hooks(Limits {
            body: 64,
            ..Limits::default()
        });
        let body = comment("acme/widget", 7);
        assert!(body.len() > 64);
        let (status, _) = send(&hooks, signed("issue_comment", GUID, &body)).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        // Without a Content-Length (a streamed body) the limit still holds.
        let chunks = futures_chunks(body.clone());
        let req = Request::post(PATH)
            .header("x-github-event", "issue_comment")
            .header("x-github-delivery", GUID)
            .header("x-hub-signature-256", signature::sign(SECRET, &body))
            .body(chunks)
            .unwrap();
        let (status, _) = send(&hooks, req).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);
        assert!(rx.try_recv().is_err());
    }

    /// A body sent in chunks of 16 bytes, with no length known up front.
    fn futures_chunks(body: Vec<u8>) -> Body {
        let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
            body.chunks(16).map(|c| Ok(c.to_vec())).collect();
        Body::from_stream(tokio_stream::iter(chunks))
    }

    #[tokio::test]
    async fn over_the_rate_is_429_with_retry_after() {
        let (hooks, rx) = hooks(Limits {
            burst: 2,
            per_second: 1,
            ..Limits::default()
        });
        let body = comment("acme/widget", 7);
        for id in ["a-1", "a-2"] {
            assert_eq!(
                send(&hooks, signed("issue_comment", id, &body)).await.0,
                StatusCode::ACCEPTED
            );
        }
        let resp = router(hooks.clone())
            .oneshot(signed("issue_comment", "a-3", &body))
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(resp.headers()[header::RETRY_AFTER], "1");
        assert_eq!(rx.try_iter().count(), 2);
    }

    #[tokio::test]
    async fn an_unconfigured_repository_is_accepted_and_ignored() {
        let (hooks, rx) = hooks(Limits::default());
        let (status, text) = send(
            &hooks,
            signed("issue_comment", GUID, &comment("evil/elsewhere", 7)),
        )
        .await;
        assert_eq!(status, StatusCode::ACCEPTED);
        assert_eq!(
            text,
            "ignored: evil/elsewhere is not a configured repository\n"
        );
        assert!(rx.try_recv().is_err());
    }

    #[tokio::test]
    async fn ping_is_answered_and_events_of_no_interest_are_ignored() {
        let (hooks, rx) = hooks(Limits::default());
        let ping = json!({"zen": "Design for failure.", "hook_id": 1}).to_string();
        let (status, text) = send(&hooks, signed("ping", GUID, ping.as_bytes())).await;
        assert_eq!((status, text.as_str()), (StatusCode::OK, "pong\n"));
        let push = json!({"ref": "refs/heads/main", "repository": {"full_name": "acme/widget"}})
            .to_string();
        let (status, text) = send(&hooks, signed("push", "p-1", push.as_bytes())).await;
        assert_eq!(status, StatusCode::ACCEPTED);
        assert!(text.starts_with("ignored:"), "{text}");
        assert!(rx.try_recv().is_err());
    }

    #[tokio::test]
    async fn an_assignment_asks_for_a_rediscovery() {
        let (hooks, rx) = hooks(Limits::default());
        let body = json!({
            "action": "assigned",
            "issue": {"number": 3},
            "assignee": {"login": "bot-worker"},
            "repository": {"full_name": "acme/widget"},
        })
        .to_string();
        let (status, _) = send(&hooks, signed("issues", GUID, body.as_bytes())).await;
        assert_eq!(status, StatusCode::ACCEPTED);
        assert_eq!(
            rx.try_recv().unwrap(),
            Wake::Rediscover {
                repo: "acme/widget".into()
            }
        );
    }

    #[tokio::test]
    async fn signed_but_unusable_deliveries_are_400() {
        let (hooks, rx) = hooks(Limits::default());
        let body = comment("acme/widget", 7);
        let (status, _) = send(&hooks, signed("Issue Comment", GUID, &body)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let (status, _) = send(&hooks, signed("issue_comment", "../x", &body)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let form = b"payload=%7B%7D";
        let (status, text) = send(&hooks, signed("issue_comment", "f-1", form)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert!(text.contains("application/json"), "{text}");
        assert!(rx.try_recv().is_err());
    }

    #[tokio::test]
    async fn a_stopped_follow_loop_is_503_and_the_delivery_is_not_remembered() {
        let (hooks, rx) = hooks(Limits::default());
        drop(rx);
        let body = comment("acme/widget", 7);
        let (status, _) = send(&hooks, signed("issue_comment", GUID, &body)).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        // GitHub's redelivery of it is not a duplicate.
        let (status, text) = send(&hooks, signed("issue_comment", GUID, &body)).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{text}");
    }

    #[tokio::test]
    async fn a_full_wake_queue_is_503() {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let hooks = Hooks::new(
            SECRET.to_vec(),
            vec!["acme/widget".into()],
            Limits::default(),
            tx,
        );
        let body = comment("acme/widget", 7);
        assert_eq!(
            send(&hooks, signed("issue_comment", "q-1", &body)).await.0,
            StatusCode::ACCEPTED
        );
        let (status, text) = send(&hooks, signed("issue_comment", "q-2", &body)).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
        assert!(text.contains("behind"), "{text}");
        assert_eq!(rx.try_iter().count(), 1);
        // Once the loop took the queue, the same delivery is taken.
        assert_eq!(
            send(&hooks, signed("issue_comment", "q-2", &body)).await.0,
            StatusCode::ACCEPTED
        );
    }

    #[tokio::test]
    async fn other_paths_and_methods_are_refused() {
        let (hooks, _rx) = hooks(Limits::default());
        let get = Request::get(PATH).body(Body::empty()).unwrap();
        assert_eq!(send(&hooks, get).await.0, StatusCode::METHOD_NOT_ALLOWED);
        let elsewhere = Request::post("/api/anything").body(Body::empty()).unwrap();
        assert_eq!(send(&hooks, elsewhere).await.0, StatusCode::NOT_FOUND);
    }
}
