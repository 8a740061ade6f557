//! Unit tests for the record-level three-way merge.

use serde_json::json;
use serde_json::Value;

use super::*;
use crate::record::Identity;

fn ctx() -> Ctx {
    Ctx {
        now: time::parse("2026-06-13T12:00:00Z").unwrap(),
        nonce: 1,
        identity: Identity {
            machine_id: Some("box-a".into()),
            ..Default::default()
        },
    }
}

fn rec(v: Value) -> Option<Record> {
    Some(v.as_object().unwrap().clone())
}

fn change(
    path: &str,
    base: Option<Record>,
    local: Option<Record>,
    remote: Option<Record>,
) -> PathChange {
    PathChange {
        path: path.into(),
        base,
        local,
        remote,
    }
}

fn claim(agent: &str, status: &str) -> Option<Record> {
    rec(
        json!({"repo": "acme/app", "target": "7", "agent_id": agent, "status": status, "batch_id": "b1"}),
    )
}

#[test]
fn one_sided_changes_and_event_union() {
    let out = reconcile(
        vec![
            change("events/b1/1.json", None, rec(json!({"type": "x"})), None),
            change("events/b1/2.json", None, None, rec(json!({"type": "y"}))),
            change(
                "events/b1/3.json",
                None,
                rec(json!({"type": "same"})),
                rec(json!({"type": "same"})),
            ),
            change(
                "claims/acme/app/9.json",
                claim("a", "active"),
                claim("a", "released"),
                claim("a", "active"),
            ),
        ],
        &ctx(),
    );
    let paths: Vec<&str> = out.writes.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(paths, ["events/b1/1.json", "claims/acme/app/9.json"]);
    assert_eq!((out.local_applied, out.remote_taken), (2, 2));
    assert!(out.conflicts.is_empty() && out.lost_claims.is_empty());
}

#[test]
fn claim_changed_on_both_sides_keeps_remote_and_reports_the_loser() {
    let out = reconcile(
        vec![change(
            "claims/acme/app/7.json",
            None,
            claim("a", "active"),
            claim("b", "active"),
        )],
        &ctx(),
    );
    assert_eq!(
        out.lost_claims,
        [LostClaim {
            path: "claims/acme/app/7.json".into(),
            label: "acme/app#7".into(),
            local_holder: "a".into(),
            remote_holder: Some("b".into()),
            batch: Some("b1".into()),
        }]
    );
    // No write of the claim itself: the remote version stands. One claim.lost event.
    assert_eq!(out.writes.len(), 1);
    let (path, event) = &out.writes[0];
    assert!(path.starts_with("events/b1/"), "{path}");
    let event = event.as_ref().unwrap();
    assert_eq!(event["type"], json!("claim.lost"));
    assert_eq!(event["message"], json!("claim on acme/app#7 lost to b"));
    assert_eq!(event["machine_id"], json!("box-a"));

    // The same holder renewing on both sides loses nothing.
    let out = reconcile(
        vec![change(
            "claims/acme/app/7.json",
            claim("a", "active"),
            rec(json!({"agent_id": "a", "status": "active", "expires_at": "1"})),
            rec(json!({"agent_id": "a", "status": "active", "expires_at": "2"})),
        )],
        &ctx(),
    );
    assert!(out.lost_claims.is_empty());
    assert!(out.writes.is_empty());
}

#[test]
fn different_events_at_one_path_keep_remote_and_record_a_conflict() {
    let out = reconcile(
        vec![change(
            "events/b1/lane_closed-x.json",
            None,
            rec(json!({"terminal": "done"})),
            rec(json!({"terminal": "abandoned"})),
        )],
        &ctx(),
    );
    assert_eq!(out.conflicts.len(), 1);
    assert_eq!(out.writes.len(), 1);
    let event = out.writes[0].1.as_ref().unwrap();
    assert_eq!(event["type"], json!("sync.conflict"));
    assert_eq!(event["batch_id"], json!("b1"));
}

#[test]
fn batch_lane_closures_merge_from_either_side() {
    let base = rec(json!({"batch_id": "b1", "lanes": [{"name": "x"}, {"name": "y"}]}));
    let local = rec(
        json!({"batch_id": "b1", "lanes": [{"name": "x", "terminal": "done", "status": "done"}, {"name": "y"}]}),
    );
    let remote = rec(
        json!({"batch_id": "b1", "objective": "new", "updated_at": "t", "lanes": [{"name": "x"}, {"name": "y", "terminal": "abandoned", "status": "abandoned"}]}),
    );
    let out = reconcile(vec![change("batches/b1.json", base, local, remote)], &ctx());
    let merged = out.writes[0].1.as_ref().unwrap();
    assert_eq!(
        merged["objective"],
        json!("new"),
        "other fields: remote wins"
    );
    assert_eq!(
        merged["lanes"][0]["terminal"],
        json!("done"),
        "closed locally stays closed"
    );
    assert_eq!(merged["lanes"][1]["terminal"], json!("abandoned"));
    assert_eq!(merged["status"], json!("completed"));
    assert!(out.conflicts.is_empty());

    let (_, clashes) = merge_batch(
        rec(json!({"lanes": [{"name": "x", "terminal": "done"}]}))
            .as_ref()
            .unwrap(),
        rec(json!({"lanes": [{"name": "x", "terminal": "superseded"}]}))
            .as_ref()
            .unwrap(),
    );
    assert_eq!(clashes, ["lane x was closed \"superseded\" on the remote and \"done\" locally; the remote closure is kept"]);
}

