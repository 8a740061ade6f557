//! `sync`, `init` and `--sync`: several clones sharing one bare remote.

use agent_coord_tests::call::run_together;
use agent_coord_tests::env::TestEnv;
use agent_coord_tests::remote::Fleet;
use serde_json::json;

#[test]
fn three_clones_converge_without_losing_events() {
    let fleet = Fleet::new(3);
    for (i, m) in fleet.machines.iter().enumerate() {
        m.claim(&format!("w{i}"), "acme/app", i)
            .batch("b1")
            .run()
            .success();
        for e in 0..3 {
            m.event("b1", "note")
                .message(format!("m{i} e{e}"))
                .run()
                .success();
        }
    }
    for _ in 0..2 {
        for m in &fleet.machines {
            m.run(["sync"]).success();
        }
    }
    let tips: Vec<_> = fleet.machines.iter().map(|m| m.state_tip()).collect();
    assert!(tips.iter().all(|t| *t == tips[0]), "{tips:?}");
    assert_eq!(tips[0], fleet.remote_tip("refs/heads/agent-coord"));
    let m = &fleet.machines[1];
    let notes = m
        .paths("events/b1")
        .iter()
        .filter(|p| m.record(p).unwrap()["type"] == json!("note"))
        .count();
    assert_eq!(notes, 9, "every event from every clone");
    assert_eq!(m.paths("claims/acme/app").len(), 3);
    let status = m.run(["status", "--json"]).success().json();
    assert_eq!(status["sync"]["ahead"], json!(0));
    assert_eq!(status["sync"]["behind"], json!(0));
}

#[test]
fn claim_race_across_clones_has_one_winner_and_the_loser_is_told() {
    let fleet = Fleet::new(2);
    let (a, b) = (&fleet.machines[0], &fleet.machines[1]);
    a.claim("wa", "acme/app", "7").batch("b1").run().success();
    b.claim("wb", "acme/app", "7").batch("b1").run().success();
    a.run(["sync"]).success();
    let out = b.run(["sync", "--json"]).success().json();
    assert_eq!(out["result"], json!("merged"));
    assert_eq!(
        out["lost_claims"],
        json!([{"path": "claims/acme/app/7.json", "target": "acme/app#7", "local_holder": "wb", "remote_holder": "wa"}])
    );
    a.run(["sync"]).success();
    for m in [a, b] {
        assert_eq!(m.holder("acme/app", "7").as_deref(), Some("wa"));
    }
    let lost: Vec<_> = b
        .paths("events/b1")
        .into_iter()
        .filter(|p| b.record(p).unwrap()["type"] == json!("claim.lost"))
        .collect();
    assert_eq!(lost.len(), 1);
    assert_eq!(b.record(&lost[0]).unwrap()["agent_id"], json!("wb"));
}

#[test]
fn claim_sync_race_from_many_clones_has_exactly_one_winner() {
    let fleet = Fleet::new(4);
    for round in 0..3 {
        let target = format!("{}", 100 + round);
        let outs = run_together(
            fleet
                .machines
                .iter()
                .enumerate()
                .map(|(i, m)| m.claim(&format!("r{i}"), "acme/app", &target).sync()),
        );
        let codes: Vec<i32> = outs.iter().map(|o| o.status.code().unwrap_or(-1)).collect();
        let winners: Vec<usize> = codes
            .iter()
            .enumerate()
            .filter(|(_, c)| **c == 0)
            .map(|(i, _)| i)
            .collect();
        let detail: Vec<String> = outs
            .iter()
            .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
            .collect();
        assert_eq!(winners.len(), 1, "round {round}: {codes:?} {detail:?}");
        assert!(
            codes.iter().all(|c| *c == 0 || *c == 3),
            "round {round}: {codes:?} {detail:?}"
        );
        // The remote agrees with the winner.
        let m = &fleet.machines[winners[0]];
        m.run(["sync"]).success();
        let holder = m.holder("acme/app", &target);
        assert_eq!(holder, Some(format!("r{}", winners[0])), "round {round}");
        for (i, o) in outs.iter().enumerate().filter(|(i, _)| *i != winners[0]) {
            let err = String::from_utf8_lossy(&o.stderr);
            assert!(
                err.contains(&format!(
                    "CLAIM_REFUSED: active claim for acme/app#{target} held by r{}",
                    winners[0]
                )),
                "machine {i}: {err}"
            );
        }
    }
}

