//! `agent-coord serve`: the read-only dashboard over the coordination refs, with exactly
//! two writes (import a batch plan, request a batch stop).
//!
//! Stateless: every response derives from the current refs through [`cache::ModelCache`].
//! A watcher polls the refs and announces each new model version on `GET /api/stream`.

pub(crate) mod assets;
pub(crate) mod cache;
pub(crate) mod demo;
pub(crate) mod guard;
#[cfg(test)]
mod tests;

use std::convert::Infallible;
use std::net::IpAddr;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;

use agent_coord_shared::dashboard::detail;
use agent_coord_shared::ids::paths;
use agent_coord_shared::ids::BatchId;
use agent_coord_shared::manifest as prompt;
use agent_coord_shared::record::scalar_string;
use agent_coord_shared::rules::event::new_event;
use agent_coord_shared::rules::Plan;
use agent_coord_shared::rules::RuleError;
use agent_coord_shared::snapshot::Snapshot;
use agent_coord_shared::time;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::extract::Path;
use axum::extract::Request;
use axum::extract::State;
use axum::http::header;
use axum::http::HeaderMap;
use axum::http::HeaderValue;
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::sse::Event;
use axum::response::sse::KeepAlive;
use axum::response::sse::Sse;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::routing::get;
use axum::routing::post;
use axum::Json;
use axum::Router;
use serde_json::json;
use serde_json::Value;
use tokio::sync::watch;
use tokio_stream::wrappers::WatchStream;
use tokio_stream::StreamExt;

use crate::command_error::CommandError;
use crate::command_error::ErrorKind;
use crate::commands::write;
use crate::context::Context;
use crate::context::Env;
use crate::context::GlobalArgs;
use crate::output::Report;

/// Largest request body a write accepts.
pub(crate) const BODY_LIMIT: usize = 256 * 1024;

/// The reason recorded when a stop request gives none.
pub(crate) const DEFAULT_STOP_REASON: &str =
    "Stop requested from dashboard so this batch can be restarted.";

/// Serve the live dashboard for this machine's coordination state
///
/// A read-only web dashboard (overview, operator rows, batches, machines, health, custody
/// timelines) derived from the state branch and heartbeat refs, updated live as refs move.
/// Two writes exist, accepted only from this machine: importing a batch plan from a pasted
/// `$pr-batch` launch prompt, and appending a `batch.stop_requested` event.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "Examples:
  agent-coord serve                          # http://127.0.0.1:4319
  agent-coord serve --port 0                 # any free port (the first stdout line is the URL)
  agent-coord serve --demo                   # a simulated fleet in a temporary repository
  agent-coord serve --host 0.0.0.0 --allowed-hosts box.lan   # LAN viewers, read-only")]
pub(crate) struct ServeArgs {
    /// Address to bind
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    host: String,
    /// Port to listen on (0 picks a free one)
    #[arg(long, default_value_t = 4319)]
    port: u16,
    /// Extra Host header values browsers may use (comma-separated); required when --host
    /// binds all interfaces
    #[arg(long, value_name = "HOST,...", value_delimiter = ',')]
    allowed_hosts: Vec<String>,
    /// Serve a simulated, moving fleet in a temporary repository instead of the real state
    #[arg(long)]
    demo: bool,
}

/// Everything a request handler needs. No coordination state lives here: the cache only
/// remembers derivations of the refs.
pub(crate) struct AppState {
    pub(crate) globals: GlobalArgs,
    pub(crate) env: Env,
    pub(crate) cache: Mutex<cache::ModelCache>,
    pub(crate) allowed_hosts: Vec<String>,
    pub(crate) version: watch::Sender<String>,
    /// The machine's interface addresses (a function so tests can pretend).
    pub(crate) local_addrs: fn() -> Vec<IpAddr>,
}

