//! Coordinator II end to end, steps 9 and 10: the trusted readiness attestation, the formal
//! approval from the review account, the evidence comment, leaving draft, and the verified
//! human merge — with the exact sequence of GitHub effects, every fail-closed path, and a
//! crash at every effect boundary.

use agent_coord_tests::coord::Coord;
use agent_coord_tests::coord::HUMAN;
use agent_coord_tests::coord::REPO;
use agent_coord_tests::coord::REVIEWER;
use agent_coord_tests::coord::WORKER;
use agent_coord_tests::coord::WORKER_TOKEN;

/// A fixture whose CI is green on every head, with one assigned issue.
fn green() -> (Coord, u64) {
    let c = Coord::new(30);
    c.gh.ci_plan(REPO, &[], "success");
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    (c, issue)
}

fn ok(out: &agent_coord_tests::env::CommandOutput) {
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
}

#[test]
fn an_assigned_issue_goes_all_the_way_to_done_after_a_human_merge() {
    let (c, issue) = green();
    ok(&c.tick(&[]));
    let task = c.task(issue);
    assert_eq!(task["phase"], "await_merge", "{task:#}");
    assert_eq!(task["state"], "active");
    let head = task["head"].as_str().unwrap().to_owned();
    let pr = c.pr(issue);
    // The exact GitHub effects, in order, each by the right account; never a merge.
    let issue_comments = format!("POST /repos/{REPO}/issues/{issue}/comments by {WORKER}");
    assert_eq!(
        c.mutations(),
        vec![
            issue_comments.clone(),
            format!("POST /repos/{REPO}/pulls by {WORKER}"),
            format!("POST /repos/{REPO}/pulls/{pr}/reviews by {REVIEWER}"),
            format!("POST /repos/{REPO}/issues/{pr}/comments by {WORKER}"),
            format!("POST /graphql by {WORKER}"),
        ]
    );
    // The formal approval: APPROVED by the review account on the full head SHA.
    let reviews = c.gh.reviews(REPO, pr);
    assert_eq!(reviews.len(), 1, "{reviews:#?}");
    assert_eq!(reviews[0]["state"], "APPROVED");
    assert_eq!(reviews[0]["user"]["login"], REVIEWER);
    assert_eq!(reviews[0]["commit_id"], head.as_str());
    assert_eq!(task["evidence"]["formal_approval"]["head"], head.as_str());
    // One evidence comment on the pull request with the checklist, and Ready.
    let evidence = c.gh.issue_comments(REPO, pr);
    assert_eq!(evidence.len(), 1);
    let body = evidence[0]["body"].as_str().unwrap();
    for item in [
        "checks",
        "grok_quality",
        "codex_logic",
        "ci",
        "readiness",
        "formal_approval",
    ] {
        assert!(body.contains(&format!("- [x] {item}")), "{item}: {body}");
    }
    let pull = c.gh.pulls(REPO).remove(0);
    assert_eq!(pull["draft"], false);
    assert_eq!(c.gh.stats().ready_mutations, 1);
    // The readiness script ran in the worktree with the head and base, and no token.
    let env = c.recorded("readiness.env");
    assert!(
        env.contains(&format!("AGENT_COORDINATOR_HEAD={head}")),
        "{env}"
    );
    assert!(!env.contains(WORKER_TOKEN));

    // Waiting for the merge costs no effect.
    ok(&c.tick(&[]));
    assert_eq!(c.mutations().len(), 5);
    assert_eq!(c.task(issue)["phase"], "await_merge");

    // A human merges: done, with the merge record and one acknowledgement on the issue.
    c.gh.merge_pull(REPO, pr, Some(HUMAN));
    ok(&c.tick(&[]));
    let task = c.task(issue);
    assert_eq!(task["state"], "done", "{task:#}");
    assert_eq!(task["phase"], "finished");
    assert_eq!(task["merge"]["merged_by"], HUMAN);
    assert_eq!(task["merge"]["base"], "main");
    let mutations = c.mutations();
    assert_eq!(mutations.len(), 6, "{mutations:#?}");
    assert_eq!(mutations[5], issue_comments);
    let ack = c.comments(issue).last().unwrap().1.clone();
    assert!(ack.starts_with("Done: pull request #"), "{ack}");
    // Later replies and ticks start nothing.
    c.reply(issue, "Thanks! Could you also do more?");
    ok(&c.tick(&[]));
    assert_eq!(c.mutations().len(), 6);
    assert_eq!(c.recorded("implementer.log").lines().count(), 1);
    assert_eq!(c.gh.merge_calls(), 0);
}

