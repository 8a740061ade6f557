//! Lanes outlive the coordinator that started them: a one-shot tick starts every lane it
//! may and returns, a later tick (or `--wait`) collects them, a restart re-attaches to lanes
//! still running and collects those that ended while no coordinator ran, only a lane whose
//! files are gone is `uncertain`, a full lane cap holds the rest back with a reason,
//! `max_lanes` admits only what the machine has room for, and slots go by label priority,
//! turns between repositories and the oldest assignment.

use std::path::Path;
use std::path::PathBuf;

use agent_coord_tests::coord::wait_until;
use agent_coord_tests::coord::Coord;
use agent_coord_tests::coord::HUMAN;
use agent_coord_tests::coord::REPO;
use serde_json::Value;

/// Every file under `dir` whose name ends with `suffix`.
fn files_ending(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_ending(&path, suffix));
        } else if path.to_string_lossy().ends_with(suffix) {
            out.push(path);
        }
    }
    out
}

fn unknown_outcome_comments(c: &Coord, issue: u64) -> usize {
    c.comments(issue)
        .iter()
        .filter(|(_, b)| b.contains("outcome is unknown"))
        .count()
}

#[test]
fn a_lane_that_ended_while_no_coordinator_ran_is_collected_from_its_files() {
    let c = Coord::new(30);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    // The lane ended and its result was read, but the process died before recording it.
    let crashed = c.crash_at("lane-finished");
    assert!(!crashed.status.success());
    assert!(c.task(issue)["pending"].is_object(), "{:#}", c.task(issue));
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let task = c.task(issue);
    assert_eq!(task["state"], "active", "{task:#}");
    assert_eq!(task["phase"], "ci", "{task:#}");
    assert_eq!(
        c.recorded("implementer.log").lines().count(),
        1,
        "one model"
    );
    assert_eq!(unknown_outcome_comments(&c, issue), 0);
    assert_eq!(c.gh.pulls(REPO).len(), 1);
}

#[test]
fn a_restarted_coordinator_re_attaches_to_a_lane_that_still_runs() {
    let c = Coord::new(30);
    let mut config = c.config_value(30);
    c.gate_implementer(&mut config);
    c.write_config(&config);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    // The coordinator dies right after launching the lane; the lane goes on without it.
    let crashed = c.crash_at("lanes-started");
    assert!(!crashed.status.success());
    wait_until("the lane to start", || c.starts() == 1);
    // A tick that does not wait sees it still running and starts nothing else.
    let out = c.command(&[]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}");
    assert!(text.contains("still running"), "{text}");
    c.go();
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let task = c.task(issue);
    assert_eq!(task["state"], "active", "{task:#}");
    assert_eq!(task["phase"], "ci", "{task:#}");
    assert_eq!(c.starts(), 1, "the lane was started once");
    assert_eq!(c.recorded("implementer.log").lines().count(), 1);
    assert_eq!(unknown_outcome_comments(&c, issue), 0);
}

#[test]
fn a_lane_whose_files_are_gone_leaves_its_task_uncertain_and_starts_no_second_model() {
    let c = Coord::new(30);
    let mut config = c.config_value(30);
    c.gate_implementer(&mut config);
    c.write_config(&config);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let crashed = c.crash_at("lanes-started");
    assert!(!crashed.status.success());
    c.go();
    let ws = c.dir.join("ws");
    wait_until("the lane's result", || {
        !files_ending(&ws, ".result.json").is_empty()
    });
    // What a reboot mid-write leaves: neither the lane's exit status nor its process.
    for file in files_ending(&ws, ".result.json")
        .into_iter()
        .chain(files_ending(&ws, ".pid.json"))
    {
        std::fs::remove_file(file).unwrap();
    }
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let task = c.task(issue);
    assert_eq!(task["state"], "uncertain", "{task:#}");
    assert_eq!(
        unknown_outcome_comments(&c, issue),
        1,
        "{:?}",
        c.comments(issue)
    );
    // Not even an authorized reply starts another model.
    c.gh.comment(REPO, issue, HUMAN, "Go ahead.");
    c.tick(&[]).success();
    assert_eq!(c.starts(), 1);
    assert!(c.gh.pulls(REPO).is_empty());
}

