//! Annotation rules: request validation, the stored record, parsing back, and what an
//! annotation does (and never does) to the model.

use serde_json::json;

use super::*;
use crate::dashboard::fixtures;
use crate::dashboard::fixtures::ago;
use crate::dashboard::fixtures::ahead;
use crate::dashboard::inputs::annotations::parse;
use crate::dashboard::inputs::annotations::StoredAnnotationInvalid;
use crate::dashboard::inputs::annotations::MAX_TEXT;
use crate::dashboard::model::next_expiry;
use crate::dashboard::model::RowState;
use crate::record::Identity;
use crate::snapshot::MemorySnapshot;

fn ctx() -> Ctx {
    Ctx {
        now: fixtures::now(),
        nonce: 1,
        identity: Identity {
            machine_id: Some("box-1".into()),
            ..Default::default()
        },
    }
}

fn refusal(body: Value) -> AnnotateError {
    match save(&ctx(), &body) {
        Err(e) => e,
        other => panic!("{body}: {other:?}"),
    }
}

#[test]
fn requests_are_validated_with_the_reference_messages() {
    let (key, kind, until) = (
        AnnotateError::Invalid(AnnotationInvalid::Key),
        AnnotateError::Invalid(AnnotationInvalid::Kind),
        AnnotateError::Invalid(AnnotationInvalid::Until),
    );
    let long = "x".repeat(MAX_TEXT + 1);
    for (body, message) in [
        (json!([]), AnnotateError::NotAnObject),
        (json!({"target": "7", "kind": "dismiss"}), key.clone()),
        (
            json!({"repo": "acme", "target": "7", "kind": "dismiss"}),
            key.clone(),
        ),
        (
            json!({"repo": "acme/app/x", "target": "7", "kind": "dismiss"}),
            key.clone(),
        ),
        (
            json!({"repo": "../app", "target": "7", "kind": "dismiss"}),
            key.clone(),
        ),
        (
            json!({"repo": "acme/.git", "target": "7", "kind": "dismiss"}),
            key.clone(),
        ),
        (
            json!({"repo": "-x/app", "target": "7", "kind": "dismiss"}),
            key.clone(),
        ),
        (
            json!({"repo": "acme/app", "target": "7a", "kind": "dismiss"}),
            key.clone(),
        ),
        (
            json!({"repo": "acme/app", "target": "", "kind": "dismiss"}),
            key.clone(),
        ),
        (json!({"repo": "acme/app", "target": "7"}), kind.clone()),
        (
            json!({"repo": "acme/app", "target": "7", "kind": "hide"}),
            kind.clone(),
        ),
        (
            json!({"repo": "acme/app", "target": "7", "kind": "snooze"}),
            until.clone(),
        ),
        (
            json!({"repo": "acme/app", "target": "7", "kind": "snooze", "until": ago(1)}),
            until.clone(),
        ),
        (
            json!({"repo": "acme/app", "target": "7", "kind": "snooze", "until": "tomorrow"}),
            until.clone(),
        ),
        (
            json!({"repo": "acme/app", "target": "7", "kind": "dismiss", "note": long}),
            AnnotationInvalid::TooLong("note").into(),
        ),
        (
            json!({"repo": "acme/app", "target": "7", "kind": "dismiss", "operator": long}),
            AnnotationInvalid::TooLong("operator").into(),
        ),
    ] {
        assert_eq!(refusal(body.clone()), message, "{body}");
    }
}

