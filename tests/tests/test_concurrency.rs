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
