//! Unit tests for `rules::audit`.

use serde_json::json;

use super::*;
use crate::snapshot::MemorySnapshot;

const REPO: &str = "acme/app";

#[test]
fn verdicts_are_named_as_the_report_spells_them() {
    let all = [Verdict::Complete, Verdict::Incomplete, Verdict::Unknown];
    let names: Vec<&str> = all.iter().map(WireName::wire_name).collect();
    assert_eq!(names, ["complete", "incomplete", "unknown"]);
}

fn at(second: u32) -> String {
    format!("2026-07-22T00:00:{second:02}Z")
}

fn rec(v: Value) -> Record {
    v.as_object().unwrap().clone()
}

/// Returns `base` with the keys of `patch` set (a `null` in the patch removes the key).
fn with(base: &Value, patch: Value) -> Value {
    let mut out = base.as_object().unwrap().clone();
    for (k, v) in patch.as_object().unwrap() {
        if v.is_null() {
            out.remove(k);
        } else {
            out.insert(k.clone(), v.clone());
        }
    }
    Value::Object(out)
}

fn lane(name: &str, owner: &str, targets: &[&str]) -> Value {
    json!({"name": name, "owner": owner, "targets": targets})
}

fn one_lane() -> Value {
    json!([lane("code", "a", &["1"])])
}

/// An ordinary lifecycle event of batch `b1` in `acme/app`.
fn ev(kind: &str, agent: &str, target: &str, second: u32) -> Value {
    json!({
        "schema_version": 1, "event_id": format!("e{second:02}"), "batch_id": "b1",
        "type": kind, "agent_id": agent, "repo": REPO, "target": target, "at": at(second),
    })
}

/// A valid v2 `lane_closed` for lane `code`.
fn closed(agent: &str, target: &str, second: u32) -> Value {
    json!({
        "schema_version": 2, "event_id": "lane_closed-5694d08a2e53ffca", "batch_id": "b1",
        "lane": "code", "type": "lane_closed", "repo": REPO, "target": target,
        "terminal": "done", "pr_url": "https://github.com/acme/app/pull/1",
        "pr_state": "merged", "workspace": "default",
        "closed_by": {"agent_id": agent, "machine": "box"}, "agent_id": agent,
        "at": at(second),
    })
}

fn snapshot(batch: Value, events: &[Value]) -> MemorySnapshot {
    let mut snap = MemorySnapshot::default();
    snap.put("batches/b1.json", &batch);
    for (i, event) in events.iter().enumerate() {
        snap.put(&format!("events/b1/{i:03}.json"), event);
    }
    snap
}

fn run(lanes: Value, events: &[Value]) -> Audit {
    audit(
        &snapshot(json!({"batch_id": "b1", "lanes": lanes}), events),
        "b1",
    )
}

fn run_repo(lanes: Value, events: &[Value]) -> Audit {
    let batch = json!({"batch_id": "b1", "repo": REPO, "lanes": lanes});
    audit(&snapshot(batch, events), "b1")
}

fn missing(audit: &Audit, lane: usize) -> Vec<&str> {
    audit.lanes[lane]
        .missing
        .iter()
        .map(String::as_str)
        .collect()
}

fn counts(audit: &Audit) -> Vec<usize> {
    audit.lanes.iter().map(|l| l.event_count).collect()
}

fn pairs(events: &[Value]) -> Vec<(String, Record)> {
    events
        .iter()
        .enumerate()
        .map(|(i, e)| (format!("events/b1/{i:03}.json"), rec(e.clone())))
        .collect()
}

fn set(agents: &[&str]) -> BTreeSet<String> {
    agents.iter().map(|a| (*a).to_owned()).collect()
}

