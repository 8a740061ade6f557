//! Coordinator II end to end, steps 7 and 8: the PR gates (Grok, then Codex, each rejecting
//! once, a reviewer timing out) and GitHub CI (failure with logs, pending, authorization
//! waits, unreadable logs, truncated inventories), against the fake GitHub with scripted
//! lanes and real signed commits.

use agent_coord_tests::coord::Coord;
use agent_coord_tests::coord::HUMAN;
use agent_coord_tests::coord::REPO;
use agent_coord_tests::coord::WORKER;
use agent_coord_tests::coord::WORKER_TOKEN;

/// The gate runs as stages: each stage runs its two gates in parallel (either may log
/// first), so a stage is the sorted pair of its lines.
fn stages(runs: &[String]) -> Vec<Vec<String>> {
    assert_eq!(runs.len() % 2, 0, "a stage runs two gates: {runs:?}");
    runs.chunks(2)
        .map(|pair| {
            let mut pair = pair.to_vec();
            pair.sort();
            pair
        })
        .collect()
}

/// Every Codex stage directly follows a Grok stage in which both gates approved.
fn assert_codex_after_grok(stages: &[Vec<String>]) {
    for (i, stage) in stages.iter().enumerate() {
        if stage[0].starts_with("codex-") {
            let before = i.checked_sub(1).map(|p| &stages[p]);
            assert_eq!(
                before.map(|p| p.join(",")),
                Some("grok-logic approve,grok-quality approve".to_owned()),
                "codex ran without both Grok approvals before it: {stages:?}"
            );
        }
    }
}

fn pair(a: &str, b: &str) -> Vec<String> {
    let mut p = vec![a.to_owned(), b.to_owned()];
    p.sort();
    p
}

#[test]
fn each_gate_rejecting_once_sends_findings_to_a_fresh_implementer_and_reruns_everything() {
    let c = Coord::new(30);
    c.gh.ci_plan(REPO, &[], "success");
    c.queue("gate-grok-quality", &["reject"]);
    c.queue("gate-grok-logic", &["approve", "reject"]);
    c.queue("gate-codex-quality", &["reject"]);
    c.queue("gate-codex-logic", &["approve", "reject"]);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let task = c.task(issue);
    assert_eq!(task["phase"], "await_merge", "{task:#}");
    // Four rejections, four fresh implementers after the first: five rounds.
    assert_eq!(task["rounds"], 5, "{task:#}");
    assert_eq!(c.recorded("check.log").lines().count(), 5);
    let stages = stages(&c.gate_runs());
    assert_codex_after_grok(&stages);
    let grok_ok = pair("grok-quality approve", "grok-logic approve");
    let codex_ok = pair("codex-quality approve", "codex-logic approve");
    assert_eq!(
        stages,
        vec![
            // Head 1: Grok quality rejects (Grok logic approved in parallel).
            pair("grok-quality reject", "grok-logic approve"),
            // Head 2: Grok logic rejects.
            pair("grok-quality approve", "grok-logic reject"),
            // Head 3: Codex quality rejects.
            grok_ok.clone(),
            pair("codex-quality reject", "codex-logic approve"),
            // Head 4: Codex logic rejects.
            grok_ok.clone(),
            pair("codex-quality approve", "codex-logic reject"),
            // Head 5: all four approve.
            grok_ok,
            codex_ok,
        ]
    );
    // Each rejection is a COMMENT review by the worker (never REQUEST_CHANGES) with the
    // findings; the implementer after it got them.
    let pr = c.pr(issue);
    let reviews = c.gh.reviews(REPO, pr);
    let comments: Vec<_> = reviews
        .iter()
        .filter(|r| r["state"] == "COMMENTED")
        .collect();
    assert_eq!(comments.len(), 4, "{reviews:#?}");
    for r in &comments {
        assert_eq!(r["user"]["login"], WORKER);
        assert!(r["body"].as_str().unwrap().contains("off-by-one"), "{r:#}");
    }
    assert!(reviews.iter().all(|r| r["state"] != "CHANGES_REQUESTED"));
    assert_eq!(c.gh.stats().review_posts.get("REQUEST_CHANGES"), None);
    let prompts = c.recorded("implementer.prompts");
    for gate in ["grok-quality", "grok-logic", "codex-quality", "codex-logic"] {
        assert!(
            prompts.contains(&format!("The {gate} gate found an off-by-one")),
            "the implementer never got the {gate} findings"
        );
    }
    // The formal approval is on the last head only.
    let approvals: Vec<_> = reviews
        .iter()
        .filter(|r| r["state"] == "APPROVED")
        .collect();
    assert_eq!(approvals.len(), 1);
    assert_eq!(approvals[0]["commit_id"], task["head"]);
    assert_eq!(c.gh.merge_calls(), 0);
}