impl AppState {
    pub(crate) fn new(globals: GlobalArgs, env: Env, allowed_hosts: Vec<String>) -> Arc<AppState> {
        Arc::new(AppState {
            globals,
            env,
            cache: Mutex::new(cache::ModelCache::default()),
            allowed_hosts,
            version: watch::channel(String::new()).0,
            local_addrs: guard::local_addresses,
        })
    }

    fn context(&self) -> Result<Context, CommandError> {
        Context::new(self.globals.clone(), self.env.clone())
    }

    /// The current model (derived only when the refs moved).
    pub(crate) fn built(&self) -> Result<Arc<cache::Built>, ApiError> {
        let cx = self.context()?;
        let (store, _) = cx.open_store(false)?;
        let mut cache = self
            .cache
            .lock()
            .map_err(|_| ApiError::internal("model cache poisoned"))?;
        Ok(cache.get(&store, cx.now())?)
    }

    /// The model currently cached, if any (without deriving).
    fn last_built(&self) -> Option<Arc<cache::Built>> {
        self.cache.lock().ok().and_then(|c| c.current())
    }

    /// Reads the refs and publishes their version if it changed.
    pub(crate) fn poll_version(&self) {
        let Ok(cx) = self.context() else { return };
        let Ok((store, _)) = cx.open_store(false) else {
            return;
        };
        if let Ok(tips) = cache::Tips::read(&store) {
            let v = tips.version();
            self.version.send_if_modified(|cur| {
                let changed = *cur != v;
                if changed {
                    *cur = v;
                }
                changed
            });
        }
    }
}

/// An API error: a status and one sentence, sent as `{"error": "..."}`.
#[derive(Debug)]
pub(crate) struct ApiError {
    pub(crate) status: StatusCode,
    pub(crate) message: String,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Self {
        ApiError {
            status,
            message: message.into(),
        }
    }
    fn internal(message: impl Into<String>) -> Self {
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }
}

impl From<CommandError> for ApiError {
    fn from(e: CommandError) -> Self {
        let status = match e.kind {
            ErrorKind::Usage | ErrorKind::StackUsage => StatusCode::BAD_REQUEST,
            ErrorKind::Conflict | ErrorKind::ClaimRefused => StatusCode::CONFLICT,
            ErrorKind::NotFound => StatusCode::NOT_FOUND,
            ErrorKind::Operational => StatusCode::SERVICE_UNAVAILABLE,
        };
        ApiError::new(status, e.message)
    }
}

impl From<crate::store::StoreError> for ApiError {
    fn from(e: crate::store::StoreError) -> Self {
        ApiError::from(CommandError::from(e))
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        (self.status, Json(json!({ "error": self.message }))).into_response()
    }
}

type ApiResult<T> = Result<T, ApiError>;

async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> ApiResult<T> + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(format!("request handler failed: {e}")))?
}

fn json_bytes(bytes: axum::body::Bytes) -> Response {
    let mut r = Response::new(Body::from(bytes));
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r
}

async fn health(State(s): State<Arc<AppState>>) -> Json<Value> {
    Json(json!({"ok": true, "version": *s.version.borrow(), "bundled": assets::bundled()}))
}

async fn dashboard(State(s): State<Arc<AppState>>) -> ApiResult<Response> {
    let (built, fresh) = blocking(move || {
        let previous = s.last_built();
        let built = s.built()?;
        let fresh = previous.is_none_or(|p| !Arc::ptr_eq(&p, &built));
        Ok((built, fresh))
    })
    .await?;
    let mut response = json_bytes(built.json.clone());
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

async fn batch(State(s): State<Arc<AppState>>, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    blocking(move || {
        let built = s.built()?;
        let d = detail::batch_detail(&built.inputs, &built.model, &id).ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                format!("Batch {id} is not in the coordination state."),
            )
        })?;
        serde_json::to_value(d)
            .map(Json)
            .map_err(|e| ApiError::internal(e.to_string()))
    })
    .await
}

