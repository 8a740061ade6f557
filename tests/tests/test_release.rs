//! `release`: plain, handoff and terminal closeout, and who may release.

use agent_coord_tests::env::TestEnv;
use serde_json::json;

fn with_batch(env: &TestEnv) {
    let manifest = env.write_file(
        "m.json",
        r#"{"batch_id": "b2", "repo": "acme/app", "lanes": [
             {"name": "code", "owner": "worker-a", "targets": ["50"]},
             {"name": "docs", "owner": "worker-b", "targets": [51]}]}"#,
    );
    env.run(["register-batch", "--file", manifest.to_str().unwrap()])
        .success();
    env.run([
        "claim",
        "--agent-id",
        "worker-a",
        "--repo",
        "acme/app",
        "--target",
        "50",
        "--batch-id",
        "b2",
        "--host",
        "codex",
    ])
    .success();
}

#[test]
fn only_the_holder_releases() {
    let env = TestEnv::new();
    env.run([
        "release",
        "--agent-id",
        "a",
        "--repo",
        "acme/app",
        "--target",
        "7",
    ])
    .code(1);
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
    let tip = env.state_tip();
    let out = env
        .run([
            "release",
            "--agent-id",
            "b",
            "--repo",
            "acme/app",
            "--target",
            "7",
        ])
        .code(1);
    assert_eq!(out.stderr.trim(), "claim belongs to a; b cannot release it");
    assert_eq!(env.state_tip(), tip);
    env.at(30);
    let out = env
        .run([
            "release",
            "--agent-id",
            "a",
            "--repo",
            "acme/app",
            "--target",
            "7",
            "--handoff-to",
            "c",
            "--handoff-note",
            "tests left",
        ])
        .success();
    assert_eq!(out.stdout, "released acme/app#7 by a\n");
    let claim = env.record("claims/acme/app/7.json").unwrap();
    assert_eq!(claim["status"], json!("released"));
    assert_eq!(claim["released_at"], json!("2026-06-13T12:00:30Z"));
    assert_eq!(claim["release_mode"], json!("handoff"));
    assert_eq!(claim["handoff_to"], json!("c"));
    // After release anyone may claim, with no liveness check.
    env.run([
        "claim",
        "--agent-id",
        "c",
        "--repo",
        "acme/app",
        "--target",
        "7",
    ])
    .success();
}

#[test]
fn terminal_release_is_one_commit_and_idempotent() {
    let env = TestEnv::new();
    with_batch(&env);
    let before = env.commit_count();
    let args = [
        "release",
        "--agent-id",
        "worker-a",
        "--repo",
        "acme/app",
        "--target",
        "50",
        "--terminal",
        "done",
        "--pr-state",
        "merged",
        "--pr-url",
        "https://github.com/acme/app/pull/52",
    ];
    env.run(args).success();
    assert_eq!(
        env.commit_count(),
        before + 1,
        "event, claim and batch stamp land together"
    );
    let event = env
        .record("events/b2/lane_closed-5694d08a2e53ffca.json")
        .unwrap();
    assert_eq!(event["schema_version"], json!(2));
    assert_eq!(
        event["closed_by"],
        json!({"agent_id": "worker-a", "machine": "box-1"})
    );
    assert_eq!(event["host"], json!("codex"));
    let claim = env.record("claims/acme/app/50.json").unwrap();
    assert_eq!(
        (claim["status"].clone(), claim["terminal"].clone()),
        (json!("released"), json!("done"))
    );
    let batch = env.record("batches/b2.json").unwrap();
    assert_eq!(batch["lanes"][0]["terminal"], json!("done"));
    assert_eq!(
        batch["lanes"][1]["targets"],
        json!(["51"]),
        "numeric targets are stored as strings"
    );

    let tip = env.state_tip();
    let out = env.run(args).success();
    assert_eq!(out.stdout, "lane already closed for acme/app#50\n");
    assert_eq!(env.state_tip(), tip, "an identical retry writes nothing");

    let mut conflicting = args.to_vec();
    conflicting[8] = "abandoned";
    let out = env.run(&conflicting).code(1);
    assert_eq!(
        out.stderr.trim(),
        "conflicting terminal closeout for lane code; first closeout is authoritative"
    );
}

#[test]
fn terminal_option_rules() {
    let env = TestEnv::new();
    with_batch(&env);
    let tip = env.state_tip();
    let base = [
        "release",
        "--agent-id",
        "worker-a",
        "--repo",
        "acme/app",
        "--target",
        "50",
    ];
    let cases: [(&[&str], &str); 6] = [
        (
            &["--terminal", "bogus", "--handoff-note", "x"],
            "--terminal must be one of: done, abandoned, superseded",
        ),
        (&["--pr-state", "merged"], "--pr-state requires --terminal"),
        (&["--workspace", "w"], "--workspace requires --terminal"),
        (
            &["--terminal", "finished"],
            "--terminal must be one of: done, abandoned, superseded",
        ),
        (
            &["--terminal", "done", "--handoff-to", "x"],
            "--terminal cannot be combined with --handoff-to or --handoff-note",
        ),
        (
            &["--terminal", "done", "--evidence-url", "ftp://x"],
            "--evidence-url must be an HTTP(S) URL with a host",
        ),
    ];
    for (extra, message) in cases {
        let args: Vec<&str> = base.iter().chain(extra.iter()).copied().collect();
        let out = env.run(&args).code(1);
        assert_eq!(out.stderr.trim(), message, "{extra:?}");
    }
    assert_eq!(env.state_tip(), tip);
}

#[test]
fn lane_closed_via_record_event_completes_the_batch() {
    let env = TestEnv::new();
    with_batch(&env);
    let out = env
        .run([
            "record-event",
            "--batch-id",
            "b2",
            "--type",
            "lane_closed",
            "--terminal",
            "done",
            "--agent-id",
            "worker-b",
            "--repo",
            "acme/app",
            "--target",
            "51",
        ])
        .success();
    assert_eq!(
        out.stdout,
        "recorded event b2 lane_closed-0d2d3f8b5d7c7a4e\n"
            .replace("0d2d3f8b5d7c7a4e", &lane_hash("docs"))
    );
    env.run([
        "release",
        "--agent-id",
        "worker-a",
        "--repo",
        "acme/app",
        "--target",
        "50",
        "--terminal",
        "done",
    ])
    .success();
    let batch = env.record("batches/b2.json").unwrap();
    assert_eq!(batch["status"], json!("completed"));
    let audit = env.run(["batch-audit", "--batch-id", "b2", "--json"]);
    // worker-b never claimed: its lane lacks claim.acquired, so the audit says incomplete.
    assert_eq!(audit.code, 1, "{audit}");
    assert_eq!(
        audit.json()["lanes"][1]["missing"],
        json!(["claim.acquired"])
    );
    assert_eq!(audit.json()["lanes"][0]["complete"], json!(true));
}

fn lane_hash(lane: &str) -> String {
    use agent_coord_shared::rules::closeout::event_id;
    event_id(lane).trim_start_matches("lane_closed-").to_owned()
}
