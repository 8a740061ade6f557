//! Many processes writing at once: one winner per target, no lost writes.

use std::process::Child;

use agent_coord_tests::call::run_together;
use agent_coord_tests::env::TestEnv;

fn wait_all(children: Vec<Child>) -> Vec<i32> {
    children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap().status.code().unwrap_or(-1))
        .collect()
}

#[test]
fn sixteen_racers_one_winner() {
    for round in 0..5 {
        let env = TestEnv::new();
        let target = format!("{round}");
        let racers = (0..16).map(|i| env.claim(&format!("racer-{i}"), "acme/app", &target));
        let codes: Vec<i32> = run_together(racers)
            .iter()
            .map(|o| o.status.code().unwrap_or(-1))
            .collect();
        let winners = codes.iter().filter(|c| **c == 0).count();
        assert_eq!(winners, 1, "round {round}: exit codes {codes:?}");
        assert!(
            codes.iter().all(|c| [0, 2, 3].contains(c)),
            "round {round}: {codes:?}"
        );
        assert_eq!(
            env.commit_count(),
            1,
            "round {round}: exactly one claim commit"
        );
    }
}

#[test]
fn sixteen_writers_fifty_claims_each_lose_nothing() {
    let env = TestEnv::new();
    let bin = agent_coord_tests::env::binary();
    // Each writer is a shell loop of 50 separate CLI processes on distinct targets.
    let children: Vec<Child> = (0..16)
        .map(|w| {
            let script = format!(
                "for t in $(seq 0 49); do \"{}\" claim --agent-id w{w} --repo acme/app --target {w}-$t || exit 1; done",
                bin.display()
            );
            env.shell(&script).stdout(std::process::Stdio::null()).spawn().unwrap()
        })
        .collect();
    let codes = wait_all(children);
    assert!(codes.iter().all(|c| *c == 0), "{codes:?}");
    assert_eq!(
        env.paths("claims/acme/app").len(),
        800,
        "every claim is present"
    );
    assert_eq!(
        env.commit_count(),
        800,
        "one commit per write, none lost or duplicated"
    );
}

/// The takeover fence covered the heartbeat refs its decision read, but not one that did not
/// exist yet: a holder machine's first beat landing between the decision ("no heartbeat,
/// claim expired") and the commit let the takeover through.
#[test]
fn regression_unfenced_takeover_of_a_first_heartbeat() {
    let env = TestEnv::new();
    env.set_machine(Some("box-2"));
    env.claim("holder", "acme/app", "7").ttl(60).run().success();
    env.at(120);
    env.set_machine(Some("box-1"));
    let hold = tempfile::tempdir().unwrap();
    let taker = env
        .claim("taker", "acme/app", "7")
        .command()
        .env("AGENT_COORD_TEST_HOLD_AT", "decided")
        .env("AGENT_COORD_TEST_HOLD_DIR", hold.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let held = hold.path().join("decided.held");
    let mut taker = taker;
    while !held.exists() && taker.try_wait().unwrap().is_none() {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(held.exists(), "the taker never reached its decision");
    // The holder's machine beats for the first time: its heartbeat ref is created now.
    env.set_machine(Some("box-2"));
    env.beat("holder").run().success();
    assert!(env.tip("refs/agent-coord/heartbeats/box-2").is_some());
    std::fs::write(hold.path().join("decided.go"), b"").unwrap();
    let out = taker.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    assert!(
        stderr
            .contains("CLAIM_REFUSED: active claim for acme/app#7 held by holder; heartbeat live"),
        "{stderr}"
    );
    assert_eq!(env.holder("acme/app", "7").as_deref(), Some("holder"));
    assert!(env.git_output(&["fsck"]).status.success());
}