#[test]
fn a_snooze_is_stored_on_the_branch_normalised() {
    let body = json!({"repo": " acme/app ", "target": 7, "kind": "snooze",
                      "until": "2026-11-29T14:00:00+01:00", "note": "  waiting on CI  ", "operator": ""});
    let plan = save(&ctx(), &body).unwrap();
    assert_eq!(plan.op, "dashboard-annotate");
    assert_eq!(
        plan.summary,
        "dashboard: snooze acme/app#7 until 2026-11-29T13:00:00Z"
    );
    let (path, record) = &plan.state[0];
    assert_eq!(path, "annotations/acme/app/7.json");
    assert_eq!(
        Value::Object(record.clone()),
        json!({"schema_version": 1, "repo": "acme/app", "target": "7", "kind": "snooze",
               "until": "2026-11-29T13:00:00Z", "note": "waiting on CI",
               "updated_at": "2026-11-29T12:00:00Z", "machine_id": "box-1"})
    );
    let a = &plan.outcome;
    assert!(a.active);
    assert_eq!(a.note.as_deref(), Some("waiting on CI"));
    assert_eq!(a.operator, None);
    // What was stored parses back to the same annotation.
    let bytes = serde_json::to_vec(record).unwrap();
    let read = parse(path, &bytes).unwrap();
    assert_eq!(
        Annotation {
            active: true,
            ..read
        },
        *a
    );
}

#[test]
fn a_dismissal_keeps_no_until() {
    let plan = save(
        &ctx(),
        &json!({"repo": "acme/app", "target": "7", "kind": "dismiss", "until": ahead(60)}),
    )
    .unwrap();
    assert_eq!(plan.summary, "dashboard: dismiss acme/app#7");
    assert!(!plan.state[0].1.contains_key("until"));
    assert!(plan.outcome.active);
}

#[test]
fn clearing_removes_the_record_by_name_even_when_it_is_malformed() {
    let mut snap = MemorySnapshot::default();
    let body = json!({"repo": "acme/app", "target": "7"});
    let plan = clear(&snap, &body).unwrap();
    assert!(!plan.outcome);
    assert!(plan.is_empty(), "clearing nothing writes nothing");
    snap.put_raw("annotations/acme/app/7.json", b"{not json");
    let plan = clear(&snap, &body).unwrap();
    assert!(plan.outcome);
    assert_eq!(plan.removals, ["annotations/acme/app/7.json"]);
    assert_eq!(
        plan.summary,
        "dashboard: clear the annotation of acme/app#7"
    );
    assert!(matches!(
        clear(&snap, &json!({"repo": "acme/app", "target": "x"})),
        Err(AnnotateError::Invalid(AnnotationInvalid::Key))
    ));
}

#[test]
fn stored_records_that_are_not_annotations_say_why() {
    let at = "annotations/acme/app/7.json";
    assert!(parse(at, b"[]").is_err());
    assert_eq!(
        parse(
            at,
            br#"{"repo": "acme/app", "target": "7", "kind": "mute"}"#
        )
        .unwrap_err(),
        StoredAnnotationInvalid::Invalid(AnnotationInvalid::Kind)
    );
    assert_eq!(
        parse(
            at,
            br#"{"repo": "acme/app", "target": "8", "kind": "dismiss"}"#
        )
        .unwrap_err(),
        StoredAnnotationInvalid::Misplaced {
            repo: "acme/app".into(),
            target: "8".into(),
            path: at.into(),
        }
    );
    // An expired snooze still reads; it is just not active.
    let old = json!({"repo": "acme/app", "target": "7", "kind": "snooze", "until": ago(5)});
    let a = parse(at, &serde_json::to_vec(&old).unwrap()).unwrap();
    assert!(!a.is_active(fixtures::now()));
    assert!(a.is_active(fixtures::now() - chrono::Duration::minutes(10)));
}

fn annotate(records: &mut fixtures::Records, target: &str, v: Value) {
    let mut v = v;
    v["repo"] = json!("acme/app");
    v["target"] = json!(target);
    records.put(&format!("annotations/acme/app/{target}.json"), v);
}

/// Two dead holders (#1, #2) needing attention, and #3 finished.
fn fleet() -> fixtures::Records {
    let mut s = fixtures::Records::new();
    s.claim("acme/app", "1", "w1", None)
        .beat("w1", "acme/app", "1", None, "implementing", 60)
        .claim("acme/app", "2", "w2", None)
        .beat("w2", "acme/app", "2", None, "implementing", 60)
        .claim("acme/app", "3", "w3", None)
        .beat("w3", "acme/app", "3", None, "done", 1);
    s
}