#[test]
fn other_two_sided_changes_keep_remote() {
    let out = reconcile(
        vec![change(
            "coordinator/tasks/a/b/1.json",
            rec(json!({"v": 0})),
            rec(json!({"v": 1})),
            rec(json!({"v": 2})),
        )],
        &ctx(),
    );
    assert_eq!(out.conflicts.len(), 1);
    assert_eq!(out.writes.len(), 1, "only the conflict event");
    assert!(out.writes[0].0.starts_with("events/agent-coord-sync/"));
}

proptest::proptest! {
    /// Whatever each side appended, the merged state has every event, and where both sides
    /// wrote different content at one path, the remote's stands and a conflict is recorded.
    #[test]
    fn event_union_loses_nothing(
        base in proptest::collection::btree_map(0u8..20, 0u8..3, 0..8),
        local_new in proptest::collection::btree_map(0u8..40, 0u8..3, 0..8),
        remote_new in proptest::collection::btree_map(0u8..40, 0u8..3, 0..8),
    ) {
        let ev = |v: u8| rec(json!({"type": "note", "v": v}));
        let path = |k: u8| format!("events/b1/{k}.json");
        let side = |extra: &std::collections::BTreeMap<u8, u8>| {
            let mut all: std::collections::BTreeMap<u8, u8> = base.clone();
            for (k, v) in extra {
                all.entry(*k).or_insert(*v);
            }
            all
        };
        let (local, remote) = (side(&local_new), side(&remote_new));
        let keys: std::collections::BTreeSet<u8> = local.keys().chain(remote.keys()).copied().collect();
        let changes: Vec<PathChange> = keys
            .iter()
            .map(|k| change(&path(*k), base.get(k).map(|v| ev(*v).unwrap()), local.get(k).map(|v| ev(*v).unwrap()), remote.get(k).map(|v| ev(*v).unwrap())))
            .collect();
        let out = reconcile(changes, &ctx());
        // Apply the writes on top of the remote.
        let mut merged: std::collections::BTreeMap<String, Record> =
            remote.iter().map(|(k, v)| (path(*k), ev(*v).unwrap())).collect();
        for (p, r) in &out.writes {
            match r {
                Some(r) => { merged.insert(p.clone(), r.clone()); }
                None => { merged.remove(p); }
            }
        }
        for k in &keys {
            let got = merged.get(&path(*k));
            proptest::prop_assert!(got.is_some(), "event {} lost", k);
            if let (Some(l), Some(r)) = (local.get(k), remote.get(k)) {
                let expected = ev(*r).unwrap();
                proptest::prop_assert_eq!(got, Some(&expected), "the remote version stands");
                if l != r && !base.contains_key(k) {
                    proptest::prop_assert!(out.conflicts.iter().any(|c| c.path == path(*k)));
                }
            }
        }
    }
}

#[test]
fn an_annotation_saved_on_both_sides_is_the_newer_one() {
    let note = |kind: &str, at: &str| {
        rec(json!({"repo": "acme/app", "target": "7", "kind": kind, "updated_at": at}))
    };
    let at = "annotations/acme/app/7.json";
    let early = "2026-06-13T10:00:00Z";
    let late = "2026-06-13T11:00:00Z";
    // The local save is newer: it is applied on top of the remote.
    let out = reconcile(
        vec![change(
            at,
            None,
            note("dismiss", late),
            note("snooze", early),
        )],
        &ctx(),
    );
    assert_eq!(out.writes, vec![(at.to_owned(), note("dismiss", late))]);
    assert!(
        out.conflicts.is_empty(),
        "no conflict event for a preference"
    );
    // The remote save is newer, or as new, or one side cleared it: the remote stands.
    for (local, remote) in [
        (note("dismiss", early), note("snooze", late)),
        (note("dismiss", late), note("snooze", late)),
        (None, note("snooze", early)),
        (note("dismiss", late), None),
    ] {
        let out = reconcile(
            vec![change(
                at,
                note("snooze", "2026-06-13T09:00:00Z"),
                local,
                remote,
            )],
            &ctx(),
        );
        assert!(out.writes.is_empty(), "{:?}", out.writes);
        assert!(out.conflicts.is_empty());
    }
}
