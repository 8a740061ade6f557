//! Unit tests for retention planning.

use chrono::Duration;
use serde_json::json;

use super::*;
use crate::snapshot::MemorySnapshot;

const NOW: &str = "2026-07-20T00:00:00Z";

fn now() -> Instant {
    time::parse(NOW).unwrap()
}

fn ago(d: i64) -> String {
    time::format(now() - Duration::days(d))
}

fn run(snap: &MemorySnapshot, policy: Policy, own: &[&str]) -> Result<Plan<GcOutcome>, RuleError> {
    let own: BTreeSet<String> = own.iter().map(|s| (*s).to_owned()).collect();
    plan(snap, &policy, &FAMILIES, &own, now())
}

fn lines(p: &Plan<GcOutcome>) -> Vec<String> {
    p.outcome.actions.iter().map(Action::to_line).collect()
}

#[test]
fn finished_records_are_archived_after_their_window() {
    let mut snap = MemorySnapshot::default();
    snap.put(
        "claims/acme/app/1.json",
        &json!({"status": "released", "updated_at": ago(8)}),
    );
    snap.put(
        "claims/acme/app/2.json",
        &json!({"status": "released", "updated_at": ago(3)}),
    );
    snap.put(
        "claims/acme/app/3.json",
        &json!({"status": "active", "updated_at": ago(30)}),
    );
    snap.put(
        "claims/acme/app/4.json",
        &json!({"status": "released", "updated_at": ago(2), "synthetic": true}),
    );
    snap.put(
        "batches/b1.json",
        &json!({"status": "completed", "completed_at": ago(10), "updated_at": ago(1)}),
    );
    snap.put("batches/b2.json", &json!({"updated_at": ago(100)}));
    let p = run(&snap, Policy::default(), &[]).unwrap();
    assert_eq!(
        lines(&p),
        [
            "- archive batches/b1.json -> archive/batches/b1.json (completed_batch)",
            "- archive claims/acme/app/1.json -> archive/claims/acme/app/1.json (terminal_claim)",
            "- archive claims/acme/app/4.json -> archive/claims/acme/app/4.json (terminal_claim)",
        ]
    );
    let (path, env) = p
        .state
        .iter()
        .find(|(p, _)| p == "archive/claims/acme/app/1.json")
        .unwrap();
    assert_eq!(path, "archive/claims/acme/app/1.json");
    assert_eq!(env["record_family"], json!("archived_record"));
    assert_eq!(env["delete_after"], json!("2026-08-19T00:00:00Z"));
    assert_eq!(env["data"]["status"], json!("released"));
    assert!(p.removals.contains(&"claims/acme/app/1.json".to_owned()));
    // --hot-days 0 takes the recent one too.
    let p = run(
        &snap,
        Policy {
            hot_days: 0,
            ..Policy::default()
        },
        &[],
    )
    .unwrap();
    assert!(lines(&p)
        .iter()
        .any(|l| l.contains("claims/acme/app/2.json")));
}

#[test]
fn only_this_machines_heartbeats_are_collected() {
    let mut snap = MemorySnapshot::default();
    let dead = json!({"agent_id": "a", "updated_at": ago(20), "expires_at": time::format(now() - Duration::days(20) + Duration::minutes(15))});
    snap.put("heartbeats/a.json", &dead);
    snap.put("heartbeats/b.json", &dead);
    snap.put(
        "heartbeats/c.json",
        &json!({"status": "done", "updated_at": ago(9), "expires_at": ago(8)}),
    );
    let p = run(&snap, Policy::default(), &["a", "c"]).unwrap();
    assert_eq!(
        lines(&p),
        [
            "- archive heartbeats/a.json -> archive/heartbeats/a.json (dead_heartbeat)",
            "- archive heartbeats/c.json -> archive/heartbeats/c.json (terminal_heartbeat)",
        ]
    );
    let removed: Vec<&str> = p.heartbeat_removals.iter().map(AgentId::as_str).collect();
    assert_eq!(removed, ["a", "c"]);
    assert!(
        p.removals.is_empty(),
        "heartbeats leave the heartbeat ref, not the branch"
    );
}

