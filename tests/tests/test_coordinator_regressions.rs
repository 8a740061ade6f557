//! Coordinator defects found when it was tried as a new user would (issue 19), each pinned by
//! the test that failed before its fix: signing paths in the replicated checkpoint, a lost
//! answer to the Ready mutation followed by a human merge, a foreign push to the task's pull
//! request branch, and a missing configuration file named explicitly.

use agent_coord_tests::coord::Coord;
use agent_coord_tests::coord::HUMAN;
use agent_coord_tests::coord::REPO;
use agent_coord_tests::coord::WORKER;
use agent_coord_tests::env::CommandOutput;
use agent_coord_tests::fake_github::Fault;
use agent_coord_tests::fake_github::FaultMode;

fn ok(out: &CommandOutput) {
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
}

/// A fixture whose CI is `ci` on every head, with one assigned issue.
fn fixture(ci: &str) -> (Coord, u64) {
    let c = Coord::new(30);
    c.gh.ci_plan(REPO, &[], ci);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    (c, issue)
}

/// The files on the state branch that contain `needle`.
fn state_files_with(c: &Coord, needle: &str) -> String {
    let out = c
        .env
        .git_output(&["grep", "-l", "-F", "-e", needle, "refs/heads/agent-coord"]);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn regression_signing_paths_are_not_in_the_replicated_checkpoint() {
    let (c, issue) = fixture("success");
    ok(&c.tick(&[]));
    assert_eq!(c.task(issue)["phase"], "await_merge");
    for name in ["signing_key", "allowed_signers"] {
        let path = c.dir.join(name).to_string_lossy().into_owned();
        let found = state_files_with(&c, &path);
        assert!(found.is_empty(), "{name}'s path is replicated in:\n{found}");
    }
    let git = &c.task(issue)["pinned"]["git"];
    assert!(
        git["signing_key_digest"]
            .as_str()
            .is_some_and(|d| d.starts_with("sha256:")),
        "{git:#}"
    );
    // The digest still detects a changed signing identity.
    let moved = c.dir.join("signing_key_2");
    std::fs::copy(c.dir.join("signing_key"), &moved).unwrap();
    let mut config = c.config_value(30);
    config["sessions"]["w1"]["git"]["signing_key"] = moved.to_string_lossy().into_owned().into();
    c.write_config(&config);
    ok(&c.tick(&[]));
    let task = c.task(issue);
    assert_eq!(task["state"], "waiting", "{task:#}");
    let blocker = task["blocker"].as_str().unwrap_or_default();
    assert!(blocker.contains("git.signing_key"), "{blocker}");
    let moved = moved.to_string_lossy().into_owned();
    assert!(state_files_with(&c, &moved).is_empty());
    assert!(!c.comments(issue).iter().any(|(_, b)| b.contains(&moved)));
}

#[test]
fn regression_a_lost_ready_answer_then_a_human_merge_ends_the_task() {
    let (c, issue) = fixture("success");
    c.gh.fault(Fault {
        method: "POST".into(),
        path: "/graphql".into(),
        mode: FaultMode::DropAfterApply,
    });
    let out = c.tick(&[]);
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(c.task(issue)["phase"], "leave_draft");
    let pr = c.pr(issue);
    assert_eq!(c.gh.pulls(REPO)[0]["draft"], false, "the mutation applied");
    // A human merges before the coordinator learns that the pull request left draft.
    c.gh.merge_pull(REPO, pr, Some(HUMAN));
    ok(&c.tick(&[]));
    let task = c.task(issue);
    assert_eq!(task["state"], "done", "{task:#}");
    assert_eq!(task["merge"]["merged_by"], HUMAN);
    assert_eq!(task["evidence"]["left_draft"], task["head"]);
    assert_eq!(c.gh.stats().ready_mutations, 1);
    let acks = c
        .comments(issue)
        .iter()
        .filter(|(_, b)| b.starts_with("Done: pull request #"))
        .count();
    assert_eq!(acks, 1);
    assert!(!c
        .comments(issue)
        .iter()
        .any(|(_, b)| b.contains("no longer matches")));
    assert_eq!(c.gh.merge_calls(), 0);
}

fn move_branch(c: &Coord, branch: &str, to: &str, from: &str) {
    let out = c.bare_git(&["update-ref", &format!("refs/heads/{branch}"), to, from]);
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn regression_a_foreign_push_to_the_pr_branch_is_a_blocker_not_ci_pending_forever() {
    let (c, issue) = fixture("pending");
    ok(&c.tick(&[]));
    let task = c.task(issue);
    assert_eq!(task["phase"], "ci", "{task:#}");
    let head = task["head"].as_str().unwrap().to_owned();
    let branch = task["branch"].as_str().unwrap().to_owned();
    let pr = c.pr(issue);
    let foreign = c.foreign_push(&branch);

    // The foreign head is a GitHub-visible blocker, not "CI pending on <old head>".
    let out = c.tick(&[]);
    ok(&out);
    assert!(!out.stdout.contains("CI pending"), "{}", out.stdout);
    let task = c.task(issue);
    assert_eq!(task["state"], "waiting", "{task:#}");
    assert_eq!(task["resume_phase"], "ci");
    let blocker = task["blocker"].as_str().unwrap_or_default().to_owned();
    assert!(blocker.contains(&foreign[..12]), "{blocker}");
    assert!(
        c.comments(issue)
            .iter()
            .any(|(by, b)| by == WORKER && b.contains(&foreign[..12])),
        "{:#?}",
        c.comments(issue)
    );

    // A reply while the foreign head stays: blocked again, nothing approved or made Ready.
    c.gh.set_ci(REPO, &foreign, "success");
    c.reply(issue, "Go on.");
    ok(&c.tick(&[]));
    let task = c.task(issue);
    assert_eq!(task["state"], "waiting", "{task:#}");
    assert!(c.gh.reviews(REPO, pr).is_empty());
    assert_eq!(c.gh.pulls(REPO)[0]["draft"], true);

    // The human restores the branch and replies: the task goes on to Ready on its own head.
    move_branch(&c, &branch, &head, &foreign);
    c.gh.set_ci(REPO, &head, "success");
    c.reply(issue, "I removed the stray commit; go on.");
    ok(&c.tick(&[]));
    let task = c.task(issue);
    assert_eq!(task["phase"], "await_merge", "{task:#}");
    assert_eq!(task["head"], head.as_str());
    let reviews = c.gh.reviews(REPO, pr);
    assert!(reviews.iter().all(|r| r["commit_id"] == head.as_str()));
    assert_eq!(c.gh.pulls(REPO)[0]["draft"], false);
}

#[test]
fn regression_a_missing_explicit_config_is_an_error_not_a_silent_no_op() {
    let c = Coord::new(30);
    let missing = c.dir.join("no-such-coordinator.json");
    let missing_text = missing.to_string_lossy().into_owned();
    let out = CommandOutput::new(
        c.env
            .command(["coordinate", "--all", "--config", &missing_text])
            .output()
            .unwrap(),
        c.env.root(),
    );
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("no-such-coordinator.json"),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.contains("nothing to do"), "{}", out.stdout);
    // The environment variable names a file just as explicitly.
    let out = CommandOutput::new(
        c.env
            .command(["coordinate", "--all"])
            .env("AGENT_COORD_COORDINATOR_CONFIG", &missing)
            .output()
            .unwrap(),
        c.env.root(),
    );
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stderr.contains("no-such-coordinator.json"),
        "{}",
        out.stderr
    );
    // The default location may be absent: no worker, exit 0.
    let out = CommandOutput::new(
        c.env.command(["coordinate", "--all"]).output().unwrap(),
        c.env.root(),
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("no coordinator workers configured"),
        "{}",
        out.stdout
    );
}