async fn item(
    State(s): State<Arc<AppState>>,
    Path((owner, repo, target)): Path<(String, String, String)>,
) -> ApiResult<Json<Value>> {
    blocking(move || {
        let cx = s.context()?;
        let built = s.built()?;
        let d = detail::item_detail(
            &built.inputs,
            &built.model,
            &format!("{owner}/{repo}"),
            &target,
            cx.now(),
        );
        serde_json::to_value(d)
            .map(Json)
            .map_err(|e| ApiError::internal(e.to_string()))
    })
    .await
}

async fn stream(
    State(s): State<Arc<AppState>>,
) -> Sse<impl tokio_stream::Stream<Item = Result<Event, Infallible>>> {
    let events = WatchStream::new(s.version.subscribe())
        .filter(|v| !v.is_empty())
        .map(|v| Ok(Event::default().event("version").data(v)));
    Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

/// The checks every write passes before its body is read: same-machine peer, JSON.
fn write_preamble(s: &AppState, peer: SocketAddr, headers: &HeaderMap, who: &str) -> ApiResult<()> {
    if !guard::is_machine_local(peer.ip(), &(s.local_addrs)()) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            format!("{who} can only be sent from the machine running the dashboard. Remote viewers have read-only access."),
        ));
    }
    let ct = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    if !guard::is_json_content_type(ct) {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Writes require Content-Type: application/json.",
        ));
    }
    Ok(())
}

async fn read_json(body: Body) -> ApiResult<Value> {
    let bytes = axum::body::to_bytes(body, BODY_LIMIT).await.map_err(|_| {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("Request body is larger than {} KiB.", BODY_LIMIT / 1024),
        )
    })?;
    serde_json::from_slice(&bytes).map_err(|e| {
        ApiError::new(
            StatusCode::BAD_REQUEST,
            format!("Request body is not valid JSON: {e}"),
        )
    })
}

/// One of the two writes: checked (same machine, JSON, size), then run on a blocking
/// thread; `201` with what it wrote.
async fn write_route(
    s: Arc<AppState>,
    peer: SocketAddr,
    headers: &HeaderMap,
    body: Body,
    who: &str,
    write: fn(&AppState, &Value) -> ApiResult<Value>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    write_preamble(&s, peer, headers, who)?;
    let body = read_json(body).await?;
    let out = blocking(move || write(&s, &body)).await?;
    Ok((StatusCode::CREATED, Json(out)))
}

async fn import(
    State(s): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<(StatusCode, Json<Value>)> {
    write_route(s, peer, &headers, body, "Batch plans", import_blocking).await
}

fn import_blocking(s: &AppState, body: &Value) -> ApiResult<Value> {
    let cx = s.context()?;
    let (store, _) = cx.open_store(true)?;
    let manifest = prompt::import_request(body, &time::format(cx.now()), store.machine.as_str())
        .map_err(|e| ApiError::new(StatusCode::BAD_REQUEST, e.0))?;
    drop(store);
    let id = manifest
        .get("batch_id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let batch: BatchId = id.parse().map_err(|e: agent_coord_shared::ids::IdError| {
        ApiError::new(StatusCode::BAD_REQUEST, e.to_string())
    })?;
    let path = paths::batch(&batch);
    let record = manifest.as_object().cloned().unwrap_or_default();
    write(&cx, |snap, _ctx| {
        if snap.read(&path)?.is_some() {
            return Err(RuleError::Conflict(format!(
                "Batch plan {path} already exists."
            )));
        }
        let mut plan = Plan::nothing("dashboard-import", ());
        plan.state.push((path.clone(), record.clone()));
        plan.summary = format!("dashboard: import batch plan {id}");
        Ok(plan)
    })?;
    s.poll_version();
    Ok(json!({"batchId": id, "path": path, "manifest": manifest}))
}

async fn stop(
    State(s): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    body: Body,
) -> ApiResult<(StatusCode, Json<Value>)> {
    write_route(
        s,
        peer,
        &headers,
        body,
        "Batch stop requests",
        stop_blocking,
    )
    .await
}

