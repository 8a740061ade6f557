//! The operator's hand on the coordinator (issue 21): `coordinate tasks`, `explain`,
//! `cancel`, `retry`, `pause`, `resume` and `drain`, each against the fake GitHub and a
//! real coordination repository, refusals included; each write a `human_intervention`
//! event naming who ran it.

use agent_coord_tests::coord::wait_until;
use agent_coord_tests::coord::Coord;
use agent_coord_tests::coord::HUMAN;
use agent_coord_tests::coord::REPO;
use agent_coord_tests::env::CommandOutput;
use serde_json::Value;

fn ok(out: &CommandOutput) {
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
}

/// The `human_intervention` events on the state branch, as JSON.
fn interventions(c: &Coord) -> Vec<Value> {
    let listing = c.env.git(&[
        "ls-tree",
        "-r",
        "--name-only",
        "refs/heads/agent-coord",
        "events/",
    ]);
    listing
        .lines()
        .map(|path| {
            c.env
                .git(&["show", &format!("refs/heads/agent-coord:{path}")])
        })
        .filter_map(|text| serde_json::from_str::<Value>(&text).ok())
        .filter(|e| e["type"] == "human_intervention")
        .collect()
}

/// The issue's claim record on the state branch.
fn claim(c: &Coord, issue: u64) -> Value {
    let text = c.env.git(&[
        "show",
        &format!("refs/heads/agent-coord:claims/{REPO}/{issue}.json"),
    ]);
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// One issue whose implementer a one-shot tick started and left waiting at its gate.
fn gated_and_started(c: &Coord, lane_timeout: u64) -> u64 {
    let mut config = c.config_value(lane_timeout);
    c.gate_implementer(&mut config);
    c.write_config(&config);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    ok(&one_shot(c));
    wait_until("the implementer to start", || c.starts() == 1);
    issue
}

/// A tick that starts what it may and returns.
fn one_shot(c: &Coord) -> CommandOutput {
    CommandOutput::new(c.command(&[]).output().unwrap(), c.env.root())
}

fn cancellation_comments(c: &Coord, issue: u64) -> usize {
    c.comments(issue)
        .iter()
        .filter(|(_, b)| b.contains("stopped work on this issue"))
        .count()
}

#[test]
fn cancel_stops_the_running_lane_says_so_once_and_releases_the_claim() {
    let c = Coord::new(60);
    let issue = gated_and_started(&c, 60);

    let out = c.operate(&[
        "cancel",
        &format!("{REPO}#{issue}"),
        "--operator",
        "alice",
        "--reason",
        "wrong issue",
    ]);
    ok(&out);
    assert!(out.stdout.contains("cancelled by alice"), "{}", out.stdout);
    let task = c.task(issue);
    assert_eq!(task["state"], "cancelled", "{task:#}");
    assert!(
        task.get("pending").is_none(),
        "its lanes were stopped: {task:#}"
    );
    assert_eq!(task["blocker"], "cancelled by alice: wrong issue");
    assert_eq!(task["interventions"][0]["action"], "cancel");
    // The lane is gone: opening its gate now runs no implementer.
    c.go();
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(
        c.recorded("implementer.log"),
        "",
        "the cancelled lane ran on"
    );
    assert_eq!(
        cancellation_comments(&c, issue),
        1,
        "{:?}",
        c.comments(issue)
    );
    let comment = c.comments(issue).last().unwrap().1.clone();
    assert!(
        comment.contains("Nothing on GitHub was closed"),
        "{comment}"
    );
    assert_eq!(claim(&c, issue)["status"], "released");
    let events = interventions(&c);
    assert_eq!(events.len(), 1, "{events:#?}");
    assert_eq!(events[0]["action"], "cancel");
    assert_eq!(events[0]["operator"], "alice");
    assert_eq!(events[0]["kind"], "manual-fix");

    // Later ticks say nothing more; the issue, still assigned, is not taken again.
    ok(&c.tick(&[]));
    ok(&c.tick(&[]));
    assert_eq!(cancellation_comments(&c, issue), 1);
    assert_eq!(c.starts(), 1);
    assert_eq!(c.task(issue)["state"], "cancelled");

    let again = c.operate(&["cancel", &format!("{REPO}#{issue}"), "--operator", "alice"]);
    assert_eq!(again.code, 1, "{}", again.stderr);
    assert!(
        again
            .stderr
            .contains("is already cancelled: nothing to cancel"),
        "{}",
        again.stderr
    );
    assert_eq!(interventions(&c).len(), 1, "a refusal writes nothing");
}

#[test]
fn cancel_of_a_done_task_is_refused() {
    let c = Coord::new(30);
    c.gh.ci_plan(REPO, &[], "success");
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    ok(&c.tick(&[]));
    c.gh.merge_pull(REPO, c.pr(issue), Some(HUMAN));
    ok(&c.tick(&[]));
    assert_eq!(c.task(issue)["state"], "done");
    let task_id = c.task(issue)["task_id"].as_str().unwrap().to_owned();
    let out = c.operate(&["cancel", &task_id, "--operator", "alice"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("is already done: nothing to cancel"),
        "{}",
        out.stderr
    );
    assert_eq!(c.task(issue)["state"], "done");
    let missing = c.operate(&["cancel", "acme.widget.999", "--operator", "alice"]);
    assert_eq!(missing.code, 1);
    assert!(
        missing.stderr.contains("no task \"acme.widget.999\""),
        "{}",
        missing.stderr
    );
}

/// A task whose implementer's files are gone: `uncertain`, as after a reboot mid-write.
fn uncertain(c: &Coord) -> u64 {
    let mut config = c.config_value(30);
    c.gate_implementer(&mut config);
    c.write_config(&config);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    assert!(!c.crash_at("lanes-started").status.success());
    wait_until("the implementer to start", || c.starts() == 1);
    let control = c.dir.join("ws").join(".coordinator-control");
    for entry in walk(&control) {
        let name = entry.to_string_lossy();
        if name.ends_with(".pid.json") || name.ends_with(".result.json") {
            std::fs::remove_file(&entry).unwrap();
        }
    }
    // The lane itself keeps waiting at its gate, as a lane nobody can find again would.
    ok(&c.tick(&[]));
    assert_eq!(c.task(issue)["state"], "uncertain");
    issue
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn retry_refuses_an_unsafe_phase_with_the_allowed_list_then_runs_an_uncertain_task_again() {
    let c = Coord::new(30);
    let issue = uncertain(&c);
    let name = format!("{REPO}#{issue}");
    let unsafe_phase = c.operate(&["retry", &name, "--from", "ci", "--operator", "alice"]);
    assert_eq!(unsafe_phase.code, 1, "{}", unsafe_phase.stderr);
    assert!(
        unsafe_phase
            .stderr
            .contains("cannot go on from ci: allowed phases are implement"),
        "{}",
        unsafe_phase.stderr
    );
    let not_a_phase = c.operate(&["retry", &name, "--from", "lunch", "--operator", "alice"]);
    assert_eq!(not_a_phase.code, 1);
    assert!(
        not_a_phase.stderr.contains("is not a phase"),
        "{}",
        not_a_phase.stderr
    );
    assert_eq!(
        c.task(issue)["state"],
        "uncertain",
        "a refusal changes nothing"
    );

    let out = c.operate(&[
        "retry",
        &name,
        "--from",
        "implement",
        "--operator",
        "alice",
        "--reason",
        "the lost lane was mine; run it again",
        "--json",
    ]);
    ok(&out);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["action"], "retry");
    assert_eq!(doc["state"], "active");
    assert_eq!(doc["phase"], "implement");
    let task = c.task(issue);
    assert_eq!(task["interventions"][0]["from"], "implement");
    assert_eq!(task["interventions"][0]["was"], "uncertain");
    c.go();
    ok(&c.tick(&[]));
    let task = c.task(issue);
    assert_eq!(
        (task["state"].as_str(), task["phase"].as_str()),
        (Some("active"), Some("ci")),
        "{task:#}"
    );
    assert_eq!(
        c.starts(),
        2,
        "the operator's retry started the one new implementer"
    );

    let active = c.operate(&["retry", &name, "--from", "implement", "--operator", "alice"]);
    assert_eq!(active.code, 1);
    assert!(
        active
            .stderr
            .contains("only a failed or uncertain task can be retried; it is running"),
        "{}",
        active.stderr
    );
    let events = interventions(&c);
    assert_eq!(
        events.len(),
        1,
        "only the accepted retry is an event: {events:#?}"
    );
    assert_eq!(events[0]["action"], "retry");
}

#[test]
fn a_pause_holds_admission_and_lanes_until_resume_and_every_view_says_so() {
    let c = Coord::new(30);
    let out = c.operate(&[
        "pause",
        "--worker",
        "w1",
        "--operator",
        "alice",
        "--reason",
        "upgrade",
    ]);
    ok(&out);
    assert!(
        out.stdout.contains("paused (worker:w1) by alice"),
        "{}",
        out.stdout
    );
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let tick = c.tick(&[]);
    ok(&tick);
    assert!(
        tick.stdout
            .contains("not admitted: paused (worker:w1) by alice"),
        "{}",
        tick.stdout
    );
    assert_eq!(c.task(issue), Value::Null);
    assert!(
        c.comments(issue).is_empty(),
        "no acceptance comment under a pause"
    );

    let explained = c.operate(&["explain", &format!("{REPO}#{issue}")]);
    assert_eq!(explained.code, 1, "{}", explained.stdout);
    assert!(
        explained.stdout.contains("paused (worker:w1) by alice"),
        "{}",
        explained.stdout
    );
    let tasks = c.operate(&["tasks", "--json"]);
    ok(&tasks);
    let doc: Value = serde_json::from_str(&tasks.stdout).unwrap();
    assert_eq!(doc["holds"][0]["scope"], "worker:w1");
    assert_eq!(doc["holds"][0]["reason"], "upgrade");

    // A resume of another scope lifts nothing.
    let wrong = c.operate(&["resume", "--all", "--operator", "alice"]);
    assert_eq!(wrong.code, 1);
    assert!(
        wrong
            .stderr
            .contains("nothing to resume: no pause or drain on all (in force: paused (worker:w1)"),
        "{}",
        wrong.stderr
    );
    ok(&c.operate(&["resume", "--worker", "w1", "--operator", "bob"]));
    ok(&c.tick(&[]));
    assert_eq!(
        c.task(issue)["phase"],
        "ci",
        "admitted and implemented after the resume"
    );
    let actions: Vec<String> = interventions(&c)
        .iter()
        .map(|e| {
            format!(
                "{} {} {}",
                e["action"].as_str().unwrap(),
                e["scope"].as_str().unwrap(),
                e["operator"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(actions, ["pause worker:w1 alice", "resume worker:w1 bob"]);
}

#[test]
fn a_pause_holds_the_lanes_of_an_admitted_task_and_a_drain_only_new_issues() {
    let c = Coord::new(30);
    let first = c.assigned_issue("Add a feature file", HUMAN);
    // Admitted and accepted, then paused before its implementer.
    ok(&c.operate(&["pause", "--repo", REPO, "--operator", "alice"]));
    let tick = c.tick(&[]);
    ok(&tick);
    assert!(
        tick.stdout
            .contains("not admitted: paused (repo:acme/widget)"),
        "{}",
        tick.stdout
    );
    ok(&c.operate(&["resume", "--repo", REPO, "--operator", "alice"]));
    ok(&c.operate(&["drain", "--all", "--operator", "alice"]));
    let drained = c.tick(&[]);
    ok(&drained);
    assert_eq!(c.task(first), Value::Null, "a drain admits nothing");
    assert!(
        drained
            .stdout
            .contains("not admitted: draining (all) by alice"),
        "{}",
        drained.stdout
    );
    ok(&c.operate(&["resume", "--all", "--operator", "alice"]));
    let mut config = c.config_value(30);
    c.gate_implementer(&mut config);
    c.write_config(&config);
    // Admitted; its implementer starts and waits at the gate.
    ok(&one_shot(&c));
    wait_until("the implementer to start", || c.starts() == 1);
    // A drain lets the admitted task go on; a pause holds its next lanes.
    ok(&c.operate(&["drain", "--worker", "w1", "--operator", "alice"]));
    ok(&c.operate(&["pause", "--worker", "w1", "--operator", "alice"]));
    c.go();
    let held = c.tick(&[]);
    ok(&held);
    let task = c.task(first);
    assert_eq!(
        task["phase"], "inner_review",
        "the running implementer finished: {task:#}"
    );
    assert!(
        held.stdout
            .contains("waits for an operator to resume: paused (worker:w1)"),
        "{}",
        held.stdout
    );
    let tasks = c.operate(&["tasks"]);
    ok(&tasks);
    assert!(
        tasks
            .stdout
            .contains("waits for an operator to resume: paused (worker:w1) by alice"),
        "{}",
        tasks.stdout
    );
    ok(&c.operate(&["resume", "--worker", "w1", "--operator", "alice"]));
    ok(&c.tick(&[]));
    assert_eq!(c.task(first)["phase"], "ci", "{:#}", c.task(first));
}

#[test]
fn explain_says_why_for_every_branch_of_admission() {
    let c = Coord::new(30);
    let say = |target: &str| c.operate(&["explain", target]);

    let unconfigured = say("acme/other#3");
    assert_eq!(unconfigured.code, 1);
    assert!(
        unconfigured
            .stdout
            .contains("acme/other is not configured for any worker (configured: acme/widget)"),
        "{}",
        unconfigured.stdout
    );

    let nobody = c.gh.open_issue(REPO, HUMAN, "Unassigned work", "Later.");
    let out = say(&format!("{REPO}#{nobody}"));
    assert_eq!(out.code, 1);
    assert!(
        out.stdout
            .contains("is assigned to nobody, not to a configured login (bot-worker (w1))"),
        "{}",
        out.stdout
    );

    let by_bot = c.assigned_issue("Assigned by a bot", "helper-bot");
    let out = say(&format!("{REPO}#{by_bot}"));
    assert_eq!(out.code, 1);
    assert!(
        out.stdout
            .contains("no verified human assignment of bot-worker"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("helper-bot"),
        "who assigned it: {}",
        out.stdout
    );

    let admissible = c.assigned_issue("Add a feature file", HUMAN);
    let out = say(&format!("{REPO}#{admissible}"));
    ok(&out);
    assert!(
        out.stdout
            .contains(&format!("worker w1: {HUMAN} assigned it")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("its next tick admits it"),
        "{}",
        out.stdout
    );

    let claimed = c.assigned_issue("Claimed elsewhere", HUMAN);
    c.env
        .run([
            "claim",
            "--agent-id",
            "agent-7",
            "--repo",
            REPO,
            "--target",
            &claimed.to_string(),
        ])
        .success();
    let out = say(&format!("{REPO}#{claimed}"));
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.contains(&format!(
            "{REPO}#{claimed} is claimed by agent-7 on machine box-1 until"
        )),
        "{}",
        out.stdout
    );

    let closed = c.assigned_issue("Closed already", HUMAN);
    c.gh.close_issue(REPO, closed);
    let out = say(&format!("{REPO}#{closed}"));
    assert_eq!(out.code, 1);
    assert!(
        out.stdout
            .contains("is closed; only open issues become tasks"),
        "{}",
        out.stdout
    );

    ok(&c.tick(&[]));
    let out = c.operate(&["explain", &format!("{REPO}#{admissible}"), "--json"]);
    ok(&out);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["verdict"], "task");
    assert!(
        doc["reasons"][0]
            .as_str()
            .unwrap()
            .contains("it is task acme.widget."),
        "{doc:#}"
    );

    let bad = say("not-an-issue");
    assert_eq!(bad.code, 1);
    assert!(bad.stderr.contains("is not OWNER/REPO#N"), "{}", bad.stderr);
}

#[test]
fn a_cancel_from_another_machine_is_finished_by_the_machine_that_runs_the_lanes() {
    let c = Coord::new(60);
    let issue = gated_and_started(&c, 60);
    c.env.set_machine(Some("operator-laptop"));
    let out = c.operate(&["cancel", &format!("{REPO}#{issue}"), "--operator", "alice"]);
    c.env.set_machine(Some("box-1"));
    ok(&out);
    assert!(
        out.stdout
            .contains("stops its lanes and posts the comment on its next tick"),
        "{}",
        out.stdout
    );
    assert!(
        c.task(issue).get("pending").is_some(),
        "the lanes still run over there"
    );
    assert_eq!(cancellation_comments(&c, issue), 0);
    // The machine that runs the lanes stops them on its next tick and says so once.
    let tick = one_shot(&c);
    ok(&tick);
    assert!(
        tick.stdout.contains("cancelled: stopped its running lanes"),
        "{}",
        tick.stdout
    );
    c.go();
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(
        c.recorded("implementer.log"),
        "",
        "the cancelled lane ran on"
    );
    assert_eq!(cancellation_comments(&c, issue), 1);
    assert!(c.task(issue).get("pending").is_none());
}

/// A notification command that appends its stdin (one JSON document) and its environment to
/// files in the fixture folder, and fails while `notify.fail` exists.
fn notifier(c: &Coord, config: &mut Value) {
    let d = c.dir.display();
    let script = c.dir.join("notify.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat >> '{d}/notifications.log'\necho >> '{d}/notifications.log'\n\
             env >> '{d}/notify.env'\n[ -e '{d}/notify.fail' ] && exit 3\nexit 0\n"
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    config["workers"]["w1"]["notify_argv"] = serde_json::json!([script.to_string_lossy()]);
}

fn notifications(c: &Coord) -> Vec<Value> {
    c.recorded("notifications.log")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn a_question_and_a_cancel_are_notified_once_each_even_through_a_crash_before_the_notification() {
    let c = Coord::new(30);
    let mut config = c.config_value(30);
    notifier(&c, &mut config);
    c.write_config(&config);
    c.queue("implementer", &["ask"]);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    // The question is published, then the coordinator dies before notifying.
    assert!(!c.crash_at("before-notify").status.success());
    assert_eq!(c.task(issue)["state"], "waiting");
    assert!(notifications(&c).is_empty());
    ok(&c.tick(&[]));
    ok(&c.tick(&[]));
    let sent = notifications(&c);
    assert_eq!(sent.len(), 1, "{sent:#?}");
    let task_id = c.task(issue)["task_id"].as_str().unwrap().to_owned();
    assert_eq!(sent[0]["event"], "needs_human");
    assert_eq!(sent[0]["reason"], "question");
    assert_eq!(sent[0]["task_id"], task_id.as_str());
    assert_eq!(sent[0]["text"], "Which file should hold the feature?");
    assert!(
        sent[0]["link"]
            .as_str()
            .is_some_and(|l| l.contains("issuecomment")),
        "{:#}",
        sent[0]
    );
    assert!(sent[0]["notification_id"]
        .as_str()
        .unwrap()
        .starts_with(&format!("{task_id}:waiting:")));
    let listed = c.operate(&["tasks"]);
    ok(&listed);
    assert!(
        listed
            .stdout
            .contains(&format!("waits for a reply from {HUMAN} on the issue (")),
        "{}",
        listed.stdout
    );
    let env = c.recorded("notify.env");
    assert!(
        !env.contains(agent_coord_tests::coord::WORKER_TOKEN),
        "a token reached the notifier"
    );
    assert!(!env.contains(agent_coord_tests::coord::REVIEW_TOKEN));

    ok(&c.operate(&["cancel", &task_id, "--operator", "alice"]));
    ok(&c.tick(&[]));
    let sent = notifications(&c);
    assert_eq!(sent.len(), 2, "{sent:#?}");
    assert_eq!(sent[1]["event"], "cancelled");
    assert_eq!(sent[1]["notification_id"], format!("{task_id}:cancelled"));
}

#[test]
fn ready_and_done_are_notified_and_a_failing_notifier_is_retried_a_bounded_number_of_times() {
    let c = Coord::new(30);
    c.gh.ci_plan(REPO, &[], "success");
    let mut config = c.config_value(30);
    notifier(&c, &mut config);
    c.write_config(&config);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    ok(&c.tick(&[]));
    let sent = notifications(&c);
    assert_eq!(sent.len(), 1, "{sent:#?}");
    assert_eq!(sent[0]["event"], "ready");
    assert_eq!(sent[0]["link"], c.task(issue)["pr_url"]);

    // The notifier fails from now on: the done notification is tried on each tick, at most
    // five times, and the ticks go on.
    std::fs::write(c.dir.join("notify.fail"), "").unwrap();
    c.gh.merge_pull(REPO, c.pr(issue), Some(HUMAN));
    let first = c.tick(&[]);
    ok(&first);
    assert_eq!(c.task(issue)["state"], "done");
    assert!(
        first
            .stdout
            .contains("the notification done failed (attempt 1 of 5): exit 3"),
        "{}",
        first.stdout
    );
    for _ in 0..3 {
        ok(&c.tick(&[]));
    }
    let last = c.tick(&[]);
    assert_eq!(
        last.code, 2,
        "giving up is an error of that tick: {}",
        last.stdout
    );
    assert!(
        last.stdout.contains("failed 5 times and is given up"),
        "{}",
        last.stdout
    );
    ok(&c.tick(&[]));
    let done: Vec<Value> = notifications(&c)
        .into_iter()
        .filter(|n| n["event"] == "done")
        .collect();
    assert_eq!(done.len(), 5, "five attempts, then none");
}

#[test]
fn an_ended_tasks_worktree_goes_after_worktree_ttl_and_its_transcripts_after_transcript_ttl() {
    let c = Coord::new(30);
    let mut config = c.config_value(30);
    config["workers"]["w1"]["worktree_ttl"] = serde_json::json!(86_400);
    config["workers"]["w1"]["transcript_ttl"] = serde_json::json!(3 * 86_400);
    c.write_config(&config);
    c.queue("implementer", &["blocked"]);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    ok(&c.tick(&[]));
    assert_eq!(c.task(issue)["state"], "failed");
    let task_id = c.task(issue)["task_id"].as_str().unwrap().to_owned();
    let ws = c.dir.join("ws");
    let worktree = ws.join(&task_id);
    let control = ws.join(".coordinator-control").join(&task_id);
    assert!(worktree.is_dir() && control.is_dir());
    let transcript = control.join("run9-implement-1-grok-implementer.transcript.jsonl");
    std::fs::write(&transcript, "{}\n").unwrap();
    let disk = |c: &Coord| -> u64 {
        let out = c.operate(&["tasks", "--json"]);
        ok(&out);
        let doc: Value = serde_json::from_str(&out.stdout).unwrap();
        doc["tasks"][0]["disk_bytes"].as_u64().unwrap()
    };
    let before = disk(&c);
    assert!(before > 3, "the worktree takes room: {before}");

    // Within the TTL nothing goes.
    c.env.at(86_000);
    ok(&c.tick(&[]));
    assert!(worktree.is_dir());
    c.env.at(86_400 + 120);
    let tick = c.tick(&[]);
    ok(&tick);
    assert!(
        !worktree.exists(),
        "the worktree is gone after worktree_ttl"
    );
    assert!(
        transcript.exists(),
        "the transcript stays until transcript_ttl"
    );
    assert!(
        tick.stdout
            .contains("removed the worktree and control files of this failed task"),
        "{}",
        tick.stdout
    );
    assert_eq!(disk(&c), 3, "only the transcript is left");
    c.env.at(3 * 86_400 + 120);
    ok(&c.tick(&[]));
    assert!(!control.exists(), "the transcripts go after transcript_ttl");
}
