//! The coordinator rules of the dashboard, table by table.

use std::sync::Arc;

use serde_json::json;

use super::*;
use crate::coordinator::task::FormalApproval;
use crate::coordinator::task::MergeRecord;
use crate::dashboard::fixtures;
use crate::dashboard::inputs::tasks::is_task_path;
use crate::dashboard::inputs::tasks::parse_task;

const H1: &str = "1111111aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const H2: &str = "2222222bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
const QUESTION: &str = "https://github.com/acme/app/issues/7#issuecomment-99";
const PR: &str = "https://github.com/acme/app/pull/12";

fn task(state: &str, phase: &str) -> Task {
    let v = fixtures::task("acme/app", 7, state, phase, 5);
    serde_json::from_value(v).expect("the fixture is a task")
}

#[test]
fn which_tasks_need_a_person() {
    use AttentionKind::*;
    let table: [(&str, &str, Option<AttentionKind>); 10] = [
        ("waiting", "implement", Some(TaskWaitingReply)),
        ("waiting", "ci", Some(TaskWaitingReply)),
        ("uncertain", "pr_gates_codex", Some(TaskNeedsOperator)),
        ("active", "await_merge", Some(TaskAwaitingMerge)),
        ("active", "implement", None),
        ("active", "leave_draft", None),
        ("active", "ready", None),
        // A failed task shows on its item page only.
        ("failed", "finished", None),
        ("failed", "await_merge", None),
        ("done", "finished", None),
    ];
    for (state, phase, want) in table {
        assert_eq!(attention_kind(&task(state, phase)), want, "{state} {phase}");
    }
}

#[test]
fn a_waiting_task_names_its_question_link_and_resume_phase() {
    let mut t = task("waiting", "pr_gates_grok");
    t.resume_phase = Some(Phase::Implement);
    t.blocker = Some("  Which API version should the client use?\n".into());
    t.question_url = Some(QUESTION.into());
    t.pr_url = Some(PR.into());
    let a = attention(&t).expect("waiting needs a reply");
    assert_eq!(a.kind, AttentionKind::TaskWaitingReply);
    assert_eq!(a.label, "Waiting on a human reply");
    assert_eq!(a.priority, 3);
    assert_eq!(a.kind.severity().as_str(), "warning");
    assert_eq!(
        a.detail.as_deref(),
        Some("Which API version should the client use?")
    );
    assert_eq!(a.link.as_deref(), Some(QUESTION));
    assert_eq!(a.resume_phase, Some(Phase::Implement));
    assert_eq!(a.row_id, "target:acme/app#7");
    assert_eq!(a.subject, "acme/app#7");
    assert_eq!(a.last_activity, Some(fixtures::ago(5)));
}

#[test]
fn a_ready_task_links_its_pull_request_for_the_merge() {
    let mut t = task("active", "await_merge");
    t.pr_url = Some(PR.into());
    t.question_url = Some(QUESTION.into());
    t.resume_phase = Some(Phase::Ci);
    let a = attention(&t).expect("a Ready pull request waits for a merge");
    assert_eq!(a.label, "Ready, waiting for a human merge");
    assert_eq!(a.priority, 7);
    assert_eq!(a.kind.severity().as_str(), "info");
    assert_eq!(a.link.as_deref(), Some(PR));
    assert_eq!(a.kind.link_text(), "Open the pull request");
    assert_eq!((a.detail, a.resume_phase), (None, None));
}

#[test]
fn an_uncertain_task_needs_an_operator_with_its_blocker() {
    let mut t = task("uncertain", "implement");
    t.blocker = Some("the implementer lane's outcome is unknown".into());
    t.resume_phase = Some(Phase::Implement);
    let a = attention(&t).expect("uncertain needs an operator");
    assert_eq!(a.label, "Needs an operator");
    assert_eq!(a.priority, 3);
    assert_eq!(
        a.detail.as_deref(),
        Some("the implementer lane's outcome is unknown")
    );
    // Nothing was published to answer on, and no reply resumes an uncertain task.
    assert_eq!((a.link, a.resume_phase), (None, None));
}