#[test]
fn unknown_reasons() {
    let mut unregistered = MemorySnapshot::default();
    unregistered.put("batches/other.json", &json!({"lanes": one_lane()}));
    let mut evil = MemorySnapshot::default();
    evil.put("batches/../evil.json", &json!({"lanes": one_lane()}));
    let mut broken = MemorySnapshot::default();
    broken.put_raw("batches/b1.json", b"{");
    let mut scalar = MemorySnapshot::default();
    scalar.put_raw("batches/b1.json", b"\"not-an-object\"");
    let mut broken_event = snapshot(json!({"lanes": one_lane()}), &[]);
    broken_event.put_raw("events/b1/x.json", b"[1]");
    let cases: Vec<(&str, MemorySnapshot, &str, &str)> = vec![
        (
            "unregistered",
            unregistered,
            "b1",
            "batch b1 is not registered",
        ),
        (
            "no lanes",
            snapshot(json!({"lanes": []}), &[]),
            "b1",
            "batch b1 registers no lanes",
        ),
        (
            "lanes absent",
            snapshot(json!({}), &[]),
            "b1",
            "batch b1 registers no lanes",
        ),
        (
            "lanes null",
            snapshot(json!({"lanes": null}), &[]),
            "b1",
            "batch b1 registers no lanes",
        ),
        (
            "lanes {}",
            snapshot(json!({"lanes": {}}), &[]),
            "b1",
            "batch b1 registers no lanes",
        ),
        (
            "not an object",
            scalar,
            "b1",
            "batch b1 state is not an object",
        ),
        (
            "unsafe id",
            evil,
            "../evil",
            "coordination state unreadable: invalid batch-id: ../evil",
        ),
        (
            "empty id",
            MemorySnapshot::default(),
            "",
            "coordination state unreadable: invalid batch-id: ",
        ),
        (
            "bad event",
            broken_event,
            "b1",
            "coordination state unreadable: events/b1/x.json: record is not a JSON object",
        ),
    ];
    for (name, snap, id, reason) in cases {
        let a = audit(&snap, id);
        assert_eq!(a.verdict, Verdict::Unknown, "{name}");
        assert_eq!(a.reason.as_deref(), Some(reason), "{name}");
        assert_eq!(a.batch_id, id, "{name}");
        assert!(a.lanes.is_empty(), "{name}");
    }
    let a = audit(&broken, "b1");
    let reason = a.reason.unwrap();
    assert!(
        reason.starts_with("coordination state unreadable: batches/b1.json: "),
        "{reason}"
    );
    assert!(!reason.contains("unreadable: state unreadable"), "{reason}");
}

#[test]
fn attribution() {
    let shared_target = json!([lane("code", "a", &["1"]), lane("docs", "b", &["1"])]);
    let shared_owner = json!([lane("code", "a", &["1"]), lane("docs", "a", &["2"])]);
    let both_shared = json!([lane("code", "a", &["1"]), lane("docs", "a", &["1"])]);
    let note = |agent: &str, target: Option<&str>, lane: Option<&str>| {
        let mut e = json!({"schema_version": 1, "event_id": "n", "batch_id": "b1", "type": "note",
            "agent_id": agent, "repo": REPO, "at": at(0)});
        if let Some(t) = target {
            e["target"] = json!(t);
        }
        if let Some(l) = lane {
            e["lane"] = json!(l);
        }
        e
    };
    let cases: Vec<(&str, Value, Vec<Value>, Vec<usize>)> = vec![
        (
            "explicit lane beats shared target",
            shared_target.clone(),
            vec![note("z", Some("1"), Some("docs"))],
            vec![0, 1],
        ),
        (
            "unique target",
            one_lane(),
            vec![note("z", Some("1"), None)],
            vec![1],
        ),
        (
            "numeric event target",
            one_lane(),
            vec![with(&note("z", None, None), json!({"target": 1}))],
            vec![1],
        ),
        (
            "numeric lane target",
            json!([{"name": "code", "owner": "a", "targets": [7]}]),
            vec![note("z", Some("7"), None)],
            vec![1],
        ),
        (
            "legacy id/agent_id/target",
            json!([{"id": "code", "agent_id": "a", "target": "1"}]),
            vec![note("z", Some("1"), None), note("a", None, None)],
            vec![2],
        ),
        (
            "owner disambiguates shared target",
            shared_target.clone(),
            vec![note("a", Some("1"), None), note("b", None, None)],
            vec![1, 1],
        ),
        (
            "owner fallback ignores out-of-lane target",
            shared_target,
            vec![note("a", Some("99"), None)],
            vec![0, 0],
        ),
        (
            "shared owner credits own targets only",
            shared_owner,
            vec![note("a", Some("2"), None), note("a", None, None)],
            vec![0, 1],
        ),
        (
            "same target and owner credits neither",
            both_shared,
            vec![note("a", Some("1"), None), note("a", None, None)],
            vec![0, 0],
        ),
        (
            "unrelated agent without target",
            one_lane(),
            vec![note("z", None, None)],
            vec![0],
        ),
    ];
    for (name, lanes, events, want) in cases {
        assert_eq!(counts(&run(lanes, &events)), want, "{name}");
    }
}

