//! The router through `tower::ServiceExt::oneshot`, with a pretend peer address.

use std::net::SocketAddr;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::Request;
use axum::http::StatusCode;
use serde_json::json;
use serde_json::Value;
use tower::ServiceExt;

use super::state::AppState;
use crate::context::Env;
use crate::context::GlobalArgs;

const PROMPT: &str = "Repository: acme/app\nBatch id: b-import\nBatch objective: Import me.\nItems:\n- PR #7: https://github.com/acme/app/pull/7\nSuggested lanes:\n- one (owner: w1): PR #7\n";

struct Harness {
    _dir: tempfile::TempDir,
    state: AppState,
}

fn harness() -> Harness {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().join("state.git");
    crate::demo::create_repository(&repo, "box-1").expect("repo");
    let globals = GlobalArgs {
        repo_dir: Some(repo),
        state_ref: None,
    };
    let env = Env::pinned("2026-11-29T12:00:00Z", "box-1");
    let state = AppState::new(
        globals,
        env,
        super::http::guard::allowed_hosts("127.0.0.1", &[]).expect("hosts"),
    );
    Harness { _dir: dir, state }
}

impl Harness {
    async fn call(&self, req: Request<Body>, peer: &str) -> (StatusCode, Value) {
        let mut req = req;
        let addr: SocketAddr = peer.parse().expect("addr");
        req.extensions_mut().insert(ConnectInfo(addr));
        let resp = super::router::router(self.state.clone())
            .oneshot(req)
            .await
            .expect("response");
        let status = resp.status();
        let bytes = axum::body::to_bytes(resp.into_body(), usize::MAX)
            .await
            .expect("body");
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }

    async fn get(&self, path: &str) -> (StatusCode, Value) {
        let req = Request::get(path)
            .header("host", "127.0.0.1:4319")
            .body(Body::empty())
            .expect("req");
        self.call(req, "127.0.0.1:5000").await
    }

    async fn post(&self, path: &str, body: Value, peer: &str) -> (StatusCode, Value) {
        let req = Request::post(path)
            .header("host", "localhost:4319")
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .expect("req");
        self.call(req, peer).await
    }
}

#[tokio::test]
async fn routes_answer_json() {
    let h = harness();
    let (s, v) = h.get("/api/health").await;
    assert_eq!((s, v["ok"].clone()), (StatusCode::OK, json!(true)));
    let (s, v) = h.get("/api/dashboard").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["counts"]["rows"], json!(0));
    let (s, v) = h.get("/api/batches/nope").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    assert_eq!(
        v["error"],
        json!("Batch nope is not in the coordination state.")
    );
    // An item nothing in the state names is not found (it used to be an empty 200).
    let (s, v) = h.get("/api/items/acme/app/7").await;
    assert_eq!(
        (s, v["error"].clone()),
        (
            StatusCode::NOT_FOUND,
            json!("Work item acme/app#7 is not in the coordination state.")
        )
    );
    let (s, v) = h.get("/api/nothing").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    assert!(v["error"]
        .as_str()
        .unwrap_or_default()
        .contains("/api/nothing"));
}

