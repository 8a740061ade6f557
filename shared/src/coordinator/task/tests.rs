//! Phase transitions, resume eligibility and per-head evidence.
use super::*;
use crate::serde_name::WireName;

pub(crate) fn task() -> Task {
    let mut t = Task::admitted(
        Admitted {
            task_id: "o--r--1".into(),
            worker: "w".into(),
            repo: "o/r".into(),
            issue: 1,
            title: "t".into(),
            body: "b".into(),
            assignment: Assignment {
                event_id: 1,
                actor: "human".into(),
                created_at: "2026-01-01T00:00:00Z".into(),
            },
            pinned: serde_json::Value::Null,
            branch: "agent-coord/o--r--1".into(),
            base: "main".into(),
        },
        "2026-01-01T00:00:00Z",
    );
    t.phase = Phase::Implement;
    t
}

fn done() -> ImplementerOutcome {
    ImplementerOutcome::Done {
        summary_en: "Adds x.".into(),
        summary_de: "Fügt x hinzu.".into(),
        body: String::new(),
    }
}

#[test]
fn phases_round_trip_through_their_wire_names() {
    let names: Vec<&str> = Phase::ALL.iter().map(WireName::wire_name).collect();
    assert_eq!(
        names,
        [
            "accept",
            "checkout",
            "implement",
            "inner_review",
            "publish",
            "checks",
            "pr_gates_grok",
            "pr_gates_codex",
            "ci",
            "ready",
            "formal_approve",
            "leave_draft",
            "await_merge",
            "finished",
        ]
    );
    let states = [
        TaskState::Active,
        TaskState::Waiting,
        TaskState::Failed,
        TaskState::Uncertain,
        TaskState::Done,
    ];
    let names: Vec<&str> = states.iter().map(WireName::wire_name).collect();
    assert_eq!(names, ["active", "waiting", "failed", "uncertain", "done"]);
    for p in Phase::ALL {
        let json = serde_json::to_string(&p).unwrap();
        assert_eq!(json, format!("\"{}\"", p.wire_name()));
        assert_eq!(serde_json::from_str::<Phase>(&json).unwrap(), p);
    }
}

#[test]
fn a_done_implementer_with_a_patch_goes_to_inner_review() {
    let mut t = task();
    assert_eq!(t.apply_implementer(&done(), true), Next::Continue);
    assert_eq!(t.phase, Phase::InnerReview);
    assert_eq!(t.carry.summary_en.as_deref(), Some("Adds x."));
}

#[test]
fn no_patch_and_no_pr_asks_a_human_instead_of_opening_an_empty_pr() {
    let mut t = task();
    let next = t.apply_implementer(&done(), false);
    assert!(matches!(
        next,
        Next::Publish {
            kind: "question",
            ..
        }
    ));
    assert_eq!(t.phase, Phase::Implement);
}

#[test]
fn blocked_fails_and_clears_every_checkpoint() {
    let mut t = task();
    t.wait_for_reply(Phase::Implement, "q", "a1", 7);
    let next = t.apply_implementer(
        &ImplementerOutcome::Blocked {
            reason: "no access".into(),
        },
        true,
    );
    assert_eq!(
        next,
        Next::Fail {
            reason: "no access".into()
        }
    );
    t.fail("no access");
    assert_eq!(t.state, TaskState::Failed);
    assert_eq!(t.resume_phase, None);
    assert!(!t.reply_eligible());
    assert!(!t.resume("human", "please continue"));
    assert_eq!(t.state, TaskState::Failed);
}

#[test]
fn incomplete_output_is_a_blocker_never_a_failure() {
    let mut t = task();
    let next = t.apply_implementer(
        &ImplementerOutcome::Incomplete {
            reason: "missing STATUS".into(),
        },
        true,
    );
    assert!(matches!(
        next,
        Next::Publish {
            kind: "blocker",
            ..
        }
    ));
    assert_ne!(t.state, TaskState::Failed);
}

