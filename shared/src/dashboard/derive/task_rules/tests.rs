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
        queue: None,
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
    let (p, w) = item_section(&tasks, &bad, None, "acme/app", "7");
    assert_eq!(p.map(|p| p.task_id), Some("acme-app-7".into()));
    assert_eq!(w, None);
    assert_eq!(
        item_section(&tasks, &bad, None, "acme/app", "8"),
        (None, None)
    );
    let (p, w) = item_section(&tasks, &bad, None, "acme/app", "9");
    assert_eq!(p, None);
    assert_eq!(
        w.as_deref(),
        Some("The coordinator task record coordinator/tasks/acme/app/9.json could not be read: not a coordinator task record: missing field `worker`")
    );
}

fn lane_run(slot: &str, verdict: &str, cost: Option<f64>) -> crate::coordinator::task::LaneRun {
    let mut v = json!({"slot": slot, "phase": "implement", "round": 2, "vendor": "claude",
        "model": "claude-sonnet-4-5", "session_id": "s-1",
        "started_at": "2026-01-01T10:00:00Z", "ended_at": "2026-01-01T10:02:05Z",
        "verdict": verdict, "exit_code": 0, "input_tokens": 100, "output_tokens": 20,
        "cache_read_tokens": 300, "cache_write_tokens": 4,
        "cost_source": if cost.is_some() { "vendor" } else { "unknown" },
        "transcript": {"machine": "box-1", "path": ".coordinator-control/t/implement-2.transcript.jsonl",
                       "bytes": 2048, "sha256": "sha256:00"}});
    if let Some(c) = cost {
        v["cost_usd"] = json!(c);
    }
    serde_json::from_value(v).expect("a lane run")
}

#[test]
fn the_panel_lists_lane_runs_with_duration_tokens_cost_and_the_spend_total() {
    let mut t = task("active", "inner_review");
    t.record_lane_run(lane_run("claude:implementer", "done", Some(0.25)));
    t.record_lane_run(lane_run("codex:reviewer", "rejected", None));
    t.earlier_runs.runs = 3;
    t.earlier_runs.cost_usd = 1.0;
    t.earlier_runs.input_tokens = 7;
    let p = panel(&t);
    assert_eq!(p.lane_runs.len(), 2);
    let first = &p.lane_runs[0];
    assert_eq!(first.n, 4, "numbered after the three folded-out runs");
    assert_eq!(first.slot, "claude:implementer");
    assert_eq!(first.vendor.as_deref(), Some("claude"));
    assert_eq!(first.model.as_deref(), Some("claude-sonnet-4-5"));
    assert_eq!(first.verdict, crate::coordinator::task::LaneVerdict::Done);
    assert_eq!(first.duration_secs, Some(125));
    assert_eq!(first.tokens, 424);
    assert_eq!(first.cache_tokens, 304);
    assert_eq!(first.cost_usd, Some(0.25));
    assert_eq!(first.transcript_machine.as_deref(), Some("box-1"));
    assert_eq!(first.transcript_bytes, Some(2048));
    assert_eq!(p.lane_runs[1].n, 5);
    assert_eq!(p.lane_runs[1].cost_usd, None);
    assert_eq!(p.earlier_runs, 3);
    assert_eq!(p.spend.runs, 5);
    assert!((p.spend.cost_usd - 1.25).abs() < 1e-12);
    assert_eq!(p.spend.unpriced_runs, 1);
    assert_eq!(p.spend.tokens, 2 * 424 + 7);
    assert_eq!(p.paused, None);
    // Runs are found by that number; folded-out and unknown numbers are gone.
    assert_eq!(
        lane_run_numbered(&t, 5).map(|r| r.slot.as_str()),
        Some("codex:reviewer")
    );
    for gone in [0, 1, 3, 6] {
        assert!(lane_run_numbered(&t, gone).is_none(), "{gone}");
    }
    // The JSON the page reads is camelCase.
    let v = serde_json::to_value(&p).expect("json");
    assert_eq!(v["laneRuns"][0]["durationSecs"], json!(125));
    assert_eq!(v["spend"]["unpricedRuns"], json!(1));
}

#[test]
fn a_paused_task_says_which_vendor_and_when_its_limit_resets() {
    let mut t = task("active", "pr_gates_codex");
    t.paused = Some(crate::coordinator::task::LanePause {
        vendor: "codex".into(),
        until: "2026-01-01T15:00:00Z".into(),
    });
    let p = panel(&t);
    let paused = p.paused.expect("paused");
    assert_eq!(paused.vendor, "codex");
    assert_eq!(
        paused.until,
        time::format(time::parse("2026-01-01T15:00:00Z").unwrap())
    );
    assert_eq!(
        p.attention, None,
        "a pause is not a blocker and needs nobody"
    );
    // A time that does not read is shown as written.
    t.paused = Some(crate::coordinator::task::LanePause {
        vendor: "grok:implementer".into(),
        until: "soon".into(),
    });
    assert_eq!(panel(&t).paused.map(|p| p.until).as_deref(), Some("soon"));
}