#[tokio::test]
async fn settings_change_only_from_this_machine_and_scope_the_items() {
    let h = harness();
    let put = |body: Value, peer: &'static str| {
        let req = Request::put("/api/settings")
            .header("host", "localhost:4319")
            .header("content-type", "application/json")
            .body(Body::from(body.to_string()))
            .expect("req");
        h.call(req, peer)
    };
    let (s, v) = h.get("/api/settings").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(
        (
            v["targetRepos"].clone(),
            v["source"].clone(),
            v["editable"].clone()
        ),
        (json!([]), json!("unset"), json!(true))
    );
    // A viewer on another machine reads them, and is told it may not change them.
    let req = Request::get("/api/settings")
        .header("host", "localhost:4319")
        .body(Body::empty())
        .expect("req");
    let (s, v) = h.call(req, "10.9.9.9:5000").await;
    assert_eq!((s, v["editable"].clone()), (StatusCode::OK, json!(false)));
    let (s, v) = put(json!({"targetRepos": ["acme/app"]}), "10.9.9.9:5000").await;
    assert_eq!(
        (s, v["error"].clone()),
        (
            StatusCode::FORBIDDEN,
            json!("Settings can only be changed from the machine running the dashboard. Remote viewers have read-only access.")
        )
    );
    let (s, v) = put(json!({"targetRepos": " , "}), "127.0.0.1:5000").await;
    assert_eq!(
        (s, v["error"].clone()),
        (
            StatusCode::BAD_REQUEST,
            json!("At least one owner/repo target is required.")
        )
    );
    let (s, v) = put(
        json!({"targetRepos": "Beta/Tool,acme/app"}),
        "127.0.0.1:5000",
    )
    .await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["targetRepos"], json!(["acme/app", "beta/tool"]));
    assert_eq!(v["scopeId"].as_str().map(str::len), Some(64));
    let (s, v) = h.get("/api/items/gamma/x/7").await;
    assert_eq!(
        (s, v["error"].clone()),
        (
            StatusCode::NOT_FOUND,
            json!("Work item is not in the saved target repositories.")
        )
    );
    // In scope (case-insensitively), but nothing is recorded for it: the unknown-item 404,
    // not the scope's.
    let (s, v) = h.get("/api/items/ACME/app/7").await;
    assert_eq!(s, StatusCode::NOT_FOUND);
    assert!(
        v["error"]
            .as_str()
            .is_some_and(|e| e.contains("is not in the coordination state")),
        "{v}"
    );
}

