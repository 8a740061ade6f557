//! Row warnings about heartbeats that point at other work than the claim or lane they
//! belong to (reference §2.2), and the setup notice of an empty state (§7.1).

use serde_json::json;

use crate::dashboard::fixtures::ago;
use crate::dashboard::fixtures::Records;
use crate::dashboard::model::*;

fn warnings<'a>(m: &'a DashboardModel, id: &str) -> &'a [String] {
    &m.rows
        .iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("no row {id}"))
        .warnings
}

#[test]
fn regression_claim_holder_heartbeat_elsewhere_is_warned() {
    let mut s = Records::new();
    s.claim("acme/app", "1", "w1", None)
        .beat("w1", "acme/app", "5", None, "implementing", 1);
    let (_, m) = s.model();
    assert!(
        warnings(&m, "target:acme/app#1")
            .contains(&"Claim holder heartbeat currently points at acme/app#5.".to_owned()),
        "{:?}",
        warnings(&m, "target:acme/app#1")
    );
    // The work the heartbeat points at is not warned about it.
    assert!(!warnings(&m, "target:acme/app#5")
        .iter()
        .any(|w| w.starts_with("Claim holder heartbeat")));
    // Same repository, other number; and another repository, same number.
    let mut s = Records::new();
    s.claim("acme/app", "1", "w1", None)
        .beat("w1", "acme/api", "1", None, "implementing", 1);
    let (_, m) = s.model();
    assert!(warnings(&m, "target:acme/app#1")
        .contains(&"Claim holder heartbeat currently points at acme/api#1.".to_owned()));
}

#[test]
fn holder_heartbeat_on_the_claimed_work_is_no_warning() {
    let mut s = Records::new();
    s.claim("acme/app", "1", "w1", None)
        .beat("w1", "acme/app", "1", None, "implementing", 1)
        // A heartbeat that names no work points nowhere in particular.
        .claim("acme/app", "2", "w2", None)
        .put(
            "heartbeats/w2.json",
            json!({"agent_id": "w2", "status": "idle", "updated_at": ago(1)}),
        );
    let (_, m) = s.model();
    for id in ["target:acme/app#1", "target:acme/app#2"] {
        assert!(
            !warnings(&m, id).iter().any(|w| w.contains("points at")),
            "{id}: {:?}",
            warnings(&m, id)
        );
    }
}

#[test]
fn regression_lane_owner_heartbeat_elsewhere_is_warned() {
    let mut s = Records::new();
    s.put(
        "batches/b1.json",
        json!({"batch_id": "b1", "repo": "acme/app", "updated_at": ago(30),
               "targets": [{"type": "issue", "target": "1"}],
               "lanes": [{"name": "one", "owner": "w1", "targets": ["1"], "status": "queued"},
                         {"name": "loose", "owner": "w2", "targets": [], "status": "queued"}]}),
    )
    .beat("w1", "acme/app", "5", Some("b1"), "implementing", 1)
    .beat("w2", "acme/app", "6", Some("b9"), "implementing", 1);
    let (_, m) = s.model();
    let want = "Lane b1:one owner heartbeat points at acme/app#5 and was not applied.";
    assert!(
        warnings(&m, "target:acme/app#1").contains(&want.to_owned()),
        "{:?}",
        warnings(&m, "target:acme/app#1")
    );
    // A lane with no target has a row of its own, and the warning is on it.
    assert!(warnings(&m, "lane:b1:loose").contains(
        &"Lane b1:loose owner heartbeat points at acme/app#6 and was not applied.".to_owned()
    ));
    // The lane's status was not taken from the heartbeat.
    let lane = &m.batches.iter().find(|b| b.id == "b1").expect("b1").lanes[0];
    assert_eq!(lane.status, "queued");
}

#[test]
fn regression_empty_state_shows_one_setup_notice() {
    let (_, m) = Records::new().model();
    assert_eq!(m.setup.as_deref(), Some(SETUP_NOTICE));
    assert!(SETUP_NOTICE.contains("agent-coord init --remote"));
    let wire = serde_json::to_value(&m).expect("json");
    assert_eq!(wire["setup"], json!(SETUP_NOTICE));
    // Any record at all, even an unreadable one, and the notice is gone (and not sent).
    let mut s = Records::new();
    s.0.push(("claims/acme/app/1.json".into(), b"{".to_vec()));
    let (_, m) = s.model();
    assert_eq!(m.setup, None);
    assert!(serde_json::to_value(&m)
        .expect("json")
        .get("setup")
        .is_none());
    let mut s = Records::new();
    s.beat("w1", "acme/app", "1", None, "idle", 1);
    assert_eq!(s.model().1.setup, None);
}
