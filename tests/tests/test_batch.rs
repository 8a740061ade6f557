//! `register-batch` and `record-event`: validation, launch prompts, typed events.

use agent_coord_tests::call::transcript;
use agent_coord_tests::env::TestEnv;
use serde_json::json;

const MANIFEST: &str = r#"{"batch_id": "b1", "repo": "acme/app", "objective": "ship",
  "lanes": [{"name": "code", "owner": "w1", "targets": ["7"]}]}"#;

#[test]
fn register_with_launch_prompt_from_stdin() {
    let env = TestEnv::new();
    let register = env.register("m.json", MANIFEST).opt("--launch-prompt", "-");
    let out = register.run_with_stdin("Use $pr-batch\nBatch id: b1\n".as_bytes());
    insta::assert_snapshot!(out, @r"
    ------- stdout -------
    registered batch b1
    [exit status: 0]
    ");
    let batch = env.record("batches/b1.json").unwrap();
    assert_eq!(
        batch["launch_prompt"],
        json!("Use $pr-batch\nBatch id: b1\n")
    );
    assert_eq!(batch["registered_at"], json!("2026-06-13T12:00:00Z"));
    assert_eq!(batch["schema_version"], json!(1));

    let tip = env.state_tip();
    insta::assert_snapshot!(register.run_with_stdin(&[0xff, 0xfe]), @r"
    ------- stderr -------
    launch prompt must be valid UTF-8
    [exit status: 1]
    ");
    assert_eq!(env.state_tip(), tip);
}

#[test]
fn register_rejects_bad_manifests_without_writing() {
    let env = TestEnv::new();
    let cases = [
        "{",
        "[]",
        r#"{"batch_id": "b", "lanes": []}"#,
        r#"{"batch_id": "b", "lanes": [{"name": "x", "owner": "w", "targets": ["1"], "depends_on": "bare"}]}"#,
    ];
    // Lazily, so that each manifest is written just before its own run.
    let calls = cases.into_iter().map(|text| env.register("bad.json", text));
    let missing = env.call(["register-batch", "--file", "/nonexistent/m.json"]);
    insta::assert_snapshot!(transcript(calls.chain([missing])), @r"
    $ agent-coord register-batch --file [ROOT]/bad.json
    ------- stderr -------
    batch manifest JSON invalid: EOF while parsing an object at line 1 column 1
    [exit status: 1]
    $ agent-coord register-batch --file [ROOT]/bad.json
    ------- stderr -------
    batch manifest must be a JSON object
    [exit status: 1]
    $ agent-coord register-batch --file [ROOT]/bad.json
    ------- stderr -------
    batch manifest lanes must not be empty
    [exit status: 1]
    $ agent-coord register-batch --file [ROOT]/bad.json
    ------- stderr -------
    batch lane x has invalid dependency ref: bare
    [exit status: 1]
    $ agent-coord register-batch --file /nonexistent/m.json
    ------- stderr -------
    batch manifest unreadable: /nonexistent/m.json: No such file or directory (os error 2)
    [exit status: 2]
    ");
    assert_eq!(env.state_tip(), None, "nothing was ever written");
}

#[test]
fn typed_events_validate_before_writing() {
    let env = TestEnv::new();
    env.event("b1", "note").run().success();
    let tip = env.state_tip();
    let event = |kind| env.event("b1", kind);
    let cases = [
        event("help_requested"),
        event("help_requested").opt("--reason", "bored"),
        event("help_requested").args(["--reason", "question", "--severity", "P1"]),
        event("error").args(["--severity", "P1", "--category", "ci", "--message", "  "]),
        event("human_intervention").opt("--kind", "nap"),
        event("note").opt("--lane", "a:b"),
        event("note").opt("--pr-state", "merged"),
    ];
    insta::assert_snapshot!(transcript(cases), @r"
    $ agent-coord record-event --batch-id b1 --type help_requested
    ------- stderr -------
    missing required --reason
    [exit status: 1]
    $ agent-coord record-event --batch-id b1 --type help_requested --reason bored
    ------- stderr -------
    --reason must be one of: blocked-user-input, question, permission
    [exit status: 1]
    $ agent-coord record-event --batch-id b1 --type help_requested --reason question --severity P1
    ------- stderr -------
    --severity is not valid for --type help_requested
    [exit status: 1]
    $ agent-coord record-event --batch-id b1 --type error --severity P1 --category ci --message '  '
    ------- stderr -------
    missing required --message
    [exit status: 1]
    $ agent-coord record-event --batch-id b1 --type human_intervention --kind nap
    ------- stderr -------
    --kind must be one of: takeover, supersede, manual-fix, drain
    [exit status: 1]
    $ agent-coord record-event --batch-id b1 --type note --lane a:b
    ------- stderr -------
    event lane a:b cannot contain ':'
    [exit status: 1]
    $ agent-coord record-event --batch-id b1 --type note --pr-state merged
    ------- stderr -------
    terminal-only options require --type lane_closed
    [exit status: 1]
    ");
    assert_eq!(env.state_tip(), tip);

    let out = env
        .event("b1", "escalation_requested")
        .opt("--from-route", "gpt/low")
        .opt("--to-route", "gpt/high")
        .opt("--evidence", "stuck")
        .json()
        .run()
        .success();
    let event = &out.json()["event"];
    assert_eq!(event["from_route"], json!("gpt/low"));
    assert_eq!(event["type"], json!("escalation_requested"));
    assert!(event.get("reason").is_none());
}

#[test]
fn event_status_normalisation_and_warning() {
    let env = TestEnv::new();
    let out = env
        .event("b1", "phase")
        .status("Ready-To-Merge")
        .json()
        .run()
        .success();
    assert_eq!(out.json()["event"]["status"], json!("ready"));
    assert_eq!(out.json()["event"]["status_raw"], json!("Ready-To-Merge"));
    // stdout names a random event id; the warning is what this checks.
    let out = env.event("b1", "phase").status("napping").run().success();
    insta::assert_snapshot!(out.stderr, @r#"warning: status "napping" is not in the canonical status vocabulary; preserving it verbatim with a status_raw copy. Canonical statuses: in_progress, blocked, blocked_user_input, waiting_on_checks_or_review, external_gate_failing, no_pr_evidence, failed, done, merged, ready, ready_gates_clean, ready_no_merge_authority, abandoned, superseded."#);
}
