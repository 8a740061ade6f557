//! `claim`: acquisition, refusal, takeover, renewal and bad input, against a real repository.

use agent_coord_tests::env::TestEnv;
use serde_json::json;

const CLAIM_A: [&str; 7] = [
    "claim",
    "--agent-id",
    "a",
    "--repo",
    "acme/app",
    "--target",
    "7",
];
const CLAIM_B: [&str; 7] = [
    "claim",
    "--agent-id",
    "b",
    "--repo",
    "acme/app",
    "--target",
    "7",
];

#[test]
fn second_claim_is_refused_while_holder_beats() {
    let env = TestEnv::new();
    env.run(CLAIM_A).success();
    env.run(["heartbeat", "--agent-id", "a"]).success();
    let tip = env.state_tip();
    insta::assert_snapshot!(env.run(CLAIM_B), @r"
    ------- stderr -------
    CLAIM_REFUSED: active claim for acme/app#7 held by a; heartbeat live
    [exit status: 3]
    ");
    assert_eq!(env.state_tip(), tip, "a refusal writes nothing");
}

#[test]
fn claim_writes_record_event_and_audit_commit() {
    let env = TestEnv::new();
    let out = env.run([
        "claim",
        "--agent-id",
        "a",
        "--repo",
        "acme/app",
        "--target",
        "7",
        "--batch-id",
        "b1",
        "--phase",
        "implementing",
    ]);
    insta::assert_snapshot!(out, @r"
    ------- stdout -------
    claimed acme/app#7 by a until 2026-06-13T16:00:00Z
    [exit status: 0]
    ");
    assert_eq!(
        env.record("claims/acme/app/7.json").unwrap(),
        json!({"schema_version": 1, "repo": "acme/app", "target": "7", "agent_id": "a", "batch_id": "b1",
               "status": "active", "claimed_at": "2026-06-13T12:00:00Z", "updated_at": "2026-06-13T12:00:00Z",
               "expires_at": "2026-06-13T16:00:00Z", "phase": "implementing", "machine_id": "box-1"})
    );
    let events = env.paths("events/b1");
    assert_eq!(events.len(), 1);
    assert_eq!(
        env.record(&events[0]).unwrap()["type"],
        json!("claim.acquired")
    );
    let log = env.git(&["log", "--format=%s%n%b", "refs/heads/agent-coord"]);
    assert!(log.starts_with("claim acme/app#7 by a\n"), "{log}");
    assert!(log.contains("Agent-Coord-Op: claim"), "{log}");
    assert!(log.contains("Agent-Coord-Machine: box-1"), "{log}");
    assert_eq!(env.commit_count(), 1, "claim and its event are one commit");
}

#[test]
fn stale_holder_refused_dead_holder_taken_over() {
    let env = TestEnv::new();
    env.run([
        "claim",
        "--agent-id",
        "a",
        "--repo",
        "acme/app",
        "--target",
        "7",
        "--batch-id",
        "b1",
    ])
    .success();
    env.run(["heartbeat", "--agent-id", "a", "--ttl", "60"])
        .success();
    env.at(120);
    let out = env.run(CLAIM_B).code(3);
    assert!(out.stderr.contains("held by a; heartbeat stale"), "{out}");
    env.at(300);
    env.run(CLAIM_B).success();
    let claim = env.record("claims/acme/app/7.json").unwrap();
    assert_eq!(claim["agent_id"], json!("b"));
    assert_eq!(
        claim.get("batch_id"),
        None,
        "a takeover inherits nothing of the old lane"
    );
}

#[test]
fn fallback_to_claim_expiry_without_heartbeat() {
    let env = TestEnv::new();
    env.run([
        "claim",
        "--agent-id",
        "a",
        "--repo",
        "acme/app",
        "--target",
        "7",
        "--ttl",
        "600",
    ])
    .success();
    let out = env.run(CLAIM_B).code(3);
    assert_eq!(
        out.stderr.trim(),
        "CLAIM_REFUSED: active claim for acme/app#7 held by a; heartbeat missing; fallback claim expires at 2026-06-13T12:10:00Z"
    );
    env.at(601);
    env.run(CLAIM_B).success();
}

#[test]
fn unchanged_renewal_adds_no_commit() {
    let env = TestEnv::new();
    env.run(CLAIM_A).success();
    env.at(60);
    env.run(CLAIM_A).success();
    assert_eq!(
        env.commit_count(),
        1,
        "a renewal that changes nothing is not written"
    );
    env.at(3 * 3600);
    env.run(CLAIM_A).success();
    assert_eq!(
        env.commit_count(),
        2,
        "past half its TTL the renewal extends the claim"
    );
    assert_eq!(
        env.record("claims/acme/app/7.json").unwrap()["expires_at"],
        json!("2026-06-13T19:00:00Z")
    );
}

#[test]
fn bad_input_is_refused_and_nothing_is_written() {
    let env = TestEnv::new();
    env.run(CLAIM_A).success();
    let tip = env.state_tip();
    let cases: [(&[&str], &str); 10] = [
        (
            &[
                "claim",
                "--agent-id",
                "a",
                "--repo",
                "acme/app",
                "--target",
                "7",
                "--ttl",
                "abc",
            ],
            "invalid argument: --ttl abc",
        ),
        (
            &[
                "claim",
                "--agent-id",
                "a",
                "--repo",
                "acme/app",
                "--target",
                "7",
                "--ttl",
                "-5",
            ],
            "--ttl must be positive",
        ),
        (
            &["claim", "--agent-id", "a", "--repo", "a/.", "--target", "7"],
            "invalid target repo: a/.",
        ),
        (
            &[
                "claim",
                "--agent-id",
                "a",
                "--repo",
                "../x",
                "--target",
                "7",
            ],
            "invalid target repo: ../x",
        ),
        (
            &[
                "claim",
                "--agent-id",
                "a",
                "--repo",
                "acme/app",
                "--target",
                "../7",
            ],
            "invalid target: ../7",
        ),
        (
            &[
                "claim",
                "--agent-id",
                "bad/agent",
                "--repo",
                "acme/app",
                "--target",
                "7",
            ],
            "invalid agent-id: bad/agent",
        ),
        (
            &[
                "claim",
                "--agent-id",
                "a",
                "--repo",
                "acme/app",
                "--target",
                "7",
                "--ttl",
                "0",
            ],
            "--ttl must be positive",
        ),
        (
            &["claim", "--agent-id", "a", "--repo", "acme/app"],
            "missing required --target",
        ),
        (
            &[
                "claim",
                "--agent-id",
                "a",
                "--repo",
                "acme/app",
                "--target",
                "7",
                "--terminal",
                "done",
            ],
            "unexpected argument '--terminal' found (see --help)",
        ),
        (
            &[
                "claim",
                "--agent-id",
                "a",
                "--repo",
                "acme/app",
                "--target",
                "7",
                "--batch-id",
                "x/y",
            ],
            "invalid batch-id: x/y",
        ),
    ];
    for (args, message) in cases {
        let out = env.run(args).code(1);
        assert_eq!(out.stderr.trim(), message, "{args:?}");
        assert!(out.stdout.is_empty());
    }
    assert_eq!(env.state_tip(), tip);
}

#[test]
fn malformed_claim_is_state_unreadable_not_a_crash() {
    let env = TestEnv::new();
    env.run(CLAIM_A).success();
    // Corrupt the record with plain git plumbing, as a bad manual edit would.
    let blob = env.git_stdin(&["hash-object", "-w", "--stdin"], "{not json");
    let tree_line = format!("100644 blob {blob}\t7.json\n");
    let inner = env.git_stdin(&["mktree"], &tree_line);
    let app = env.git_stdin(&["mktree"], &format!("040000 tree {inner}\tapp\n"));
    let acme = env.git_stdin(&["mktree"], &format!("040000 tree {app}\tacme\n"));
    let root = env.git_stdin(&["mktree"], &format!("040000 tree {acme}\tclaims\n"));
    let parent = env.state_tip().unwrap();
    let commit = env.git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit-tree",
        &root,
        "-p",
        &parent,
        "-m",
        "corrupt",
    ]);
    env.git(&["update-ref", "refs/heads/agent-coord", &commit]);

    let out = env.run(CLAIM_B).code(2);
    assert!(
        out.stderr
            .starts_with("state unreadable: claims/acme/app/7.json:"),
        "{out}"
    );
    assert_eq!(env.state_tip().as_deref(), Some(commit.as_str()));
    env.run(["status"]).code(2);
    env.run(["status", "--repo", "acme/app", "--target", "7"])
        .code(2);
}

#[test]
fn claim_json_output() {
    let env = TestEnv::new();
    let out = env
        .run([
            "claim",
            "--agent-id",
            "a",
            "--repo",
            "acme/app",
            "--target",
            "7",
            "--json",
        ])
        .success();
    let v = out.json();
    assert_eq!(v["result"], json!("acquired"));
    assert_eq!(v["claim"]["agent_id"], json!("a"));
    assert_eq!(v["commit"].as_str(), env.state_tip().as_deref());
}
