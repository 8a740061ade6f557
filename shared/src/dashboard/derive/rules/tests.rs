//! Row-state precedence, QA status, stop control, lane text states and the other per-record
//! rules, one table or case list each.

use super::*;
use crate::time;
use crate::time::age_label;

fn now() -> Instant {
    time::parse("2026-11-29T12:00:00Z").expect("valid")
}

fn mins_ago(m: i64) -> Option<Instant> {
    Some(now() - Duration::minutes(m))
}

fn facts() -> RowFacts<'static> {
    RowFacts {
        heartbeat_status: Some("implementing"),
        liveness: Some(Liveness::Live),
        claim_active: true,
        lane_status: None,
        lane_terminal_current: false,
        current_status: Some("implementing"),
        blocked_on: false,
        progress_at: mins_ago(1),
        now: now(),
    }
}

#[test]
fn live_holder_with_recent_progress_is_running() {
    assert_eq!(row_state(&facts()), RowState::Running);
}

#[test]
fn wedged_after_fifteen_minutes_without_a_transition() {
    let f = RowFacts {
        progress_at: mins_ago(14),
        ..facts()
    };
    assert_eq!(row_state(&f), RowState::Running);
    let f = RowFacts {
        progress_at: mins_ago(15),
        ..facts()
    };
    assert_eq!(row_state(&f), RowState::Wedged, "the boundary is inclusive");
    let f = RowFacts {
        progress_at: None,
        ..facts()
    };
    assert_eq!(row_state(&f), RowState::Wedged);
    // Stale and dead holders are reported as such, never as wedged.
    let f = RowFacts {
        progress_at: mins_ago(60),
        liveness: Some(Liveness::Stale),
        ..facts()
    };
    assert_eq!(row_state(&f), RowState::Stale);
}

#[test]
fn liveness_drives_dead_and_stale() {
    let f = RowFacts {
        liveness: Some(Liveness::Dead),
        ..facts()
    };
    assert_eq!(row_state(&f), RowState::Dead);
    let f = RowFacts {
        liveness: Some(Liveness::Unknown),
        ..facts()
    };
    assert_eq!(row_state(&f), RowState::Unknown);
    let f = RowFacts {
        liveness: None,
        heartbeat_status: None,
        current_status: None,
        ..facts()
    };
    assert_eq!(
        row_state(&f),
        RowState::Dead,
        "an active claim with no heartbeat"
    );
}

#[test]
fn precedence_paused_over_done_over_blocked_over_release_over_liveness() {
    // Paused beats blocked and liveness, but not a real completion.
    let f = RowFacts {
        current_status: Some("token-limit pause"),
        blocked_on: true,
        ..facts()
    };
    assert_eq!(row_state(&f), RowState::Paused);
    let f = RowFacts {
        heartbeat_status: Some("paused"),
        current_status: Some("merged"),
        ..facts()
    };
    assert_eq!(row_state(&f), RowState::Done);
    // Completion beats blocked.
    let f = RowFacts {
        current_status: Some("done"),
        blocked_on: true,
        ..facts()
    };
    assert_eq!(row_state(&f), RowState::Done);
    let f = RowFacts {
        lane_terminal_current: true,
        blocked_on: true,
        ..facts()
    };
    assert_eq!(row_state(&f), RowState::Done);
    // A release never clears a recorded blocker.
    let f = RowFacts {
        current_status: Some("released"),
        blocked_on: true,
        ..facts()
    };
    assert_eq!(row_state(&f), RowState::Blocked);
    let f = RowFacts {
        current_status: Some("released"),
        liveness: Some(Liveness::Dead),
        ..facts()
    };
    assert_eq!(row_state(&f), RowState::Done);
    // Blocked text beats liveness.
    let f = RowFacts {
        heartbeat_status: Some("waiting on review"),
        ..facts()
    };
    assert_eq!(row_state(&f), RowState::Blocked);
    // blocked_user_input is not BLOCKED vocabulary.
    let f = RowFacts {
        heartbeat_status: Some("blocked_user_input"),
        ..facts()
    };
    assert_eq!(row_state(&f), RowState::Running);
}

#[test]
fn lanes_without_holders() {
    let base = RowFacts {
        heartbeat_status: None,
        liveness: None,
        claim_active: false,
        current_status: None,
        progress_at: None,
        ..facts()
    };
    let f = RowFacts {
        lane_status: Some("queued"),
        ..base
    };
    assert_eq!(row_state(&f), RowState::Ready);
    let f = RowFacts {
        lane_status: Some("in_progress"),
        ..base
    };
    assert_eq!(
        row_state(&f),
        RowState::Dead,
        "an active lane with no heartbeat"
    );
    let f = RowFacts {
        lane_status: Some("queued"),
        claim_active: true,
        ..base
    };
    assert_eq!(row_state(&f), RowState::Dead, "claimed but nobody beating");
    let f = RowFacts {
        lane_status: Some("mystery"),
        ..base
    };
    assert_eq!(row_state(&f), RowState::Unknown);
}

