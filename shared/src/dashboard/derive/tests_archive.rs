//! The archive window (reference §1.3): idle terminal work, and a dead holder's idle work
//! with no pull request that may still be open, move to the archived state.

use serde_json::json;

use crate::dashboard::fixtures::ago;
use crate::dashboard::fixtures::Records;
use crate::dashboard::model::*;

fn row<'a>(m: &'a DashboardModel, id: &str) -> &'a Row {
    m.rows
        .iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("no row {id}"))
}

#[test]
fn idle_terminal_and_dead_work_is_archived_unless_a_pull_request_may_be_open() {
    let mut s = Records::new();
    let old = |h: i64| ago(60 * h);
    let dead = |s: &mut Records, agent: &str, target: &str, pr: Option<&str>| {
        let mut h = json!({"agent_id": agent, "repo": "acme/app", "target": target,
            "status": "implementing", "updated_at": old(30), "expires_at": old(29)});
        if let Some(pr) = pr {
            h["pr_url"] = json!(pr);
        }
        s.put(&format!("heartbeats/{agent}.json"), h);
    };
    dead(&mut s, "w1", "1", None);
    dead(
        &mut s,
        "w2",
        "2",
        Some("https://github.com/acme/app/pull/20"),
    );
    s.put(
        "claims/acme/app/3.json",
        json!({"repo": "acme/app", "target": "3", "agent_id": "w3",
        "status": "released", "claimed_at": old(50), "updated_at": old(48)}),
    );
    let m = s.model().1;
    assert_eq!(row(&m, "target:acme/app#1").state, RowState::Archived);
    assert_eq!(row(&m, "target:acme/app#1").attention, None);
    let open_pr = row(&m, "target:acme/app#2");
    assert_eq!(
        open_pr.state,
        RowState::Dead,
        "a pull request may still be open"
    );
    assert_eq!(open_pr.attention, Some(AttentionKind::DeadHolder));
    assert_eq!(m.counts.rows_by_state.get("archived"), Some(&1));
    assert!(!m.attention.iter().any(|a| a.row_id == "target:acme/app#1"));
}
