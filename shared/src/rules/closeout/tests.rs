//! Unit tests for terminal closeout: ids, idempotency, conflicts, authorization, stamps.
#![allow(clippy::type_complexity)]

use serde_json::json;

use super::*;
use crate::record::Identity;
use crate::snapshot::MemorySnapshot;

fn ctx(machine: Option<&str>) -> Ctx {
    Ctx {
        now: time::parse("2026-07-12T01:07:00Z").unwrap(),
        nonce: 3,
        identity: Identity {
            machine_id: machine.map(str::to_owned),
            ..Default::default()
        },
    }
}

fn state() -> MemorySnapshot {
    let mut snap = MemorySnapshot::default();
    snap.put(
        "batches/b2.json",
        &json!({"schema_version": 1, "batch_id": "b2", "repo": "acme/app",
                "lanes": [{"name": "code", "owner": "worker-a", "targets": ["50"]},
                          {"name": "docs", "owner": "worker-b", "targets": ["51"]}]}),
    );
    snap.put(
        "claims/acme/app/50.json",
        &json!({"schema_version": 1, "repo": "acme/app", "target": "50", "agent_id": "worker-a",
                "batch_id": "b2", "status": "active", "claimed_at": "2026-07-12T00:00:00Z",
                "updated_at": "2026-07-12T00:00:00Z", "expires_at": "2026-07-12T04:00:00Z", "host": "codex"}),
    );
    snap
}

fn req(entry: Entry, agent: &str, target: &str) -> CloseoutRequest {
    CloseoutRequest {
        entry,
        agent: agent.parse().unwrap(),
        repo: "acme/app".parse().unwrap(),
        target: target.parse().unwrap(),
        batch: Some("b2".parse().unwrap()),
        lane: None,
        terminal: "done".into(),
        pr_state: Some("merged".into()),
        evidence_url: None,
        workspace: None,
        branch: None,
        metadata: Record::new(),
    }
}

fn apply(snap: &mut MemorySnapshot, plan: &Plan<Closed>) {
    for (path, record) in &plan.state {
        snap.put(path, &Value::Object(record.clone()));
    }
}

#[test]
fn reservation_id_is_deterministic_per_lane() {
    assert_eq!(event_id("code"), "lane_closed-5694d08a2e53ffca");
}

#[test]
fn url_contract() {
    for ok in [
        "https://github.com/x/y/pull/1",
        "HtTpS://h",
        "http://h?q",
        "http://h#x",
    ] {
        assert!(is_http_url(ok), "{ok}");
    }
    for bad in [
        "ftp://h",
        "https://",
        "https:///x",
        "https://h x",
        "github.com/x",
        "javascript:alert(1)",
    ] {
        assert!(!is_http_url(bad), "{bad}");
    }
}

#[test]
fn terminal_release_closes_claim_lane_and_event_in_one_plan() {
    let mut snap = state();
    let plan = decide(
        &snap,
        &req(Entry::Release, "worker-a", "50"),
        &ctx(Some("box")),
    )
    .unwrap();
    assert_eq!(plan.outcome, Closed::Released);
    let paths: Vec<_> = plan.state.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "events/b2/lane_closed-5694d08a2e53ffca.json",
            "claims/acme/app/50.json",
            "batches/b2.json"
        ]
    );
    let event = &plan.state[0].1;
    assert_eq!(event["schema_version"], json!(2));
    assert_eq!(
        event["closed_by"],
        json!({"agent_id": "worker-a", "machine": "box"})
    );
    assert_eq!(event["host"], json!("codex"), "carried over from the claim");
    assert!(audit::is_valid_terminal_marker(event));
    let claim = &plan.state[1].1;
    assert_eq!(claim["status"], json!("released"));
    assert_eq!(claim["terminal"], json!("done"));
    assert_eq!(claim["pr_state"], json!("merged"));
    let lane = &plan.state[2].1["lanes"][0];
    assert_eq!(lane["terminal"], json!("done"));
    assert_eq!(lane["status"], json!("done"));
    assert!(
        plan.state[2].1.get("status").is_none(),
        "one lane is still open"
    );

    // An identical retry changes nothing.
    apply(&mut snap, &plan);
    let again = decide(&snap, &req(Entry::Release, "worker-a", "50"), &ctx(None)).unwrap();
    assert_eq!(again.outcome, Closed::AlreadyClosed);
    assert!(
        again.is_empty(),
        "machine attribution never fences a replay"
    );

    // A different closeout is refused.
    let mut other = req(Entry::Release, "worker-a", "50");
    other.terminal = "abandoned".into();
    assert_eq!(
        decide(&snap, &other, &ctx(None)).unwrap_err(),
        RuleError::Closeout(CloseoutError::Conflicting {
            lane: "code".into()
        })
    );
}

#[test]
fn last_lane_completes_the_batch_via_record_event() {
    let mut snap = state();
    let first = decide(
        &snap,
        &req(Entry::RecordEvent, "worker-a", "50"),
        &ctx(Some("m")),
    )
    .unwrap();
    apply(&mut snap, &first);
    let plan = decide(
        &snap,
        &req(Entry::RecordEvent, "worker-b", "51"),
        &ctx(Some("m")),
    )
    .unwrap();
    assert_eq!(
        plan.outcome,
        Closed::Recorded {
            batch: "b2".into(),
            event_id: event_id("docs")
        }
    );
    let batch = &plan.state.last().unwrap().1;
    assert_eq!(batch["status"], json!("completed"));
    assert_eq!(batch["completed_at"], json!("2026-07-12T01:07:00Z"));
}

