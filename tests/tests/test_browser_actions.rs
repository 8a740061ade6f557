//! The operator's action loop in a real headless Chromium (`browser/actions.mjs`): select
//! rows and build the `$pr-batch` prompt (and its refusal), copy it, import it as a batch;
//! Find by keyboard; resume and takeover commands; dismiss and snooze. What the browser
//! did is then read back from git.

use agent_coord_tests::env::TestEnv;

use crate::test_browser::run_script;

fn seed(env: &TestEnv) {
    // Running in a batch: not selectable.
    env.claim("w1", "acme/app", "1")
        .batch("b-run")
        .run()
        .success();
    env.beat("w1")
        .on("acme/app", "1")
        .batch("b-run")
        .status("implementing")
        .run()
        .success();
    // A holder that went silent an hour ago: dead, needs attention, offers a takeover.
    env.at(-3600);
    env.claim("w3", "acme/app", "3")
        .batch("b-three")
        .arg("--branch")
        .arg("fix/three")
        .run()
        .success();
    env.beat("w3")
        .on("acme/app", "3")
        .batch("b-three")
        .status("implementing")
        .ttl(60)
        .run()
        .success();
    env.at(0);
    // Claimed and never worked on, outside any batch: selectable; #5 in two repos.
    for (agent, repo, target) in [
        ("w5", "acme/app", "5"),
        ("w6", "acme/app", "6"),
        ("w7", "acme/web", "5"),
    ] {
        env.claim(agent, repo, target).run().success();
    }
}

#[test]
fn the_operator_acts_from_the_dashboard_in_a_real_browser() {
    let env = TestEnv::new();
    seed(&env);
    run_script(&env, "actions.mjs", "actions.png");
    let batches: Vec<String> = env
        .paths("batches")
        .into_iter()
        .filter(|p| p.starts_with("batches/batch-acme-app-"))
        .collect();
    assert_eq!(batches.len(), 1, "one imported batch: {batches:?}");
    let manifest = env.record(&batches[0]).unwrap();
    let targets: Vec<&str> = manifest["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["target"].as_str().unwrap())
        .collect();
    assert_eq!(targets, ["5", "6"]);
    let snooze = env
        .record("annotations/acme/app/3.json")
        .expect("the snooze");
    assert_eq!(snooze["kind"], "snooze");
}