#[test]
fn a_reviewer_timing_out_is_a_blocker_and_a_reply_reruns_only_that_gate() {
    let c = Coord::new(3);
    c.gh.ci_plan(REPO, &[], "success");
    c.queue("gate-grok-logic", &["hang"]);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let task = c.task(issue);
    assert_eq!(task["state"], "waiting", "{task:#}");
    assert_eq!(task["resume_phase"], "pr_gates_grok");
    assert!(task["question_activity_id"].is_string());
    assert_eq!(task["evidence"]["grok_quality"], task["head"]);
    assert!(task["evidence"].get("grok_logic").is_none());
    // Not a rejection: no review, no implementer round, and a visible blocker on the issue.
    let pr = c.pr(issue);
    assert!(c.gh.reviews(REPO, pr).is_empty());
    assert_eq!(task["rounds"], 1);
    let blocker = c.comments(issue).last().cloned().unwrap_or_default().1;
    assert!(
        blocker.contains("grok:pr-reviewer-logic") && blocker.contains("pr_gates_grok"),
        "{blocker}"
    );
    assert!(!c.gate_runs().iter().any(|l| l.starts_with("codex-")));

    c.reply(issue, "Try the logic review again.");
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let task = c.task(issue);
    assert_eq!(task["phase"], "await_merge", "{task:#}");
    assert_eq!(task["rounds"], 1);
    let runs = c.gate_runs();
    // Only the missing gate ran again, then Codex.
    assert_eq!(runs[2], "grok-logic approve", "{runs:?}");
    assert_eq!(runs.len(), 5, "{runs:?}");
}

#[test]
fn failing_ci_sends_the_failed_jobs_logs_to_a_fresh_implementer_and_reruns_everything() {
    let c = Coord::new(30);
    c.gh.ci_plan(REPO, &["failure"], "success");
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let task = c.task(issue);
    assert_eq!(task["phase"], "await_merge", "{task:#}");
    assert_eq!(task["rounds"], 2);
    let prompt = c.recorded("implementer.prompt");
    assert!(
        prompt.contains("test feature::header ... FAILED")
            && prompt.contains("GitHub CI failed on"),
        "{prompt}"
    );
    // The new head ran the checks and all four gates again.
    assert_eq!(c.recorded("check.log").lines().count(), 2);
    assert_eq!(c.gate_runs().len(), 8);
    assert_eq!(task["evidence"]["ci_green"], task["head"]);
}

#[test]
fn pending_ci_starts_no_model_and_is_observed_again_next_tick() {
    let c = Coord::new(30);
    c.gh.ci_plan(REPO, &[], "pending");
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    for _ in 0..2 {
        let out = c.tick(&[]);
        assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
        assert!(out.stdout.contains("CI pending"), "{}", out.stdout);
    }
    let task = c.task(issue);
    assert_eq!(task["phase"], "ci");
    assert_eq!(task["state"], "active");
    assert_eq!(c.recorded("implementer.log").lines().count(), 1);
    assert_eq!(c.gate_runs().len(), 4);
    let head = task["head"].as_str().unwrap().to_owned();
    c.gh.set_ci(REPO, &head, "success");
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(c.task(issue)["phase"], "await_merge");
}