#[test]
fn a_reply_resumes_exactly_the_pinned_phase() {
    let mut t = task();
    t.phase = Phase::InnerReview;
    t.wait_for_reply(Phase::InnerReview, "review incomplete", "a2", 9);
    assert!(t.reply_eligible());
    assert!(t.resume("human", "go on"));
    assert_eq!(t.phase, Phase::InnerReview);
    assert_eq!(t.state, TaskState::Active);
    // A reply to a non-implement phase is not handed to an implementer.
    assert_eq!(t.carry.reply, None);
    // Once resumed, the same checkpoint cannot be consumed again.
    assert!(!t.resume("human", "again"));
}

#[test]
fn a_reply_to_an_implement_checkpoint_reaches_the_next_implementer() {
    let mut t = task();
    t.wait_for_reply(Phase::Implement, "which file?", "a3", 11);
    assert!(t.resume("human", "use src/lib.rs"));
    assert_eq!(t.carry.reply.as_deref(), Some("use src/lib.rs"));
}

#[test]
fn waiting_without_resume_phase_is_not_eligible() {
    let mut t = task();
    t.wait_for_reply(Phase::Implement, "q", "a", 1);
    t.resume_phase = None;
    assert!(!t.reply_eligible());
    let mut u = task();
    u.wait_for_reply(Phase::Implement, "q", "a", 1);
    u.mark_uncertain("lane outcome unknown");
    assert!(!u.reply_eligible());
    assert!(!u.resume("human", "go"));
}

#[test]
fn rejection_routes_findings_to_a_fresh_implementer() {
    let mut t = task();
    t.phase = Phase::InnerReview;
    let next = t.apply_reviewer(&ReviewerOutcome::Rejected {
        findings: "off by one".into(),
    });
    assert_eq!(next, Next::Continue);
    assert_eq!(t.phase, Phase::Implement);
    assert_eq!(t.carry.findings.as_deref(), Some("off by one"));
    let next = t.apply_reviewer(&ReviewerOutcome::Incomplete {
        reason: "timeout".into(),
    });
    assert!(matches!(
        next,
        Next::Publish {
            kind: "blocker",
            ..
        }
    ));
}

#[test]
fn check_evidence_binds_to_one_head() {
    let mut t = task();
    t.phase = Phase::Checks;
    t.set_head("aaa");
    t.apply_checks("aaa", true, "");
    assert_eq!(t.evidence.checks_passed.as_deref(), Some("aaa"));
    assert_eq!(t.phase, Phase::PrGatesGrok);
    // A new head drops the old pass.
    t.set_head("bbb");
    assert_eq!(t.evidence.checks_passed, None);
    // A result for a stale head is not evidence.
    t.phase = Phase::Checks;
    t.apply_checks("aaa", true, "");
    assert_eq!(t.evidence.checks_passed, None);
    assert_eq!(t.phase, Phase::Checks);
    t.apply_checks("bbb", false, "1 failed");
    assert_eq!(t.phase, Phase::Implement);
    assert_eq!(t.carry.check_output.as_deref(), Some("1 failed"));
}

#[test]
fn occurrences_count_per_kind() {
    let mut t = task();
    assert_eq!(t.occurrence("question"), 0);
    assert_eq!(t.next_occurrence("question"), 1);
    assert_eq!(t.next_occurrence("question"), 2);
    assert_eq!(t.next_occurrence("accept"), 1);
    assert_eq!(t.occurrence("question"), 2);
}

#[test]
fn a_task_survives_a_json_round_trip() {
    let mut t = task();
    t.wait_for_reply(Phase::Implement, "q", "a", 3);
    let json = serde_json::to_value(&t).unwrap();
    assert_eq!(json["state"], "waiting");
    assert_eq!(json["resume_phase"], "implement");
    let back: Task = serde_json::from_value(json).unwrap();
    assert_eq!(back, t);
}

#[test]
fn a_task_path_names_its_repository_and_issue_back() {
    let path = task_path("acme/widget", 42);
    assert_eq!(task_key(&path), Some(("acme/widget".to_owned(), 42)));
    assert_eq!(task_key("coordinator/tasks/acme/widget/x.json"), None);
    assert_eq!(task_key("coordinator/activities/acme/widget/4.json"), None);
    assert_eq!(task_key("coordinator/tasks/acme/widget/4"), None);
}
