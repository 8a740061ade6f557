//! Bugs found by using the CLI as a user would (issue 12), each pinned by a regression
//! test named for it: huge TTLs and retention windows, expiries no reader accepts, a file
//! where the events folder belongs, event order under a pinned clock, loose objects.

use agent_coord_tests::env::TestEnv;
use agent_coord_tests::fleet;
use serde_json::json;

const HUGE: &str = "9223372036854775807";

/// Returns the `count:` (loose objects) line of `git count-objects -v` as a number.
fn loose_objects(env: &TestEnv) -> u64 {
    let out = env.git(&["count-objects", "-v"]);
    out.lines()
        .find_map(|l| l.strip_prefix("count: "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count in {out}"))
}

#[test]
fn regression_huge_ttl_panics() {
    let env = TestEnv::new();
    // A new claim, and a renewal of one held.
    for ttl in [HUGE, "300000000000"] {
        let out = env.claim("a", "acme/app", "7").ttl(ttl).run().code(1);
        assert_eq!(
            out.stderr,
            format!("--ttl {ttl} is too large: the claim would expire after 9999-12-31T23:59:59Z, the latest time a record can hold\n")
        );
    }
    assert_eq!(env.state_tip(), None, "nothing was written");
    env.claim("a", "acme/app", "7").run().success();
    let tip = env.state_tip();
    let out = env.claim("a", "acme/app", "7").ttl(HUGE).run().code(1);
    assert!(
        out.stderr
            .starts_with(&format!("--ttl {HUGE} is too large")),
        "{out}"
    );
    let out = env.beat("a").ttl(HUGE).run().code(1);
    assert!(
        out.stderr
            .starts_with(&format!("--ttl {HUGE} is too large: the heartbeat")),
        "{out}"
    );
    for flag in ["--hot-days", "--archive-days", "--synthetic-hot-days"] {
        let out = env.run(["gc", "--dry-run", flag, HUGE]).code(1);
        assert!(
            out.stderr
                .starts_with(&format!("{flag} {HUGE} is out of range")),
            "{out}"
        );
    }
    assert_eq!(env.state_tip(), tip, "a refusal writes nothing");
}

#[test]
fn regression_unreadable_expiry_counts_as_expired() {
    let env = TestEnv::new();
    // What `claim --ttl 300000000000` used to write; no heartbeat for the holder.
    let claim = json!({"schema_version": 1, "repo": "acme/app", "target": "7", "agent_id": "a",
        "status": "active", "claimed_at": "2026-06-13T12:00:00Z", "updated_at": "2026-06-13T12:00:00Z",
        "expires_at": "+11533-01-26T17:20:00Z"});
    env.put_state_files(&[("claims/acme/app/7.json", &format!("{claim:#}\n"))]);
    let tip = env.state_tip();
    let out = env.claim("b", "acme/app", "7").run().code(3);
    assert_eq!(
        out.stderr,
        "CLAIM_REFUSED: active claim for acme/app#7 held by a; heartbeat missing; fallback claim expiry \"+11533-01-26T17:20:00Z\" is unreadable, so the claim stays held until its holder releases it\n"
    );
    assert_eq!(env.state_tip(), tip);
    assert_eq!(env.holder("acme/app", "7").as_deref(), Some("a"));
    // The holder can still release it.
    env.release("a", "acme/app", "7").run().success();
    env.claim("b", "acme/app", "7").run().success();
}

/// A file where a batch's events folder belongs: every write keeps the file (gix's tree
/// editor would have replaced it by the folder). A lifecycle event is best-effort (issue 22:
/// the claim exited 2 and wrote nothing), so the claim, release and heartbeat stand with a
/// warning, while an explicit `record-event` into that folder still fails and writes nothing.
#[test]
fn regression_events_blob_replaced_by_folder() {
    let env = TestEnv::new();
    env.put_state_files(&[("events/b1", "notes nobody asked to delete\n")]);
    let tip = env.state_tip();
    let out = env.event("b1", "note").agent("a").run().code(2);
    assert!(
        out.stderr.starts_with("cannot write events/b1/")
            && out.stderr.ends_with(": the state tree has a file at events/b1 where a folder belongs; nothing was written and the file is kept (move it aside to continue)\n"),
        "{out}"
    );
    assert_eq!(env.state_tip(), tip, "nothing was written");
    let out = env.claim("a", "acme/app", "7").batch("b1").run().success();
    assert_eq!(
        out.stderr,
        "warning: claim.acquired event not recorded: the state tree has a file at events/b1 where a folder belongs; the file is kept\n"
    );
    assert_eq!(
        env.holder("acme/app", "7").as_deref(),
        Some("a"),
        "the claim stands"
    );
    assert_eq!(
        env.git(&["show", "refs/heads/agent-coord:events/b1"]),
        "notes nobody asked to delete"
    );
    let out = env.release("a", "acme/app", "7").run().success();
    assert!(
        out.stderr
            .starts_with("warning: claim.released event not recorded: "),
        "{out}"
    );
    // A claim in another batch is unaffected.
    env.claim("a", "acme/app", "8").batch("b2").run().success();
    assert_eq!(
        env.git(&["show", "refs/heads/agent-coord:events/b1"]),
        "notes nobody asked to delete"
    );
}

/// A write that packs while another process packs printed `warning: could not pack loose
/// objects: git gc failed: Unable to create '…/gc.pid.lock': File exists.` Another packer
/// at work is no problem: the write leaves the packing to it and says nothing.
#[test]
fn regression_concurrent_packer_warning() {
    let env = TestEnv::new();
    // Every write packs, and its `git gc --auto` always has packs to consolidate.
    env.git(&["config", "agent-coord.looseObjectLimit", "1"]);
    env.git(&["config", "gc.autoPackLimit", "1"]);
    env.claim("a", "acme/app", "1").run().success();
    // Another process's `git gc` holds its lock.
    let lock = env.root().join("repo.git/gc.pid.lock");
    std::fs::write(&lock, "").unwrap();
    for target in 2..4 {
        let out = env.claim("a", "acme/app", target).run().success();
        assert_eq!(out.stderr, "", "{out}");
    }
    std::fs::remove_file(&lock).unwrap();
    // Sixteen writers that all want to pack at once: none warns.
    let env = TestEnv::new();
    env.git(&["config", "agent-coord.looseObjectLimit", "1"]);
    env.git(&["config", "gc.autoPackLimit", "1"]);
    env.claim("seed", "acme/app", "100").run().success();
    let calls = (0..16).map(|w| env.claim(&format!("w{w}"), "acme/app", w));
    let outputs = agent_coord_tests::call::run_together(calls);
    for out in outputs {
        assert!(out.status.success(), "{out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("could not pack"), "{stderr}");
    }
}

#[test]
fn regression_pinned_clock_event_order() {
    // Claim then release in one pinned second: the audit is complete every time (the
    // random id suffix used to put the release first half the time).
    for round in 0..6 {
        let env = TestEnv::new();
        env.register(
            "m.json",
            r#"{"batch_id": "b1", "repo": "acme/app", "lanes": [
                 {"name": "code", "owner": "a", "targets": ["50"]}]}"#,
        )
        .run()
        .success();
        env.claim("a", "acme/app", "50").batch("b1").run().success();
        env.release("a", "acme/app", "50")
            .opt("--terminal", "done")
            .run()
            .success();
        let audit = env.run(["batch-audit", "--batch-id", "b1", "--json"]);
        assert_eq!(audit.code, 0, "round {round}: {audit}");
        assert_eq!(audit.json()["lanes"][0]["complete"], json!(true));
    }
}

#[test]
fn regression_import_leaves_loose_objects() {
    let env = TestEnv::new();
    let src = env.root().join("legacy");
    fleet::generate(&src, 1, 1_781_352_000);
    env.import(&src).run().success();
    assert_eq!(loose_objects(&env), 0, "import leaves a packed repository");
    assert!(env.git_output(&["fsck", "--no-progress"]).status.success());
}

#[test]
fn regression_local_writes_leave_loose_objects() {
    let env = TestEnv::new();
    env.git(&["config", "agent-coord.looseObjectLimit", "40"]);
    for target in 0..30 {
        env.claim("a", "acme/app", target)
            .batch("b1")
            .run()
            .success();
    }
    // Each claim adds about 6 objects (180 in all); packing past the limit keeps the
    // store within the limit plus one write's worth.
    let loose = loose_objects(&env);
    assert!(loose <= 40 + 8, "{loose} loose objects");
    assert!(env.git_output(&["fsck", "--no-progress"]).status.success());
}