#[test]
fn refusals() {
    let snap = state();
    let b2: BatchId = "b2".parse().unwrap();
    let cases: [(fn(&mut CloseoutRequest), CloseoutError); 7] = [
        (
            |r| r.terminal = "finished".into(),
            CloseoutError::UnknownTerminal {
                given: "finished".into(),
            },
        ),
        (
            |r| r.workspace = Some(String::new()),
            CloseoutError::Blank {
                option: CloseoutOption::Workspace,
            },
        ),
        (
            |r| r.evidence_url = Some("ftp://x".into()),
            CloseoutError::NotAnHttpUrl {
                option: CloseoutOption::EvidenceUrl,
                value: "ftp://x".into(),
            },
        ),
        (
            |r| r.batch = Some("nope".parse().unwrap()),
            CloseoutError::BatchNotFound {
                batch: "nope".parse().unwrap(),
            },
        ),
        (
            |r| r.repo = "acme/web".parse().unwrap(),
            CloseoutError::RepoMismatch { batch: b2.clone() },
        ),
        (
            |r| r.target = "99".parse().unwrap(),
            CloseoutError::NoSingleLane { batch: b2 },
        ),
        (
            |r| r.lane = Some("docs".parse().unwrap()),
            CloseoutError::TargetNotInLane {
                lane: "docs".into(),
            },
        ),
    ];
    for (setup, want) in cases {
        let mut r = req(Entry::RecordEvent, "worker-a", "50");
        setup(&mut r);
        assert_eq!(
            decide(&snap, &r, &ctx(None)).unwrap_err(),
            RuleError::Closeout(want)
        );
    }
    // Not the owner and not a lineage-admitted claimant.
    assert_eq!(
        decide(
            &snap,
            &req(Entry::RecordEvent, "intruder", "50"),
            &ctx(None)
        )
        .unwrap_err(),
        RuleError::Closeout(CloseoutError::NotLaneAgent {
            lane: "code".into(),
            agent: "intruder".parse().unwrap(),
        })
    );
}

#[test]
fn lineage_admitted_claimant_may_close() {
    let mut snap = state();
    snap.put(
        "claims/acme/app/50.json",
        &json!({"schema_version": 1, "repo": "acme/app", "target": "50", "agent_id": "rescuer",
                "batch_id": "b2", "status": "active", "expires_at": "2026-07-12T04:00:00Z"}),
    );
    let closing = req(Entry::RecordEvent, "rescuer", "50");
    assert!(
        decide(&snap, &closing, &ctx(None)).is_err(),
        "no admission event yet"
    );
    snap.put(
        "events/b2/20260712T005000.000000Z-00000001.json",
        &json!({"schema_version": 1, "event_id": "20260712T005000.000000Z-00000001", "batch_id": "b2",
                "type": "claim.acquired", "agent_id": "rescuer", "repo": "acme/app", "target": "50",
                "at": "2026-07-12T00:50:00Z"}),
    );
    assert!(decide(&snap, &closing, &ctx(None)).is_ok());
}

#[test]
fn terminal_release_needs_a_batch_claim() {
    let mut snap = state();
    snap.put(
        "claims/acme/app/50.json",
        &json!({"agent_id": "worker-a", "status": "active"}),
    );
    assert_eq!(
        decide(&snap, &req(Entry::Release, "worker-a", "50"), &ctx(None)).unwrap_err(),
        RuleError::Closeout(CloseoutError::ClaimWithoutBatch)
    );
}

#[test]
fn a_stamped_lane_refuses_a_different_closeout_even_without_its_event() {
    // The reservation event is gone (compacted or never imported); the lane stamp stands.
    let mut snap = state();
    snap.put(
        "batches/b2.json",
        &json!({"schema_version": 1, "batch_id": "b2", "repo": "acme/app",
                "lanes": [{"name": "code", "owner": "worker-a", "targets": ["50"], "terminal": "done", "status": "done",
                           "workspace": "default", "closed_by": {"agent_id": "worker-a", "machine": "m"},
                           "pr_url": "https://github.com/acme/app/pull/1"},
                          {"name": "docs", "owner": "worker-b", "targets": ["51"], "terminal": null}]}),
    );
    let mut other = req(Entry::RecordEvent, "worker-a", "50");
    other.pr_state = None;
    other
        .metadata
        .insert("pr_url".into(), json!("https://github.com/acme/app/pull/2"));
    assert_eq!(
        decide(&snap, &other, &ctx(None)).unwrap_err(),
        RuleError::Closeout(CloseoutError::Conflicting {
            lane: "code".into()
        })
    );
    // `"terminal": null` is not closed: closing docs works, and only then is the batch complete.
    let plan = decide(
        &snap,
        &req(Entry::RecordEvent, "worker-b", "51"),
        &ctx(None),
    )
    .unwrap();
    let batch = &plan.state.last().unwrap().1;
    assert_eq!(batch["lanes"][1]["terminal"], json!("done"));
    assert_eq!(batch["status"], json!("completed"));
}
