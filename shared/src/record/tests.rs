//! The record module's tests: stored bytes parse back, and round trips of every record
//! kind (parse → serialise is byte-identical; unknown fields and known fields of the wrong
//! JSON type survive every write the rules make).

use std::collections::BTreeSet;

use serde_json::json;
use serde_json::Value;

use super::*;
use crate::rules::claim;
use crate::rules::closeout;
use crate::rules::gc;
use crate::rules::heartbeat;
use crate::rules::Ctx;
use crate::snapshot::MemorySnapshot;
use crate::snapshot::Snapshot;
use crate::time;

/// Returns `v` as stored bytes (pretty JSON, trailing newline).
fn stored(v: &Value) -> Vec<u8> {
    to_bytes(v.as_object().unwrap())
}

/// Parses stored bytes as kind `T` and writes them back.
fn round_trip<T>(bytes: &[u8]) -> Vec<u8>
where
    T: serde::de::DeserializeOwned + serde::Serialize,
{
    let parsed: T = serde_json::from_slice(bytes).unwrap();
    let mut out = serde_json::to_vec_pretty(&parsed).unwrap();
    out.push(b'\n');
    out
}

fn ctx() -> Ctx {
    Ctx {
        now: time::parse("2026-07-12T01:07:00Z").unwrap(),
        nonce: 3,
        identity: Identity {
            machine_id: Some("box".into()),
            ..Default::default()
        },
    }
}

/// A claim as `claim` writes it, plus a field from a newer writer and a wrong-typed one.
fn claim_json() -> Value {
    json!({"schema_version": 1, "repo": "acme/app", "target": "50", "agent_id": "worker-a",
           "batch_id": "b2", "branch": 7, "status": "active", "claimed_at": "2026-07-12T00:00:00Z",
           "updated_at": "2026-07-12T00:00:00Z", "expires_at": "2026-07-12T01:10:00Z",
           "host": "codex", "machine_id": "box", "x_future": {"nested": [1, "two"]}})
}

#[test]
fn parse_errors() {
    assert_eq!(from_bytes(b"[1]"), Err(ParseError::NotObject));
    assert!(matches!(from_bytes(b"{"), Err(ParseError::Json(_))));
    let r = from_bytes(b"{\"b\":1,\"a\":2}").unwrap();
    assert_eq!(r.keys().collect::<Vec<_>>(), ["b", "a"]);
    assert_eq!(to_bytes(&r), b"{\n  \"b\": 1,\n  \"a\": 2\n}\n");
}

#[test]
fn every_kind_round_trips_byte_for_byte() {
    let claim = stored(&claim_json());
    assert_eq!(round_trip::<Claim>(&claim), claim);
    let beat = stored(
        &json!({"schema_version": 1, "agent_id": "w1", "repo": "acme/app",
        "target": "7", "batch_id": "b1", "machine_id": "m1", "status": "in_progress",
        "updated_at": "2026-07-12T01:00:00Z", "expires_at": "2026-07-12T01:15:00Z",
        "status_raw": 5, "x_future": true}),
    );
    assert_eq!(round_trip::<Heartbeat>(&beat), beat);
    let manifest = stored(
        &json!({"schema_version": 1, "batch_id": "b2", "repo": "acme/app",
        "lanes": [{"name": "code", "owner": "worker-a", "targets": ["50"], "x_lane": 1}],
        "registered_at": "2026-07-12T00:00:00Z", "updated_at": "2026-07-12T00:00:00Z",
        "x_future": null}),
    );
    assert_eq!(round_trip::<Manifest>(&manifest), manifest);
    let lane = stored(
        &json!({"name": "code", "owner": "worker-a", "targets": ["50"],
        "terminal": "done", "x_lane": [1]}),
    );
    assert_eq!(round_trip::<Lane>(&lane), lane);
    let event = stored(
        &json!({"schema_version": 1, "event_id": "e1", "batch_id": "b2",
        "type": "help_requested", "agent_id": "w1", "at": "2026-07-12T00:00:00Z",
        "reason": "question", "machine_id": "box", "x_future": "kept"}),
    );
    assert_eq!(round_trip::<Event>(&event), event);
    let closed = stored(&json!({"schema_version": 2, "event_id": "lane_closed-1",
        "batch_id": "b2", "type": "lane_closed", "lane": "code", "agent_id": "worker-a",
        "repo": "acme/app", "target": "50", "terminal": "done", "workspace": "default",
        "closed_by": {"agent_id": "worker-a", "machine": "box"}, "at": "2026-07-12T00:00:00Z",
        "x_future": 1}));
    assert_eq!(round_trip::<LaneClosed>(&closed), closed);
    let archive = Archive::new(
        Archived::Record {
            source_path: "claims/acme/app/50.json".into(),
            data: claim_json().as_object().unwrap().clone(),
        },
        "terminal_claim",
        false,
        "2026-07-12T00:00:00Z".into(),
        "2026-08-11T00:00:00Z".into(),
    );
    let bytes = to_bytes(&archive);
    assert_eq!(round_trip::<Archive>(&bytes), bytes);
    assert_eq!(
        archive.keys().collect::<Vec<_>>(),
        [
            "schema_version",
            "record_family",
            "source_path",
            "reason",
            "synthetic",
            "archived_at",
            "delete_after",
            "data"
        ],
        "the published envelope order"
    );
}