#[test]
fn offline_divergence_of_a_hundred_writes_each_converges_exactly() {
    let fleet = Fleet::new(2);
    let bin = agent_coord_tests::env::binary();
    for (i, m) in fleet.machines.iter().enumerate() {
        let script = format!(
            "for n in $(seq 1 100); do \"{}\" record-event --batch-id b{i} --type note --message $n >/dev/null || exit 1; done",
            bin.display()
        );
        assert!(m.shell(&script).status().unwrap().success());
    }
    for m in fleet.machines.iter().chain(fleet.machines.iter()) {
        m.run(["sync"]).success();
    }
    let (a, b) = (&fleet.machines[0], &fleet.machines[1]);
    assert_eq!(a.state_tip(), b.state_tip());
    assert_eq!(a.paths("events/b0").len(), 100);
    assert_eq!(a.paths("events/b1").len(), 100);
    assert_eq!(b.paths("events").len(), 200);
}

#[test]
fn unreachable_remote_is_exit_2_and_leaves_local_state_alone() {
    let fleet = Fleet::new(1);
    let m = &fleet.machines[0];
    m.claim("w", "acme/app", "1").batch("b1").run().success();
    let tip = m.state_tip();
    let missing = m.root().join("gone.git");
    let out = m
        .run(["sync", "--remote", missing.to_str().unwrap()])
        .code(2);
    assert!(out.stderr.starts_with("cannot sync with remote"), "{out}");
    assert!(
        out.stderr
            .contains("does not appear to be a git repository"),
        "{out}"
    );
    assert_eq!(m.state_tip(), tip);
    let out = m
        .claim("w", "acme/app", "2")
        .sync()
        .opt("--sync-remote", missing.to_str().unwrap())
        .run()
        .code(2);
    assert!(out.stderr.starts_with("cannot sync with remote"), "{out}");
    assert_eq!(m.state_tip(), tip, "a failed pre-sync writes nothing");
}

