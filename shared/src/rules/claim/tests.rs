//! Unit tests for the claim rules: the takeover matrix, renewal vs lane change, release.

use serde_json::json;
use serde_json::Value;

use super::*;
use crate::record::Identity;
use crate::rules::TtlOutOfRange;
use crate::snapshot::MemorySnapshot;

const NOW: &str = "2026-06-13T12:00:00Z";

fn ctx() -> Ctx {
    Ctx {
        now: time::parse(NOW).unwrap(),
        nonce: 1,
        identity: Identity {
            machine_id: Some("box".into()),
            ..Default::default()
        },
    }
}

fn at(mins: i64) -> String {
    time::format(time::parse(NOW).unwrap() + Duration::minutes(mins))
}

fn req(agent: &str) -> ClaimRequest {
    ClaimRequest {
        agent: agent.parse().unwrap(),
        repo: "acme/app".parse().unwrap(),
        target: "7".parse().unwrap(),
        batch: None,
        branch: None,
        ttl_seconds: DEFAULT_TTL_SECONDS,
        metadata: Record::new(),
    }
}

fn held_by_a(snap: &mut MemorySnapshot, claim_expires_mins: i64) {
    snap.put(
        "claims/acme/app/7.json",
        &json!({"schema_version": 1, "repo": "acme/app", "target": "7", "agent_id": "a",
                "batch_id": "b1", "status": "active", "claimed_at": at(-60),
                "updated_at": at(-60), "expires_at": at(claim_expires_mins)}),
    );
}

/// Heartbeat variants of the takeover matrix.
#[derive(Debug, Clone, Copy)]
enum Beat {
    Live,
    Stale,
    Dead,
    Missing,
    Invalid,
    Unknown,
}

fn put_beat(snap: &mut MemorySnapshot, beat: Beat) {
    let path = "heartbeats/a.json";
    match beat {
        Beat::Live => snap.put(
            path,
            &json!({"agent_id": "a", "updated_at": at(-5), "expires_at": at(10)}),
        ),
        Beat::Stale => snap.put(
            path,
            &json!({"agent_id": "a", "updated_at": at(-20), "expires_at": at(-5)}),
        ),
        Beat::Dead => snap.put(
            path,
            &json!({"agent_id": "a", "updated_at": at(-70), "expires_at": at(-55)}),
        ),
        Beat::Missing => {}
        Beat::Invalid => snap.put_raw(path, b"{not json"),
        Beat::Unknown => snap.put(path, &json!({"agent_id": "a", "updated_at": "garbage"})),
    }
}

/// Returns a refusal of `b`'s claim on acme/app#7, held by `a`, as `make` builds it.
fn refusal(make: fn(RepoSlug, Target, String) -> ClaimRefused) -> RuleError {
    make(
        "acme/app".parse().unwrap(),
        "7".parse().unwrap(),
        "a".to_owned(),
    )
    .into()
}

/// Returns the refusal that falls back on a claim expiring 30 minutes from now.
fn until_expiry(beat: HolderBeat) -> RuleError {
    ClaimRefused::HeldUntilExpiry {
        repo: "acme/app".parse().unwrap(),
        target: "7".parse().unwrap(),
        holder: "a".to_owned(),
        beat,
        expires_at: at(30),
    }
    .into()
}

