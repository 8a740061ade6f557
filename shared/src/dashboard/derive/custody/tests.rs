//! The custody timeline: generations on every claim entry, liveness spans split at the
//! heartbeat's ttl and 4 × ttl and clipped where custody changed hands, and the order of
//! entries.

use serde_json::json;

use super::*;
use crate::dashboard::fixtures::ago;
use crate::dashboard::fixtures::ahead;
use crate::dashboard::fixtures::now;
use crate::dashboard::fixtures::Records;
use crate::dashboard::inputs::records::Inputs;

/// The timeline of acme/app#7 in `s`.
fn of(s: &Records) -> Vec<TimelineEntry> {
    let inputs: Inputs = s.inputs();
    let claim = inputs
        .claims
        .iter()
        .map(AsRef::as_ref)
        .find(|c| c.target == "7");
    let mut events: Vec<&EventIn> = inputs
        .events
        .iter()
        .map(AsRef::as_ref)
        .filter(|e| e.target.as_deref() == Some("7"))
        .collect();
    events.sort_by_key(|e| e.at);
    let beats: Vec<&HeartbeatIn> = inputs
        .heartbeats
        .iter()
        .map(AsRef::as_ref)
        .filter(|h| h.target.as_deref() == Some("7"))
        .collect();
    timeline(claim, &events, &beats, now())
}

fn acquired(s: &mut Records, id: &str, agent: &str, generation: u64, age: i64) {
    s.event(
        "b",
        id,
        "claim.acquired",
        json!({"repo": "acme/app", "target": "7", "agent_id": agent, "generation": generation}),
        age,
    );
}

/// Label, start, end and generation of each entry.
type Brief = (String, Option<String>, Option<String>, Option<String>);

fn brief(t: &[TimelineEntry]) -> Vec<Brief> {
    t.iter()
        .map(|e| {
            (
                e.label.clone(),
                e.at.clone(),
                e.until.clone(),
                e.generation.clone(),
            )
        })
        .collect()
}

#[test]
fn regression_renewals_keep_their_generation() {
    let state = |record_generation: u64| {
        let mut s = Records::new();
        acquired(&mut s, "1", "w1", 1, 50);
        acquired(&mut s, "2", "w1", 2, 40);
        acquired(&mut s, "3", "w2", 3, 30);
        s.put(
            "claims/acme/app/7.json",
            json!({"repo": "acme/app", "target": "7", "agent_id": "w2", "status": "active",
                   "generation": record_generation, "updated_at": ago(20)}),
        );
        s
    };
    let t = of(&state(4));
    let claims: Vec<(&str, Option<&str>)> = t
        .iter()
        .filter(|e| e.is_claim())
        .map(|e| (e.label.as_str(), e.generation.as_deref()))
        .collect();
    assert_eq!(
        claims,
        [
            ("acquired by w1", Some("1")),
            ("renewed by w1", Some("2")),
            ("w1 → w2", Some("3")),
            // The claim record was renewed since its last event: the new generation shows.
            ("renewed by w2", Some("4")),
        ]
    );
    // The record at the generation its last event named adds nothing.
    assert_eq!(of(&state(3)).iter().filter(|e| e.is_claim()).count(), 3);
}

#[test]
fn regression_liveness_is_spans_not_one_latest_entry() {
    // Beat 100 minutes ago with a 10-minute ttl: live 10m, stale 30m, dead since.
    let mut s = Records::new();
    s.put(
        "heartbeats/w1.json",
        json!({"agent_id": "w1", "repo": "acme/app", "target": "7", "status": "implementing",
               "updated_at": ago(100), "expires_at": ago(90)}),
    );
    let t = of(&s);
    assert_eq!(
        brief(&t),
        [
            ("live".into(), Some(ago(100)), Some(ago(90)), None),
            ("stale".into(), Some(ago(90)), Some(ago(60)), None),
            ("dead".into(), Some(ago(60)), Some(ago(0)), None),
        ]
    );
    assert!(t.iter().all(|e| e.kind == TimelineKind::Liveness));
    assert_eq!(t[0].duration().as_deref(), Some("10m"));
    assert_eq!(t[1].duration().as_deref(), Some("30m"));
    assert_eq!(t[2].agent.as_deref(), Some("w1"));
    assert_eq!(t[2].status.as_deref(), Some("implementing"));
}