#[test]
fn heartbeats_travel_and_drive_takeover_but_are_never_overwritten() {
    let fleet = Fleet::new(2);
    let (a, b) = (&fleet.machines[0], &fleet.machines[1]);
    a.claim("wa", "acme/app", "7").batch("b1").run().success();
    a.beat("wa").ttl(60).sync().run().success();
    b.run(["sync"]).success();
    insta::assert_snapshot!(b.claim("wb", "acme/app", "7").sync().run(), @r"
    ------- stderr -------
    CLAIM_REFUSED: active claim for acme/app#7 held by wa; heartbeat live
    [exit status: 3]
    ");
    let a_ref = fleet.remote_tip("refs/agent-coord/heartbeats/box-0");
    assert!(a_ref.is_some());
    b.beat("wb").sync().run().success();
    assert_eq!(
        fleet.remote_tip("refs/agent-coord/heartbeats/box-0"),
        a_ref,
        "box-1 never writes box-0's ref"
    );
    assert!(fleet
        .remote_tip("refs/agent-coord/heartbeats/box-1")
        .is_some());
    // Five minutes later wa's beat is dead everywhere: wb takes over, through the remote.
    a.at(300);
    b.at(300);
    b.claim("wb", "acme/app", "7").sync().run().success();
    a.run(["sync"]).success();
    assert_eq!(a.holder("acme/app", "7").as_deref(), Some("wb"));
}

#[test]
fn a_thousand_heartbeats_add_no_commits() {
    let fleet = Fleet::new(1);
    let m = &fleet.machines[0];
    m.run(["sync"]).success();
    let before = m.commit_count();
    let bin = agent_coord_tests::env::binary();
    let script = format!(
        "for n in $(seq 1 1000); do \"{}\" heartbeat --agent-id a$((n % 20)) >/dev/null || exit 1; done",
        bin.display()
    );
    assert!(m.shell(&script).status().unwrap().success());
    m.run(["sync"]).success();
    assert_eq!(m.commit_count(), before);
    assert_eq!(
        m.git(&["rev-list", "--count", "refs/agent-coord/heartbeats/box-0"]),
        "1"
    );
    assert_eq!(
        fleet.remote_tip("refs/agent-coord/heartbeats/box-0"),
        m.tip("refs/agent-coord/heartbeats/box-0")
    );
}

#[test]
fn init_is_idempotent_and_takes_the_fleets_branch() {
    let fleet = Fleet::new(2);
    let (a, b) = (&fleet.machines[0], &fleet.machines[1]);
    assert_eq!(
        a.state_tip(),
        b.state_tip(),
        "the second machine fetched the first one's branch"
    );
    let remote = fleet.remote.to_str().unwrap();
    let again = a
        .run(["init", "--remote", remote, "--json"])
        .success()
        .json();
    assert_eq!(again["branch"], json!("existing"));
    assert_eq!(
        a.git(&["config", "--get-all", "remote.origin.fetch"])
            .lines()
            .count(),
        2
    );
    let out = a.run(["init", "--remote", "/elsewhere.git"]).code(1);
    assert!(
        out.stderr.starts_with("remote origin already points at"),
        "{out}"
    );
    a.run(["init", "--sync-by-default"]).success();
    // With agent-coord.sync=true a plain claim publishes; --no-sync keeps it local.
    a.claim("w", "acme/app", "1").run().success();
    assert_eq!(fleet.remote_tip("refs/heads/agent-coord"), a.state_tip());
    a.claim("w", "acme/app", "2")
        .arg("--no-sync")
        .run()
        .success();
    assert_ne!(fleet.remote_tip("refs/heads/agent-coord"), a.state_tip());
    let doctor = a.run(["doctor", "--json"]).success().json();
    assert_eq!(doctor["sync"]["ahead"], json!(1));
    assert_eq!(doctor["mode"], json!("shared"));
}

#[test]
fn concurrent_syncs_retry_rejected_pushes() {
    let fleet = Fleet::new(3);
    for (i, m) in fleet.machines.iter().enumerate() {
        for e in 0..5 {
            m.event("b1", "note")
                .message(format!("m{i} e{e}"))
                .run()
                .success();
        }
    }
    let outs = run_together(fleet.machines.iter().map(|m| m.sync().json()));
    assert!(
        outs.iter().all(|o| o.status.success()),
        "every sync succeeds despite racing pushes"
    );
    let rounds: Vec<u64> = outs
        .iter()
        .map(|o| {
            serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()["rounds"]
                .as_u64()
                .unwrap()
        })
        .collect();
    // Everything each machine wrote reached the remote: one more sync each levels the clones.
    for m in &fleet.machines {
        m.run(["sync"]).success();
    }
    let m = &fleet.machines[0];
    assert_eq!(
        m.paths("events/b1").len(),
        15,
        "rounds per machine: {rounds:?}"
    );
    assert!(fleet
        .machines
        .iter()
        .all(|x| x.state_tip() == m.state_tip()));
}

#[test]
fn concurrent_syncs_on_one_clone_take_turns() {
    let fleet = Fleet::new(1);
    let m = &fleet.machines[0];
    for e in 0..3 {
        m.event("b1", "note").message(e).run().success();
    }
    for out in run_together((0..4).map(|_| m.sync())) {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(fleet.remote_tip("refs/heads/agent-coord"), m.state_tip());
}

#[test]
fn a_claim_published_during_anothers_compaction_wins_over_the_epoch() {
    let fleet = Fleet::new(2);
    let (a, b) = (&fleet.machines[0], &fleet.machines[1]);
    a.run(["sync"]).success();
    b.run(["sync"]).success();
    // a compacts while cut off from the remote; meanwhile b publishes a claim on X.
    let url = a.git(&["config", "remote.origin.url"]);
    a.git(&["config", "--remove-section", "remote.origin"]);
    a.run(["gc", "--execute", "--new-epoch"]).success();
    b.claim("wb", "acme/app", "9").sync().run().success();
    a.claim("wa", "acme/app", "9").run().success();
    a.git(&["config", "remote.origin.url", &url]);
    let out = a.run(["sync", "--json"]).success().json();
    assert_eq!(out["lost_claims"][0]["remote_holder"], json!("wb"), "{out}");
    assert_eq!(a.holder("acme/app", "9").as_deref(), Some("wb"));
    assert_eq!(
        a.record("meta/epoch.json").unwrap()["epoch"],
        json!(1),
        "the epoch is published"
    );
    assert_eq!(
        a.git(&[
            "rev-list",
            "--count",
            "--max-parents=0",
            "refs/heads/agent-coord"
        ]),
        "1"
    );
    b.run(["sync"]).success();
    assert_eq!(b.state_tip(), a.state_tip());
    assert_eq!(b.holder("acme/app", "9").as_deref(), Some("wb"));
}

#[test]
fn a_push_refused_by_the_remote_fails_at_once() {
    let fleet = Fleet::new(1);
    let m = &fleet.machines[0];
    m.event("b1", "note").run().success();
    let hook = fleet.remote.join("hooks/pre-receive");
    std::fs::write(
        &hook,
        "#!/bin/sh\necho 'coordination pushes are frozen' >&2\nexit 1\n",
    )
    .unwrap();
    std::process::Command::new("chmod")
        .arg("+x")
        .arg(&hook)
        .status()
        .unwrap();
    let out = m.run(["sync", "--json"]).code(2);
    assert!(out.stderr.contains("pre-receive hook declined"), "{out}");
    assert!(
        !out.stderr.contains("contention"),
        "a refusal is not a lost race: {out}"
    );
    let out = m.run(["sync", "--remote=-upload-pack=touch"]).code(2);
    assert!(
        out.stderr.contains("a remote cannot start with '-'"),
        "{out}"
    );
}

#[test]
fn init_on_a_new_repository_writes_the_root_trees_object_so_fsck_passes() {
    let env = TestEnv::new();
    env.run(["init"]).success();
    let fsck = env.git_output(&["fsck", "--full", "--strict"]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&fsck.stdout),
        String::from_utf8_lossy(&fsck.stderr)
    );
    assert!(fsck.status.success() && !said.contains("missing"), "{said}");
    // Every later write builds on it, and the repository stays whole.
    env.claim("w", "acme/app", "1").run().success();
    let fsck = env.git_output(&["fsck", "--full", "--strict"]);
    assert!(
        fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&fsck.stderr)
    );
}