#[test]
fn takeover_matrix() {
    let live = || {
        refusal(|repo, target, holder| ClaimRefused::HeldLive {
            repo,
            target,
            holder,
        })
    };
    let stale = || {
        refusal(|repo, target, holder| ClaimRefused::HeldStale {
            repo,
            target,
            holder,
        })
    };
    // (heartbeat, claim expired?, expected refusal or None for takeover)
    let cases: [(Beat, bool, Option<RuleError>); 12] = [
        (Beat::Live, false, Some(live())),
        (Beat::Live, true, Some(live())),
        (Beat::Stale, false, Some(stale())),
        (Beat::Stale, true, Some(stale())),
        (Beat::Dead, false, None),
        (Beat::Dead, true, None),
        (
            Beat::Missing,
            false,
            Some(until_expiry(HolderBeat::Missing)),
        ),
        (Beat::Missing, true, None),
        (
            Beat::Invalid,
            false,
            Some(until_expiry(HolderBeat::Invalid)),
        ),
        (Beat::Invalid, true, None),
        (
            Beat::Unknown,
            false,
            Some(until_expiry(HolderBeat::Seen(Liveness::Unknown))),
        ),
        (Beat::Unknown, true, None),
    ];
    for (beat, expired, want) in cases {
        let mut snap = MemorySnapshot::default();
        held_by_a(&mut snap, if expired { -1 } else { 30 });
        put_beat(&mut snap, beat);
        let got = decide(&snap, &req("b"), &ctx());
        match want {
            Some(refused) => {
                assert_eq!(got.unwrap_err(), refused, "{beat:?} {expired}");
            }
            None => {
                let plan = got.unwrap_or_else(|e| panic!("{beat:?} {expired}: {e}"));
                assert_eq!(plan.outcome.kind, ClaimKind::Takeover);
                assert_eq!(plan.outcome.previous_holder.as_deref(), Some("a"));
                // The new holder inherits nothing of the old lane.
                assert_eq!(plan.outcome.record.get("batch_id"), None);
                assert_eq!(plan.outcome.record["claimed_at"], json!(NOW));
            }
        }
    }
}

#[test]
fn fallback_refusal_names_expiry() {
    let mut snap = MemorySnapshot::default();
    held_by_a(&mut snap, 30);
    let err = decide(&snap, &req("b"), &ctx()).unwrap_err();
    assert_eq!(err, until_expiry(HolderBeat::Missing));
}

#[test]
fn unreadable_claim_is_an_error_not_a_grant() {
    let mut snap = MemorySnapshot::default();
    snap.put_raw("claims/acme/app/7.json", b"{");
    assert!(matches!(
        decide(&snap, &req("b"), &ctx()),
        Err(RuleError::Unreadable(_))
    ));
}

#[test]
fn new_claim_writes_record_and_acquired_event() {
    let snap = MemorySnapshot::default();
    let mut r = req("a");
    r.batch = Some("b1".parse().unwrap());
    r.metadata.insert("phase".into(), json!("implementing"));
    let plan = decide(&snap, &r, &ctx()).unwrap();
    assert_eq!(plan.outcome.kind, ClaimKind::New);
    assert_eq!(plan.state.len(), 2);
    assert_eq!(
        Value::Object(plan.state[0].1.clone()),
        json!({"schema_version": 1, "repo": "acme/app", "target": "7", "agent_id": "a", "batch_id": "b1",
               "status": "active", "claimed_at": NOW, "updated_at": NOW, "expires_at": at(240),
               "phase": "implementing", "machine_id": "box"})
    );
    let ev = &plan.state[1].1;
    assert_eq!(ev["type"], json!("claim.acquired"));
    assert_eq!(ev["phase"], json!("implementing"));
    assert!(ev.get("status").is_none() && ev.get("lane").is_none());
}