#[test]
fn wrong_typed_known_fields_read_as_absent_and_stay_stored() {
    let mut r = claim_json().as_object().unwrap().clone();
    field::AGENT_ID.set(&mut r, 5);
    let c = Claim::from(r.clone());
    assert_eq!(c.agent_id(), None);
    assert_eq!(c.active_holder(), None);
    assert_eq!(c.branch(), None, "a number is not a branch");
    assert_eq!(field::AGENT_ID.get(&c), Some(&json!(5)));
    assert_eq!(c.into_record(), r);
}

/// Found by `make fuzz` (fuzz/regressions/record_round_trip/): an 83-digit integer parsed
/// to 2.1555555555555553e82, which serialised and parsed again as …557e82, so each rewrite
/// of the record changed the value. serde_json's `float_roundtrip` parses exactly.
#[test]
fn regression_long_number_drifts_on_rewrite() {
    let text = format!(
        "{{\"n\":21{},\"f\":0.30000000000000004}}",
        "5".repeat(83 - 2)
    );
    let once = from_bytes(text.as_bytes()).unwrap();
    let twice = from_bytes(&to_bytes(&once)).unwrap();
    assert_eq!(once, twice);
    assert_eq!(to_bytes(&twice), to_bytes(&once));
}

#[test]
fn claim_renewal_and_release_keep_unknown_fields() {
    let mut snap = MemorySnapshot::default();
    snap.put("claims/acme/app/50.json", &claim_json());
    let req = claim::ClaimRequest {
        agent: "worker-a".parse().unwrap(),
        repo: "acme/app".parse().unwrap(),
        target: "50".parse().unwrap(),
        batch: None,
        branch: None,
        ttl_seconds: claim::DEFAULT_TTL_SECONDS,
        metadata: Record::new(),
    };
    let plan = claim::decide(&snap, &req, &ctx()).unwrap();
    assert_eq!(plan.outcome.kind, claim::ClaimKind::Renewed);
    let renewed = &plan.state[0].1;
    assert_eq!(renewed["x_future"], json!({"nested": [1, "two"]}));
    assert_eq!(
        renewed["branch"],
        json!(7),
        "a wrong-typed field survives in place"
    );
    let keys: Vec<&String> = renewed.keys().collect();
    let before: Vec<String> = claim_json().as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        keys,
        before.iter().collect::<Vec<_>>(),
        "same fields, same order"
    );

    let release = claim::ReleaseRequest {
        agent: "worker-a".parse().unwrap(),
        repo: "acme/app".parse().unwrap(),
        target: "50".parse().unwrap(),
        branch: None,
        handoff_to: None,
        handoff_note: None,
        metadata: Record::new(),
    };
    let plan = claim::release(&snap, &release, &ctx()).unwrap();
    assert_eq!(plan.state[0].1["x_future"], json!({"nested": [1, "two"]}));
    assert_eq!(plan.state[0].1["branch"], json!(7));
}

