//! `serve --sync-every`: the server keeps itself current through the remote, reports how its
//! syncing stands on `/api/health` (and the stream), and a failing remote is shown without
//! taking the dashboard down or leaking credentials.

use std::time::Duration;
use std::time::Instant;

use agent_coord_tests::env::TestEnv;
use agent_coord_tests::remote::Fleet;
use agent_coord_tests::server::Server;
use serde_json::Value;

/// Reads `/api/health` until `done` holds (or 60 s pass); returns the last `sync` object.
fn sync_until(server: &Server, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (code, body) = server.get("/api/health");
        assert_eq!(code, 200, "{body}");
        let health: Value = serde_json::from_str(&body).expect("health is JSON");
        let sync = health["sync"].clone();
        if done(&sync) || Instant::now() > deadline {
            return sync;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn serve_syncs_on_its_own_and_says_when() {
    let fleet = Fleet::new(2);
    let (a, b) = (&fleet.machines[0], &fleet.machines[1]);
    let server = Server::start(b, &["--sync-every", "1"]);
    let first = sync_until(&server, |s| !s["lastSyncedAt"].is_null());
    assert_eq!(first["everySecs"], 1, "{first}");
    assert_eq!(first["remote"], "origin", "{first}");
    assert!(first["lastError"].is_null(), "{first}");
    // Another machine publishes a claim; the server on b shows it with no `sync` run on b.
    a.claim("wa", "acme/app", "7").sync().run().success();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let (_, body) = server.get("/api/dashboard");
        if body.contains("acme/app#7") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the claim published by another machine never reached the dashboard: {}",
            server.stderr()
        );
        std::thread::sleep(Duration::from_millis(250));
    }
    assert_eq!(
        b.git(&["rev-parse", "refs/heads/agent-coord"]),
        a.git(&["rev-parse", "refs/heads/agent-coord"]),
        "the server's sync brought b level with the remote"
    );
}

#[test]
fn a_failing_remote_is_shown_without_credentials_and_the_dashboard_still_serves() {
    let env = TestEnv::new();
    env.claim("w1", "acme/app", "3").run().success();
    // Nothing listens on port 9 of loopback: the fetch fails at once.
    env.git(&[
        "remote",
        "add",
        "origin",
        "http://operator:s3cr3t-passw0rd@127.0.0.1:9/state.git",
    ]);
    let server = Server::start(&env, &["--sync-every", "1"]);
    let sync = sync_until(&server, |s| !s["lastError"].is_null());
    let error = sync["lastError"].as_str().expect("an error is reported");
    assert!(
        !error.contains("s3cr3t-passw0rd"),
        "credentials leaked: {error}"
    );
    assert!(sync["lastSyncedAt"].is_null(), "{sync}");
    assert_eq!(sync["remote"], "origin", "{sync}");
    let (code, body) = server.get("/api/dashboard");
    assert_eq!(code, 200);
    assert!(body.contains("acme/app#3"), "the local state still renders");
    assert!(!body.contains("s3cr3t-passw0rd"));
}

#[test]
fn without_a_remote_or_with_zero_the_server_does_not_sync() {
    let env = TestEnv::new();
    env.claim("w1", "acme/app", "3").run().success();
    let server = Server::start(&env, &["--sync-every", "1"]);
    let sync = sync_until(&server, |s| !s["lastAttemptAt"].is_null());
    assert!(sync["remote"].is_null(), "{sync}");
    assert!(
        sync["lastError"].is_null(),
        "no remote is not an error: {sync}"
    );
    let off = Server::start(&env, &["--sync-every", "0"]);
    std::thread::sleep(Duration::from_millis(1500));
    let (_, body) = off.get("/api/health");
    let health: Value = serde_json::from_str(&body).expect("JSON");
    assert_eq!(health["sync"]["everySecs"], 0, "{health}");
    assert!(health["sync"]["lastAttemptAt"].is_null(), "{health}");
}