#[test]
fn repo_gate_and_empty_targets() {
    let same = ev("note", "z", "1", 0);
    let other = with(&same, json!({"repo": "other/app"}));
    let repoless = with(&same, json!({"repo": null}));
    assert_eq!(
        counts(&run_repo(
            one_lane(),
            &[same.clone(), other.clone(), repoless.clone()]
        )),
        [1]
    );
    assert_eq!(counts(&run(one_lane(), &[same, other, repoless])), [3]);

    let lanes = json!([{"name": "code", "owner": "a", "targets": ["", "1", ""]}]);
    let a = run(
        lanes,
        &[json!({"type": "note", "agent_id": "z", "target": ""})],
    );
    assert_eq!(a.lanes[0].targets, ["1"]);
    assert_eq!(a.lanes[0].event_count, 0);
}

#[test]
fn lineage() {
    let acq = |agent: &str, second| ev("claim.acquired", agent, "1", second);
    let rel = |agent: &str, second| ev("claim.released", agent, "1", second);
    let phase = ev("phase.changed", "a", "1", 2);
    let cases: Vec<(&str, Value, Vec<Value>, Vec<&str>)> = vec![
        (
            "owner acquire and release",
            one_lane(),
            vec![acq("a", 1), rel("a", 2)],
            vec![],
        ),
        (
            "statuses allowed",
            one_lane(),
            vec![
                with(&acq("a", 1), json!({"status": "active"})),
                with(&rel("a", 2), json!({"status": "released"})),
            ],
            vec![],
        ),
        (
            "takeover by unique target",
            one_lane(),
            vec![acq("a", 1), acq("b", 2), rel("b", 3)],
            vec![],
        ),
        (
            "takeover with explicit lane on shared target",
            json!([lane("code", "a", &["1"]), lane("docs", "d", &["1"])]),
            vec![
                acq("a", 1),
                with(&acq("b", 2), json!({"lane": "code"})),
                with(&rel("b", 3), json!({"lane": "code"})),
            ],
            vec![],
        ),
        (
            "equal time ordered by event id",
            one_lane(),
            vec![
                with(&rel("b", 5), json!({"event_id": "e2"})),
                with(&acq("b", 5), json!({"event_id": "e1"})),
                acq("a", 1),
            ],
            vec![],
        ),
        (
            "release by unauthorized agent",
            one_lane(),
            vec![acq("a", 1), rel("c", 2)],
            vec!["terminal", "lifecycle"],
        ),
        (
            "release before admission",
            one_lane(),
            vec![rel("b", 1), acq("b", 2)],
            vec!["terminal", "lifecycle"],
        ),
        (
            "takeover into unknown owner lane",
            json!([lane("code", "UNKNOWN", &["1"])]),
            vec![
                with(&acq("b", 1), json!({"lane": "code"})),
                with(&rel("b", 2), json!({"lane": "code"})),
            ],
            vec!["terminal", "lifecycle"],
        ),
        (
            "takeover from other batch",
            one_lane(),
            vec![
                acq("a", 1),
                with(&acq("b", 2), json!({"batch_id": "b2"})),
                rel("b", 3),
            ],
            vec!["terminal", "lifecycle"],
        ),
        (
            "duplicate (at, event_id)",
            one_lane(),
            vec![
                acq("a", 1),
                with(&rel("a", 2), json!({"event_id": "e01", "at": at(1)})),
            ],
            vec!["terminal", "lifecycle"],
        ),
        (
            "impossible at",
            one_lane(),
            vec![
                acq("a", 1),
                with(&rel("a", 2), json!({"at": "2026-02-30T00:00:00Z"})),
            ],
            vec!["terminal", "lifecycle"],
        ),
        (
            "blank event id",
            one_lane(),
            vec![with(&acq("a", 1), json!({"event_id": " \t "})), rel("a", 2)],
            vec!["terminal", "lifecycle"],
        ),
        (
            "integer target",
            one_lane(),
            vec![acq("a", 1), with(&rel("a", 2), json!({"target": 1}))],
            vec!["terminal", "lifecycle"],
        ),
        (
            "unknown agent",
            one_lane(),
            vec![acq("a", 1), rel(" uNkNoWn ", 2)],
            vec!["terminal", "lifecycle"],
        ),
        (
            "wrong schema version",
            one_lane(),
            vec![
                with(&acq("a", 1), json!({"schema_version": 2})),
                rel("a", 2),
            ],
            vec!["lifecycle"],
        ),
        (
            "acquired with released status",
            one_lane(),
            vec![
                with(&acq("a", 1), json!({"status": "released"})),
                rel("a", 2),
            ],
            vec!["lifecycle"],
        ),
        (
            "no events",
            one_lane(),
            vec![],
            vec!["claim.acquired", "terminal"],
        ),
        (
            "published phase change",
            one_lane(),
            vec![
                acq("a", 1),
                with(&phase, json!({"phase": "x", "previous_phase": "w"})),
                rel("a", 3),
            ],
            vec![],
        ),
        (
            "historical phase change",
            one_lane(),
            vec![
                acq("a", 1),
                with(
                    &phase,
                    json!({"phase": "x", "old_phase": "w", "new_phase": "x"}),
                ),
                rel("a", 3),
            ],
            vec![],
        ),
        (
            "phase without transition",
            one_lane(),
            vec![
                acq("a", 1),
                with(&phase, json!({"phase": "x", "previous_phase": "x"})),
                rel("a", 3),
            ],
            vec!["lifecycle"],
        ),
        (
            "phase without previous",
            one_lane(),
            vec![
                acq("a", 1),
                with(&phase, json!({"phase": "x"})),
                rel("a", 3),
            ],
            vec!["lifecycle"],
        ),
        (
            "historical phase mismatch",
            one_lane(),
            vec![
                acq("a", 1),
                with(
                    &phase,
                    json!({"phase": "x", "old_phase": "w", "new_phase": "y"}),
                ),
                rel("a", 3),
            ],
            vec!["lifecycle"],
        ),
        (
            "phase integer status",
            one_lane(),
            vec![
                acq("a", 1),
                with(
                    &phase,
                    json!({"phase": "x", "previous_phase": "w", "status": 1}),
                ),
                rel("a", 3),
            ],
            vec!["lifecycle"],
        ),
    ];
    for (name, lanes, events, want) in cases {
        let a = run(lanes, &events);
        assert_eq!(missing(&a, 0), want, "{name}");
        assert_eq!(a.lanes[0].complete, want.is_empty(), "{name}");
    }
}