fn stop_blocking(s: &AppState, body: &Value) -> ApiResult<Value> {
    let Some(obj) = body.as_object() else {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "Request body must be a JSON object.",
        ));
    };
    let text = |a: &str, b: &str| {
        obj.get(a)
            .or_else(|| obj.get(b))
            .and_then(scalar_string)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    };
    let id = text("batch_id", "batchId")
        .ok_or_else(|| ApiError::new(StatusCode::BAD_REQUEST, "Batch id is required."))?;
    if !prompt::is_safe_batch_id(&id) {
        return Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "Batch id must use only letters, numbers, dot, underscore, and hyphen.",
        ));
    }
    let batch: BatchId = id.parse().map_err(|e: agent_coord_shared::ids::IdError| {
        ApiError::new(StatusCode::BAD_REQUEST, e.to_string())
    })?;
    let reason = text("reason", "message").unwrap_or_else(|| DEFAULT_STOP_REASON.to_owned());
    // Inferred batches have no manifest to read inside the write: ask the model.
    let built = s.built()?;
    let known = built.model.batches.iter().find(|b| b.id == id);
    let inferred = known
        .is_some_and(|b| b.source == agent_coord_shared::dashboard::model::BatchSource::Inferred);
    let repo = text("repo", "repo").or_else(|| known.and_then(|b| b.repo.clone()));
    let cx = s.context()?;
    let manifest_path = paths::batch(&batch);
    let written = write(&cx, |snap, ctx| {
        if !inferred && snap.read(&manifest_path)?.is_none() {
            return Err(RuleError::NotFound(format!(
                "Batch {id} is not in the coordination state."
            )));
        }
        let mut fields = agent_coord_shared::record::Record::new();
        fields.insert("status".into(), json!("stop_requested"));
        if let Some(r) = &repo {
            fields.insert("repo".into(), json!(r));
        }
        fields.insert("message".into(), json!(reason));
        let (path, event) = new_event(snap, ctx, &batch, "batch.stop_requested", fields)?;
        let mut plan = Plan::nothing("dashboard-stop", (path.clone(), event.clone()));
        plan.state.push((path, event));
        plan.summary = format!("dashboard: request stop of batch {id}");
        Ok(plan)
    })?;
    s.poll_version();
    let (path, event) = &written.done.plan.outcome;
    Ok(json!({"event": event, "path": path}))
}

/// Rejects requests whose Host header is not allowed (DNS-rebinding defence), and
/// cross-origin writes.
async fn host_guard(State(s): State<Arc<AppState>>, req: Request, next: Next) -> Response {
    let host = guard::host_of(
        req.headers()
            .get(header::HOST)
            .and_then(|v| v.to_str().ok()),
    );
    let peer = req
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| c.0.ip());
    let allowed = match &host {
        None => false,
        Some(h) if s.allowed_hosts.iter().any(|a| a == h) => true,
        // A lifecycle probe over loopback still works when the list names only LAN hosts.
        Some(h) => {
            req.uri().path() == "/api/health"
                && guard::is_loopback_name(h)
                && peer.is_some_and(|p| guard::canonical(p).is_loopback())
        }
    };
    if !allowed {
        return ApiError::new(StatusCode::FORBIDDEN, "Forbidden host").into_response();
    }
    if req.method() != axum::http::Method::GET && req.method() != axum::http::Method::HEAD {
        let origin = req
            .headers()
            .get(header::ORIGIN)
            .and_then(|v| v.to_str().ok());
        if let Some(origin) = origin {
            let origin_host = origin
                .split("://")
                .nth(1)
                .and_then(|rest| guard::host_of(Some(rest)));
            if !origin_host.is_some_and(|h| s.allowed_hosts.contains(&h)) {
                return ApiError::new(
                    StatusCode::FORBIDDEN,
                    "Cross-origin writes are not accepted.",
                )
                .into_response();
            }
        }
    }
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    h.insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    resp
}

