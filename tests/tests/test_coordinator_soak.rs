//! The short coordinator soak (`make soak-coordinators` runs the long one; see
//! `agent_coord_tests::coord_soak`): three machines of one worker, issues assigned over
//! time, one machine killed mid-tick and restarted, one killed for good.

use agent_coord_tests::coord_soak;
use agent_coord_tests::coord_soak::Options;

#[test]
fn three_machines_one_killed_and_restarted_one_dead_keep_every_promise() {
    let out = coord_soak::run_soak(Options {
        issues: 12,
        per_round: 3,
        max_lanes: 1,
        kill_round: 2,
        dead_round: 3,
        max_rounds: 16,
        seed: 7,
    });
    let violations = out.violations();
    assert!(
        violations.is_empty(),
        "{violations:#?}\nlanes per machine {:?}, {} rounds, {} Ready, {} need a human: {:#?}",
        out.lanes,
        out.rounds,
        out.ready().len(),
        out.need_a_human().len(),
        out.need_a_human()
            .iter()
            .map(|t| format!("{} {}: {}", t["task_id"], t["state"], t["blocker"]))
            .collect::<Vec<_>>()
    );
    // The run exercised what it claims to: both kills happened, the dead machine's work was
    // taken over (its in-flight lane leaves that task uncertain), the rest is Ready.
    assert_eq!(out.kills, 2);
    let taken = out.taken_over();
    assert!(!taken.is_empty(), "nothing was taken over");
    assert!(
        taken.iter().any(|t| t["state"] == "uncertain"),
        "the lane in flight on the dead machine: {taken:#?}"
    );
    assert_eq!(out.tasks.values().filter(|t| !t.is_null()).count(), 12);
    assert!(out.ready().len() >= 8, "{} Ready", out.ready().len());
}