/// With agent-coord.sync=true, `record-event` and `register-batch` synced before writing,
/// took no `--no-sync`, and recorded nothing when that sync failed (exit 2). They are
/// appends: written locally first, published now or by the next sync, with a notice.
#[test]
fn regression_sync_by_default_dropped_events_when_the_remote_failed() {
    const MANIFEST: &str = r#"{"batch_id": "b1", "repo": "acme/app", "objective": "ship",
  "lanes": [{"name": "code", "owner": "w1", "targets": ["7"]}]}"#;
    let fleet = Fleet::new(1);
    let m = &fleet.machines[0];
    m.run(["init", "--sync-by-default"]).success();
    let remote = fleet.remote.to_str().unwrap().to_owned();
    m.git(&["config", "remote.origin.url", "/nowhere/gone.git"]);
    let out = m.event("b1", "note").message("kept").run().success();
    assert!(
        out.stderr
            .contains("recorded locally, not yet published to origin"),
        "{out}"
    );
    assert!(
        out.stderr
            .contains("the next `agent-coord sync` publishes it"),
        "{out}"
    );
    let out = m.register("m.json", MANIFEST).run().success();
    assert!(out.stderr.contains("recorded locally"), "{out}");
    // An explicit --sync insists on the remote's answer, and still keeps the event.
    let out = m
        .event("b1", "note")
        .message("insisted")
        .sync()
        .run()
        .code(2);
    assert!(
        out.stderr.contains("written locally but not published"),
        "{out}"
    );
    m.event("b1", "note")
        .message("local")
        .arg("--no-sync")
        .run()
        .success();
    m.register("m.json", MANIFEST)
        .arg("--no-sync")
        .run()
        .success();
    assert_eq!(m.paths("events/b1").len(), 3, "nothing was dropped");
    m.git(&["config", "remote.origin.url", &remote]);
    m.run(["sync"]).success();
    assert_eq!(fleet.remote_tip("refs/heads/agent-coord"), m.state_tip());
    assert!(m.record("batches/b1.json").is_some());
}

