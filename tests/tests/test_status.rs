//! `heartbeat` and `status`: liveness off the branch, scopes, notes and JSON shapes.

use agent_coord_tests::call::transcript;
use agent_coord_tests::env::TestEnv;
use serde_json::json;

#[test]
fn heartbeats_add_no_commits_and_keep_one_commit_per_machine_ref() {
    let env = TestEnv::new();
    env.claim("a", "acme/app", "7").run().success();
    for i in 0..25 {
        env.at(i * 60);
        env.beat("a").on("acme/app", "7").run().success();
        env.beat("b").run().success();
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
    env.beat("a")
        .batch("b1")
        .phase("implementing")
        .run()
        .success();
    assert_eq!(
        env.state_tip(),
        None,
        "a first phase is captured by claim.acquired, not an event"
    );
    env.beat("a").phase("validating").run().success();
    let events = env.paths("events/b1");
    assert_eq!(events.len(), 1);
    let ev = env.record(&events[0]).unwrap();
    assert_eq!(ev["type"], json!("phase.changed"));
    assert_eq!(ev["message"], json!("phase implementing -> validating"));
}

#[test]
fn another_machines_newer_heartbeat_wins() {
    let env = TestEnv::new();
    env.claim("a", "acme/app", "7").run().success();
    env.beat("a").ttl(60).run().success();
    env.at(600);
    env.set_machine(Some("box-2"));
    env.beat("a").ttl(60).run().success();
    let status = env.status().json().run().success().json();
    assert_eq!(status["heartbeats"][0]["liveness"], json!("live"));
    assert_eq!(
        status["heartbeats"][0]["updated_at"],
        json!("2026-06-13T12:10:00Z")
    );
    // The holder is live through its newest beat, on whichever machine.
    env.claim("b", "acme/app", "7").run().code(3);
    assert!(env.tip("refs/agent-coord/heartbeats/box-1").is_some());
    assert!(env.tip("refs/agent-coord/heartbeats/box-2").is_some());
}

#[test]
fn status_scopes_and_notes() {
    let env = TestEnv::new();
    env.register(
        "m.json",
        r#"{"batch_id": "b1", "lanes": [
             {"name": "code", "owner": "w1", "targets": ["7"]},
             {"name": "docs", "owner": "w2", "targets": ["8"], "depends_on": ["b1:code", "gone:lane"]}]}"#,
    )
    .run()
    .success();
    env.claim("w1", "acme/app", "7").batch("b1").run().success();
    env.beat("w1").status("ready").run().success();

    let target = env
        .status()
        .on("acme/app", "7")
        .json()
        .run()
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

    let batch = env.status().batch("b1").json().run().success().json();
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

    insta::assert_snapshot!(env.status().run(), @r"
    ------- stdout -------
    claims
    - acme/app#7 active w1 branch UNKNOWN expires 2026-06-13T16:00:00Z
    heartbeats
    - w1 ready live - updated 2026-06-13T12:00:00Z
    batches
    - b1
      - lane code owner w1 targets 7 status ready live deps - blocked_on -
      - lane docs owner w2 targets 8 status unknown no-heartbeat deps b1:code,gone:lane blocked_on gone:lane
    events
    - b1 - claim.acquired - by w1 at 2026-06-13T12:00:00Z
    [exit status: 0]
    ");

    let cases = [
        env.status().batch("b1").opt("--repo", "acme/app"),
        env.status().opt("--repo", "acme/app"),
        env.status().batch("b1").arg("--include-archived"),
        env.status().batch("../x"),
    ];
    insta::assert_snapshot!(transcript(cases), @r"
    $ agent-coord status --batch-id b1 --repo acme/app
    ------- stderr -------
    --batch-id cannot be combined with --repo or --target
    [exit status: 1]
    $ agent-coord status --repo acme/app
    ------- stderr -------
    missing required --target
    [exit status: 1]
    $ agent-coord status --batch-id b1 --include-archived
    ------- stderr -------
    --include-archived is only valid for unscoped status
    [exit status: 1]
    $ agent-coord status --batch-id ../x
    ------- stderr -------
    invalid batch-id: ../x
    [exit status: 1]
    ");
}

#[test]
fn empty_repository_status_is_empty_not_an_error() {
    let env = TestEnv::new();
    let status = env.status().json().run().success().json();
    assert_eq!(status["claims"], json!([]));
    assert_eq!(status["scope"], json!({"kind": "all"}));
}