fn queue(m: &crate::dashboard::model::DashboardModel) -> Vec<&str> {
    m.attention.iter().map(|a| a.row_id.as_str()).collect()
}

#[test]
fn dismissed_and_snoozed_items_leave_the_attention_queue() {
    let (_, before) = fleet().model();
    assert_eq!(queue(&before), ["target:acme/app#1", "target:acme/app#2"]);
    let mut s = fleet();
    annotate(&mut s, "1", json!({"kind": "dismiss"}));
    annotate(&mut s, "2", json!({"kind": "snooze", "until": ahead(30)}));
    let (_, m) = s.model();
    assert!(m.attention.is_empty(), "{:?}", queue(&m));
    assert_eq!(m.counts.needs_attention, 0);
    // Rows are untouched: the item is still dead, only no longer asking.
    for id in ["target:acme/app#1", "target:acme/app#2"] {
        let row = m.rows.iter().find(|r| r.id == id).unwrap();
        assert_eq!(row.state, RowState::Dead);
    }
    let active: Vec<(&str, bool)> = m
        .annotations
        .iter()
        .map(|a| (a.target.as_str(), a.active))
        .collect();
    assert_eq!(active, [("1", true), ("2", true)]);
}

#[test]
fn a_snooze_ends_at_its_time() {
    let mut s = fleet();
    annotate(&mut s, "2", json!({"kind": "snooze", "until": ago(1)}));
    let (_, m) = s.model();
    assert_eq!(queue(&m), ["target:acme/app#1", "target:acme/app#2"]);
    assert!(!m.annotations[0].active);
    // The same record, built a minute before it ran out, hides the item.
    let inputs = s.inputs();
    let earlier = crate::dashboard::derive::build(
        &inputs,
        fixtures::now() - chrono::Duration::minutes(2),
        "v0",
    );
    assert_eq!(queue(&earlier), ["target:acme/app#1"]);
}

#[test]
fn annotations_never_revive_or_invent_work() {
    let mut s = fleet();
    annotate(&mut s, "3", json!({"kind": "dismiss"}));
    annotate(&mut s, "99", json!({"kind": "snooze", "until": ahead(30)}));
    let (_, m) = s.model();
    let (_, plain) = fleet().model();
    assert_eq!(
        m.rows, plain.rows,
        "rows are the same with and without annotations"
    );
    let done = m.rows.iter().find(|r| r.id == "target:acme/app#3").unwrap();
    assert_eq!(done.state, RowState::Done);
    assert!(!m.rows.iter().any(|r| r.target == "99"));
}

#[test]
fn a_malformed_annotation_is_a_warning_and_the_rest_renders() {
    let mut s = fleet();
    s.0.push(("annotations/acme/app/1.json".into(), b"{oops".to_vec()));
    annotate(&mut s, "2", json!({"kind": "forever"}));
    let (inputs, m) = s.model();
    assert_eq!(inputs.malformed.len(), 2);
    assert_eq!(m.warnings.len(), 2, "{:?}", m.warnings);
    assert!(
        m.warnings[1].contains(&AnnotationInvalid::Kind.to_string()),
        "{:?}",
        m.warnings
    );
    assert_eq!(queue(&m), ["target:acme/app#1", "target:acme/app#2"]);
    assert_eq!(m.rows.len(), 3);
}

#[test]
fn the_next_expiry_is_the_earliest_active_snooze() {
    let mut s = fleet();
    annotate(&mut s, "1", json!({"kind": "snooze", "until": ahead(90)}));
    annotate(&mut s, "2", json!({"kind": "snooze", "until": ahead(30)}));
    annotate(&mut s, "3", json!({"kind": "dismiss"}));
    let (_, m) = s.model();
    assert_eq!(next_expiry(&m.annotations), time::parse(&ahead(30)));
    let mut s = fleet();
    annotate(&mut s, "2", json!({"kind": "snooze", "until": ago(30)}));
    annotate(&mut s, "3", json!({"kind": "dismiss"}));
    assert_eq!(
        next_expiry(&s.model().1.annotations),
        None,
        "expired or not a snooze"
    );
}