fn closed(lane: &str, at: &str) -> serde_json::Value {
    json!({"schema_version": 2, "event_id": format!("lane_closed-{lane}"), "type": "lane_closed", "batch_id": "b1",
           "lane": lane, "repo": "acme/app", "target": "7", "terminal": "done", "workspace": "default",
           "closed_by": {"agent_id": "w", "machine": "m"}, "at": at})
}

#[test]
fn finished_event_trails_are_compacted() {
    let mut snap = MemorySnapshot::default();
    let ev = |at: &str, phase: &str| json!({"type": "phase.changed", "batch_id": "b1", "lane": "code", "repo": "acme/app", "target": "7", "phase": phase, "at": at});
    snap.put("events/b1/1.json", &ev(&ago(20), "implementing"));
    snap.put("events/b1/2.json", &ev(&ago(19), "implementing"));
    snap.put("events/b1/3.json", &ev(&ago(18), "validating"));
    snap.put("events/b1/4.json", &ev(&ago(17), "validating"));
    // A lane-less event of the same provenance joins the sole terminal lane.
    snap.put("events/b1/5.json", &json!({"type": "note", "batch_id": "b1", "repo": "acme/app", "target": "7", "at": ago(16)}));
    snap.put("events/b1/lane_closed-code.json", &closed("code", &ago(15)));
    // An open lane is never compacted.
    snap.put(
        "events/b1/9.json",
        &json!({"type": "note", "batch_id": "b1", "lane": "docs", "at": ago(40)}),
    );
    let p = run(&snap, Policy::default(), &[]).unwrap();
    assert_eq!(p.outcome.actions.len(), 1);
    let action = &p.outcome.actions[0];
    assert_eq!(action.action, "compact");
    assert_eq!(action.reason, "terminal_target_events");
    assert_eq!(action.source_paths.len(), 6);
    let archive = action.archive_path.as_ref().unwrap();
    assert!(
        archive.starts_with("archive/events/b1/compact-"),
        "{archive}"
    );
    let env = &p.state[0].1;
    assert_eq!(env["record_family"], json!("compacted_events"));
    // Kept: the first event, the change to "validating", and the terminal (also the last);
    // repeated phases and the phase-less note are dropped.
    let kept: Vec<String> = env["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["at"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kept, [ago(20), ago(18), ago(15)]);
    assert_eq!(p.removals.len(), 6);

    // The same run again finds the same path: deterministic, idempotent.
    let again = run(&snap, Policy::default(), &[]).unwrap();
    assert_eq!(again.outcome.actions[0].archive_path, action.archive_path);

    // A fresh event defers the whole group.
    snap.put("events/b1/6.json", &ev(&ago(1), "pushing"));
    assert!(run(&snap, Policy::default(), &[])
        .unwrap()
        .outcome
        .actions
        .is_empty());
}

#[test]
fn expired_archives_are_deleted_and_bad_ones_stop_the_plan() {
    let mut snap = MemorySnapshot::default();
    snap.put(
        "archive/claims/acme/app/1.json",
        &json!({"record_family": "archived_record", "delete_after": ago(1)}),
    );
    snap.put("archive/claims/acme/app/2.json", &json!({"record_family": "archived_record", "delete_after": time::format(now() + Duration::days(3))}));
    let p = run(&snap, Policy::default(), &[]).unwrap();
    assert_eq!(
        lines(&p),
        ["- delete archive/claims/acme/app/1.json (archive_expired)"]
    );

    snap.put(
        "archive/x.json",
        &json!({"record_family": "mystery", "delete_after": ago(1)}),
    );
    assert_eq!(
        run(&snap, Policy::default(), &[]).unwrap_err(),
        RuleError::Gc(GcError::UnknownArchiveFamily {
            path: "archive/x.json".into()
        })
    );
    let mut snap = MemorySnapshot::default();
    snap.put(
        "archive/y.json",
        &json!({"record_family": "archived_record", "delete_after": "soon"}),
    );
    assert_eq!(
        run(&snap, Policy::default(), &[]).unwrap_err(),
        RuleError::Gc(GcError::InvalidDeleteAfter {
            path: "archive/y.json".into()
        })
    );
    let mut snap = MemorySnapshot::default();
    snap.put("claims/a/b/1.json", &json!({"status": "released"}));
    assert_eq!(
        run(&snap, Policy::default(), &[]).unwrap_err(),
        RuleError::Gc(GcError::MissingTimestamp {
            path: "claims/a/b/1.json".into()
        })
    );
}

#[test]
fn an_identical_archive_is_reused() {
    let mut snap = MemorySnapshot::default();
    let data = json!({"status": "released", "updated_at": ago(8)});
    snap.put("claims/a/b/1.json", &data);
    snap.put("archive/claims/a/b/1.json", &json!({"record_family": "archived_record", "source_path": "claims/a/b/1.json", "data": data, "delete_after": ago(1)}));
    let p = run(&snap, Policy::default(), &[]).unwrap();
    assert!(p.state.is_empty(), "nothing new is written");
    assert_eq!(
        p.removals,
        ["claims/a/b/1.json"],
        "the source goes; the protected archive is not deleted this run"
    );
}

#[test]
fn canonical_json_sorts_keys_without_whitespace() {
    assert_eq!(
        canonical_json(&json!({"b": [1, {"d": 1, "c": null}], "a": "x"})),
        r#"{"a":"x","b":[1,{"c":null,"d":1}]}"#
    );
}

#[test]
fn regression_huge_retention_days_panic() {
    let snap = MemorySnapshot::default();
    let base = Policy::default();
    let cases = [
        (
            Some(Window::Hot),
            Policy {
                hot_days: i64::MAX,
                ..base
            },
        ),
        (
            Some(Window::Hot),
            Policy {
                hot_days: 1_000_000,
                ..base
            },
        ),
        (
            Some(Window::SyntheticHot),
            Policy {
                synthetic_hot_days: i64::MAX,
                ..base
            },
        ),
        (
            None,
            Policy {
                archive_days: i64::MAX,
                ..base
            },
        ),
        (
            None,
            Policy {
                archive_days: 3_000_000,
                ..base
            },
        ),
    ];
    for (window, policy) in cases {
        let want = match window {
            Some(window) => PolicyError::HotOutOfRange {
                window,
                days: if window == Window::Hot {
                    policy.hot_days
                } else {
                    policy.synthetic_hot_days
                },
            },
            None => PolicyError::ArchiveOutOfRange {
                days: policy.archive_days,
            },
        };
        assert_eq!(
            run(&snap, policy, &[]).unwrap_err(),
            RuleError::Policy(want),
            "{policy:?} was accepted"
        );
    }
    assert!(run(
        &snap,
        Policy {
            hot_days: 700_000,
            archive_days: 2_000_000,
            ..base
        },
        &[]
    )
    .is_ok());
}

/// `gc` never looked at annotations: a snooze over for weeks stayed on the state branch
/// for good. Once its `until` is `--hot-days` past it is archived like any finished
/// record; a dismissal (for good until cleared) and a snooze still running stay.
#[test]
fn regression_gc_skips_annotations() {
    let mut snap = MemorySnapshot::default();
    let snooze = |until: String| {
        json!({"schema_version": 1, "repo": "acme/app", "target": "1", "kind": "snooze",
               "until": until, "updated_at": ago(40)})
    };
    snap.put("annotations/acme/app/1.json", &snooze(ago(8)));
    snap.put("annotations/acme/app/2.json", &snooze(ago(3)));
    snap.put(
        "annotations/acme/app/3.json",
        &json!({"repo": "acme/app", "target": "3", "kind": "dismiss", "updated_at": ago(90)}),
    );
    let p = run(&snap, Policy::default(), &[]).unwrap();
    assert_eq!(
        lines(&p),
        ["- archive annotations/acme/app/1.json -> archive/annotations/acme/app/1.json (expired_snooze)"]
    );
    assert_eq!(p.removals, ["annotations/acme/app/1.json"]);
    let action = &p.outcome.actions[0];
    assert_eq!(action.eligible_at.as_deref(), Some(ago(8).as_str()));
    assert!(
        FAMILIES.contains(&"annotations"),
        "--prefix annotations selects them"
    );
}
