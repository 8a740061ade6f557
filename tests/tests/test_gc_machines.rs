//! `gc --machines --older-than`: the heartbeat refs of machines silent past the retention
//! period go, locally and on the remote, only with --apply; this machine's own never does.

use agent_coord_tests::remote::Fleet;
use serde_json::json;

const OWN: &str = "refs/agent-coord/heartbeats/box-0";
const SILENT: &str = "refs/agent-coord/heartbeats/box-1";
const TRACKED: &str = "refs/agent-coord/remotes/origin/heartbeats/box-1";

#[test]
fn silent_machines_are_pruned_locally_and_on_the_remote_only_with_apply() {
    let fleet = Fleet::new(3);
    let (me, silent, alive) = (&fleet.machines[0], &fleet.machines[1], &fleet.machines[2]);
    // box-1 last beat 40 days ago; box-2 a day ago; this machine (box-0) 60 days ago.
    silent.at(-40 * 86_400);
    silent.beat("w1").on("acme/app", "1").run().success();
    silent.run(["sync"]).success();
    alive.at(-86_400);
    alive.beat("w2").on("acme/app", "2").run().success();
    alive.run(["sync"]).success();
    me.at(-60 * 86_400);
    me.beat("w0").on("acme/app", "3").run().success();
    me.run(["sync"]).success();
    me.at(0);
    assert!(fleet.remote_tip(SILENT).is_some());

    // A dry run by default: it says what would go and changes nothing.
    let out = me
        .run(["gc", "--machines", "--older-than", "30d"])
        .success();
    let stdout = out.stdout;
    assert!(
        stdout.starts_with("gc --machines dry-run older-than=30d\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "- would prune machine box-1 (last seen 2026-05-04T12:00:00Z): {TRACKED}, origin:{SILENT}"
        )),
        "{stdout}"
    );
    assert!(
        !stdout.contains("box-0") && !stdout.contains("box-2"),
        "{stdout}"
    );
    assert!(
        fleet.remote_tip(SILENT).is_some(),
        "a dry run deletes nothing"
    );
    assert!(me.tip(TRACKED).is_some());

    let plan = me
        .run(["gc", "--machines", "--older-than", "30d", "--json"])
        .success()
        .json();
    assert_eq!(plan["mode"], json!("dry-run"));
    assert_eq!(plan["own_machine"], json!("box-0"));
    assert_eq!(plan["remote"], json!("origin"));
    let machines = plan["machines"].as_array().unwrap();
    assert_eq!(machines.len(), 1, "{plan}");
    assert_eq!(machines[0]["machine"], json!("box-1"));
    assert_eq!(machines[0]["silent_seconds"], json!(40 * 86_400));
    assert_eq!(machines[0]["remote_ref"], json!(SILENT));
    assert_eq!(machines[0]["refs"], json!([TRACKED]));

    // --apply: gone from the remote and from here; the others stay.
    let done = me
        .run([
            "gc",
            "--machines",
            "--older-than",
            "30d",
            "--apply",
            "--json",
        ])
        .success()
        .json();
    assert_eq!(done["mode"], json!("apply"));
    assert_eq!(done["machines"][0]["pruned"], json!(true));
    assert_eq!(fleet.remote_tip(SILENT), None);
    assert_eq!(me.tip(TRACKED), None);
    assert!(
        fleet.remote_tip(OWN).is_some(),
        "this machine's own ref stays"
    );
    assert!(fleet
        .remote_tip("refs/agent-coord/heartbeats/box-2")
        .is_some());
    // Nothing left to prune, and a sync does not bring it back.
    me.run(["sync"]).success();
    assert_eq!(me.tip(TRACKED), None);
    let again = me
        .run(["gc", "--machines", "--older-than", "30d"])
        .success();
    assert!(
        again
            .stdout
            .contains("- no machine silent for longer than 30d"),
        "{}",
        again.stdout
    );
}

#[test]
fn a_machine_that_beats_again_is_not_pruned_and_bad_durations_are_usage_errors() {
    let fleet = Fleet::new(2);
    let (me, other) = (&fleet.machines[0], &fleet.machines[1]);
    other.at(-40 * 86_400);
    other.beat("w1").run().success();
    other.run(["sync"]).success();
    me.run(["sync"]).success();
    // It beats again before the prune runs: the fresh fetch sees it alive.
    other.at(0);
    other.beat("w1").run().success();
    other.run(["sync"]).success();
    let out = me
        .run(["gc", "--machines", "--older-than", "30d", "--apply"])
        .success();
    assert!(out.stdout.contains("- no machine silent"), "{}", out.stdout);
    assert!(fleet.remote_tip(SILENT).is_some());

    for bad in ["30", "0d", "soon"] {
        let out = me.run(["gc", "--machines", "--older-than", bad]).code(1);
        assert!(out.stderr.contains("is not a duration"), "{}", out.stderr);
    }
    me.run(["gc", "--machines"]).code(1);
    me.run(["gc", "--apply", "--older-than", "30d"]).code(1);
    me.run(["gc", "--machines", "--older-than", "30d", "--execute"])
        .code(1);
}
