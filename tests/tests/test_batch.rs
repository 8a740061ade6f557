//! `register-batch` and `record-event`: validation, launch prompts, typed events.

use agent_coord_tests::env::TestEnv;
use serde_json::json;

const MANIFEST: &str = r#"{"batch_id": "b1", "repo": "acme/app", "objective": "ship",
  "lanes": [{"name": "code", "owner": "w1", "targets": ["7"]}]}"#;

#[test]
fn register_with_launch_prompt_from_stdin() {
    let env = TestEnv::new();
    let file = env.write_file("m.json", MANIFEST);
    let out = env.run_with_stdin(
        &[
            "register-batch",
            "--file",
            file.to_str().unwrap(),
            "--launch-prompt",
            "-",
        ],
        "Use $pr-batch\nBatch id: b1\n".as_bytes(),
    );
    assert_eq!(out.clone().success().stdout, "registered batch b1\n");
    let batch = env.record("batches/b1.json").unwrap();
    assert_eq!(
        batch["launch_prompt"],
        json!("Use $pr-batch\nBatch id: b1\n")
    );
    assert_eq!(batch["registered_at"], json!("2026-06-13T12:00:00Z"));
    assert_eq!(batch["schema_version"], json!(1));

    let tip = env.state_tip();
    let out = env.run_with_stdin(
        &[
            "register-batch",
            "--file",
            file.to_str().unwrap(),
            "--launch-prompt",
            "-",
        ],
        &[0xff, 0xfe],
    );
    assert_eq!(out.code, 1);
    assert_eq!(out.stderr.trim(), "launch prompt must be valid UTF-8");
    assert_eq!(env.state_tip(), tip);
}

#[test]
fn register_rejects_bad_manifests_without_writing() {
    let env = TestEnv::new();
    let cases: [(&str, i32, &str); 4] = [
        ("{", 1, "batch manifest JSON invalid:"),
        ("[]", 1, "batch manifest must be a JSON object"),
        (
            r#"{"batch_id": "b", "lanes": []}"#,
            1,
            "batch manifest lanes must not be empty",
        ),
        (
            r#"{"batch_id": "b", "lanes": [{"name": "x", "owner": "w", "targets": ["1"], "depends_on": "bare"}]}"#,
            1,
            "batch lane x has invalid dependency ref: bare",
        ),
    ];
    for (text, code, message) in cases {
        let file = env.write_file("bad.json", text);
        let out = env
            .run(["register-batch", "--file", file.to_str().unwrap()])
            .code(code);
        assert!(out.stderr.starts_with(message), "{out}");
    }
    let out = env
        .run(["register-batch", "--file", "/nonexistent/m.json"])
        .code(2);
    assert!(
        out.stderr.starts_with("batch manifest unreadable:"),
        "{out}"
    );
    assert_eq!(env.state_tip(), None, "nothing was ever written");
}

#[test]
fn typed_events_validate_before_writing() {
    let env = TestEnv::new();
    env.run(["record-event", "--batch-id", "b1", "--type", "note"])
        .success();
    let tip = env.state_tip();
    let cases: [(&[&str], &str); 6] = [
        (&["--type", "help_requested"], "missing required --reason"),
        (
            &["--type", "help_requested", "--reason", "bored"],
            "--reason must be one of: blocked-user-input, question, permission",
        ),
        (
            &[
                "--type",
                "help_requested",
                "--reason",
                "question",
                "--severity",
                "P1",
            ],
            "--severity is not valid for --type help_requested",
        ),
        (
            &[
                "--type",
                "error",
                "--severity",
                "P1",
                "--category",
                "ci",
                "--message",
                "  ",
            ],
            "missing required --message",
        ),
        (
            &["--type", "human_intervention", "--kind", "nap"],
            "--kind must be one of: takeover, supersede, manual-fix, drain",
        ),
        (
            &["--type", "note", "--lane", "a:b"],
            "event lane a:b cannot contain ':'",
        ),
    ];
    for (extra, message) in cases {
        let mut args = vec!["record-event", "--batch-id", "b1"];
        args.extend_from_slice(extra);
        let out = env.run(&args).code(1);
        assert_eq!(out.stderr.trim(), message, "{extra:?}");
    }
    let out = env
        .run([
            "record-event",
            "--batch-id",
            "b1",
            "--type",
            "note",
            "--pr-state",
            "merged",
        ])
        .code(1);
    assert_eq!(
        out.stderr.trim(),
        "terminal-only options require --type lane_closed"
    );
    assert_eq!(env.state_tip(), tip);

    let out = env
        .run([
            "record-event",
            "--batch-id",
            "b1",
            "--type",
            "escalation_requested",
            "--from-route",
            "gpt/low",
            "--to-route",
            "gpt/high",
            "--evidence",
            "stuck",
            "--json",
        ])
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
        .run([
            "record-event",
            "--batch-id",
            "b1",
            "--type",
            "phase",
            "--status",
            "Ready-To-Merge",
            "--json",
        ])
        .success();
    assert_eq!(out.json()["event"]["status"], json!("ready"));
    assert_eq!(out.json()["event"]["status_raw"], json!("Ready-To-Merge"));
    let out = env
        .run([
            "record-event",
            "--batch-id",
            "b1",
            "--type",
            "phase",
            "--status",
            "napping",
        ])
        .success();
    assert!(
        out.stderr
            .starts_with("warning: status \"napping\" is not in the canonical status vocabulary"),
        "{out}"
    );
}
