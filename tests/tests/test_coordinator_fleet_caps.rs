//! Fleet-wide lane caps per repository (`repo_max_lanes`): leases on the repository's slot
//! targets in the coordination state, taken with the start and published before any lane
//! runs, so machines sharing one remote never run more lanes on the repository than the cap;
//! released when the lanes are collected, and freed by their expiry when a machine dies
//! with lanes running.

use agent_coord_tests::coord::task_on;
use agent_coord_tests::coord::wait_until;
use agent_coord_tests::coord::TwoMachines;
use agent_coord_tests::coord::HUMAN;
use agent_coord_tests::coord::REPO;
use agent_coord_tests::coord::WORKER_TOKEN;
use agent_coord_tests::env::TestEnv;
use serde_json::json;
use serde_json::Value;

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn two_machines_run_one_lane_on_a_repository_capped_at_one_and_a_dead_machines_lease_expires() {
    let two = TwoMachines::new(|c, config| {
        c.gate_implementer(config);
        config["repo_max_lanes"] = json!({ REPO: 1 });
    });
    let c = &two.c;
    let first = c.assigned_issue("Add a feature file", HUMAN);
    // The first machine starts its implementer and returns; the lane holds the slot.
    let out = once(&two, &c.env, &c.config);
    assert!(out.status.success(), "{}", text(&out));
    wait_until("the first implementer to start", || c.starts() == 1);
    let holder = lease(&c.env, 1);
    assert_eq!(holder["status"], "active", "{holder:#}");
    let task_id = task_on(&c.env, first)["task_id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(holder["agent_id"], format!("w1.{task_id}.slots"));
    assert_eq!(
        task_on(&c.env, first)["pending"]["launch"]["leases"],
        json!([1]),
        "the start records its lease"
    );

    // The other machine admits the second issue but may not start a lane on the repository.
    let second = c.assigned_issue("Add another feature file", HUMAN);
    let out = once(&two, &two.other, &two.other_config);
    assert!(out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(
        said.contains("waits for a lane slot: repo_max_lanes 1 of acme/widget (fleet-wide leases) in use (1 running)"),
        "{said}"
    );
    assert_eq!(c.starts(), 1, "no second lane on the capped repository");
    let t2 = task_on(&two.other, second);
    assert_eq!(t2["phase"], "implement", "{t2:#}");
    assert!(t2.get("pending").is_none(), "{t2:#}");

    // The first machine never ticks again, its lane still running; after the lease's
    // expiry (lane_timeout 30 s + 600 s) the other machine's start takes the slot.
    two.other.at(30 + 600 + 60);
    let out = once(&two, &two.other, &two.other_config);
    assert!(out.status.success(), "{}", text(&out));
    wait_until("the second implementer to start", || c.starts() == 2);
    let t2 = task_on(&two.other, second);
    assert_eq!(t2["pending"]["launch"]["leases"], json!([1]), "{t2:#}");
    assert_eq!(
        lease(&two.other, 1)["agent_id"],
        format!("w1.{}.slots", t2["task_id"].as_str().unwrap())
    );
    // Once its lanes are collected the lease is released.
    c.go();
    let out = two.second().output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let t2 = task_on(&two.other, second);
    assert!(t2.get("pending").is_none(), "{t2:#}");
    assert_eq!(lease(&two.other, 1)["status"], "released");
}

/// The lease on slot `n` of [`REPO`] as `env`'s state branch holds it.
fn lease(env: &TestEnv, n: u64) -> Value {
    let text = env.git(&[
        "show",
        &format!("refs/heads/agent-coord:claims/{REPO}/lane-slot-{n}.json"),
    ]);
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// A tick on `env` that starts what it may and returns.
fn once(two: &TwoMachines, env: &TestEnv, config: &std::path::Path) -> std::process::Output {
    two.c
        .coordinate_on(env, "w1", config, &[("W1_TOKEN", WORKER_TOKEN)])
        .output()
        .unwrap()
}