/// Static files from the embedded bundle, with the SPA fallback for client routes.
async fn static_files(req: Request) -> Response {
    let path = req.uri().path();
    if path.starts_with("/api/") || path == "/api" {
        return ApiError::new(StatusCode::NOT_FOUND, format!("No such API route: {path}"))
            .into_response();
    }
    let name = path.trim_start_matches('/');
    if let Some((bytes, ct)) = assets::get(name).filter(|_| !name.is_empty()) {
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
    match assets::get("index.html") {
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
            assets::NO_BUNDLE_PAGE,
        )
            .into_response(),
    }
}

/// The application: routes, then the host guard around everything.
pub(crate) fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/api/health", get(health))
        .route("/api/dashboard", get(dashboard))
        .route("/api/batches/import", post(import))
        .route("/api/batches/stop", post(stop))
        .route("/api/batches/{id}", get(batch))
        .route("/api/items/{owner}/{repo}/{target}", get(item))
        .route("/api/stream", get(stream))
        .fallback(static_files)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            host_guard,
        ))
        .with_state(state)
}

/// Runs `serve`.
pub(crate) fn cmd_serve(cx: &Context, args: &ServeArgs) -> Result<Report, CommandError> {
    let allowed =
        guard::allowed_hosts(&args.host, &args.allowed_hosts).map_err(CommandError::usage)?;
    let mut globals = cx.globals.clone();
    let mut env = cx.env.clone();
    let _demo_dir = if args.demo {
        let dir = tempfile::tempdir().map_err(|e| {
            CommandError::operational(format!("cannot create the demo repository: {e}"))
        })?;
        let repo = dir.path().join("state.git");
        demo::seed(&repo)?;
        globals.repo_dir = Some(repo);
        env.machine_id = Some(demo::MACHINE.into());
        env.now = None;
        Some(dir)
    } else {
        None
    };
    let state = AppState::new(globals, env, allowed);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CommandError::operational(format!("cannot start the server runtime: {e}")))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind((args.host.as_str(), args.port))
            .await
            .map_err(|e| {
                CommandError::operational(format!(
                    "cannot listen on {}:{}: {e}",
                    args.host, args.port
                ))
            })?;
        let addr = listener.local_addr().map_err(|e| {
            CommandError::operational(format!("cannot read the bound address: {e}"))
        })?;
        let shown = if addr.is_ipv6() {
            format!("[{}]", addr.ip())
        } else {
            addr.ip().to_string()
        };
        // The first stdout line is the URL; tests and scripts read it. A reader that goes
        // away (a closed pipe) must not take the server down, so write errors are ignored.
        use std::io::Write as _;
        let mut banner = format!("agent-coord dashboard: http://{shown}:{}/\n", addr.port());
        if args.demo {
            banner.push_str(
                "demo fleet: a temporary repository, moving every 3 s; Ctrl-C stops it\n",
            );
        }
        let mut stdout = std::io::stdout().lock();
        let _ = stdout
            .write_all(banner.as_bytes())
            .and_then(|()| stdout.flush());
        drop(stdout);
        if !assets::bundled() {
            let _ = writeln!(
                std::io::stderr(),
                "notice: built without the web front end; serving the JSON API only (see /)"
            );
        }
        let watcher = state.clone();
        tokio::spawn(async move {
            loop {
                let s = watcher.clone();
                let _ = tokio::task::spawn_blocking(move || s.poll_version()).await;
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        });
        if let Some(dir) = state.globals.repo_dir.clone().filter(|_| args.demo) {
            std::thread::spawn(move || demo::run(&dir));
        }
        axum::serve(
            listener,
            router(state).into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| CommandError::operational(format!("server failed: {e}")))
    })?;
    Ok(Report::text(String::new()))
}