#[test]
fn a_run_with_unreadable_or_backwards_times_has_no_duration() {
    let mut t = task("active", "implement");
    let mut run = lane_run("grok:implementer", "incomplete", None);
    run.ended_at = "garbage".into();
    t.record_lane_run(run.clone());
    run.ended_at = "2026-01-01T09:00:00Z".into();
    t.record_lane_run(run);
    let p = panel(&t);
    assert_eq!(p.lane_runs[0].duration_secs, None);
    assert_eq!(p.lane_runs[1].duration_secs, None);
    assert_eq!(p.lane_runs[0].ended_at, "garbage");
}

#[test]
fn what_a_task_waits_for_in_words() {
    use crate::coordinator::task::LaneLaunch;
    use crate::coordinator::task::LanePause;
    use crate::coordinator::task::PendingLane;
    let table: [(&str, &str, Option<&str>); 9] = [
        (
            "waiting",
            "implement",
            Some("a reply from an authorized human on the issue"),
        ),
        (
            "uncertain",
            "implement",
            Some("an operator: a lane's outcome is unknown, so no model starts"),
        ),
        ("failed", "implement", None),
        ("done", "finished", None),
        (
            "active",
            "implement",
            Some("a lane slot to start its next lanes"),
        ),
        (
            "active",
            "pr_gates_codex",
            Some("a lane slot to start its next lanes"),
        ),
        ("active", "ci", Some("CI on the exact head")),
        (
            "active",
            "await_merge",
            Some("a human to merge the pull request"),
        ),
        ("active", "publish", None),
    ];
    for (state, phase, want) in table {
        assert_eq!(
            waits_for(&task(state, phase)).as_deref(),
            want,
            "{state} {phase}"
        );
    }
    let mut running = task("active", "pr_gates_grok");
    running.pending = Some(PendingLane {
        slot: "grok:pr-reviewer-quality+grok:pr-reviewer-logic".into(),
        phase: Phase::PrGatesGrok,
        started_at: "2026-05-01T10:00:00Z".into(),
        launch: Some(LaneLaunch {
            machine: "box-2".into(),
            nonce: "n".into(),
            stems: Vec::new(),
            leases: Vec::new(),
            vendors: Vec::new(),
        }),
    });
    assert_eq!(
        waits_for(&running).as_deref(),
        Some("its running lanes grok:pr-reviewer-quality+grok:pr-reviewer-logic on box-2, started 2026-05-01T10:00:00Z")
    );
    running.paused = Some(LanePause {
        vendor: "claude".into(),
        until: "2026-05-01T15:00:00Z".into(),
    });
    assert_eq!(
        waits_for(&running).as_deref(),
        Some("the claude usage limit to reset (2026-05-01T15:00:00Z)")
    );
    // The panel carries it, with where the task runs and ran.
    running.machine = Some("box-1".into());
    running.previous_machines = vec!["box-0".into()];
    let p = panel(&running);
    assert_eq!(p.machine.as_deref(), Some("box-1"));
    assert_eq!(p.previous_machines, ["box-0"]);
    assert!(p.waits_for.is_some_and(|w| w.contains("claude")));
}

#[test]
fn the_panel_offers_the_operator_commands_that_apply_now() {
    use crate::coordinator::controls::Controls;
    use crate::coordinator::controls::Hold;
    use crate::coordinator::controls::HoldKind;
    let labels = |t: &Task, c: Option<&Controls>| -> Vec<String> {
        operator_commands(t, c)
            .into_iter()
            .map(|c| c.label)
            .collect()
    };
    let active = task("active", "implement");
    assert_eq!(
        labels(&active, None),
        [
            "Explain",
            "Cancel",
            &format!("Pause worker {}", active.worker)
        ]
    );
    let commands = operator_commands(&active, None);
    assert_eq!(
        commands[0].command,
        "agent-coord coordinate explain acme/app#7"
    );
    assert_eq!(
        commands[1].command,
        format!(
            "agent-coord coordinate cancel {} --reason \"…\"",
            active.task_id
        )
    );
    let mut held = Controls::default();
    held.set(Hold {
        kind: HoldKind::Pause,
        scope: format!("worker:{}", active.worker).parse().expect("scope"),
        by: "alice".into(),
        at: "t".into(),
        reason: None,
    });
    assert_eq!(
        labels(&active, Some(&held)).last().cloned(),
        Some(format!("Resume worker {}", active.worker))
    );
    let p = panel_with(&active, Some(&held));
    assert!(p
        .waits_for
        .is_some_and(|w| w.starts_with("an operator to resume: paused")));

    // A failed task: retry from each phase it still holds; nothing to cancel any more.
    let mut failed = task("failed", "finished");
    failed.occurrences.insert("accept".into(), 1);
    failed.base_sha = Some(H1.into());
    assert_eq!(labels(&failed, None), ["Explain", "Retry from implement"]);
    assert_eq!(labels(&task("done", "finished"), None), ["Explain"]);
}
