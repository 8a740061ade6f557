//! `gc`: retention in one commit, and epochs that restart history across machines.

use agent_coord_tests::call::transcript;
use agent_coord_tests::env::TestEnv;
use agent_coord_tests::remote::Fleet;
use serde_json::json;

#[test]
fn gc_plans_then_executes_in_one_commit() {
    let env = TestEnv::new();
    env.claim("a", "acme/app", "1").run().success();
    env.release("a", "acme/app", "1").run().success();
    env.claim("a", "acme/app", "2").run().success();
    env.beat("a").status("done").run().success();
    env.at(8 * 86_400);
    insta::assert_snapshot!(env.run(["gc", "--dry-run"]), @r"
    ------- stdout -------
    gc dry-run hot=7d archive=30d synthetic_hot=1d
    - archive claims/acme/app/1.json -> archive/claims/acme/app/1.json (terminal_claim)
    - archive heartbeats/a.json -> archive/heartbeats/a.json (terminal_heartbeat)
    [exit status: 0]
    ");
    let before = env.commit_count();
    let out = env.run(["gc", "--execute", "--json"]).success().json();
    assert_eq!(out["mode"], json!("execute"));
    assert_eq!(out["actions"].as_array().unwrap().len(), 2);
    assert_eq!(
        env.commit_count(),
        before + 1,
        "all retention actions are one commit"
    );
    let log = env.git(&["log", "-1", "--format=%B", "refs/heads/agent-coord"]);
    assert!(log.contains("Agent-Coord-Op: gc"), "{log}");
    assert!(
        log.contains("Agent-Coord-Path: archive/claims/acme/app/1.json"),
        "{log}"
    );
    assert!(
        log.contains("Agent-Coord-Removed: claims/acme/app/1.json"),
        "{log}"
    );
    assert!(env.record("claims/acme/app/1.json").is_none());
    assert_eq!(
        env.record("archive/claims/acme/app/1.json").unwrap()["data"]["status"],
        json!("released")
    );
    assert!(
        env.record("claims/acme/app/2.json").is_some(),
        "active claims stay"
    );
    assert_eq!(
        env.git(&[
            "ls-tree",
            "-r",
            "--name-only",
            "refs/agent-coord/heartbeats/box-1"
        ]),
        ""
    );
    assert_eq!(
        env.run(["gc", "--dry-run"]).success().stdout.lines().nth(1),
        Some("- no actions")
    );

    // Thirty days later the archives expire.
    env.at(40 * 86_400);
    insta::assert_snapshot!(env.run(["gc", "--execute"]), @r"
    ------- stdout -------
    gc execute hot=7d archive=30d synthetic_hot=1d
    - delete archive/claims/acme/app/1.json (archive_expired)
    - delete archive/heartbeats/a.json (archive_expired)
    [exit status: 0]
    ");
    assert!(env.paths("archive").is_empty());
}

#[test]
fn gc_flag_errors() {
    let env = TestEnv::new();
    let cases = [
        env.call(["gc"]),
        env.call(["gc", "--dry-run", "--execute"]),
        env.call(["gc", "--dry-run", "--hot-days", "-1"]),
        env.call(["gc", "--dry-run", "--prefix", "archive"]),
    ];
    insta::assert_snapshot!(transcript(cases), @r"
    $ agent-coord gc
    ------- stderr -------
    gc requires exactly one of --dry-run or --execute
    [exit status: 1]
    $ agent-coord gc --dry-run --execute
    ------- stderr -------
    gc requires exactly one of --dry-run or --execute
    [exit status: 1]
    $ agent-coord gc --dry-run --hot-days -1
    ------- stderr -------
    --hot-days must be zero or greater
    [exit status: 1]
    $ agent-coord gc --dry-run --prefix archive
    ------- stderr -------
    --prefix must be one of: claims, heartbeats, batches, events, annotations
    [exit status: 1]
    ");
    env.run(["gc", "--dry-run", "--new-epoch"]).code(1);
}

#[test]
fn a_new_epoch_restarts_history_and_other_machines_replay_onto_it() {
    let fleet = Fleet::new(2);
    let (a, b) = (&fleet.machines[0], &fleet.machines[1]);
    for t in 0..5 {
        a.claim("wa", "acme/app", t).batch("b1").run().success();
        a.release("wa", "acme/app", t).run().success();
    }
    a.run(["sync"]).success();
    b.run(["sync"]).success();
    // b writes while a compacts.
    b.event("b2", "note")
        .message("written before b saw the epoch")
        .run()
        .success();
    a.at(8 * 86_400);
    let out = a
        .run(["gc", "--execute", "--new-epoch", "--prefix", "claims"])
        .success();
    assert!(out.stdout.contains("started epoch 1"), "{out}");
    assert_eq!(a.commit_count(), 1, "the branch restarts from one commit");
    assert_eq!(fleet.remote_tip("refs/heads/agent-coord"), a.state_tip());
    assert_eq!(a.record("meta/epoch.json").unwrap()["epoch"], json!(1));

    b.at(8 * 86_400);
    b.run(["sync"]).success();
    assert_eq!(
        b.git(&[
            "rev-list",
            "--count",
            "--max-parents=0",
            "refs/heads/agent-coord"
        ]),
        "1"
    );
    assert_eq!(
        b.commit_count(),
        2,
        "b's change is replayed onto the epoch, not merged with old history"
    );
    assert!(
        b.record("claims/acme/app/0.json").is_none(),
        "archived claims are not resurrected"
    );
    assert!(b.record("archive/claims/acme/app/0.json").is_some());
    assert_eq!(b.paths("events/b2").len(), 1, "b's own write survives");
    a.run(["sync"]).success();
    assert_eq!(a.state_tip(), b.state_tip());
}

#[test]
fn status_lists_archives_on_request() {
    let env = TestEnv::new();
    env.claim("a", "acme/app", "1").run().success();
    env.release("a", "acme/app", "1").run().success();
    env.at(8 * 86_400);
    env.run(["gc", "--execute"]).success();
    let status = env
        .run(["status", "--json", "--include-archived"])
        .success()
        .json();
    assert_eq!(status["claims"], json!([]));
    assert_eq!(
        status["archive"],
        json!([{"path": "archive/claims/acme/app/1.json", "record_family": "archived_record",
                "source_path": "claims/acme/app/1.json", "reason": "terminal_claim", "synthetic": false,
                "archived_at": "2026-06-21T12:00:00Z", "delete_after": "2026-07-21T12:00:00Z"}])
    );
    assert!(env
        .run(["status", "--json"])
        .success()
        .json()
        .get("archive")
        .is_none());
}

#[test]
fn a_clone_that_cannot_place_its_history_refuses_instead_of_resurrecting() {
    let fleet = Fleet::new(1);
    let a = &fleet.machines[0];
    a.claim("wa", "acme/app", "1").run().success();
    a.release("wa", "acme/app", "1").run().success();
    a.at(8 * 86_400);
    a.run(["gc", "--execute", "--new-epoch"]).success();
    // A clone with history of its own that never synced with this remote.
    let stray = TestEnv::new();
    stray.set_machine(Some("box-stray"));
    stray.claim("ws", "acme/app", "2").run().success();
    stray.git(&[
        "config",
        "remote.origin.url",
        fleet.remote.to_str().unwrap(),
    ]);
    let tip = stray.state_tip();
    let out = stray.run(["sync"]).code(2);
    assert!(
        out.stderr
            .contains("cannot place this clone's history relative to the remote's epoch 1"),
        "{out}"
    );
    assert_eq!(stray.state_tip(), tip, "nothing merged");
    assert!(
        fleet.remote_tip("refs/heads/agent-coord") == a.state_tip(),
        "nothing pushed"
    );
}

/// `gc` never looked at annotations: a snooze over for weeks stayed on the branch for good.
/// Once its `until` is `--hot-days` past it is archived like any finished record; a
/// dismissal stays; `--prefix annotations` selects them.
#[test]
fn regression_gc_skips_annotations() {
    let env = TestEnv::new();
    let annotation = |target: &str, kind: &str| {
        let mut a = json!({"schema_version": 1, "repo": "acme/app", "target": target,
                           "kind": kind, "updated_at": "2026-06-01T00:00:00Z"});
        if kind == "snooze" {
            a["until"] = json!("2026-06-02T00:00:00Z");
        }
        serde_json::to_string_pretty(&a).unwrap()
    };
    env.put_state_files(&[
        ("annotations/acme/app/1.json", &annotation("1", "snooze")),
        ("annotations/acme/app/2.json", &annotation("2", "dismiss")),
    ]);
    let out = env
        .run(["gc", "--dry-run", "--prefix", "annotations"])
        .success();
    assert_eq!(
        out.stdout,
        "gc dry-run hot=7d archive=30d synthetic_hot=1d\n- archive annotations/acme/app/1.json -> archive/annotations/acme/app/1.json (expired_snooze)\n"
    );
    env.run(["gc", "--execute"]).success();
    assert_eq!(env.paths("annotations"), ["annotations/acme/app/2.json"]);
    let archived = env.record("archive/annotations/acme/app/1.json").unwrap();
    assert_eq!(archived["record_family"], json!("archived_record"));
    assert_eq!(archived["data"]["kind"], json!("snooze"));
}
