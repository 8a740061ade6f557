//! `agent-coord serve` over real sockets: live updates after CLI writes, the guards, and
//! the two writes landing as commits the CLI reads back.

use std::time::Duration;

use agent_coord_tests::env::TestEnv;
use agent_coord_tests::server::Server;
use serde_json::json;
use serde_json::Value;

const PROMPT: &str = "Repository: acme/app\nBatch id: b-live\nBatch objective: Live import.\nItems:\n- PR #7: https://github.com/acme/app/pull/7\nSuggested lanes:\n- one (owner: w1): PR #7\n";

/// Returns the batch view `id` of a dashboard model.
fn batch<'m>(model: &'m Value, id: &str) -> &'m Value {
    model["batches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["id"] == json!(id))
        .unwrap()
}

#[test]
fn the_stream_announces_a_cli_write_and_the_model_follows() {
    let env = TestEnv::new();
    env.claim("w1", "acme/app", "1").run().success();
    let server = Server::start(&env, &[]);
    let versions = server.versions();
    let first = versions
        .recv_timeout(Duration::from_secs(10))
        .expect("initial version");
    let (code, body) = server.get("/api/dashboard");
    assert_eq!(code, 200);
    let model: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(model["version"], json!(first));
    assert_eq!(model["counts"]["rows"], json!(1));

    env.claim("w2", "acme/app", "2").run().success();
    let next = versions
        .recv_timeout(Duration::from_secs(10))
        .expect("a version after the write");
    assert_ne!(next, first);
    let model: Value = serde_json::from_str(&server.get("/api/dashboard").1).unwrap();
    assert_eq!(model["version"], json!(next));
    assert_eq!(model["counts"]["rows"], json!(2));
    let ids: Vec<&str> = model["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert!(ids.contains(&"target:acme/app#2"), "{ids:?}");

    // A heartbeat moves only its machine's heartbeat ref; that is a new version too.
    env.beat("w2")
        .on("acme/app", "2")
        .status("implementing")
        .run()
        .success();
    let after_beat = versions
        .recv_timeout(Duration::from_secs(10))
        .expect("a version after the heartbeat");
    assert_ne!(after_beat, next);
}

#[test]
fn guards_over_real_sockets_and_writes_the_cli_reads_back() {
    let env = TestEnv::new();
    env.claim("w1", "acme/app", "1").run().success();
    let server = Server::start(&env, &[]);
    let (code, body) = server.get_with_host("/api/dashboard", "attacker.example");
    assert_eq!(
        (code, body.as_str()),
        (403, r#"{"error":"Forbidden host"}"#)
    );
    assert_eq!(server.get_with_host("/api/health", "localhost").0, 200);

    let tip = env.state_tip();
    let (code, body) = server.post_json("/api/batches/import", &json!({"launch_prompt": PROMPT}));
    assert_eq!(code, 201, "{body}");
    assert_ne!(env.state_tip(), tip, "one commit on the state branch");
    let subject = env.git(&["log", "-1", "--format=%s", "refs/heads/agent-coord"]);
    assert_eq!(subject.trim(), "dashboard: import batch plan b-live");
    let manifest = env.record("batches/b-live.json").expect("manifest");
    assert_eq!(manifest["lanes"][0]["owner"], json!("w1"));
    // The CLI reads what the dashboard wrote.
    let audit = env.run(["batch-audit", "--batch-id", "b-live", "--json"]);
    assert!(
        audit.json()["batch_id"] == json!("b-live"),
        "{:?}",
        audit.json()
    );

    let (code, body) = server.post_json("/api/batches/import", &json!({"launch_prompt": PROMPT}));
    assert_eq!(
        (code, body.as_str()),
        (
            409,
            r#"{"error":"Batch plan batches/b-live.json already exists."}"#
        )
    );

    let (code, body) = server.post_json("/api/batches/stop", &json!({"batch_id": "b-live"}));
    assert_eq!(code, 201, "{body}");
    let event: Value = serde_json::from_str(&body).unwrap();
    let path = event["path"].as_str().unwrap();
    let stored = env.record(path).expect("event stored");
    assert_eq!(stored["type"], json!("batch.stop_requested"));
    assert_eq!(
        stored["message"],
        json!("Stop requested from dashboard so this batch can be restarted.")
    );
    assert_eq!(stored["machine_id"], json!("box-1"));
    let model: Value = serde_json::from_str(&server.get("/api/dashboard").1).unwrap();
    assert_eq!(batch(&model, "b-live")["control"], json!("stop_requested"));
    // Claims and heartbeats are untouched by a stop.
    assert_eq!(
        env.record("claims/acme/app/1.json").unwrap()["status"],
        json!("active")
    );

    let tip = env.state_tip();
    let (code, _) = server.post_json("/api/batches/stop", &json!({"batch_id": "nope"}));
    assert_eq!(code, 404);
    assert_eq!(env.state_tip(), tip, "a refused write commits nothing");
}

#[test]
fn the_demo_fleet_shows_every_state_and_keeps_moving() {
    let env = TestEnv::new();
    let server = Server::start(&env, &["--demo"]);
    let model: Value = serde_json::from_str(&server.get("/api/dashboard").1).unwrap();
    let state = |target: &str| {
        model["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["target"] == json!(target))
            .map(|r| r["state"].as_str().unwrap_or_default().to_owned())
            .unwrap_or_default()
    };
    assert_eq!(state("101"), "running");
    assert_eq!(state("102"), "wedged");
    assert_eq!(state("103"), "blocked");
    assert_eq!(state("104"), "dead");
    assert_eq!(state("202"), "done");
    assert_eq!(
        batch(&model, "demo-release")["control"],
        json!("stop_requested")
    );
    assert!(
        model["qa"]
            .as_array()
            .unwrap()
            .iter()
            .any(|q| q["status"] == json!("requested")),
        "a QA event"
    );
    // The fleet keeps moving: a new version within a few ticks.
    let versions = server.versions();
    let first = versions
        .recv_timeout(Duration::from_secs(10))
        .expect("a version");
    let next = versions
        .recv_timeout(Duration::from_secs(15))
        .expect("the fleet moved");
    assert_ne!(first, next);
    // The demo never touches the user's repository.
    assert_eq!(env.state_tip(), None);
}

#[test]
fn a_stop_of_an_inferred_batch_is_decided_on_the_state_it_writes_on() {
    let env = TestEnv::new();
    let server = Server::start(&env, &[]);
    // Nothing names the batch yet: refused, nothing written.
    let (code, body) = server.post_json("/api/batches/stop", &json!({"batch_id": "b-inf"}));
    assert_eq!(
        (code, body.as_str()),
        (
            404,
            r#"{"error":"Batch b-inf is not in the coordination state."}"#
        )
    );
    // A claim naming it makes it known at once (no waiting for the cached model).
    env.run([
        "claim",
        "--agent-id",
        "w1",
        "--repo",
        "acme/app",
        "--target",
        "3",
        "--batch-id",
        "b-inf",
    ])
    .success();
    let (code, body) = server.post_json("/api/batches/stop", &json!({"batch_id": "b-inf"}));
    assert_eq!(code, 201, "{body}");
    let written: Value = serde_json::from_str(&body).unwrap();
    let stored = env
        .record(written["path"].as_str().unwrap())
        .expect("event");
    assert_eq!(stored["type"], json!("batch.stop_requested"));
    assert_eq!(stored["repo"], json!("acme/app"));
    assert_eq!(stored, written["event"]);
}
