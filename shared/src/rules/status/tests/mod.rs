//! Unit tests for `rules::status`.

use chrono::Duration;
use serde_json::json;
use serde_json::Value;

use super::*;
use crate::output::status::StatusDocument;
use crate::snapshot::MemorySnapshot;
use crate::time;

fn now() -> Instant {
    time::parse("2026-06-20T12:00:00Z").unwrap()
}

fn at(mins: i64) -> String {
    time::format(now() + Duration::minutes(mins))
}

/// A heartbeat for `agent` with `status`, live unless the times say otherwise.
fn beat(agent: &str, status: &str) -> Value {
    json!({"schema_version": 1, "agent_id": agent, "status": status,
        "updated_at": at(-5), "expires_at": at(10)})
}

fn run(snap: &MemorySnapshot, scope: &Scope) -> Value {
    document(&status(snap, scope, now()).unwrap(), "0.1.0")
}

/// The `status --json` document of `report`, without a `sync` summary.
fn document(report: &StatusReport, version: &'static str) -> Value {
    serde_json::to_value(StatusDocument::new(report, version, None)).unwrap()
}

fn target_scope_of(target: &str) -> Scope {
    Scope::from_flags(Some("acme/app"), Some(target), None, false).unwrap()
}

fn batch_scope_of(batch: &str) -> Scope {
    Scope::Batch {
        batch: batch.parse().unwrap(),
    }
}

fn lane<'a>(payload: &'a Value, name: &str) -> &'a Value {
    let lanes = payload["batches"][0]["lanes"].as_array().unwrap();
    lanes.iter().find(|l| l["name"] == name).unwrap()
}

#[test]
fn unscoped_projects_each_family() {
    let mut snap = MemorySnapshot::default();
    snap.put(
        "claims/acme/app/7.json",
        &json!({"schema_version": 1, "repo": "acme/app", "target": "7", "agent_id": "w1",
            "batch_id": "b1", "status": "active", "claimed_at": at(-30), "updated_at": at(-30),
            "expires_at": at(60), "host": "codex", "released_by": "x", "pr_url": null,
            "machine_id": "m1", "generation": 2}),
    );
    snap.put("claims/acme/app/8.json", &json!({"agent_id": "w2"}));
    snap.put(
        "heartbeats/w1.json",
        &json!({"schema_version": 1, "agent_id": "w1", "repo": "acme/app", "target": "7",
            "batch_id": "b1", "status": "done", "status_raw": "completed",
            "updated_at": at(-5), "expires_at": at(10), "phase": "review"}),
    );
    snap.put(
        "heartbeats/w2.json",
        &json!({"status": "blocked", "updated_at": at(-20),
        "expires_at": at(-5)}),
    );
    snap.put(
        "batches/b1.json",
        &json!({"schema_version": 1, "batch_id": "b1", "repo": "acme/app", "objective": "ship",
        "registered_at": at(-60), "custom": true, "lanes": [
            {"name": "api", "owner": "w1", "targets": ["7"], "branch": "api-br"},
            {"name": "docs", "owner": "w2", "targets": [8], "depends_on": ["b1:api", "b0:x"]},
            {"name": "qa", "owner": "w3", "status": "in_progress", "depends_on": "b1:docs"}
        ]}),
    );
    snap.put(
        "events/b1/e1.json",
        &json!({"schema_version": 1, "event_id": "e1", "batch_id": "b1", "type": "phase",
            "lane": "api", "agent_id": "w1", "phase": "validating", "message": "running tests",
            "at": at(-3), "custom": 1}),
    );
    let payload = run(
        &snap,
        &Scope::All {
            include_archived: false,
        },
    );
    assert_eq!(payload["version"], "0.1.0");
    assert_eq!(payload["scope"], json!({"kind": "all"}));
    assert_eq!(payload["degraded"], json!([]));
    assert_eq!(payload["section_notes"], json!({}));
    assert!(payload.get("archive").is_none());
    assert_eq!(
        payload["claims"],
        json!([
            {"path": "claims/acme/app/7.json", "repo": "acme/app", "target": "7", "status": "active",
             "agent_id": "w1", "branch": "UNKNOWN", "expires_at": at(60), "batch_id": "b1",
             "host": "codex", "machine_id": "m1", "generation": 2},
            {"path": "claims/acme/app/8.json", "repo": "acme/app", "target": "8", "status": "unknown",
             "agent_id": "w2", "branch": "UNKNOWN", "expires_at": "UNKNOWN"}
        ])
    );
    assert_eq!(
        payload["heartbeats"],
        json!([
            {"path": "heartbeats/w1.json", "agent_id": "w1", "status": "done", "liveness": "live",
             "target": "acme/app#7", "updated_at": at(-5), "batch_id": "b1", "phase": "review",
             "status_raw": "completed"},
            {"path": "heartbeats/w2.json", "agent_id": "w2", "status": "blocked", "liveness": "stale",
             "target": "-", "updated_at": at(-20)}
        ])
    );
    assert_eq!(
        payload["batches"],
        json!([{"path": "batches/b1.json", "batch_id": "b1", "lanes": [
            {"name": "api", "owner": "w1", "targets": ["7"], "status": "done", "liveness": "live",
             "deps": [], "blocked_on": [], "branch": "api-br"},
            {"name": "docs", "owner": "w2", "targets": ["8"], "status": "blocked", "liveness": "stale",
             "deps": ["b1:api", "b0:x"], "blocked_on": ["b0:x"]},
            {"name": "qa", "owner": "w3", "targets": [], "status": "in_progress",
             "liveness": "no-heartbeat", "deps": ["b1:docs"], "blocked_on": ["b1:docs"]}
        ], "repo": "acme/app", "objective": "ship", "registered_at": at(-60)}])
    );
    assert_eq!(
        payload["events"],
        json!([{"path": "events/b1/e1.json", "batch_id": "b1", "type": "phase", "at": at(-3),
            "event_id": "e1", "lane": "api", "agent_id": "w1", "message": "running tests",
            "phase": "validating"}])
    );
}

