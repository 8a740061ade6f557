//! The model's own names, ranks and row predicates.

use super::*;
use crate::dashboard::fixtures;

#[test]
fn state_names_and_ranks_round_trip() {
    for (i, s) in RowState::ALL.into_iter().enumerate() {
        assert_eq!(s.index(), i);
        assert_eq!(RowState::parse(s.as_str()), Some(s));
    }
    assert_eq!(RowState::parse("bogus"), None);
    assert_eq!(ControlStatus::StopRequested.as_str(), "stop_requested");
    assert_eq!(BatchTier::Archive.as_str(), "archive");
    assert_eq!(Severity::Info.as_str(), "info");
}

#[test]
fn attention_kinds_name_rank_and_weigh_themselves() {
    use AttentionKind::*;
    let all = [
        BatchStopped,
        BatchStopRequested,
        BlockedUserInput,
        QaMissing,
        DeadHolder,
        Wedged,
        TaskWaitingReply,
        TaskNeedsOperator,
        TaskAwaitingMerge,
    ];
    let ranks: Vec<u8> = all.iter().map(|k| k.priority()).collect();
    assert_eq!(ranks, [1, 2, 3, 4, 5, 6, 3, 3, 7]);
    for k in all {
        let wire = serde_json::to_value(k).expect("json");
        assert_eq!(wire.as_str(), Some(k.as_str()));
        let info = k == TaskAwaitingMerge;
        assert_eq!(k.severity() == Severity::Info, info, "{k:?}");
    }
    assert_eq!(TaskWaitingReply.link_text(), "Open the question");
    assert_eq!(TaskNeedsOperator.link_text(), "Open the blocker");
}

#[test]
fn active_and_recoverable_work() {
    let row = |state, scheduling| Row {
        kind: "unknown".into(),
        state,
        scheduling,
        ..fixtures::row("a/b", "1")
    };
    assert!(row(RowState::Wedged, Scheduling::InProcess).is_active_work());
    assert!(!row(RowState::Dead, Scheduling::InProcess).is_active_work());
    assert!(row(RowState::Dead, Scheduling::InProcess).is_recoverable());
    assert!(row(RowState::Blocked, Scheduling::StartedNotProcessing).is_recoverable());
    assert!(!row(RowState::Done, Scheduling::StartedNotProcessing).is_recoverable());
    assert!(!row(RowState::Running, Scheduling::InProcess).is_recoverable());
}

#[test]
fn lane_outcomes_spell_their_verdicts_and_the_two_states_without_one() {
    use crate::coordinator::task::LaneVerdict;
    use crate::serde_name::WireName;
    let all = [
        (LaneOutcome::Done, "done"),
        (LaneOutcome::NoChange, "no-change"),
        (LaneOutcome::Ask, "ask"),
        (LaneOutcome::Blocked, "blocked"),
        (LaneOutcome::Approved, "approved"),
        (LaneOutcome::Rejected, "rejected"),
        (LaneOutcome::Incomplete, "incomplete"),
        (LaneOutcome::Paused, "paused"),
        (LaneOutcome::Running, "running"),
        (LaneOutcome::Unknown, "unknown"),
    ];
    for (o, name) in all {
        assert_eq!(o.wire_name(), name);
    }
    // Every verdict keeps its name.
    for v in [
        LaneVerdict::NoChange,
        LaneVerdict::Paused,
        LaneVerdict::Rejected,
    ] {
        assert_eq!(LaneOutcome::from(v).wire_name(), v.wire_name());
    }
}