/// Runs to a Ready blocker with readiness `mode`: nothing approved, still a draft.
fn readiness_fails_closed(mode: &str, says: &str) {
    let (c, issue) = green();
    c.queue("readiness", &[mode]);
    ok(&c.tick(&[]));
    let task = c.task(issue);
    assert_eq!(task["state"], "waiting", "{mode}: {task:#}");
    assert_eq!(task["resume_phase"], "ready", "{mode}");
    let blocker = task["blocker"].as_str().unwrap_or_default();
    assert!(blocker.contains(says), "{mode}: {blocker}");
    let pr = c.pr(issue);
    assert!(c.gh.reviews(REPO, pr).is_empty(), "{mode}: approved anyway");
    assert_eq!(c.gh.pulls(REPO)[0]["draft"], true, "{mode}");
    // A reply runs the (now passing) script again and goes on.
    c.reply(issue, "The readiness script is fixed.");
    ok(&c.tick(&[]));
    assert_eq!(c.task(issue)["phase"], "await_merge", "{mode}");
}

#[test]
fn readiness_naming_another_head_fails_closed() {
    readiness_fails_closed("wrong_head", "not the current head");
}

#[test]
fn an_undeclared_grant_for_a_declared_deviation_fails_closed() {
    readiness_fails_closed("undeclared", "without an authorized grant");
}

#[test]
fn a_deviation_granted_by_someone_outside_reply_logins_fails_closed() {
    readiness_fails_closed("unauthorized", "mallory is not in reply_logins");
}

#[test]
fn a_failing_readiness_script_fails_closed() {
    readiness_fails_closed("fail", "CONTRIBUTING check failed");
}