#[test]
fn spans_are_clipped_at_takeover_and_release() {
    // w1 beat 100 minutes ago (ttl 10m); w2 took over 70 minutes ago and released 5 ago.
    let mut s = Records::new();
    acquired(&mut s, "1", "w1", 1, 110);
    acquired(&mut s, "2", "w2", 2, 70);
    s.event(
        "b",
        "3",
        "claim.released",
        json!({"repo": "acme/app", "target": "7", "agent_id": "w2"}),
        5,
    )
    .put(
        "heartbeats/w1.json",
        json!({"agent_id": "w1", "repo": "acme/app", "target": "7", "status": "implementing",
               "updated_at": ago(100), "expires_at": ago(90)}),
    )
    .put(
        "heartbeats/w2.json",
        json!({"agent_id": "w2", "repo": "acme/app", "target": "7", "status": "verifying",
               "updated_at": ago(8), "expires_at": ahead(2)}),
    );
    let t = of(&s);
    assert_eq!(
        brief(&t),
        [
            (
                "acquired by w1".into(),
                Some(ago(110)),
                None,
                Some("1".into())
            ),
            ("live".into(), Some(ago(100)), Some(ago(90)), None),
            ("stale".into(), Some(ago(90)), Some(ago(70)), None),
            ("w1 → w2".into(), Some(ago(70)), None, Some("2".into())),
            ("live".into(), Some(ago(8)), Some(ago(5)), None),
            (
                "released by w2".into(),
                Some(ago(5)),
                None,
                Some("2".into())
            ),
        ]
    );
    assert_eq!(t[2].agent.as_deref(), Some("w1"));
    assert_eq!(t[4].agent.as_deref(), Some("w2"));
}

#[test]
fn live_span_runs_until_now_and_odd_beats_still_show() {
    let mut s = Records::new();
    s.beat("w1", "acme/app", "7", None, "implementing", 3);
    assert_eq!(
        brief(&of(&s)),
        [("live".into(), Some(ago(3)), Some(ago(0)), None)]
    );
    // A heartbeat with no expiry: one entry of its liveness now, with no end.
    let mut s = Records::new();
    s.put(
        "heartbeats/w1.json",
        json!({"agent_id": "w1", "repo": "acme/app", "target": "7", "updated_at": ago(3)}),
    );
    assert_eq!(
        brief(&of(&s)),
        [("unknown".into(), Some(ago(3)), None, None)]
    );
    // A non-positive ttl is dead from the beat on.
    let mut s = Records::new();
    s.put(
        "heartbeats/w1.json",
        json!({"agent_id": "w1", "repo": "acme/app", "target": "7",
               "updated_at": ago(3), "expires_at": ago(3)}),
    );
    assert_eq!(
        brief(&of(&s)),
        [("dead".into(), Some(ago(3)), Some(ago(0)), None)]
    );
}

#[test]
fn ties_go_claim_liveness_event_phase_and_phases_are_spans() {
    let mut s = Records::new();
    acquired(&mut s, "1", "w1", 1, 30);
    s.event(
        "b",
        "2",
        "phase.changed",
        json!({"repo": "acme/app", "target": "7", "agent_id": "w1", "status": "implementing"}),
        30,
    )
    .event(
        "b",
        "3",
        "note",
        json!({"repo": "acme/app", "target": "7", "agent_id": "w1"}),
        30,
    )
    .event(
        "b",
        "4",
        "phase.changed",
        json!({"repo": "acme/app", "target": "7", "agent_id": "w1", "status": "verifying"}),
        10,
    )
    .put(
        "heartbeats/w1.json",
        json!({"agent_id": "w1", "repo": "acme/app", "target": "7", "status": "implementing",
               "updated_at": ago(30), "expires_at": ahead(30)}),
    );
    let t = of(&s);
    let kinds: Vec<TimelineKind> = t.iter().map(|e| e.kind).collect();
    assert_eq!(
        kinds,
        [
            TimelineKind::Acquired,
            TimelineKind::Liveness,
            TimelineKind::Event,
            TimelineKind::Phase,
            TimelineKind::Phase,
        ]
    );
    // Each phase runs until the next one, the last until now.
    assert_eq!(t[3].until, Some(ago(10)));
    assert_eq!(t[4].until, Some(ago(0)));
    assert_eq!(t[3].duration().as_deref(), Some("20m"));
    // A release ends the open phase, and an event with no time sorts last.
    s.event(
        "b",
        "5",
        "claim.released",
        json!({"repo": "acme/app", "target": "7", "agent_id": "w1"}),
        4,
    )
    .put(
        "events/b/6.json",
        json!({"event_id": "6", "type": "note", "repo": "acme/app", "target": "7"}),
    );
    let t = of(&s);
    let verifying = t.iter().find(|e| e.label == "verifying").expect("phase");
    assert_eq!(verifying.until, Some(ago(4)));
    assert_eq!(t.last().map(|e| e.at.clone()), Some(None));
}

#[test]
fn renewals_from_others_are_ignored_and_a_released_record_alone_shows() {
    let mut s = Records::new();
    acquired(&mut s, "1", "w1", 1, 30);
    s.event(
        "b",
        "2",
        "renewed",
        json!({"repo": "acme/app", "target": "7", "agent_id": "w9"}),
        20,
    )
    .event(
        "b",
        "3",
        "renewed",
        json!({"repo": "acme/app", "target": "7", "agent_id": "w1", "generation": 2}),
        10,
    );
    let labels: Vec<String> = of(&s).into_iter().map(|e| e.label).collect();
    assert_eq!(labels, ["acquired by w1", "renewed by w1"]);
    let mut s = Records::new();
    s.put(
        "claims/acme/app/7.json",
        json!({"repo": "acme/app", "target": "7", "agent_id": "w1", "status": "released",
               "updated_at": ago(5)}),
    );
    let t = of(&s);
    assert_eq!(
        brief(&t),
        [("released by w1".into(), Some(ago(5)), None, None)]
    );
}
