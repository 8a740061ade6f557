//! The dashboard in a real headless Chromium (Debian's, driven by playwright-core): the
//! overview counts, a health warning, search, a batch page, an import through the UI that
//! appears without a reload, and a stop request reflected live; and the coordinator's
//! attention entries and item panel. Saves screenshots to `target/browser/`.

use std::path::PathBuf;
use std::process::Command;

use agent_coord_tests::env::TestEnv;
use agent_coord_tests::server::Server;
use serde_json::json;

use crate::test_serve::seed_coordinator_tasks;
use crate::test_serve::seed_malformed_task;

fn seed(env: &TestEnv) {
    let manifest = json!({
        "batch_id": "b-seed", "repo": "acme/app", "objective": "Seeded batch for the browser test.",
        "targets": [{"type": "pull_request", "target": "1"}, {"type": "pull_request", "target": "2"}],
        "lanes": [{"name": "one", "owner": "w1", "targets": ["1"], "status": "in_progress"},
                  {"name": "two", "owner": "w2", "targets": ["2"], "status": "in_progress"}]
    });
    env.register("b-seed.json", &manifest.to_string())
        .run()
        .success();
    env.claim("w1", "acme/app", "1")
        .batch("b-seed")
        .run()
        .success();
    env.beat("w1")
        .on("acme/app", "1")
        .batch("b-seed")
        .status("implementing")
        .run()
        .success();
    // Claimed, but nobody beats for it: a health warning.
    env.claim("w2", "acme/app", "2")
        .batch("b-seed")
        .run()
        .success();
    // A holder that went silent an hour ago: dead, so it needs attention.
    env.at(-3600);
    env.claim("w3", "acme/app", "3").run().success();
    env.beat("w3")
        .on("acme/app", "3")
        .status("implementing")
        .ttl(60)
        .run()
        .success();
    env.at(0);
}

/// Runs `browser/<script>` against a server on `env` (saving `target/browser/<shot>`) and
/// asserts it passed.
pub(crate) fn run_script(env: &TestEnv, script: &str, shot: &str) {
    let server = Server::start(env, &[]);
    run_script_on(&server, script, shot, &[]);
}

/// Runs `browser/<script> <url> <shot> <args…>` against a running `server` and asserts it
/// passed.
pub(crate) fn run_script_on(server: &Server, script: &str, shot: &str, args: &[&str]) {
    let browser_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("browser");
    assert!(
        browser_dir.join("node_modules/playwright-core").is_dir(),
        "playwright-core is not installed: run `make browser-tools` (or `make test`)"
    );
    assert!(
        std::path::Path::new("/usr/bin/chromium").exists()
            || std::env::var_os("CHROMIUM").is_some(),
        "Chromium is not installed: run `make browser-tools` (or `make test`)"
    );
    let health: serde_json::Value = serde_json::from_str(&server.get("/api/health").1).unwrap();
    assert_eq!(
        health["bundled"],
        json!(true),
        "this agent-coord was built without the web front end: run `make web` before building"
    );
    let out_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/browser");
    std::fs::create_dir_all(&out_dir).unwrap();
    let shot = out_dir.join(shot);
    let _ = std::fs::remove_file(&shot);
    let out = Command::new("node")
        .arg(browser_dir.join(script))
        .arg(&server.url)
        .arg(&shot)
        .args(args)
        .output()
        .expect("node runs");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "browser test failed:\n{log}");
    assert!(log.contains("browser test passed"), "{log}");
    let size = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    assert!(size > 10_000, "screenshot missing or empty ({size} bytes)");
}

#[test]
fn the_dashboard_works_in_a_real_browser() {
    let env = TestEnv::new();
    seed(&env);
    run_script(&env, "dashboard.mjs", "dashboard.png");
    // What the browser did landed in git.
    assert!(
        env.record("batches/b-browser.json").is_some(),
        "import committed"
    );
    let events = env.paths("events/b-browser");
    assert_eq!(events.len(), 1, "one stop request event: {events:?}");
}

#[test]
fn the_coordinator_panel_and_queue_read_at_a_glance_in_a_real_browser() {
    let env = TestEnv::new();
    env.claim("w1", "acme/app", "1").run().success();
    seed_malformed_task(&env);
    seed_coordinator_tasks(&env);
    // An operator paused the worker: every view says so, and the item page offers resume.
    env.put_state_files(&[(
        "coordinator/controls/holds.json",
        r#"{"schema_version": 1, "holds": [{"kind": "pause", "scope": "worker:w-coord", "by": "alice", "at": "2026-06-13T11:00:00Z", "reason": "upgrade"}]}"#,
    )]);
    run_script(&env, "coordinator.mjs", "coordinator.png");
}

#[test]
fn a_generated_fleet_pages_and_searches_on_the_server_in_a_real_browser() {
    let env = TestEnv::new();
    let legacy = env.root().join("legacy");
    // The benchmark's fleet at scale 1 (100 batches, a few hundred rows), times around the
    // pinned clock.
    let start = chrono::DateTime::parse_from_rfc3339(agent_coord_tests::env::START)
        .expect("start")
        .timestamp();
    agent_coord_tests::fleet::generate(&legacy, 1, start);
    env.run(["import", "--from", legacy.to_str().expect("utf-8")])
        .success();
    run_script(&env, "scale.mjs", "scale.png");
}
