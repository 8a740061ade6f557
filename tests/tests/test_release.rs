//! `release`: plain, handoff and terminal closeout, and who may release.

use agent_coord_tests::call::transcript;
use agent_coord_tests::env::TestEnv;
use serde_json::json;

fn with_batch(env: &TestEnv) {
    env.register(
        "m.json",
        r#"{"batch_id": "b2", "repo": "acme/app", "lanes": [
             {"name": "code", "owner": "worker-a", "targets": ["50"]},
             {"name": "docs", "owner": "worker-b", "targets": [51]}]}"#,
    )
    .run()
    .success();
    env.claim("worker-a", "acme/app", "50")
        .batch("b2")
        .opt("--host", "codex")
        .run()
        .success();
}

#[test]
fn only_the_holder_releases() {
    let env = TestEnv::new();
    env.release("a", "acme/app", "7").run().code(1);
    env.claim("a", "acme/app", "7").run().success();
    let tip = env.state_tip();
    insta::assert_snapshot!(env.release("b", "acme/app", "7").run(), @r"
    ------- stderr -------
    claim belongs to a; b cannot release it
    [exit status: 1]
    ");
    assert_eq!(env.state_tip(), tip);
    env.at(30);
    let out = env
        .release("a", "acme/app", "7")
        .opt("--handoff-to", "c")
        .opt("--handoff-note", "tests left")
        .run();
    insta::assert_snapshot!(out, @r"
    ------- stdout -------
    released acme/app#7 by a
    [exit status: 0]
    ");
    let claim = env.record("claims/acme/app/7.json").unwrap();
    assert_eq!(claim["status"], json!("released"));
    assert_eq!(claim["released_at"], json!("2026-06-13T12:00:30Z"));
    assert_eq!(claim["release_mode"], json!("handoff"));
    assert_eq!(claim["handoff_to"], json!("c"));
    // After release anyone may claim, with no liveness check.
    env.claim("c", "acme/app", "7").run().success();
}

#[test]
fn terminal_release_is_one_commit_and_idempotent() {
    let env = TestEnv::new();
    with_batch(&env);
    let before = env.commit_count();
    let close = |terminal: &str| {
        env.release("worker-a", "acme/app", "50")
            .opt("--terminal", terminal)
            .opt("--pr-state", "merged")
            .opt("--pr-url", "https://github.com/acme/app/pull/52")
    };
    close("done").run().success();
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
    insta::assert_snapshot!(close("done").run(), @r"
    ------- stdout -------
    lane already closed for acme/app#50
    [exit status: 0]
    ");
    assert_eq!(env.state_tip(), tip, "an identical retry writes nothing");
    insta::assert_snapshot!(close("abandoned").run(), @r"
    ------- stderr -------
    conflicting terminal closeout for lane code; first closeout is authoritative
    [exit status: 1]
    ");
}

#[test]
fn terminal_option_rules() {
    let env = TestEnv::new();
    with_batch(&env);
    let tip = env.state_tip();
    let release = || env.release("worker-a", "acme/app", "50");
    let cases = [
        release().args(["--terminal", "bogus", "--handoff-note", "x"]),
        release().opt("--pr-state", "merged"),
        release().opt("--workspace", "w"),
        release().opt("--terminal", "finished"),
        release().args(["--terminal", "done", "--handoff-to", "x"]),
        release().args(["--terminal", "done", "--evidence-url", "ftp://x"]),
    ];
    insta::assert_snapshot!(transcript(cases), @r"
    $ agent-coord release --agent-id worker-a --repo acme/app --target 50 --terminal bogus --handoff-note x
    ------- stderr -------
    --terminal must be one of: done, abandoned, superseded
    [exit status: 1]
    $ agent-coord release --agent-id worker-a --repo acme/app --target 50 --pr-state merged
    ------- stderr -------
    --pr-state requires --terminal
    [exit status: 1]
    $ agent-coord release --agent-id worker-a --repo acme/app --target 50 --workspace w
    ------- stderr -------
    --workspace requires --terminal
    [exit status: 1]
    $ agent-coord release --agent-id worker-a --repo acme/app --target 50 --terminal finished
    ------- stderr -------
    --terminal must be one of: done, abandoned, superseded
    [exit status: 1]
    $ agent-coord release --agent-id worker-a --repo acme/app --target 50 --terminal done --handoff-to x
    ------- stderr -------
    --terminal cannot be combined with --handoff-to or --handoff-note
    [exit status: 1]
    $ agent-coord release --agent-id worker-a --repo acme/app --target 50 --terminal done --evidence-url ftp://x
    ------- stderr -------
    --evidence-url must be an HTTP(S) URL with a host
    [exit status: 1]
    ");
    assert_eq!(env.state_tip(), tip);
}

#[test]
fn lane_closed_via_record_event_completes_the_batch() {
    let env = TestEnv::new();
    with_batch(&env);
    let out = env
        .event("b2", "lane_closed")
        .opt("--terminal", "done")
        .agent("worker-b")
        .on("acme/app", "51")
        .run()
        .success();
    assert_eq!(
        out.stdout,
        "recorded event b2 lane_closed-0d2d3f8b5d7c7a4e\n"
            .replace("0d2d3f8b5d7c7a4e", &lane_hash("docs"))
    );
    env.release("worker-a", "acme/app", "50")
        .opt("--terminal", "done")
        .run()
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
