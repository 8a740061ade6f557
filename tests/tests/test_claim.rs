//! `claim`: acquisition, refusal, takeover, renewal and bad input, against a real repository.

use agent_coord_tests::call::transcript;
use agent_coord_tests::env::TestEnv;
use serde_json::json;

#[test]
fn second_claim_is_refused_while_holder_beats() {
    let env = TestEnv::new();
    env.claim("a", "acme/app", "7").run().success();
    env.beat("a").run().success();
    let tip = env.state_tip();
    insta::assert_snapshot!(env.claim("b", "acme/app", "7").run(), @r"
    ------- stderr -------
    CLAIM_REFUSED: active claim for acme/app#7 held by a; heartbeat live
    [exit status: 3]
    ");
    assert_eq!(env.state_tip(), tip, "a refusal writes nothing");
}

#[test]
fn claim_writes_record_event_and_audit_commit() {
    let env = TestEnv::new();
    let out = env
        .claim("a", "acme/app", "7")
        .batch("b1")
        .phase("implementing")
        .run();
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
    env.claim("a", "acme/app", "7").batch("b1").run().success();
    env.beat("a").ttl(60).run().success();
    env.at(120);
    insta::assert_snapshot!(env.claim("b", "acme/app", "7").run(), @r"
    ------- stderr -------
    CLAIM_REFUSED: active claim for acme/app#7 held by a; heartbeat stale
    [exit status: 3]
    ");
    env.at(300);
    env.claim("b", "acme/app", "7").run().success();
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
    env.claim("a", "acme/app", "7").ttl(600).run().success();
    insta::assert_snapshot!(env.claim("b", "acme/app", "7").run(), @r"
    ------- stderr -------
    CLAIM_REFUSED: active claim for acme/app#7 held by a; heartbeat missing; fallback claim expires at 2026-06-13T12:10:00Z
    [exit status: 3]
    ");
    env.at(601);
    env.claim("b", "acme/app", "7").run().success();
}

#[test]
fn unchanged_renewal_adds_no_commit() {
    let env = TestEnv::new();
    env.claim("a", "acme/app", "7").run().success();
    env.at(60);
    env.claim("a", "acme/app", "7").run().success();
    assert_eq!(
        env.commit_count(),
        1,
        "a renewal that changes nothing is not written"
    );
    env.at(3 * 3600);
    env.claim("a", "acme/app", "7").run().success();
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
    env.claim("a", "acme/app", "7").run().success();
    let tip = env.state_tip();
    let claim = || env.claim("a", "acme/app", "7");
    let cases = [
        claim().ttl("abc"),
        claim().ttl("-5"),
        env.claim("a", "a/.", "7"),
        env.claim("a", "../x", "7"),
        env.claim("a", "acme/app", "../7"),
        env.claim("bad/agent", "acme/app", "7"),
        claim().ttl(0),
        env.call(["claim", "--agent-id", "a", "--repo", "acme/app"]),
        claim().opt("--terminal", "done"),
        claim().batch("x/y"),
    ];
    insta::assert_snapshot!(transcript(cases), @r"
    $ agent-coord claim --agent-id a --repo acme/app --target 7 --ttl abc
    ------- stderr -------
    invalid argument: --ttl abc
    [exit status: 1]
    $ agent-coord claim --agent-id a --repo acme/app --target 7 --ttl -5
    ------- stderr -------
    --ttl must be positive
    [exit status: 1]
    $ agent-coord claim --agent-id a --repo a/. --target 7
    ------- stderr -------
    invalid target repo: a/.
    [exit status: 1]
    $ agent-coord claim --agent-id a --repo ../x --target 7
    ------- stderr -------
    invalid target repo: ../x
    [exit status: 1]
    $ agent-coord claim --agent-id a --repo acme/app --target ../7
    ------- stderr -------
    invalid target: ../7
    [exit status: 1]
    $ agent-coord claim --agent-id bad/agent --repo acme/app --target 7
    ------- stderr -------
    invalid agent-id: bad/agent
    [exit status: 1]
    $ agent-coord claim --agent-id a --repo acme/app --target 7 --ttl 0
    ------- stderr -------
    --ttl must be positive
    [exit status: 1]
    $ agent-coord claim --agent-id a --repo acme/app
    ------- stderr -------
    missing required --target
    [exit status: 1]
    $ agent-coord claim --agent-id a --repo acme/app --target 7 --terminal done
    ------- stderr -------
    unexpected argument '--terminal' found (see --help)
    [exit status: 1]
    $ agent-coord claim --agent-id a --repo acme/app --target 7 --batch-id x/y
    ------- stderr -------
    invalid batch-id: x/y
    [exit status: 1]
    ");
    assert_eq!(env.state_tip(), tip);
}

#[test]
fn malformed_claim_is_state_unreadable_not_a_crash() {
    let env = TestEnv::new();
    env.claim("a", "acme/app", "7").run().success();
    // Corrupt the record with plain git plumbing, as a bad manual edit would.
    let commit = env.force_state_file("claims/acme/app/7.json", "{not json");

    insta::assert_snapshot!(env.claim("b", "acme/app", "7").run(), @r"
    ------- stderr -------
    state unreadable: claims/acme/app/7.json: key must be a string at line 1 column 2
    [exit status: 2]
    ");
    assert_eq!(env.state_tip().as_deref(), Some(commit.as_str()));
    env.status().run().code(2);
    env.status().on("acme/app", "7").run().code(2);
}

#[test]
fn claim_json_output() {
    let env = TestEnv::new();
    let out = env.claim("a", "acme/app", "7").json().run().success();
    let v = out.json();
    assert_eq!(v["result"], json!("acquired"));
    assert_eq!(v["claim"]["agent_id"], json!("a"));
    assert_eq!(v["commit"].as_str(), env.state_tip().as_deref());
}