#[test]
fn unscoped_events_sort_by_at_then_path() {
    let mut snap = MemorySnapshot::default();
    snap.put("events/b2/a.json", &json!({"type": "x", "at": at(2)}));
    snap.put("events/b1/z.json", &json!({"type": "x", "at": at(1)}));
    snap.put("events/b1/y.json", &json!({"type": "x", "at": at(1)}));
    snap.put("events/b3/n.json", &json!({"type": "x"}));
    snap.put("events/b0/m.json", &json!({"type": "x", "at": at(3)}));
    let payload = run(
        &snap,
        &Scope::All {
            include_archived: false,
        },
    );
    let paths: Vec<&str> = payload["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        [
            "events/b3/n.json",
            "events/b1/y.json",
            "events/b1/z.json",
            "events/b2/a.json",
            "events/b0/m.json"
        ]
    );
    assert_eq!(payload["events"][0]["at"], "UNKNOWN");
    assert_eq!(
        payload["events"][0]["batch_id"], "b3",
        "batch id falls back to the folder"
    );
}

#[test]
fn unscoped_notes_malformed_lane_names_and_lists_archive() {
    let mut snap = MemorySnapshot::default();
    snap.put(
        "batches/b.json",
        &json!({"lanes": [{"name": "feature:login"}, {"name": "ok"}]}),
    );
    snap.put(
        "archive/claims/acme/app/1.json",
        &json!({"schema_version": 1, "record_family": "archived_record",
        "source_path": "claims/acme/app/1.json", "reason": "terminal_claim", "synthetic": false,
        "archived_at": at(0), "delete_after": at(60), "data": {}}),
    );
    snap.put(
        "archive/events/b/compact-1.json",
        &json!({"record_family": "compacted_events",
        "source_paths": ["events/b/1.json", "events/b/2.json"], "reason": null}),
    );
    let report = status(
        &snap,
        &Scope::All {
            include_archived: true,
        },
        now(),
    )
    .unwrap();
    let payload = document(&report, "v");
    assert_eq!(
        payload["degraded"],
        json!(["malformed lane names: feature:login"])
    );
    assert_eq!(
        payload["section_notes"],
        json!({"lanes": "malformed lane names: feature:login"})
    );
    assert_eq!(
        payload["archive"],
        json!([
            {"path": "archive/claims/acme/app/1.json", "record_family": "archived_record",
             "source_path": "claims/acme/app/1.json", "reason": "terminal_claim", "synthetic": false,
             "archived_at": at(0), "delete_after": at(60)},
            {"path": "archive/events/b/compact-1.json", "record_family": "compacted_events",
             "source_paths": ["events/b/1.json", "events/b/2.json"], "synthetic": false,
             "archived_at": "UNKNOWN", "delete_after": "UNKNOWN"}
        ])
    );
    let text = report.to_text();
    assert!(text.contains("archive\n- archive/claims/acme/app/1.json archived_record source claims/acme/app/1.json delete_after "), "{text}");
    assert!(
        text.contains(
            "compacted_events source events/b/1.json,events/b/2.json delete_after UNKNOWN\n"
        ),
        "{text}"
    );
}

