//! A machine that dies: after its task heartbeats are dead, another machine of the same
//! worker takes its tasks over from the last published checkpoint — the pushed branch, never
//! a second branch or pull request — and goes on without a human, except for a lane that was
//! running on the dead machine, whose task is `uncertain` (no second model starts).

use agent_coord_tests::coord::task_on;
use agent_coord_tests::coord::Coord;
use agent_coord_tests::coord::TwoMachines;
use agent_coord_tests::coord::HUMAN;
use agent_coord_tests::coord::REPO;
use serde_json::json;

/// A day after the fixture's start: every heartbeat of the first machine is dead by then.
const A_DAY_LATER: i64 = 86_400;

fn text(out: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn accepts(c: &Coord, issue: u64) -> usize {
    c.comments(issue)
        .iter()
        .filter(|(_, b)| b.starts_with("Accepted by the agent-coord coordinator"))
        .count()
}

#[test]
fn a_dead_machines_task_goes_on_from_its_pushed_head_on_another_machine() {
    let two = TwoMachines::new(|_, _| {});
    let c = &two.c;
    c.gh.ci_plan(REPO, &[], "pending");
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let out = two.first(&[]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let task = c.task(issue);
    assert_eq!(task["phase"], "ci", "{task:#}");
    assert_eq!(task["machine"], "box-0");
    let head = task["head"].as_str().unwrap().to_owned();
    // box-0 dies. While its heartbeat for the task lives, box-1 leaves the task alone.
    let out = two.second().output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        task_on(&two.other, issue)["machine"],
        "box-0",
        "{}",
        text(&out)
    );
    // A day later box-0 still ticks (its task waits for CI, nothing to save): it is alive,
    // so box-1 still leaves the task alone.
    c.env.at(A_DAY_LATER);
    let out = two.first(&[]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    two.other.at(A_DAY_LATER + 60);
    let out = two.second().output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        task_on(&two.other, issue)["machine"],
        "box-0",
        "{}",
        text(&out)
    );
    // Then box-0 dies. A day later it is dead: box-1 takes the task over and takes it to
    // Ready.
    c.gh.set_ci(REPO, &head, "success");
    two.other.at(2 * A_DAY_LATER);
    let out = two.second().output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("taken over from machine box-0"),
        "{}",
        text(&out)
    );
    let task = task_on(&two.other, issue);
    assert_eq!(task["machine"], "box-1", "{task:#}");
    assert_eq!(task["previous_machines"], json!(["box-0"]));
    assert_eq!(task["phase"], "await_merge", "{task:#}\n{}", text(&out));
    assert_eq!(task["head"], head.as_str(), "the same head, approved");
    assert!(c
        .dir
        .join("ws-box-1")
        .join(task["task_id"].as_str().unwrap())
        .is_dir());
    // Exactly one of everything: no second model, comment, branch or pull request.
    assert_eq!(c.recorded("implementer.log").lines().count(), 1);
    assert_eq!(accepts(c, issue), 1);
    assert_eq!(c.gh.pulls(REPO).len(), 1);
    assert_eq!(c.gh.stats().ready_mutations, 1);
    let branches = c.bare_git(&[
        "for-each-ref",
        "--format=%(refname)",
        "refs/heads/agent-coord",
    ]);
    assert_eq!(String::from_utf8_lossy(&branches.stdout).lines().count(), 1);
    // box-0 comes back: the task is no longer its own.
    c.env.at(2 * A_DAY_LATER + 60);
    let out = two.first(&[]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        c.task(issue)["machine"],
        "box-1",
        "box-0 synced the takeover"
    );
    assert_eq!(c.gh.stats().ready_mutations, 1);
    assert_eq!(c.recorded("implementer.log").lines().count(), 1);
}

#[test]
fn a_lane_that_ran_on_the_dead_machine_leaves_its_task_uncertain_on_the_new_one() {
    let two = TwoMachines::new(|c, config| {
        let d = c.dir.display();
        let gated = c.dir.join("gated.sh");
        std::fs::write(
            &gated,
            format!(
                "#!/bin/sh\necho started >> '{d}/starts.log'\n\
                 while [ ! -e '{d}/go' ]; do sleep 0.05; done\nexec '{d}/implementer.sh'\n"
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&gated, std::fs::Permissions::from_mode(0o755)).unwrap();
        config["sessions"]["w1"]["lanes"]["grok:implementer"] = json!([gated.to_string_lossy()]);
    });
    let c = &two.c;
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    // box-0 starts the implementer and dies with it running.
    let out = two
        .first(&[("AGENT_COORD_TEST_KILL_AT", "lanes-started")])
        .output()
        .unwrap();
    assert!(!out.status.success());
    two.other.at(A_DAY_LATER);
    let out = two.second().output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let task = task_on(&two.other, issue);
    assert_eq!(task["machine"], "box-1", "{task:#}\n{}", text(&out));
    assert_eq!(task["state"], "uncertain", "{task:#}\n{}", text(&out));
    assert!(
        c.comments(issue)
            .iter()
            .any(|(_, b)| b.contains("outcome is unknown")),
        "{:?}",
        c.comments(issue)
    );
    // Let the orphaned lane end; nothing starts a second one.
    std::fs::write(c.dir.join("go"), "").unwrap();
    two.second().output().unwrap();
    assert_eq!(c.recorded("starts.log").lines().count(), 1);
    assert!(c.gh.pulls(REPO).is_empty());
}
