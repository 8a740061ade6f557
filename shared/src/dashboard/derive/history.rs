//! The history window (reference §9): a batch page carries the last 7 days of events by
//! default, and `?history=full` everything.
//!
//! Older events are dropped only where nothing is lost for the operator: per evidence scope
//! (batch, lane, repo, target, agent) the window keeps the newest event, the newest non-QA
//! event, the newest non-QA event with a status, and the newest carrier of each of agent and
//! machine; an event without a readable time is always kept.

use std::collections::BTreeSet;

use super::rules::is_qa_type;
use crate::dashboard::model::EventView;
use crate::time;
use crate::time::Instant;

/// Days of events a page carries by default.
pub const HISTORY_DAYS: i64 = 7;

/// Returns the events within the window (keeping their order) and how many were omitted.
pub fn window(events: Vec<EventView>, now: Instant) -> (Vec<EventView>, usize) {
    let Some(cutoff) = time::days_before(now, HISTORY_DAYS) else {
        return (events, 0);
    };
    // Newest first, so the first event seen per (scope, role) is the one to keep.
    let mut order: Vec<usize> = (0..events.len()).collect();
    order.sort_by(|a, b| events[*b].at.cmp(&events[*a].at));
    let mut seen: BTreeSet<(EvidenceScope<'_>, Role)> = BTreeSet::new();
    let mut keep = vec![false; events.len()];
    for i in order {
        let e = &events[i];
        let at = e.at.as_deref().and_then(time::parse);
        if at.is_none_or(|t| t >= cutoff) {
            keep[i] = true;
        }
        let scope = scope(e);
        for role in roles(e) {
            if seen.insert((scope, role)) {
                keep[i] = true;
            }
        }
    }
    let total = events.len();
    let kept: Vec<EventView> = events
        .into_iter()
        .zip(keep)
        .filter_map(|(e, k)| k.then_some(e))
        .collect();
    let omitted = total - kept.len();
    (kept, omitted)
}

/// The notice a page shows when the window omitted events (the reference's words).
pub fn notice(omitted: usize) -> String {
    format!(
        "Dashboard history window: omitted {omitted} batch history event(s) older than {HISTORY_DAYS} day(s) from this payload; request ?history=full for complete history."
    )
}

/// The evidence scope of an event.
type EvidenceScope<'a> = (
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
    Option<&'a str>,
);

fn scope(e: &EventView) -> EvidenceScope<'_> {
    (
        e.batch_id.as_deref(),
        e.lane.as_deref(),
        e.repo.as_deref(),
        e.target.as_deref(),
        e.agent.as_deref(),
    )
}

/// What an event can be the newest of, within its scope.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Role {
    Newest,
    NewestNonQa,
    NewestStatus,
    AgentCarrier,
    MachineCarrier,
}

fn roles(e: &EventView) -> Vec<Role> {
    let filled = |v: &Option<String>| v.as_deref().is_some_and(|s| !s.trim().is_empty());
    let mut roles = vec![Role::Newest];
    if !is_qa_type(&e.kind) {
        roles.push(Role::NewestNonQa);
        if filled(&e.status) {
            roles.push(Role::NewestStatus);
        }
    }
    if filled(&e.agent) {
        roles.push(Role::AgentCarrier);
    }
    if filled(&e.machine) {
        roles.push(Role::MachineCarrier);
    }
    roles
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> Instant {
        time::parse("2026-06-13T12:00:00Z").expect("time")
    }

    fn event(id: &str, kind: &str, days_ago: i64, status: Option<&str>) -> EventView {
        let at = time::days_before(now(), days_ago).map(time::format);
        EventView {
            id: id.into(),
            kind: kind.into(),
            batch_id: Some("b1".into()),
            lane: Some("one".into()),
            agent: Some("w1".into()),
            repo: Some("acme/app".into()),
            target: Some("1".into()),
            status: status.map(str::to_owned),
            message: None,
            at,
            machine: Some("box-1".into()),
        }
    }

    #[test]
    fn recent_events_stay_and_old_ones_go() {
        let events = vec![
            event("new", "note", 1, None),
            event("old-1", "note", 10, None),
            event("old-2", "note", 20, None),
        ];
        let (kept, omitted) = window(events, now());
        let ids: Vec<&str> = kept.iter().map(|e| e.id.as_str()).collect();
        assert_eq!(ids, vec!["new"]);
        assert_eq!(omitted, 2);
    }

    #[test]
    fn the_newest_evidence_of_a_scope_survives_however_old() {
        let events = vec![
            event("qa", "qa.passed", 1, Some("passed")),
            event("status", "phase", 12, Some("implementing")),
            event("older-status", "phase", 15, Some("planning")),
            event("no-status", "note", 11, None),
        ];
        let (kept, omitted) = window(events, now());
        let ids: Vec<&str> = kept.iter().map(|e| e.id.as_str()).collect();
        // The QA event is recent; the newest non-QA event and the newest with a status are
        // old but kept; the older status is dropped.
        assert_eq!(ids, vec!["qa", "status", "no-status"]);
        assert_eq!(omitted, 1);
    }

    #[test]
    fn another_scope_keeps_its_own_newest_and_untimed_events_stay() {
        let mut other = event("other", "note", 30, None);
        other.lane = Some("two".into());
        let mut untimed = event("untimed", "note", 0, None);
        untimed.at = Some("not a time".into());
        let events = vec![event("new", "note", 1, None), other, untimed];
        let (kept, omitted) = window(events, now());
        assert_eq!(kept.len(), 3);
        assert_eq!(omitted, 0);
    }

    #[test]
    fn the_notice_says_how_to_get_everything() {
        assert_eq!(
            notice(3),
            "Dashboard history window: omitted 3 batch history event(s) older than 7 day(s) from this payload; request ?history=full for complete history."
        );
    }
}