#[tokio::test]
async fn import_then_409_then_stop_then_404() {
    let h = harness();
    let (s, v) = h
        .post(
            "/api/batches/import",
            json!({"launch_prompt": PROMPT}),
            "127.0.0.1:5000",
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert_eq!(v["path"], json!("batches/b-import.json"));
    assert_eq!(
        v["manifest"]["created_by_machine"],
        json!("dashboard:box-1")
    );
    let (s, v) = h.get("/api/batches/b-import").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["batch"]["lanes"][0]["name"], json!("one"));
    // Never overwritten.
    let (s, v) = h
        .post(
            "/api/batches/import",
            json!({"launch_prompt": PROMPT}),
            "127.0.0.1:5000",
        )
        .await;
    assert_eq!(
        (s, v["error"].clone()),
        (
            StatusCode::CONFLICT,
            json!("Batch plan batches/b-import.json already exists.")
        )
    );
    // Validation errors come back with their message.
    let (s, v) = h
        .post(
            "/api/batches/import",
            json!({"launch_prompt": "Items:\n- PR #1: https://github.com/a/b/pull/2\n"}),
            "127.0.0.1:5000",
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    assert!(v["error"]
        .as_str()
        .unwrap_or_default()
        .starts_with("Target reference PR #1"));
    // Stop: appended as an event; the batch shows the request.
    let (s, v) = h
        .post(
            "/api/batches/stop",
            json!({"batch_id": "b-import", "reason": "hold"}),
            "[::1]:5000",
        )
        .await;
    assert_eq!(s, StatusCode::CREATED, "{v}");
    assert_eq!(v["event"]["type"], json!("batch.stop_requested"));
    assert_eq!(v["event"]["message"], json!("hold"));
    assert_eq!(v["event"]["repo"], json!("acme/app"));
    let (_, v) = h.get("/api/dashboard").await;
    assert_eq!(v["batches"][0]["control"], json!("stop_requested"));
    let (s, v) = h
        .post(
            "/api/batches/stop",
            json!({"batch_id": "ghost"}),
            "127.0.0.1:5000",
        )
        .await;
    assert_eq!(
        (s, v["error"].clone()),
        (
            StatusCode::NOT_FOUND,
            json!("Batch ghost is not in the coordination state.")
        )
    );
    let (s, _) = h
        .post(
            "/api/batches/stop",
            json!({"batch_id": "../x"}),
            "127.0.0.1:5000",
        )
        .await;
    assert_eq!(s, StatusCode::BAD_REQUEST);
    let (s, v) = h
        .post("/api/batches/stop", json!({}), "127.0.0.1:5000")
        .await;
    assert_eq!(
        (s, v["error"].clone()),
        (StatusCode::BAD_REQUEST, json!("Batch id is required."))
    );
}

#[tokio::test]
async fn writes_only_from_this_machine() {
    let h = harness();
    let before = h.get("/api/dashboard").await.1["version"].clone();
    for peer in ["10.1.2.3:5000", "169.254.0.9:5000", "[fe80::1]:5000"] {
        let (s, v) = h
            .post(
                "/api/batches/import",
                json!({"launch_prompt": PROMPT}),
                peer,
            )
            .await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{peer}");
        assert!(v["error"]
            .as_str()
            .unwrap_or_default()
            .contains("Remote viewers have read-only access"));
        let (s, _) = h
            .post("/api/batches/stop", json!({"batch_id": "x"}), peer)
            .await;
        assert_eq!(s, StatusCode::FORBIDDEN);
    }
    // A forwarded header changes nothing: the kernel's peer address decides.
    let req = Request::post("/api/batches/import")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .header("x-forwarded-for", "127.0.0.1")
        .body(Body::from(json!({"launch_prompt": PROMPT}).to_string()))
        .expect("req");
    assert_eq!(h.call(req, "10.1.2.3:5000").await.0, StatusCode::FORBIDDEN);
    assert_eq!(
        h.get("/api/dashboard").await.1["version"],
        before,
        "nothing was written"
    );
}

#[tokio::test]
async fn annotations_only_from_this_machine() {
    let h = harness();
    let before = h.get("/api/dashboard").await.1["version"].clone();
    let body = json!({"repo": "acme/app", "target": "1", "kind": "dismiss"});
    for peer in ["10.1.2.3:5000", "169.254.0.9:5000", "[fe80::1]:5000"] {
        let (s, v) = h.post("/api/annotations", body.clone(), peer).await;
        assert_eq!(
            (s, v["error"].clone()),
            (
                StatusCode::FORBIDDEN,
                json!("Annotations can only be changed from the machine running the dashboard. Remote viewers have read-only access.")
            ),
            "{peer}"
        );
        let req = Request::delete("/api/annotations")
            .header("host", "localhost")
            .header("content-type", "application/json")
            .body(Body::from(
                json!({"repo": "acme/app", "target": "1"}).to_string(),
            ))
            .expect("req");
        assert_eq!(h.call(req, peer).await.0, StatusCode::FORBIDDEN, "{peer}");
    }
    assert_eq!(
        h.get("/api/dashboard").await.1["version"],
        before,
        "nothing was written"
    );
    // From this machine the same request is saved.
    let (s, v) = h.post("/api/annotations", body, "127.0.0.1:5000").await;
    assert_eq!(
        (s, v["kind"].clone()),
        (StatusCode::CREATED, json!("dismiss"))
    );
}

#[tokio::test]
async fn foreign_hosts_are_refused_everywhere() {
    let h = harness();
    for host in ["evil.example", "127.0.0.1.nip.io", ""] {
        let req = Request::get("/api/dashboard")
            .header("host", host)
            .body(Body::empty())
            .expect("req");
        let (s, v) = h.call(req, "127.0.0.1:5000").await;
        assert_eq!(
            (s, v["error"].clone()),
            (StatusCode::FORBIDDEN, json!("Forbidden host")),
            "{host:?}"
        );
    }
    let req = Request::get("/")
        .header("host", "evil.example")
        .body(Body::empty())
        .expect("req");
    assert_eq!(
        h.call(req, "127.0.0.1:5000").await.0,
        StatusCode::FORBIDDEN,
        "static files too"
    );
    // A cross-origin write is refused even from this machine.
    let req = Request::post("/api/batches/stop")
        .header("host", "localhost")
        .header("origin", "http://evil.example")
        .header("content-type", "application/json")
        .body(Body::from("{}"))
        .expect("req");
    assert_eq!(h.call(req, "127.0.0.1:5000").await.0, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn content_type_and_body_limit() {
    let h = harness();
    let req = Request::post("/api/batches/import")
        .header("host", "localhost")
        .header("content-type", "text/plain")
        .body(Body::from(json!({"launch_prompt": PROMPT}).to_string()))
        .expect("req");
    let (s, v) = h.call(req, "127.0.0.1:5000").await;
    assert_eq!(
        (s, v["error"].clone()),
        (
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            json!("Writes require Content-Type: application/json.")
        )
    );
    let huge = json!({"launch_prompt": "x".repeat(super::http::extract::BODY_LIMIT + 1)});
    let (s, v) = h.post("/api/batches/import", huge, "127.0.0.1:5000").await;
    assert_eq!(s, StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(v["error"], json!("Request body is larger than 256 KiB."));
    let req = Request::post("/api/batches/stop")
        .header("host", "localhost")
        .header("content-type", "application/json")
        .body(Body::from("{not json"))
        .expect("req");
    assert_eq!(
        h.call(req, "127.0.0.1:5000").await.0,
        StatusCode::BAD_REQUEST
    );
}

#[tokio::test]
async fn spa_fallback_or_build_instructions() {
    let h = harness();
    let req = Request::get("/batches/some-id")
        .header("host", "localhost")
        .body(Body::empty())
        .expect("req");
    let mut req = req;
    req.extensions_mut().insert(ConnectInfo(
        "127.0.0.1:1".parse::<SocketAddr>().expect("addr"),
    ));
    let resp = super::router::router(h.state.clone())
        .oneshot(req)
        .await
        .expect("resp");
    assert_eq!(resp.status(), StatusCode::OK);
    let body = axum::body::to_bytes(resp.into_body(), usize::MAX)
        .await
        .expect("body");
    let text = String::from_utf8_lossy(&body);
    if super::assets::bundled() {
        assert!(
            text.contains("<html") && !text.contains("built without"),
            "index.html for client routes"
        );
    } else {
        assert!(
            text.contains("built without the dashboard front end"),
            "{text}"
        );
    }
}

/// A request for `uri` with the given Host header lines.
fn with_hosts(uri: &str, hosts: &[&str]) -> Request<Body> {
    let mut req = Request::get(uri).body(Body::empty()).expect("req");
    for h in hosts {
        req.headers_mut()
            .append("host", h.parse().expect("header value"));
    }
    req
}

#[tokio::test]
async fn regression_host_guard_reads_only_the_first_host_up_to_a_colon() {
    let h = harness();
    h.state.access.bound(4319);
    for (uri, hosts, want) in [
        ("/api/dashboard", &["127.0.0.1:4319"][..], StatusCode::OK),
        (
            "/api/dashboard",
            &["127.0.0.1:4319.evil.com"],
            StatusCode::BAD_REQUEST,
        ),
        (
            "/api/dashboard",
            &["127.0.0.1:4319, evil.com"],
            StatusCode::BAD_REQUEST,
        ),
        (
            "/api/dashboard",
            &["127.0.0.1:4319", "evil.com"],
            StatusCode::BAD_REQUEST,
        ),
        ("/api/dashboard", &[], StatusCode::BAD_REQUEST),
        ("/api/dashboard", &["127.0.0.1:9999"], StatusCode::FORBIDDEN),
        (
            "http://evil.com/api/dashboard",
            &["127.0.0.1:4319"],
            StatusCode::FORBIDDEN,
        ),
        (
            "http://localhost:4319/api/health",
            &["evil.com"],
            StatusCode::OK,
        ),
    ] {
        let (s, _) = h.call(with_hosts(uri, hosts), "127.0.0.1:5000").await;
        assert_eq!(s, want, "{uri} {hosts:?}");
    }
    let post = |origin: &str| {
        Request::post("/api/batches/stop")
            .header("host", "localhost:4319")
            .header("origin", origin)
            .header("content-type", "application/json")
            .body(Body::from(json!({"batch_id": "nope"}).to_string()))
            .expect("req")
    };
    let (s, _) = h
        .call(post("http://localhost:9999"), "127.0.0.1:5000")
        .await;
    assert_eq!(s, StatusCode::FORBIDDEN, "another port is another origin");
    let (s, _) = h
        .call(post("http://localhost:4319"), "127.0.0.1:5000")
        .await;
    assert_eq!(
        s,
        StatusCode::NOT_FOUND,
        "the own origin passes to the handler"
    );
}

#[tokio::test]
async fn regression_truncated_body_is_answered_413() {
    let dir = tempfile::tempdir().expect("tempdir");
    let repo = dir.path().join("state.git");
    crate::demo::create_repository(&repo, "box-1").expect("repo");
    let limits = super::http::limits::Limits {
        body_timeout: std::time::Duration::from_millis(200),
        ..super::http::limits::Limits::default()
    };
    let h = Harness {
        state: AppState::with_limits(
            GlobalArgs {
                repo_dir: Some(repo),
                state_ref: None,
            },
            Env::pinned("2026-11-29T12:00:00Z", "box-1"),
            super::http::guard::allowed_hosts("127.0.0.1", &[]).expect("hosts"),
            limits,
        ),
        _dir: dir,
    };
    let request = |body: Body| {
        Request::post("/api/batches/stop")
            .header("host", "localhost")
            .header("content-type", "application/json")
            .body(body)
            .expect("req")
    };
    let cut = Body::from_stream(tokio_stream::iter(vec![
        Ok(axum::body::Bytes::from_static(b"{\"batch_id\":")),
        Err(std::io::Error::other(
            "connection closed before message completed",
        )),
    ]));
    let (s, v) = h.call(request(cut), "127.0.0.1:5000").await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "{v}");
    let never = Body::from_stream(tokio_stream::pending::<
        Result<axum::body::Bytes, std::io::Error>,
    >());
    let (s, _) = h.call(request(never), "127.0.0.1:5000").await;
    assert_eq!(s, StatusCode::REQUEST_TIMEOUT);
    let mut declared = request(Body::from("{}"));
    declared
        .headers_mut()
        .insert("content-length", "300000".parse().expect("value"));
    assert_eq!(
        h.call(declared, "127.0.0.1:5000").await.0,
        StatusCode::PAYLOAD_TOO_LARGE
    );
    for bad in [
        b"{\"batch_id\": \"\xff\"}".to_vec(),
        "[".repeat(100_000).into_bytes(),
    ] {
        let (s, _) = h.call(request(Body::from(bad)), "127.0.0.1:5000").await;
        assert_eq!(s, StatusCode::BAD_REQUEST);
    }
}

#[tokio::test]
async fn doctor_answers_this_machine_only_and_never_a_token() {
    let h = harness();
    for peer in ["10.1.2.3:5000", "[fe80::1]:5000"] {
        let req = Request::get("/api/doctor")
            .header("host", "127.0.0.1:4319")
            .body(Body::empty())
            .expect("req");
        let (s, v) = h.call(req, peer).await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{peer}");
        assert_eq!(
            v["error"],
            json!(
                "Coordination diagnostics can only be read from the machine running the dashboard."
            )
        );
    }
    let (s, v) = h.get("/api/doctor").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["perResource"][0]["resource"], json!("state-branch"));
    assert_eq!(v["perResource"][0]["status"], json!("ok"));
    // No refresher runs in process: GitHub has not been asked yet.
    assert_eq!(v["github"]["status"]["status"], json!("pending"));
}

/// Writes a task checkpoint of acme/app#7 with `runs` lane runs into the harness's state.
fn put_task(h: &Harness, runs: Value) {
    let task = json!({
        "schema_version": 1, "task_id": "acme-app-7", "worker": "w1", "repo": "acme/app",
        "issue": 7, "title": "Fix the parser", "body": "", "state": "active", "phase": "implement",
        "assignment": {"event_id": 1, "actor": "octo", "created_at": "2026-11-29T10:00:00Z"},
        "pinned": {}, "branch": "agent/7", "base": "main", "rounds": 1,
        "created_at": "2026-11-29T10:00:00Z", "updated_at": "2026-11-29T11:00:00Z",
        "lane_runs": runs,
        "paused": {"vendor": "claude", "until": "2026-11-29T15:00:00Z"}
    });
    let Value::Object(record) = task else {
        panic!("an object")
    };
    let store = h.state.models.store().expect("store");
    store
        .transact(&[], |_| {
            let mut plan = agent_coord_shared::rules::Plan::nothing("test", ());
            plan.state
                .push(("coordinator/tasks/acme/app/7.json".into(), record.clone()));
            plan.summary = "test: a task".into();
            Ok::<_, crate::store::StoreError>(plan)
        })
        .expect("committed");
}

fn lane_run(machine: &str, path: &str) -> Value {
    json!({"slot": "grok:implementer", "phase": "implement", "round": 1, "vendor": "codex",
        "started_at": "2026-11-29T10:00:00Z", "ended_at": "2026-11-29T10:01:00Z",
        "verdict": "done", "exit_code": 0, "input_tokens": 5, "output_tokens": 2,
        "cost_usd": 0.5, "cost_source": "computed",
        "transcript": {"machine": machine, "path": path, "bytes": 10, "sha256": "sha256:00"}})
}

/// A coordinator configuration whose worker `w1` works under `root`.
fn coordinator_config(dir: &std::path::Path, root: &std::path::Path) -> std::path::PathBuf {
    let lanes: serde_json::Map<String, Value> = [
        "grok:implementer",
        "grok:reviewer",
        "grok:pr-reviewer-quality",
        "grok:pr-reviewer-logic",
        "codex:pr-reviewer-quality",
        "codex:pr-reviewer-logic",
    ]
    .iter()
    .map(|s| ((*s).to_owned(), json!(["/opt/lanes/run", s])))
    .collect();
    let config = json!({
        "api_url": "http://127.0.0.1:8080",
        "workers": {"w1": {
            "review_session": "r1", "workspace_root": root,
            "repositories": {"acme/app": {"base": "main", "publication_repo": "acme/app",
                "check_argv": ["/bin/true"], "readiness_argv": ["/bin/true"]}},
            "reply_logins": ["Human"], "poll_seconds": 30, "lane_timeout": 1800, "check_timeout": 600}},
        "sessions": {
            "w1": {"github": {"login": "bot-worker", "token_env": "WORKER_GH_TOKEN"},
                   "git": {"name": "Worker Bot", "email": "w@example.com", "signing_format": "ssh",
                           "signing_key": "/keys/worker", "allowed_signers": "/keys/allowed_signers"},
                   "lanes": lanes},
            "r1": {"github": {"login": "bot-reviewer", "token_env": "REVIEW_GH_TOKEN"}}
        },
        "authorized_publication": {}
    });
    let path = dir.join("coordinator.json");
    std::fs::write(&path, config.to_string()).expect("config");
    path
}

#[tokio::test]
async fn transcripts_are_served_to_loopback_only_and_never_from_outside_the_root() {
    let mut h = harness();
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("work");
    std::fs::create_dir_all(root.join(".coordinator-control/acme-app-7")).expect("root");
    let secret = dir.path().join("secret.jsonl");
    std::fs::write(
        &secret,
        r#"{"type":"item.completed","item":{"type":"agent_message","text":"secret-beyond-the-root"}}"#,
    )
    .expect("outside file");
    // A link inside the root that leads out of it.
    std::os::unix::fs::symlink(&secret, root.join("escape.jsonl")).expect("symlink");
    let inside = ".coordinator-control/acme-app-7/implement-1.transcript.jsonl";
    std::fs::write(
        root.join(inside),
        concat!(
            r#"{"agent_coord":"lane","vendor":"codex","role":"implementer","argv":["codex","exec","--json"]}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"i0","type":"agent_message","text":"STATUS: complete"}}"#,
            "\n",
        ),
    )
    .expect("transcript");
    h.state.coordinator_config = Some(coordinator_config(dir.path(), &root));
    put_task(
        &h,
        json!([
            lane_run("box-1", inside),
            lane_run("box-2", inside),
            lane_run("box-1", "escape.jsonl"),
            lane_run("box-1", "../secret.jsonl"),
        ]),
    );
    let url = |n: u32| format!("/api/items/acme/app/7/lane-runs/{n}/transcript");

    // The item page lists the runs, the spend and the pause.
    let (s, item) = h.get("/api/items/acme/app/7").await;
    assert_eq!(s, StatusCode::OK, "{item}");
    let panel = &item["coordinator"];
    assert_eq!(panel["laneRuns"].as_array().map(Vec::len), Some(4));
    assert_eq!(panel["laneRuns"][1]["transcriptMachine"], json!("box-2"));
    assert_eq!(panel["spend"]["runs"], json!(4));
    assert_eq!(panel["spend"]["costUsd"], json!(2.0));
    assert_eq!(panel["paused"]["vendor"], json!("claude"));

    // This machine's transcript, rendered.
    let (s, v) = h.get(&url(1)).await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["machine"], json!("box-1"));
    assert_eq!(v["transcript"]["vendor"], json!("codex"));
    assert_eq!(v["transcript"]["entries"][1]["kind"], json!("message"));
    assert_eq!(
        v["transcript"]["entries"][1]["text"],
        json!("STATUS: complete")
    );

    // A peer on another machine is refused, whatever it asks for.
    for peer in ["10.0.0.1:5000", "[fe80::1]:5000"] {
        let req = Request::get(url(1))
            .header("host", "127.0.0.1:4319")
            .body(Body::empty())
            .expect("req");
        let (s, v) = h.call(req, peer).await;
        assert_eq!(s, StatusCode::FORBIDDEN, "{peer}");
        assert!(
            v["error"].as_str().is_some_and(|e| e.contains("loopback")),
            "{v}"
        );
    }

    // Another machine holds run 2: 409 naming it.
    let (s, v) = h.get(&url(2)).await;
    assert_eq!(s, StatusCode::CONFLICT);
    assert_eq!(v["heldBy"], json!("box-2"));
    assert!(v["error"].as_str().is_some_and(|e| e.contains("box-2")));

    // A link out of the root and a `..` path are refused; the outside text never comes back.
    for n in [3, 4] {
        let (s, v) = h.get(&url(n)).await;
        assert_eq!(s, StatusCode::FORBIDDEN, "run {n}: {v}");
        assert!(!v.to_string().contains("secret-beyond"), "{v}");
    }
    // Unknown runs and tasks are 404.
    for path in [
        url(9),
        "/api/items/acme/app/8/lane-runs/1/transcript".to_owned(),
    ] {
        assert_eq!(h.get(&path).await.0, StatusCode::NOT_FOUND, "{path}");
    }
    // A configuration the server cannot read is its own trouble, and no path is shown.
    h.state.coordinator_config = Some(dir.path().join("missing.json"));
    let (s, v) = h.get(&url(1)).await;
    assert_eq!(s, StatusCode::SERVICE_UNAVAILABLE);
    assert!(!v.to_string().contains("missing.json"), "{v}");
}

#[test]
fn resolve_refuses_paths_outside_the_root() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("root");
    std::fs::create_dir_all(root.join("a")).expect("root");
    std::fs::write(root.join("a/t.jsonl"), "{}").expect("file");
    std::fs::write(dir.path().join("out.jsonl"), "{}").expect("file");
    let resolve = super::routes::transcripts::resolve;
    assert!(resolve(&root, "a/t.jsonl").is_ok_and(|p| p.ends_with("a/t.jsonl")));
    for bad in [
        "../out.jsonl",
        "a/../../out.jsonl",
        "/etc/passwd",
        "",
        "a//t.jsonl",
    ] {
        let e = resolve(&root, bad).expect_err(bad);
        assert_eq!(e.status, StatusCode::FORBIDDEN, "{bad}");
    }
    assert_eq!(
        resolve(&root, "a/gone.jsonl").expect_err("gone").status,
        StatusCode::NOT_FOUND
    );
}