fn event(kind: &str, status: Option<&str>, message: Option<&str>) -> EventIn {
    EventIn {
        path: "events/b/1.json".into(),
        id: "1".into(),
        kind: kind.into(),
        batch_id: Some("b".into()),
        lane: None,
        agent: None,
        repo: Some("acme/app".into()),
        target: Some("7".into()),
        status: status.map(str::to_owned),
        message: message.map(str::to_owned),
        at: None,
        at_raw: None,
        meta: Default::default(),
    }
}

#[test]
fn qa_status_from_the_latest_qa_event() {
    assert_eq!(qa_status(None), QaStatus::Missing);
    let e = event(
        "qa.validation_failed",
        None,
        Some("did not pass smoke tests"),
    );
    assert_eq!(qa_status(Some(&e)), QaStatus::Failed);
    assert_eq!(
        qa_status(Some(&event("qa.validation_passed", None, None))),
        QaStatus::Passed
    );
    assert_eq!(
        qa_status(Some(&event("qa.validation_requested", None, None))),
        QaStatus::Requested
    );
    assert_eq!(
        qa_status(Some(&event("qa.validation_started", None, None))),
        QaStatus::InProgress
    );
    assert_eq!(
        qa_status(Some(&event("qa", Some("in_progress"), None))),
        QaStatus::InProgress
    );
    assert_eq!(
        qa_status(Some(&event("qa", None, Some("all checks passed")))),
        QaStatus::Passed
    );
    assert_eq!(
        qa_status(Some(&event("qa", Some("hmm"), None))),
        QaStatus::Unknown
    );
    assert!(is_qa_type("QA.validation_started"));
    assert!(is_qa_type("validation-run"));
    assert!(!is_qa_type("lane.done"));
    assert!(!is_qa_type("qaz"));
    assert_eq!(
        qa_detail(QaStatus::Missing, None),
        "No separate QA validation event found."
    );
    assert_eq!(
        qa_detail(QaStatus::Passed, Some("2026-11-29T12:00:00Z")),
        "Latest separate QA validation passed at 2026-11-29T12:00:00Z."
    );
}

#[test]
fn stop_control_reads_type_and_status_never_message() {
    let requested = event("batch.stop_requested", Some("stop_requested"), None);
    assert_eq!(control_of(&requested), Some(ControlStatus::StopRequested));
    assert_eq!(
        control_of(&event("batch.stopped", None, None)),
        Some(ControlStatus::Stopped)
    );
    assert_eq!(
        control_of(&event("lane", Some("cancelled"), None)),
        Some(ControlStatus::Stopped)
    );
    let chatty = event(
        "lane.done",
        None,
        Some("No stop requested; worker completed normally."),
    );
    assert_eq!(control_of(&chatty), None);
}

#[test]
fn lane_status_words() {
    assert_eq!(lane_status_state("merged"), RowState::Done);
    assert_eq!(lane_status_state("depends on lane-a"), RowState::Blocked);
    assert_eq!(lane_status_state("stale"), RowState::Stale);
    assert_eq!(lane_status_state("queued"), RowState::Ready);
    assert_eq!(lane_status_state("PR open"), RowState::Running);
    assert_eq!(lane_status_state("???"), RowState::Unknown);
}

#[test]
fn legacy_machine_tokens_follow_the_reference() {
    assert_eq!(
        legacy_machine("feature-worker-m5-max").as_deref(),
        Some("m5")
    );
    assert_eq!(legacy_machine("m12-worker").as_deref(), Some("m12"));
    assert_eq!(legacy_machine("worker-m5-m6-max"), None);
    assert_eq!(legacy_machine("worker-team5-max"), None);
    assert_eq!(legacy_machine("acd-c-i46"), None);
}

#[test]
fn event_work_closes_on_terminal_tokens_only() {
    assert!(event_closes_work("lane.done"));
    assert!(event_closes_work("claim.released"));
    assert!(!event_closes_work("phase.changed"));
    assert!(!event_closes_work("undone"));
}

#[test]
fn ages_floor() {
    assert_eq!(age_label(None, now()), "—");
    assert_eq!(age_label(Some(now() - Duration::seconds(59)), now()), "59s");
    assert_eq!(age_label(mins_ago(61), now()), "1h");
    assert_eq!(age_label(mins_ago(60 * 49), now()), "2d");
}

#[test]
fn terminal_and_dead_work_idle_over_a_day_moves_to_history() {
    let day_and_a_bit = mins_ago(60 * 24 + 1);
    let hour = mins_ago(60);
    let dead = Some(Liveness::Dead);
    // Terminal work: after a day, whatever its holder.
    assert!(archives(RowState::Done, None, day_and_a_bit, false, now()));
    assert!(!archives(RowState::Done, None, hour, false, now()));
    // A dead holder: after a day, unless a pull request may still be open.
    assert!(archives(RowState::Dead, dead, day_and_a_bit, false, now()));
    assert!(!archives(RowState::Dead, dead, day_and_a_bit, true, now()));
    assert!(!archives(RowState::Dead, dead, hour, false, now()));
    // Dead for want of any heartbeat, or live, or unknown activity: never.
    assert!(!archives(RowState::Dead, None, day_and_a_bit, false, now()));
    assert!(!archives(
        RowState::Running,
        Some(Liveness::Live),
        day_and_a_bit,
        false,
        now()
    ));
    assert!(!archives(RowState::Done, None, None, false, now()));
}