/// A claim lost in a merge that a write's own sync made (not `sync`) was recorded as
/// `claim.lost` but never told to the holder.
#[test]
fn regression_claim_lost_in_a_writes_sync_is_told() {
    let fleet = Fleet::new(2);
    let (a, b) = (&fleet.machines[0], &fleet.machines[1]);
    b.claim("wb", "acme/app", "7").run().success();
    a.claim("wa", "acme/app", "7").sync().run().success();
    let out = b.beat("wb").sync().run().success();
    assert!(
        out.stderr
            .contains("lost claim acme/app#7: wb no longer holds it; holder on the remote: wa"),
        "{out}"
    );
}

/// Found by the fleet test in CI: a refused write dropped what its first sync found, so a
/// holder whose `release` merged its claim away was never told it had lost it.
#[test]
fn regression_a_refused_write_still_tells_of_the_claim_its_sync_lost() {
    let fleet = Fleet::new(2);
    let (a, b) = (&fleet.machines[0], &fleet.machines[1]);
    b.claim("wb", "acme/app", "7").run().success();
    a.claim("wa", "acme/app", "7").sync().run().success();
    let out = b.release("wb", "acme/app", "7").sync().run();
    assert_ne!(out.code, 0, "wb no longer holds it: {out}");
    assert!(
        out.stderr
            .contains("lost claim acme/app#7: wb no longer holds it; holder on the remote: wa"),
        "{out}"
    );
}

/// A sync skips asking the remote whether it has the state branch once it fetched the
/// branch from it; a remote that lost the branch since gets it back all the same.
#[test]
fn a_remote_that_lost_the_state_branch_gets_it_back() {
    let fleet = Fleet::new(1);
    let m = &fleet.machines[0];
    m.claim("w", "acme/app", "1").batch("b1").run().success();
    m.run(["sync"]).success();
    assert_eq!(fleet.remote_tip("refs/heads/agent-coord"), m.state_tip());
    let deleted = std::process::Command::new("git")
        .arg("--git-dir")
        .arg(&fleet.remote)
        .args(["update-ref", "-d", "refs/heads/agent-coord"])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .status()
        .expect("git runs");
    assert!(deleted.success());
    assert_eq!(fleet.remote_tip("refs/heads/agent-coord"), None);
    m.claim("w", "acme/app", "2").batch("b1").run().success();
    let out = m.run(["sync", "--json"]).success().json();
    assert_eq!(out["result"], json!("pushed"), "{out}");
    assert_eq!(fleet.remote_tip("refs/heads/agent-coord"), m.state_tip());
}
