//! `heartbeat` and `status`: liveness off the branch, scopes, notes and JSON shapes.

use agent_coord_tests::env::TestEnv;
use serde_json::json;

#[test]
fn heartbeats_add_no_commits_and_keep_one_commit_per_machine_ref() {
    let env = TestEnv::new();
    env.run([
        "claim",
        "--agent-id",
        "a",
        "--repo",
        "acme/app",
        "--target",
        "7",
    ])
    .success();
    for i in 0..25 {
        env.at(i * 60);
        env.run([
            "heartbeat",
            "--agent-id",
            "a",
            "--repo",
            "acme/app",
            "--target",
            "7",
        ])
        .success();
        env.run(["heartbeat", "--agent-id", "b"]).success();
    }
    assert_eq!(
        env.commit_count(),
        1,
        "heartbeats never touch the state branch"
    );
    let hb = "refs/agent-coord/heartbeats/box-1";
    assert_eq!(
        env.git(&["rev-list", "--count", hb]),
        "1",
        "a heartbeat ref is one parentless commit"
    );
    assert_eq!(
        env.git(&["ls-tree", "--name-only", "-r", hb]),
        "heartbeats/a.json\nheartbeats/b.json"
    );
}

#[test]
fn phase_change_emits_an_event_on_the_branch() {
    let env = TestEnv::new();
    env.run([
        "heartbeat",
        "--agent-id",
        "a",
        "--batch-id",
        "b1",
        "--phase",
        "implementing",
    ])
    .success();
    assert_eq!(
        env.state_tip(),
        None,
        "a first phase is captured by claim.acquired, not an event"
    );
    env.run(["heartbeat", "--agent-id", "a", "--phase", "validating"])
        .success();
    let events = env.paths("events/b1");
    assert_eq!(events.len(), 1);
    let ev = env.record(&events[0]).unwrap();
    assert_eq!(ev["type"], json!("phase.changed"));
    assert_eq!(ev["message"], json!("phase implementing -> validating"));
}

#[test]
fn another_machines_newer_heartbeat_wins() {
    let env = TestEnv::new();
    env.run([
        "claim",
        "--agent-id",
        "a",
        "--repo",
        "acme/app",
        "--target",
        "7",
    ])
    .success();
    env.run(["heartbeat", "--agent-id", "a", "--ttl", "60"])
        .success();
    env.at(600);
    env.set_machine(Some("box-2"));
    env.run(["heartbeat", "--agent-id", "a", "--ttl", "60"])
        .success();
    let status = env.run(["status", "--json"]).success().json();
    assert_eq!(status["heartbeats"][0]["liveness"], json!("live"));
    assert_eq!(
        status["heartbeats"][0]["updated_at"],
        json!("2026-06-13T12:10:00Z")
    );
    // The holder is live through its newest beat, on whichever machine.
    env.run([
        "claim",
        "--agent-id",
        "b",
        "--repo",
        "acme/app",
        "--target",
        "7",
    ])
    .code(3);
    assert!(env.tip("refs/agent-coord/heartbeats/box-1").is_some());
    assert!(env.tip("refs/agent-coord/heartbeats/box-2").is_some());
}

#[test]
fn status_scopes_and_notes() {
    let env = TestEnv::new();
    let manifest = env.write_file(
        "m.json",
        r#"{"batch_id": "b1", "lanes": [
             {"name": "code", "owner": "w1", "targets": ["7"]},
             {"name": "docs", "owner": "w2", "targets": ["8"], "depends_on": ["b1:code", "gone:lane"]}]}"#,
    );
    env.run(["register-batch", "--file", manifest.to_str().unwrap()])
        .success();
    env.run([
        "claim",
        "--agent-id",
        "w1",
        "--repo",
        "acme/app",
        "--target",
        "7",
        "--batch-id",
        "b1",
    ])
    .success();
    env.run(["heartbeat", "--agent-id", "w1", "--status", "ready"])
        .success();

    let target = env
        .run(["status", "--repo", "acme/app", "--target", "7", "--json"])
        .success()
        .json();
    assert_eq!(
        target["scope"],
        json!({"kind": "target", "repo": "acme/app", "target": "7"})
    );
    assert_eq!(target["claims"][0]["agent_id"], json!("w1"));
    assert_eq!(
        target["section_notes"]["batches"],
        json!("not checked in target scope")
    );

    let batch = env
        .run(["status", "--batch-id", "b1", "--json"])
        .success()
        .json();
    let docs = &batch["batches"][0]["lanes"][1];
    assert_eq!(
        docs["blocked_on"],
        json!(["gone:lane"]),
        "ready satisfies b1:code; a missing batch blocks"
    );
    assert_eq!(
        batch["section_notes"]["unresolved_dependencies"],
        json!("unresolved dependency refs: gone:lane")
    );
    assert!(batch["degraded"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n == "lane-owner heartbeats not found: w2"));

    let text = env.run(["status"]).success().stdout;
    assert!(
        text.contains("- acme/app#7 active w1 branch UNKNOWN expires 2026-06-13T16:00:00Z"),
        "{text}"
    );
    assert!(
        text.contains("- w1 ready live - updated 2026-06-13T12:00:00Z"),
        "{text}"
    );

    let cases: [(&[&str], &str); 4] = [
        (
            &["status", "--batch-id", "b1", "--repo", "acme/app"],
            "--batch-id cannot be combined with --repo or --target",
        ),
        (
            &["status", "--repo", "acme/app"],
            "missing required --target",
        ),
        (
            &["status", "--batch-id", "b1", "--include-archived"],
            "--include-archived is only valid for unscoped status",
        ),
        (&["status", "--batch-id", "../x"], "invalid batch-id: ../x"),
    ];
    for (args, message) in cases {
        assert_eq!(env.run(args).code(1).stderr.trim(), message);
    }
}

#[test]
fn empty_repository_status_is_empty_not_an_error() {
    let env = TestEnv::new();
    let status = env.run(["status", "--json"]).success().json();
    assert_eq!(status["claims"], json!([]));
    assert_eq!(status["scope"], json!({"kind": "all"}));
}
