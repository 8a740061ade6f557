//! Fleet-wide lane caps per repository (`repo_max_lanes`): leases in the coordination state.
//!
//! A lane start on a capped repository takes one lease per lane: a claim on the slot target
//! `lane-slot-<n>` of that repository (`claims/<owner>/<repo>/lane-slot-<n>.json`, n from 1 to
//! the cap) by the task's lease agent, in the same commit as the start, decided on the
//! fleet's latest state and published before any lane runs. The lease agent never beats, so
//! a lease lasts until its expiry (`lane_timeout` plus a margin, longer than its lanes can
//! run): a machine that dies with lanes running frees their slots by itself. The task's
//! next save without running lanes releases its leases.
//!
//! Like the other caps, the lanes of one start take their leases together or not at all,
//! and a start wider than the cap still goes when no lease of the repository is held (it
//! takes every slot), so a small cap slows the fleet but never stalls it.

use std::collections::BTreeSet;

use super::slots::SlotWait;

/// The target prefix of a repository's lane slots.
pub const SLOT_PREFIX: &str = "lane-slot-";

/// Seconds a lease outlives its lane's `lane_timeout`.
pub const LEASE_MARGIN_SECONDS: u64 = 600;

/// Returns the slot target `lane-slot-<n>`.
pub fn slot_target(n: u64) -> String {
    format!("{SLOT_PREFIX}{n}")
}

/// The slot number of a slot target (`None` for any other target).
pub fn slot_of(target: &str) -> Option<u64> {
    target
        .strip_prefix(SLOT_PREFIX)
        .and_then(|n| n.parse().ok())
        .filter(|n| *n > 0)
}

/// The agent a task's leases are held by: `<worker>.<task id>.slots` (it never beats).
pub fn lease_agent(worker: &str, task_id: &str) -> String {
    format!("{worker}.{task_id}.slots")
}

/// How long a lease lasts, in seconds.
pub fn lease_ttl(lane_timeout: u64) -> u64 {
    lane_timeout.saturating_add(LEASE_MARGIN_SECONDS)
}

/// The slots a start of `want` lanes takes on a repository capped at `cap`, given the slots
/// others hold now; the wait (with how many run) when there are not enough.
pub fn pick(repo: &str, cap: u64, held: &BTreeSet<u64>, want: usize) -> Result<Vec<u64>, SlotWait> {
    let in_cap: BTreeSet<u64> = held
        .iter()
        .copied()
        .filter(|n| (1..=cap).contains(n))
        .collect();
    let free: Vec<u64> = (1..=cap).filter(|n| !in_cap.contains(n)).collect();
    if in_cap.is_empty() {
        // Nothing runs under the cap: even a start wider than it goes, with every slot.
        return Ok(free.into_iter().take(want).collect());
    }
    if free.len() >= want {
        return Ok(free.into_iter().take(want).collect());
    }
    Err(SlotWait {
        cap: format!("repo_max_lanes {cap} of {repo} (fleet-wide leases)"),
        running: in_cap.len() as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(ns: &[u64]) -> BTreeSet<u64> {
        ns.iter().copied().collect()
    }

    #[test]
    fn slot_targets_read_back_and_nothing_else_is_one() {
        assert_eq!(slot_target(3), "lane-slot-3");
        assert_eq!(slot_of("lane-slot-3"), Some(3));
        for other in ["7", "lane-slot-", "lane-slot-0", "lane-slot-x", "slot-3"] {
            assert_eq!(slot_of(other), None, "{other}");
        }
        assert_eq!(lease_agent("w1", "acme.widget.7"), "w1.acme.widget.7.slots");
        assert_eq!(lease_ttl(1800), 2400);
    }

    #[test]
    fn a_start_takes_the_lowest_free_slots_together_or_waits() {
        assert_eq!(pick("acme/widget", 4, &held(&[]), 2), Ok(vec![1, 2]));
        assert_eq!(pick("acme/widget", 4, &held(&[1, 3]), 2), Ok(vec![2, 4]));
        let wait = pick("acme/widget", 4, &held(&[1, 2, 3]), 2).unwrap_err();
        assert_eq!(
            wait.to_string(),
            "repo_max_lanes 4 of acme/widget (fleet-wide leases) in use (3 running)"
        );
        assert_eq!(pick("acme/widget", 4, &held(&[1, 2, 3]), 1), Ok(vec![4]));
    }

    #[test]
    fn a_start_wider_than_the_cap_goes_when_nothing_runs_under_it() {
        assert_eq!(pick("acme/widget", 1, &held(&[]), 2), Ok(vec![1]));
        assert!(pick("acme/widget", 1, &held(&[1]), 1).is_err());
        // Slots above a lowered cap do not count against it.
        assert_eq!(pick("acme/widget", 2, &held(&[5]), 2), Ok(vec![1, 2]));
    }
}