#[test]
fn unscoped_fails_on_any_malformed_record() {
    for path in [
        "claims/acme/app/7.json",
        "heartbeats/w1.json",
        "batches/b.json",
        "events/b/e.json",
    ] {
        let mut snap = MemorySnapshot::default();
        snap.put("claims/acme/app/1.json", &json!({"agent_id": "w"}));
        snap.put_raw(path, b"{");
        let err = status(
            &snap,
            &Scope::All {
                include_archived: false,
            },
            now(),
        )
        .unwrap_err();
        assert!(
            matches!(&err, ReadError::Malformed { path: p, .. } if p == path),
            "{path}: {err:?}"
        );
    }
}

#[test]
fn target_scope_notes() {
    let claim = |agent: Value| {
        json!({"repo": "acme/app", "target": "7", "agent_id": agent, "status": "active",
        "branch": "b-7", "expires_at": at(60)})
    };
    // (claim holder, heartbeat file for w1, expected heartbeats note, heartbeat rows)
    type Case = (
        Option<Value>,
        Option<&'static [u8]>,
        Option<&'static str>,
        usize,
    );
    let cases: [Case; 8] = [
        (
            Some(json!("w1")),
            Some(br#"{"agent_id":"w1","status":"in_progress"}"#),
            None,
            1,
        ),
        (
            Some(json!("w1")),
            None,
            Some("holder heartbeat not found"),
            0,
        ),
        (
            Some(json!("w1")),
            Some(b"{"),
            Some("holder heartbeat unreadable"),
            0,
        ),
        (
            Some(json!("w1")),
            Some(br#"{"agent_id":"w9","status":"done"}"#),
            Some("holder heartbeat mismatched"),
            0,
        ),
        (Some(json!(null)), None, Some("claim holder not set"), 0),
        (
            Some(json!("bad/agent")),
            None,
            Some("holder heartbeat not found"),
            0,
        ),
        (
            Some(json!("bad..agent")),
            None,
            Some("holder heartbeat not found"),
            0,
        ),
        (None, Some(br#"{"agent_id":"w1"}"#), None, 0),
    ];
    for (holder, hb, note, rows) in cases {
        let mut snap = MemorySnapshot::default();
        if let Some(holder) = &holder {
            snap.put("claims/acme/app/7.json", &claim(holder.clone()));
        }
        if let Some(bytes) = hb {
            snap.put_raw("heartbeats/w1.json", bytes);
        }
        let payload = run(&snap, &target_scope_of("7"));
        let ctx = format!("{holder:?}");
        assert_eq!(
            payload["scope"],
            json!({"kind": "target", "repo": "acme/app", "target": "7"}),
            "{ctx}"
        );
        assert_eq!(
            payload["section_notes"]["heartbeats"].as_str(),
            note,
            "{ctx}"
        );
        assert_eq!(
            payload["heartbeats"].as_array().unwrap().len(),
            rows,
            "{ctx}"
        );
        let mut degraded = vec!["not checked in target scope"];
        degraded.extend(note);
        assert_eq!(payload["degraded"], json!(degraded), "{ctx}");
        assert_eq!(payload["batches"], json!([]), "{ctx}");
        assert_eq!(payload["events"], json!([]), "{ctx}");
        assert_eq!(
            payload["claims"].as_array().unwrap().len(),
            usize::from(holder.is_some()),
            "{ctx}"
        );
    }
}

#[test]
fn target_scope_fails_on_malformed_claim() {
    let mut snap = MemorySnapshot::default();
    snap.put_raw("claims/acme/app/7.json", b"[]");
    let err = status(&snap, &target_scope_of("7"), now()).unwrap_err();
    assert!(matches!(err, ReadError::Malformed { .. }), "{err:?}");
}

#[test]
fn batch_scope_reports_a_missing_batch() {
    let mut snap = MemorySnapshot::default();
    snap.put(
        "events/missing/e.json",
        &json!({"type": "note", "at": at(0)}),
    );
    let payload = run(&snap, &batch_scope_of("missing"));
    assert_eq!(
        payload["scope"],
        json!({"kind": "batch", "batch_id": "missing"})
    );
    assert_eq!(
        payload["section_notes"],
        json!({"claims": "not checked in batch scope", "batches": "batch not found"})
    );
    assert_eq!(payload["batches"], json!([]));
    assert_eq!(
        payload["events"].as_array().unwrap().len(),
        1,
        "events are listed even without a manifest"
    );
}

#[test]
fn batch_scope_notes_lane_owner_heartbeats() {
    let mut snap = MemorySnapshot::default();
    snap.put("batches/b.json", &json!({"batch_id": "b", "lanes": [
        {"name": "a", "owner": "w-bad"}, {"name": "b", "owner": "w-gone"}, {"name": "c", "owner": "w-other"},
        {"name": "d"}, {"name": "e", "owner": ""}, "stray", {"name": "f", "owner": "w-ok"},
        {"name": "g", "owner": "w-bad2"}, {"name": "h", "owner": "bad/id"}
    ]}));
    snap.put_raw("heartbeats/w-bad.json", b"{");
    snap.put_raw("heartbeats/w-bad2.json", b"7");
    snap.put("heartbeats/w-other.json", &beat("someone-else", "done"));
    snap.put("heartbeats/w-ok.json", &beat("w-ok", "in_progress"));
    snap.put("heartbeats/bad/id.json", &beat("bad/id", "done"));
    let payload = run(&snap, &batch_scope_of("b"));
    assert_eq!(
        payload["section_notes"]["heartbeats"],
        "lane-owner heartbeats unreadable: w-bad, w-bad2; lane-owner heartbeats mismatched: w-other; \
         lane-owner heartbeats not found: w-gone, UNKNOWN, bad/id"
    );
    let liveness: Vec<&str> = payload["batches"][0]["lanes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["liveness"].as_str().unwrap())
        .collect();
    assert_eq!(
        liveness,
        [
            "unreadable",
            "no-heartbeat",
            "mismatched",
            "no-heartbeat",
            "no-heartbeat",
            "no-heartbeat",
            "live",
            "unreadable",
            "no-heartbeat"
        ]
    );
    assert_eq!(payload["heartbeats"].as_array().unwrap().len(), 1);
    assert_eq!(payload["heartbeats"][0]["agent_id"], "w-ok");
    assert_eq!(lane(&payload, "f")["status"], "in_progress");
    assert_eq!(lane(&payload, UNKNOWN_NAME)["owner"], "UNKNOWN");
}

const UNKNOWN_NAME: &str = "UNKNOWN";

#[test]
fn batch_scope_notes_malformed_lanes_and_dependencies() {
    let mut snap = MemorySnapshot::default();
    snap.put(
        "batches/b.json",
        &json!({"batch_id": "b", "lanes": [
            {"name": "feature:login", "owner": "w9"},
            {"name": "docs", "owner": "w1", "depends_on": ["backend", "bad/batch:x", "bad..batch:x",
                "a:missing", "gone:api", "a:api", "gone:other", "b:feature:login"]}
        ]}),
    );
    snap.put(
        "batches/a.json",
        &json!({"lanes": [{"name": "api", "owner": "w2", "status": "done"}]}),
    );
    snap.put("heartbeats/w1.json", &beat("w1", "blocked"));
    snap.put("heartbeats/w9.json", &beat("w9", "done"));
    let payload = run(&snap, &batch_scope_of("b"));
    let notes = &payload["section_notes"];
    assert_eq!(notes["lanes"], "malformed lane names: feature:login");
    assert_eq!(
        notes["dependencies"],
        "malformed dependency refs: backend, bad/batch:x, bad..batch:x, a:missing"
    );
    assert_eq!(
        notes["unresolved_dependencies"],
        "unresolved dependency refs: gone:api, gone:other, b:feature:login",
        "split at the last ':', so b:feature:login names batch b:feature"
    );
    assert_eq!(notes["heartbeats"], "lane-owner heartbeats not found: w2");
    let docs = lane(&payload, "docs");
    assert_eq!(
        docs["blocked_on"],
        json!([
            "backend",
            "bad/batch:x",
            "bad..batch:x",
            "a:missing",
            "gone:api",
            "gone:other",
            "b:feature:login"
        ]),
        "a:api is done through its manifest status"
    );
    assert_eq!(
        lane(&payload, "feature:login")["liveness"],
        "no-heartbeat",
        "a malformed lane reads no heartbeat"
    );
}

mod batch_scope;