/// Commits `record` at `path` into the harness's state.
fn put_record(h: &Harness, path: &str, record: Value) {
    let Value::Object(record) = record else {
        panic!("an object")
    };
    let store = h.state.models.store().expect("store");
    store
        .transact(&[], |_| {
            let mut plan = agent_coord_shared::rules::Plan::nothing("test", ());
            plan.state.push((path.to_owned(), record.clone()));
            plan.summary = "test: a record".into();
            Ok::<_, crate::store::StoreError>(plan)
        })
        .expect("committed");
}

#[tokio::test]
async fn the_lane_timeline_packs_lanes_per_machine_over_the_hours_asked() {
    let h = harness();
    // The harness's clock is 12:00. An implementer on box-1 from 9:00 to 10:00, a rejected
    // gate on box-1 overlapping it, and two gates running on box-2 since 11:30.
    let run = |slot: &str, from: &str, to: &str, verdict: &str| {
        json!({"slot": slot, "phase": "implement", "round": 1, "vendor": "claude",
            "started_at": format!("2026-11-29T{from}:00Z"), "ended_at": format!("2026-11-29T{to}:00Z"),
            "verdict": verdict, "exit_code": 0, "cost_source": "unknown",
            "transcript": {"machine": "box-1", "path": "t.jsonl", "bytes": 1, "sha256": "sha256:00"}})
    };
    let task = |issue: u64, machine: &str| {
        json!({
            "schema_version": 1, "task_id": format!("acme-app-{issue}"), "worker": "w1",
            "machine": machine, "repo": "acme/app", "issue": issue, "title": "T", "body": "",
            "state": "active", "phase": "pr_gates_grok",
            "assignment": {"event_id": 1, "actor": "octo", "created_at": "2026-11-29T08:00:00Z"},
            "pinned": {}, "branch": "b", "base": "main", "rounds": 1,
            "created_at": "2026-11-29T08:00:00Z", "updated_at": "2026-11-29T11:30:00Z"
        })
    };
    let mut one = task(7, "box-1");
    one["lane_runs"] = json!([
        run("grok:implementer", "09:00", "10:00", "done"),
        run("grok:pr-reviewer-logic", "09:30", "09:45", "rejected"),
    ]);
    put_record(&h, "coordinator/tasks/acme/app/7.json", one);
    let then = h
        .state
        .models
        .store()
        .expect("store")
        .tip()
        .expect("tip")
        .expect("a commit");
    let mut two = task(8, "box-2");
    two["pending"] = json!({"slot": "grok:pr-reviewer-quality+grok:pr-reviewer-logic",
        "phase": "pr_gates_grok", "started_at": "2026-11-29T11:30:00Z",
        "launch": {"machine": "box-2", "nonce": "n", "stems": ["a", "b"]}});
    put_record(&h, "coordinator/tasks/acme/app/8.json", two);

    let (s, v) = h.get("/api/lanes/timeline").await;
    assert_eq!(s, StatusCode::OK, "{v}");
    assert_eq!(v["hours"], json!(6));
    assert_eq!(v["from"], json!("2026-11-29T06:00:00Z"));
    assert_eq!(v["to"], json!("2026-11-29T12:00:00Z"));
    assert_eq!(v["bucketSecs"], json!(300));
    let bars = v["bars"].as_array().expect("bars");
    let got: Vec<(Value, Value, Value, Value)> = bars
        .iter()
        .map(|b| {
            (
                b["machine"].clone(),
                b["row"].clone(),
                b["role"].clone(),
                b["outcome"].clone(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (
                json!("box-1"),
                json!(0),
                json!("implementer"),
                json!("done")
            ),
            (
                json!("box-1"),
                json!(1),
                json!("grok logic"),
                json!("rejected")
            ),
            (
                json!("box-2"),
                json!(2),
                json!("grok logic"),
                json!("running")
            ),
            (
                json!("box-2"),
                json!(3),
                json!("grok quality"),
                json!("running")
            ),
        ]
    );
    assert_eq!(bars[0]["offsetSecs"], json!(3 * 3600));
    assert_eq!(bars[2]["endedAt"], Value::Null);
    assert_eq!(v["machines"][1]["running"], json!(2));
    assert_eq!(v["byMachine"][0]["peak"], json!(2.0));
    assert_eq!(v["byMachine"][1]["mean"], json!(1.0 / 6.0));

    // The window that ended at the first commit: box-2's lanes did not exist yet.
    let (s, past) = h.get(&format!("/api/lanes/timeline?at={then}")).await;
    assert_eq!(s, StatusCode::OK, "{past}");
    assert_eq!(past["machines"].as_array().map(Vec::len), Some(1));
    assert_eq!(past["bars"].as_array().map(Vec::len), Some(2));

    // One hour: only the running gates.
    let (s, v) = h.get("/api/lanes/timeline?hours=1").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(v["bars"].as_array().map(Vec::len), Some(2));
    assert_eq!(v["bucketSecs"], json!(50));

    // Scoped to another repository, no task of acme/app shows.
    let req = Request::put("/api/settings")
        .header("host", "localhost:4319")
        .header("content-type", "application/json")
        .body(Body::from(
            json!({"targetRepos": ["acme/other"]}).to_string(),
        ))
        .expect("req");
    let (s, _) = h.call(req, "127.0.0.1:5000").await;
    assert_eq!(s, StatusCode::OK);
    let (s, v) = h.get("/api/lanes/timeline").await;
    assert_eq!((s, v["bars"].clone()), (StatusCode::OK, json!([])));

    for bad in ["0", "169", "six"] {
        let (s, v) = h.get(&format!("/api/lanes/timeline?hours={bad}")).await;
        assert_eq!(s, StatusCode::BAD_REQUEST);
        assert_eq!(
            v["error"],
            json!(format!(
                "hours must be a whole number from 1 to 168, not \"{bad}\""
            ))
        );
    }
}