#[test]
fn only_http_links_and_non_blank_text_reach_the_page() {
    let mut t = task("waiting", "implement");
    t.question_url = Some("javascript:alert(1)".into());
    t.blocker = Some("   ".into());
    let a = attention(&t).expect("waiting");
    assert_eq!((a.link, a.detail), (None, None));
    t.state = TaskState::Active;
    t.phase = Phase::AwaitMerge;
    t.pr_url = Some("ftp://example.com/pr".into());
    assert_eq!(attention(&t).expect("await merge").link, None);
    assert_eq!(panel(&t).pr_url, None);
}

#[test]
fn every_checklist_item_has_a_label_in_workflow_order() {
    let rows = checklist(&Evidence::default(), Some(H1));
    let labels: Vec<&str> = rows.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "Checks on head",
            "Grok quality",
            "Grok logic",
            "Codex quality",
            "Codex logic",
            "GitHub CI",
            "Readiness",
            "Formal approval",
            "Ready evidence comment",
            "Left draft"
        ]
    );
    assert_eq!(checklist_label("something_new"), "something_new");
}

/// Evidence on every key: `on_head` on `head`, everything else on another head.
fn evidence_on(head: &str, other: &str, on_head: &[&str]) -> Evidence {
    let pick = |key: &str| {
        if on_head.contains(&key) {
            head.to_owned()
        } else {
            other.to_owned()
        }
    };
    let mut e: Evidence = serde_json::from_value(json!({
        "checks_passed": pick("checks"), "grok_quality": pick("grok_quality"),
        "grok_logic": pick("grok_logic"), "codex_quality": pick("codex_quality"),
        "codex_logic": pick("codex_logic"), "ci_green": pick("ci"),
        "readiness": {"head": pick("readiness"), "base": "b", "contributing_ok": true,
                      "deviation": {"declared": false}},
        "ready_comment": pick("ready_comment"), "left_draft": pick("left_draft")
    }))
    .expect("evidence");
    e.formal_approval = Some(FormalApproval {
        head: pick("formal_approval"),
        review_id: 3,
        url: PR.into(),
    });
    e
}

#[test]
fn a_pass_on_another_head_is_a_cross_that_names_that_head() {
    let on = ["checks", "grok_quality", "ci", "formal_approval"];
    let e = evidence_on(H1, H2, &on);
    for row in checklist(&e, Some(H1)) {
        let expected = on.contains(&row.key.as_str());
        assert_eq!(row.passed, expected, "{}", row.key);
        let other = (!expected).then(|| "2222222".to_owned());
        assert_eq!(row.other_head, other, "{}", row.key);
    }
    // The same evidence read for the other head is the mirror image.
    let mirrored = checklist(&e, Some(H2));
    assert!(mirrored
        .iter()
        .all(|r| r.passed != on.contains(&r.key.as_str())));
    // Nothing recorded at all: a cross with no other head.
    let empty = checklist(&Evidence::default(), Some(H1));
    assert!(empty.iter().all(|r| !r.passed && r.other_head.is_none()));
}

#[test]
fn without_a_head_nothing_has_passed() {
    let e = evidence_on(H1, H1, &[]);
    let rows = checklist(&e, None);
    assert_eq!(rows.len(), 10);
    assert!(rows
        .iter()
        .all(|r| !r.passed && r.other_head.as_deref() == Some("1111111")));
}