#[test]
fn renewal_versus_lane_change() {
    let mut snap = MemorySnapshot::default();
    snap.put(
        "claims/acme/app/7.json",
        &json!({"schema_version": 1, "repo": "acme/app", "target": "7", "agent_id": "a", "batch_id": "b1",
                "branch": "x", "status": "active", "claimed_at": at(-200), "updated_at": at(-200),
                "expires_at": at(40), "phase": "validating", "custom": 1}),
    );
    // Same lane, half the TTL gone: renewal keeps metadata and claimed_at, emits nothing.
    let plan = decide(&snap, &req("a"), &ctx()).unwrap();
    assert_eq!(plan.outcome.kind, ClaimKind::Renewed);
    assert_eq!(plan.state.len(), 1);
    let rec = &plan.state[0].1;
    assert_eq!(rec["claimed_at"], json!(at(-200)));
    assert_eq!(rec["phase"], json!("validating"));
    assert_eq!(rec["custom"], json!(1));
    assert_eq!(rec["expires_at"], json!(at(240)));

    // A new generation re-emits claim.acquired.
    let mut r = req("a");
    r.metadata.insert("generation".into(), json!(2));
    assert_eq!(decide(&snap, &r, &ctx()).unwrap().state.len(), 2);

    // Another branch is a lane change: nothing preserved, event emitted.
    let mut r = req("a");
    r.branch = Some("y".into());
    let plan = decide(&snap, &r, &ctx()).unwrap();
    assert_eq!(plan.outcome.kind, ClaimKind::LaneChange);
    assert_eq!(plan.outcome.record.get("phase"), None);
    assert_eq!(plan.outcome.record.get("batch_id"), None);
    assert_eq!(plan.outcome.record["claimed_at"], json!(NOW));
}

#[test]
fn fresh_renewal_is_not_written() {
    let mut snap = MemorySnapshot::default();
    let first = decide(&snap, &req("a"), &ctx()).unwrap();
    snap.put(&first.state[0].0, &Value::Object(first.state[0].1.clone()));
    let again = decide(&snap, &req("a"), &ctx()).unwrap();
    assert_eq!(again.outcome.kind, ClaimKind::Unchanged);
    assert!(again.is_empty());
    // A changed metadata field is observable and is written.
    let mut r = req("a");
    r.metadata.insert("phase".into(), json!("pushing"));
    assert!(!decide(&snap, &r, &ctx()).unwrap().is_empty());
}

#[test]
fn released_or_inactive_claims_are_free() {
    for status in [json!("released"), json!("weird"), Value::Null] {
        let mut snap = MemorySnapshot::default();
        snap.put(
            "claims/acme/app/7.json",
            &json!({"agent_id": "a", "status": status, "expires_at": at(100)}),
        );
        put_beat(&mut snap, Beat::Live);
        assert_eq!(
            decide(&snap, &req("b"), &ctx()).unwrap().outcome.kind,
            ClaimKind::New
        );
    }
}

fn rel(agent: &str) -> ReleaseRequest {
    ReleaseRequest {
        agent: agent.parse().unwrap(),
        repo: "acme/app".parse().unwrap(),
        target: "7".parse().unwrap(),
        branch: None,
        handoff_to: None,
        handoff_note: None,
        metadata: Record::new(),
    }
}

#[test]
fn release_rules() {
    let snap = MemorySnapshot::default();
    assert_eq!(
        release(&snap, &rel("a"), &ctx()).unwrap_err(),
        RuleError::ReleaseRefused(ReleaseRefused::NoClaim {
            repo: "acme/app".parse().unwrap(),
            target: "7".parse().unwrap(),
        })
    );

    let mut snap = MemorySnapshot::default();
    held_by_a(&mut snap, 30);
    assert_eq!(
        release(&snap, &rel("b"), &ctx()).unwrap_err(),
        RuleError::ReleaseRefused(ReleaseRefused::HeldByOther {
            holder: "a".to_owned(),
            agent: "b".parse().unwrap(),
        })
    );
    let mut r = rel("a");
    r.handoff_to = Some("c".into());
    r.handoff_note = Some("over to you".into());
    let plan = release(&snap, &r, &ctx()).unwrap();
    let claim = &plan.state[0].1;
    assert_eq!(claim["status"], json!("released"));
    assert_eq!(claim["expires_at"], json!(NOW));
    assert_eq!(claim["release_mode"], json!("handoff"));
    let ev = &plan.state[1].1;
    assert_eq!(ev["type"], json!("claim.released"));
    assert_eq!(ev["status"], json!("released"));
    assert_eq!(ev["message"], json!("over to you"));
    assert_eq!(ev["handoff_to"], json!("c"));

    // A later plain release clears the handoff fields.
    let mut snap2 = MemorySnapshot::default();
    snap2.put(&plan.state[0].0, &Value::Object(claim.clone()));
    let plan = release(&snap2, &rel("a"), &ctx()).unwrap();
    assert!(plan.state[0].1.get("handoff_to").is_none());
    assert!(plan.state[0].1.get("release_mode").is_none());
}