#[test]
fn a_one_shot_tick_starts_every_lane_and_a_later_tick_collects_each_once() {
    let c = Coord::new(30);
    let mut config = c.config_value(30);
    c.gate_implementer(&mut config);
    c.write_config(&config);
    let issues: Vec<u64> = (0..3)
        .map(|i| c.assigned_issue(&format!("Add feature file {i}"), HUMAN))
        .collect();
    // The tick returns while all three implementers wait at the gate.
    let out = c.command(&["--json"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for &issue in &issues {
        let task = c.task(issue);
        assert_eq!(task["phase"], "implement", "{task:#}");
        assert!(
            task["pending"]["launch"]["nonce"].is_string(),
            "the start is recorded with how to find it again: {task:#}"
        );
    }
    wait_until("three lanes to start", || c.starts() == 3);
    // Another coordinator process while they run (a restart): nothing starts twice.
    c.command(&[]).output().unwrap();
    c.go();
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    for &issue in &issues {
        let task = c.task(issue);
        assert_eq!(task["state"], "active", "{task:#}");
        assert_eq!(task["phase"], "ci", "{task:#}");
        assert_eq!(unknown_outcome_comments(&c, issue), 0);
    }
    assert_eq!(c.starts(), 3, "each implementer started once");
    assert_eq!(c.recorded("implementer.log").lines().count(), 3);
    assert_eq!(c.gh.pulls(REPO).len(), 3);
}

#[test]
fn a_full_lane_cap_holds_the_other_tasks_back_with_a_reason_until_a_slot_frees() {
    let c = Coord::new(30);
    let mut config = c.config_value(30);
    c.gate_implementer(&mut config);
    config["machine_max_lanes"] = serde_json::json!(1);
    c.write_config(&config);
    let first = c.assigned_issue("Add a feature file", HUMAN);
    let second = c.assigned_issue("Add another file", HUMAN);
    let out = c.command(&["--json"]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}");
    let report: Value = serde_json::from_str(text.trim()).unwrap();
    let waits: Vec<&Value> = report["observations"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| {
            o["message"].as_str().is_some_and(|m| {
                m.starts_with(
                    "waits for a lane slot: machine_max_lanes 1 of this machine in use (1 running)",
                )
            })
        })
        .collect();
    assert_eq!(waits.len(), 1, "{text}");
    let pending: Vec<bool> = [first, second]
        .iter()
        .map(|&i| c.task(i)["pending"].is_object())
        .collect();
    assert_eq!(pending.iter().filter(|p| **p).count(), 1, "{pending:?}");
    wait_until("the first lane to start", || c.starts() == 1);
    // When the first lane ends, the waiting tick starts the second in the freed slot.
    c.go();
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    for issue in [first, second] {
        assert_eq!(
            c.task(issue)["phase"],
            "ci",
            "{}\n{:#}",
            out.stdout,
            c.task(issue)
        );
    }
    assert_eq!(c.starts(), 2);
}

#[test]
fn max_lanes_admits_only_as_many_issues_as_the_machine_has_room_for() {
    let c = Coord::new(30);
    let mut config = c.config_value(30);
    config["workers"]["w1"]["max_lanes"] = serde_json::json!(1);
    c.write_config(&config);
    let first = c.assigned_issue("Add a feature file", HUMAN);
    let second = c.assigned_issue("Add another file", HUMAN);
    // The first tick admits one issue and takes it to CI (no lanes left ahead of it); the
    // other stays unclaimed and unaccepted, saying why.
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(c.task(first)["phase"], "ci", "{}", out.stdout);
    assert!(c.task(second).is_null(), "{}", out.stdout);
    assert!(
        out.stdout.contains(&format!(
            "{REPO}#{second}: not admitted yet: this machine's tasks that still need lanes fill max_lanes 1"
        )),
        "{}",
        out.stdout
    );
    assert!(c.comments(second).is_empty());
    // Now the slot is free: the next tick admits it.
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(c.task(second)["phase"], "ci", "{}", out.stdout);
}

#[test]
fn slots_go_by_label_priority_then_turns_between_repositories_then_the_oldest_assignment() {
    let c = Coord::with_repos(30, &["acme/widget", "acme/gadget"]);
    let mut config = c.config_value(30);
    c.gate_implementer(&mut config);
    config["machine_max_lanes"] = serde_json::json!(1);
    config["workers"]["w1"]["priority_labels"] = serde_json::json!({"urgent": 0, "later": 5});
    c.write_config(&config);
    let a1 = c.assigned_issue_in("acme/widget", "First", HUMAN);
    let a2 = c.assigned_issue_in("acme/widget", "Second", HUMAN);
    let a3 = c.assigned_issue_in("acme/widget", "Third", HUMAN);
    c.gh.label("acme/widget", a3, &["bug", "urgent"]);
    // The other repository's issue is assigned a second later (assignment times have
    // whole seconds).
    let second = chrono::Utc::now().timestamp();
    wait_until("the next second", || {
        chrono::Utc::now().timestamp() > second
    });
    let b1 = c.assigned_issue_in("acme/gadget", "Other", HUMAN);
    c.go();
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let order: Vec<String> = c
        .recorded("starts.log")
        .lines()
        .map(str::to_owned)
        .collect();
    // The urgent issue first; then acme/widget's oldest and acme/gadget's only issue take
    // turns before acme/widget's second one.
    assert_eq!(
        order,
        [
            format!("acme.widget.{a3}"),
            format!("acme.widget.{a1}"),
            format!("acme.gadget.{b1}"),
            format!("acme.widget.{a2}"),
        ],
        "{}",
        out.stdout
    );
}

#[test]
fn follow_advances_a_task_as_soon_as_its_lane_ends_without_polling_the_others() {
    let c = Coord::new(30);
    let mut config = c.config_value(30);
    c.gate_implementer(&mut config);
    // A full tick (discovery and every task's poll) only once an hour.
    config["workers"]["w1"]["poll_seconds"] = serde_json::json!(3600);
    c.write_config(&config);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let mut child = c
        .command(&["--follow"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    wait_until("the implementer to start", || c.starts() == 1);
    c.gh.reset_requests();
    c.go();
    // Each lane's end wakes a collecting tick: the task goes through the inner review and
    // both gate phases to CI long before the next hourly poll.
    wait_until("the task to reach CI", || c.task(issue)["phase"] == "ci");
    let listed =
        c.gh.requests()
            .iter()
            .filter(|r| r.method == "GET" && r.path.ends_with("/issues"))
            .count();
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGTERM,
    )
    .unwrap();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert_eq!(listed, 0, "a collecting tick discovers nothing");
    assert_eq!(c.recorded("implementer.log").lines().count(), 1);
}