#[test]
fn the_panel_reads_at_a_glance() {
    let mut t = task("waiting", "ci");
    t.resume_phase = Some(Phase::Ci);
    t.blocker = Some("CI failed on a flaky job; rerun?".into());
    t.question_url = Some(QUESTION.into());
    t.pr = Some(12);
    t.pr_url = Some(PR.into());
    t.head = Some(H1.into());
    t.rounds = 3;
    t.evidence = evidence_on(H1, H2, &["checks", "grok_quality", "grok_logic"]);
    let p = panel(&t);
    assert_eq!(
        (p.state, p.phase, p.resume_phase),
        (TaskState::Waiting, Phase::Ci, Some(Phase::Ci))
    );
    assert_eq!(p.attention, Some(AttentionKind::TaskWaitingReply));
    assert_eq!(p.worker, "w-coord");
    assert_eq!(p.short_head.as_deref(), Some("1111111"));
    assert_eq!(p.question_url.as_deref(), Some(QUESTION));
    assert_eq!((p.pr, p.rounds), (Some(12), 3));
    let passed: Vec<&str> = p
        .checklist
        .iter()
        .filter(|r| r.passed)
        .map(|r| r.key.as_str())
        .collect();
    assert_eq!(passed, ["checks", "grok_quality", "grok_logic"]);
    assert_eq!(p.merge, None);

    let mut done = task("done", "finished");
    done.merge = Some(MergeRecord {
        sha: H2.into(),
        merged_at: "2026-11-29T11:00:00+00:00".into(),
        merged_by: "octo".into(),
        base: "main".into(),
    });
    let p = panel(&done);
    let merge = p.merge.expect("merged");
    assert_eq!(
        (merge.short_sha.as_str(), merge.merged_by.as_str()),
        ("2222222", "octo")
    );
    assert_eq!(merge.merged_at, "2026-11-29T11:00:00Z");
    assert_eq!((p.attention, p.head), (None, None));
}

#[test]
fn task_paths_are_exactly_owner_repo_issue() {
    for (path, want) in [
        ("coordinator/tasks/acme/app/7.json", true),
        ("coordinator/tasks/acme/app/7", false),
        ("coordinator/tasks/acme/7.json", false),
        ("coordinator/tasks/acme/app/x/7.json", false),
        ("coordinator/tasks/acme//7.json", false),
        ("coordinator/activities/t/a.json", false),
        ("coordinator/tasksx/acme/app/7.json", false),
        ("claims/acme/app/7.json", false),
    ] {
        assert_eq!(is_task_path(path), want, "{path}");
    }
}

#[test]
fn unknown_fields_are_fine_and_a_missing_field_is_an_error() {
    let mut v = fixtures::task("acme/app", 7, "active", "ci", 1);
    v["future_field"] = json!({"anything": [1, 2]});
    let bytes = serde_json::to_vec(&v).expect("json");
    let t = parse_task("coordinator/tasks/acme/app/7.json", &bytes).expect("a task");
    assert_eq!((t.task.issue, t.task.phase), (7, Phase::Ci));
    v.as_object_mut().expect("object").remove("worker");
    let err = parse_task("p", &serde_json::to_vec(&v).expect("json")).expect_err("no worker");
    assert!(err.source.is_data(), "{err}");
    assert!(err.to_string().contains("missing field `worker`"), "{err}");
    v["worker"] = json!("w");
    v["phase"] = json!("teleport");
    assert!(parse_task("p", &serde_json::to_vec(&v).expect("json")).is_err());
    assert!(parse_task("p", b"[1, 2]").is_err());
}

#[test]
fn the_item_section_is_the_matching_task_or_a_warning() {
    let t = |repo: &str, issue: u64| {
        let v = fixtures::task(repo, issue, "active", "checks", 1);
        Arc::new(TaskIn {
            path: format!("coordinator/tasks/{repo}/{issue}.json"),
            task: serde_json::from_value(v).expect("task"),
        })
    };
    let tasks = [t("acme/app", 7), t("acme/api", 8), t("acme/app", 70)];
    let bad = vec![(
        "coordinator/tasks/acme/app/9.json".to_owned(),
        "not a coordinator task record: missing field `worker`".to_owned(),
    )];
    let (p, w) = item_section(&tasks, &bad, "acme/app", "7");
    assert_eq!(p.map(|p| p.task_id), Some("acme-app-7".into()));
    assert_eq!(w, None);
    assert_eq!(item_section(&tasks, &bad, "acme/app", "8"), (None, None));
    let (p, w) = item_section(&tasks, &bad, "acme/app", "9");
    assert_eq!(p, None);
    assert_eq!(
        w.as_deref(),
        Some("The coordinator task record coordinator/tasks/acme/app/9.json could not be read: not a coordinator task record: missing field `worker`")
    );
}