#[test]
fn adding_a_batch_or_branch_the_claim_lacked_is_still_a_renewal() {
    let mut snap = MemorySnapshot::default();
    snap.put(
        "claims/acme/app/7.json",
        &json!({"schema_version": 1, "repo": "acme/app", "target": "7", "agent_id": "a", "status": "active",
                "claimed_at": at(-10), "updated_at": at(-10), "expires_at": at(230), "phase": "implementing"}),
    );
    let mut r = req("a");
    r.batch = Some("b1".parse().unwrap());
    r.branch = Some("feature".into());
    let plan = decide(&snap, &r, &ctx()).unwrap();
    assert_eq!(plan.outcome.kind, ClaimKind::Renewed);
    let rec = &plan.outcome.record;
    assert_eq!(
        rec["claimed_at"],
        json!(at(-10)),
        "a renewal keeps claimed_at"
    );
    assert_eq!(
        rec["phase"],
        json!("implementing"),
        "and the lane's metadata"
    );
    assert_eq!(rec["batch_id"], json!("b1"));
    assert_eq!(plan.state.len(), 1, "no claim.acquired for a renewal");
}

#[test]
fn regression_huge_ttl_panics() {
    // New claims and renewals alike: a TTL no record can hold is refused.
    let mut renewal = MemorySnapshot::default();
    held_by_a(&mut renewal, 30);
    for snap in [MemorySnapshot::default(), renewal] {
        for ttl in [i64::MAX, 300_000_000_000] {
            let r = ClaimRequest {
                ttl_seconds: ttl,
                ..req("a")
            };
            assert_eq!(
                decide(&snap, &r, &ctx()).unwrap_err(),
                RuleError::TtlOutOfRange(TtlOutOfRange {
                    record: "claim",
                    ttl_seconds: ttl,
                }),
                "ttl {ttl} was accepted"
            );
        }
    }
}

#[test]
fn regression_unreadable_expiry_counts_as_expired() {
    // Past year 9999, wrong type, or garbage: none of these lets another agent take over.
    for expiry in [json!("+11533-01-26T17:20:00Z"), json!("soon"), json!(3)] {
        for beat in [Beat::Missing, Beat::Invalid, Beat::Unknown] {
            let mut snap = MemorySnapshot::default();
            held_by_a(&mut snap, 30);
            let mut claim: Value = json!({"schema_version": 1, "repo": "acme/app", "target": "7",
                "agent_id": "a", "status": "active", "updated_at": at(-60)});
            claim["expires_at"] = expiry.clone();
            snap.put("claims/acme/app/7.json", &claim);
            put_beat(&mut snap, beat);
            let Err(RuleError::ClaimRefused(refused)) = decide(&snap, &req("b"), &ctx()) else {
                panic!("{expiry} {beat:?} was taken over");
            };
            assert!(
                matches!(&*refused, ClaimRefused::ExpiryUnreadable { expires_at, .. } if *expires_at == expiry),
                "{refused:?}"
            );
        }
    }
    // A dead heartbeat still frees the claim: liveness decides before the expiry.
    let mut snap = MemorySnapshot::default();
    snap.put(
        "claims/acme/app/7.json",
        &json!({"repo": "acme/app", "target": "7",
        "agent_id": "a", "status": "active", "expires_at": "+11533-01-26T17:20:00Z"}),
    );
    put_beat(&mut snap, Beat::Dead);
    assert_eq!(
        decide(&snap, &req("b"), &ctx()).unwrap().outcome.kind,
        ClaimKind::Takeover
    );
}