#[test]
fn an_authorized_deviation_is_recorded_and_shown_in_the_evidence_comment() {
    let (c, issue) = green();
    c.queue("readiness", &["granted"]);
    ok(&c.tick(&[]));
    let task = c.task(issue);
    assert_eq!(task["phase"], "await_merge", "{task:#}");
    assert_eq!(
        task["evidence"]["readiness"]["deviation"]["granted_by"],
        HUMAN
    );
    let pr = c.pr(issue);
    let body = c.gh.issue_comments(REPO, pr)[0]["body"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(body.contains(&format!("granted by @{HUMAN}")), "{body}");
}

#[test]
fn an_approval_dismissed_before_leaving_draft_blocks_ready_until_a_reply() {
    use std::os::unix::process::ExitStatusExt;
    let (c, issue) = green();
    let crashed = c
        .coordinate_on(
            &c.env,
            "w1",
            &c.config,
            &[
                ("W1_TOKEN", WORKER_TOKEN),
                ("AGENT_COORD_TEST_KILL_AT", "before-leave-draft"),
            ],
        )
        .arg("--wait")
        .output()
        .unwrap();
    assert_eq!(crashed.status.signal(), Some(9), "the hook did not fire");
    let pr = c.pr(issue);
    let reviews = c.gh.reviews(REPO, pr);
    assert_eq!(reviews.len(), 1);
    let first = reviews[0]["id"].as_u64().unwrap();
    c.gh.dismiss_review(REPO, pr, first, HUMAN);

    ok(&c.tick(&[]));
    let task = c.task(issue);
    assert_eq!(task["state"], "waiting", "{task:#}");
    assert_eq!(task["resume_phase"], "formal_approve");
    assert!(task["evidence"].get("formal_approval").is_none());
    assert_eq!(
        c.gh.pulls(REPO)[0]["draft"],
        true,
        "left draft without an approval"
    );
    assert_eq!(c.gh.stats().ready_mutations, 0);

    // A tick without a reply approves nothing.
    ok(&c.tick(&[]));
    assert_eq!(c.gh.reviews(REPO, pr).len(), 1);

    c.reply(issue, "The dismissal was a mistake; approve again.");
    ok(&c.tick(&[]));
    let task = c.task(issue);
    assert_eq!(task["phase"], "await_merge", "{task:#}");
    let reviews = c.gh.reviews(REPO, pr);
    assert_eq!(reviews.len(), 2, "{reviews:#?}");
    assert_eq!(reviews[0]["state"], "DISMISSED");
    assert_eq!(reviews[1]["state"], "APPROVED");
    assert_ne!(
        reviews[0]["body"], reviews[1]["body"],
        "the new attempt needs a new activity"
    );
    assert_eq!(
        task["evidence"]["formal_approval"]["review_id"],
        reviews[1]["id"]
    );
    assert_eq!(c.gh.stats().ready_mutations, 1);
}

/// Runs to await_merge, then ends the pull request with `end`: a terminal blocker that no
/// reply revives.
fn terminal_end(end: impl Fn(&Coord, u64), says: &str) {
    let (c, issue) = green();
    ok(&c.tick(&[]));
    let pr = c.pr(issue);
    end(&c, pr);
    ok(&c.tick(&[]));
    let task = c.task(issue);
    assert_eq!(task["state"], "failed", "{task:#}");
    assert!(task.get("resume_phase").is_none());
    assert!(task.get("question_activity_id").is_none());
    let last = c.comments(issue).last().unwrap().1.clone();
    assert!(last.contains(says) && last.contains("final"), "{last}");
    let before = c.mutations().len();
    c.reply(issue, "Please try again.");
    ok(&c.tick(&[]));
    ok(&c.tick(&[]));
    assert_eq!(
        c.mutations().len(),
        before,
        "a reply revived a terminal task"
    );
    assert_eq!(c.recorded("implementer.log").lines().count(), 1);
}

#[test]
fn a_bot_merge_is_a_terminal_blocker_and_replies_start_nothing() {
    terminal_end(
        |c, pr| {
            c.gh.merge_pull(REPO, pr, Some("helper-bot"));
        },
        "type Bot",
    );
}

#[test]
fn a_merge_without_an_actor_is_not_a_human_merge() {
    terminal_end(
        |c, pr| {
            c.gh.merge_pull(REPO, pr, None);
        },
        "not a verified human merge",
    );
}

#[test]
fn a_ready_pull_request_closed_unmerged_is_a_terminal_blocker() {
    terminal_end(
        |c, pr| c.gh.close_pull(REPO, pr, HUMAN),
        "closed without a merge",
    );
}

#[test]
fn a_revoked_assignment_stops_the_approval_and_reassignment_resumes_it() {
    let c = Coord::new(30);
    c.gh.ci_plan(REPO, &[], "pending");
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    ok(&c.tick(&[]));
    assert_eq!(c.task(issue)["phase"], "ci");
    c.gh.unassign(REPO, issue, WORKER, HUMAN);
    let head = c.task(issue)["head"].as_str().unwrap().to_owned();
    c.gh.set_ci(REPO, &head, "success");
    let before = c.mutations().len();
    let out = c.tick(&[]);
    ok(&out);
    assert!(
        out.stdout.contains("assignment was revoked"),
        "{}",
        out.stdout
    );
    let task = c.task(issue);
    assert_eq!(task["phase"], "formal_approve", "{task:#}");
    assert_eq!(
        c.mutations().len(),
        before,
        "an effect after the assignment was revoked"
    );
    assert!(c.gh.reviews(REPO, c.pr(issue)).is_empty());
    c.gh.assign(REPO, issue, WORKER, HUMAN);
    ok(&c.tick(&[]));
    assert_eq!(c.task(issue)["phase"], "await_merge");
    // Reassignment did not open a second pull request.
    assert_eq!(c.gh.pulls(REPO).len(), 1);
}

/// Runs one tick that kills itself with SIGKILL at `point`; `true` when the hook fired.
fn crash_at(c: &Coord, point: &str) -> bool {
    use std::os::unix::process::ExitStatusExt;
    c.crash_at(point).status.signal() == Some(9)
}

#[test]
fn a_crash_at_every_effect_boundary_of_gates_ready_and_merge_never_duplicates_an_effect() {
    for point in [
        "intent:gate_review",
        "posted:gate_review",
        "intent:approve",
        "posted:approve",
        "intent:ready_comment",
        "posted:ready_comment",
        "intent:ready",
        "posted:ready",
        "intent:ack",
        "posted:ack",
    ] {
        let (c, issue) = green();
        c.queue("gate-codex-logic", &["reject"]);
        let ack = point.ends_with(":ack");
        if ack {
            ok(&c.tick(&[]));
            c.gh.merge_pull(REPO, c.pr(issue), Some(HUMAN));
        }
        assert!(crash_at(&c, point), "{point}: the hook did not fire");
        ok(&c.tick(&[]));
        if !ack {
            c.gh.merge_pull(REPO, c.pr(issue), Some(HUMAN));
            ok(&c.tick(&[]));
        }
        let task = c.task(issue);
        assert_eq!(task["state"], "done", "{point}: {task:#}");
        let pr = c.pr(issue);
        let reviews = c.gh.reviews(REPO, pr);
        let count = |state: &str| reviews.iter().filter(|r| r["state"] == state).count();
        assert_eq!(count("COMMENTED"), 1, "{point}: {reviews:#?}");
        assert_eq!(count("APPROVED"), 1, "{point}: {reviews:#?}");
        assert_eq!(
            c.gh.issue_comments(REPO, pr).len(),
            1,
            "{point}: evidence comments"
        );
        assert!(
            c.gh.stats().ready_mutations <= 1,
            "{point}: a second Ready mutation"
        );
        let acks = c
            .comments(issue)
            .iter()
            .filter(|(_, b)| b.starts_with("Done: pull request #"))
            .count();
        assert_eq!(acks, 1, "{point}");
        assert_eq!(c.gh.merge_calls(), 0);
    }
}

#[test]
fn a_token_in_ci_logs_is_redacted_before_the_implementer_sees_it() {
    let c = Coord::new(30);
    c.gh.ci_plan(REPO, &[], "pending");
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    ok(&c.tick(&[]));
    let head = c.task(issue)["head"].as_str().unwrap().to_owned();
    c.gh.set_ci_with_log(
        REPO,
        &head,
        "failure",
        &format!("Run tests\nauth with {WORKER_TOKEN} failed\ntest x ... FAILED\n"),
    );
    c.gh.ci_plan(REPO, &[], "success");
    ok(&c.tick(&[]));
    let task = c.task(issue);
    assert_eq!(task["rounds"], 2, "{task:#}");
    let prompt = c.recorded("implementer.prompt");
    assert!(prompt.contains("test x ... FAILED"), "{prompt}");
    assert!(
        !prompt.contains(WORKER_TOKEN),
        "the CI log's token reached the implementer"
    );
    let grep = c
        .env
        .git_output(&["grep", "-c", WORKER_TOKEN, "refs/heads/agent-coord"]);
    assert!(
        grep.stdout.is_empty(),
        "a token is in the coordination state"
    );
}

#[test]
fn a_pull_request_that_is_not_mergeable_is_a_blocker_before_any_approval() {
    let (c, issue) = green();
    c.queue("readiness", &["fail"]);
    ok(&c.tick(&[]));
    let pr = c.pr(issue);
    c.gh.set_mergeable(REPO, pr, Some(false));
    c.reply(issue, "Readiness is fixed.");
    ok(&c.tick(&[]));
    let task = c.task(issue);
    assert_eq!(task["state"], "waiting", "{task:#}");
    assert_eq!(task["resume_phase"], "ready");
    assert!(task["blocker"].as_str().unwrap().contains("not mergeable"));
    assert!(c.gh.reviews(REPO, pr).is_empty());
    c.gh.set_mergeable(REPO, pr, Some(true));
    c.reply(issue, "Conflicts resolved.");
    ok(&c.tick(&[]));
    assert_eq!(c.task(issue)["phase"], "await_merge");
}