#[test]
fn heartbeat_keeps_unknown_fields() {
    let mut snap = MemorySnapshot::default();
    snap.put(
        "heartbeats/w1.json",
        &json!({"schema_version": 1, "agent_id": "w1", "repo": "acme/app", "target": "7",
                "status": "in_progress", "updated_at": "2026-07-12T01:00:00Z",
                "expires_at": "2026-07-12T01:15:00Z", "phase": 3, "x_future": [true]}),
    );
    let req = heartbeat::HeartbeatRequest {
        agent: "w1".parse().unwrap(),
        repo: None,
        target: None,
        batch: None,
        branch: None,
        status: None,
        ttl_seconds: heartbeat::DEFAULT_TTL_SECONDS,
        metadata: Record::new(),
    };
    let plan = heartbeat::decide(&snap, &req, &ctx()).unwrap();
    let beat = &plan.heartbeats[0].1;
    assert_eq!(beat["x_future"], json!([true]));
    assert_eq!(beat["phase"], json!(3));
}

#[test]
fn closeout_keeps_unknown_fields_of_claim_manifest_and_lane() {
    let mut snap = MemorySnapshot::default();
    snap.put(
        "batches/b2.json",
        &json!({"schema_version": 1, "batch_id": "b2", "repo": "acme/app", "x_batch": 1,
                "lanes": [{"name": "code", "owner": "worker-a", "targets": ["50"], "x_lane": 2},
                          {"name": "docs", "owner": "worker-b", "targets": ["51"]}]}),
    );
    snap.put("claims/acme/app/50.json", &claim_json());
    let req = closeout::CloseoutRequest {
        entry: closeout::Entry::Release,
        agent: "worker-a".parse().unwrap(),
        repo: "acme/app".parse().unwrap(),
        target: "50".parse().unwrap(),
        batch: None,
        lane: None,
        terminal: "done".into(),
        pr_state: None,
        evidence_url: None,
        workspace: None,
        branch: None,
        metadata: Record::new(),
    };
    let plan = closeout::decide(&snap, &req, &ctx()).unwrap();
    let written = |prefix: &str| {
        plan.state
            .iter()
            .find(|(p, _)| p.starts_with(prefix))
            .map(|(_, r)| r.clone())
            .unwrap()
    };
    assert_eq!(
        written("claims/")["x_future"],
        json!({"nested": [1, "two"]})
    );
    let manifest = written("batches/");
    assert_eq!(manifest["x_batch"], json!(1));
    assert_eq!(manifest["lanes"][0]["x_lane"], json!(2));
    assert_eq!(manifest["lanes"][0]["terminal"], json!("done"));
}

#[test]
fn gc_archive_keeps_the_whole_record() {
    let mut snap = MemorySnapshot::default();
    let mut claim = claim_json();
    claim["status"] = json!("released");
    claim["updated_at"] = json!("2026-06-01T00:00:00Z");
    snap.put("claims/acme/app/50.json", &claim);
    let plan = gc::plan(
        &snap,
        &gc::Policy::default(),
        &gc::FAMILIES,
        &BTreeSet::new(),
        ctx().now,
    )
    .unwrap();
    let (path, envelope) = &plan.state[0];
    assert_eq!(path, "archive/claims/acme/app/50.json");
    assert_eq!(
        envelope["data"], claim,
        "archived as read, unknown fields included"
    );
    let reread = MemorySnapshot {
        files: [(path.clone(), to_bytes(envelope))].into(),
    };
    let archive: Archive = reread.read_as(path).unwrap().unwrap();
    assert_eq!(archive.source_path(), Some("claims/acme/app/50.json"));
}