/// Runs to a CI blocker with the first head's CI `outcome`, checks it, then makes CI green
/// and replies: the task resumes at CI without another implementer.
fn ci_blocker_then_reply(outcome: &str, says: &str) {
    let c = Coord::new(30);
    c.gh.ci_plan(REPO, &[outcome], "success");
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let task = c.task(issue);
    assert_eq!(task["state"], "waiting", "{outcome}: {task:#}");
    assert_eq!(task["resume_phase"], "ci", "{outcome}");
    let blocker = task["blocker"].as_str().unwrap_or_default();
    assert!(blocker.contains(says), "{outcome}: {blocker}");
    assert!(
        c.comments(issue).last().unwrap().1.contains(says),
        "{outcome}: the blocker is not on the issue"
    );
    assert_eq!(task["rounds"], 1, "{outcome}: not the implementer's to fix");
    let head = task["head"].as_str().unwrap().to_owned();
    c.gh.set_ci(REPO, &head, "success");
    // Green alone resumes nothing: the task waits for an authorized reply.
    c.tick(&[]);
    assert_eq!(c.task(issue)["state"], "waiting", "{outcome}");
    c.reply(issue, "Fixed on GitHub's side; go on.");
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let task = c.task(issue);
    assert_eq!(task["phase"], "await_merge", "{outcome}: {task:#}");
    assert_eq!(task["rounds"], 1, "{outcome}");
    assert_eq!(
        c.recorded("implementer.log").lines().count(),
        1,
        "{outcome}"
    );
}

#[test]
fn action_required_is_an_authorization_blocker_a_reply_resumes_at_ci() {
    ci_blocker_then_reply("action_required", "authorize workflow runs");
}

#[test]
fn a_truncated_run_inventory_is_a_protocol_blocker_never_green() {
    ci_blocker_then_reply("truncated", "truncated");
}

#[test]
fn unreadable_ci_logs_are_a_blocker_not_an_implementer_round() {
    ci_blocker_then_reply("failure_logs_gone", "logs cannot be read");
}

#[test]
fn empty_ci_logs_are_a_blocker_not_an_implementer_round() {
    ci_blocker_then_reply("failure_logs_empty", "is empty");
}

#[test]
fn cancelled_ci_is_never_green() {
    ci_blocker_then_reply("cancelled", "without success");
}

#[test]
fn a_token_in_gate_output_and_check_output_is_redacted_everywhere() {
    let c = Coord::new(30);
    c.gh.ci_plan(REPO, &[], "success");
    c.queue("check", &["leak", "pass"]);
    c.queue("gate-grok-quality", &["leak"]);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(c.task(issue)["phase"], "await_merge");
    let pr = c.pr(issue);
    let review =
        c.gh.reviews(REPO, pr)
            .into_iter()
            .find(|r| r["state"] == "COMMENTED")
            .expect("the leaking rejection was posted");
    let body = review["body"].as_str().unwrap();
    assert!(
        !body.contains(WORKER_TOKEN) && body.contains("[redacted]"),
        "{body}"
    );
    let prompts = c.recorded("implementer.prompts");
    assert!(
        prompts.contains("test config FAILED"),
        "the check output was not routed"
    );
    assert!(
        !prompts.contains(WORKER_TOKEN),
        "a token reached the implementer"
    );
    let grep = c
        .env
        .git_output(&["grep", "-c", WORKER_TOKEN, "refs/heads/agent-coord"]);
    assert!(
        grep.stdout.is_empty(),
        "a token is in the coordination state"
    );
    assert!(!out.stdout.contains(WORKER_TOKEN) && !out.stderr.contains(WORKER_TOKEN));
}