mod terminals;

/// A claim that lost a cross-machine race keeps its `claim.acquired` in the merged events,
/// followed by the `claim.lost` sync recorded: the loser must not join the lane's lineage.
#[test]
fn regression_lost_claim_admitted_to_lineage() {
    let acq = |agent: &str, second| ev("claim.acquired", agent, "1", second);
    let rel = |agent: &str, second| ev("claim.released", agent, "1", second);
    let lost = |agent: &str, second| ev("claim.lost", agent, "1", second);
    let batch = rec(json!({"batch_id": "b1", "lanes": one_lane()}));
    let raced = [acq("a", 1), acq("b", 2), lost("b", 3)];
    assert_eq!(
        lineage_authorized(&batch, "code", &pairs(&raced)),
        Some(set(&["a"])),
        "the loser is not authorized"
    );
    let loser_releases = [acq("a", 1), acq("b", 2), lost("b", 3), rel("b", 4)];
    assert_eq!(
        missing(&run(one_lane(), &loser_releases), 0),
        ["terminal", "lifecycle"]
    );
    // The owner's own trail stays complete around a stranger's lost race.
    let owner_done = [acq("a", 1), acq("b", 2), lost("b", 3), rel("a", 4)];
    assert!(missing(&run(one_lane(), &owner_done), 0).is_empty());
    // Only the acquisition before the loss is cancelled: a later one admits again.
    let again = [acq("b", 2), lost("b", 3), acq("b", 4), rel("b", 5)];
    assert!(missing(&run(one_lane(), &again), 0).is_empty());
    // A lost acquisition is no acquisition at all.
    let only_lost = [acq("b", 2), lost("b", 3)];
    assert!(missing(&run(one_lane(), &only_lost), 0).contains(&"claim.acquired"));
}
