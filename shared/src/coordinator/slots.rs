//! Lane slots: whether the lanes of one phase may start now under the configured caps
//! (`max_lanes` of the worker, `machine_max_lanes` of all workers on this machine,
//! `max_vendor_lanes` per vendor of the worker), given what is running.
//!
//! The lanes of one phase start together or not at all (the PR gates of one head are one
//! unit), and a unit larger than a cap still starts when nothing under that cap runs, so a
//! cap below a phase's width slows the fleet down but never stalls it.

use std::collections::BTreeMap;

use super::task::Phase;
use super::task::Task;
use super::task::TaskState;

/// The caps that apply to one worker's lanes on this machine; `None` is no cap.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Caps {
    /// The worker's `max_lanes`.
    pub worker: Option<u64>,
    /// The configuration's `machine_max_lanes` (every worker of this machine).
    pub machine: Option<u64>,
    /// The worker's `max_vendor_lanes`, by vendor wire name.
    pub vendor: BTreeMap<String, u64>,
}

/// Lanes running now that count against the caps.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InUse {
    /// Running lanes of this worker.
    pub worker: u64,
    /// Running lanes of every worker on this machine.
    pub machine: u64,
    /// Running lanes of this worker, by vendor wire name (a raw argv lane names none).
    pub vendor: BTreeMap<String, u64>,
}

/// Why lanes wait for a slot, for the operator (`waits for a lane slot: …`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotWait {
    /// Which cap is full, e.g. `max_lanes 4 of worker w1`.
    pub cap: String,
    /// How many lanes under it run now.
    pub running: u64,
}

impl std::fmt::Display for SlotWait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} in use ({} running)", self.cap, self.running)
    }
}

/// Whether lanes of `vendors` (one entry per lane, its vendor when known) may start now
/// for `worker`: the first full cap, else `Ok`.
pub fn may_start(
    worker: &str,
    caps: &Caps,
    in_use: &InUse,
    vendors: &[Option<&str>],
) -> Result<(), SlotWait> {
    let want = vendors.len() as u64;
    let full = |cap: Option<u64>, running: u64| match cap {
        Some(cap) => running > 0 && running + want > cap,
        None => false,
    };
    if full(caps.worker, in_use.worker) {
        return Err(SlotWait {
            cap: format!("max_lanes {} of worker {worker}", caps.worker.unwrap_or(0)),
            running: in_use.worker,
        });
    }
    if full(caps.machine, in_use.machine) {
        return Err(SlotWait {
            cap: format!(
                "machine_max_lanes {} of this machine",
                caps.machine.unwrap_or(0)
            ),
            running: in_use.machine,
        });
    }
    let mut wanted: BTreeMap<&str, u64> = BTreeMap::new();
    for vendor in vendors.iter().flatten() {
        *wanted.entry(vendor).or_default() += 1;
    }
    for (vendor, n) in wanted {
        let Some(&cap) = caps.vendor.get(vendor) else {
            continue;
        };
        let running = in_use.vendor.get(vendor).copied().unwrap_or(0);
        if running > 0 && running + n > cap {
            return Err(SlotWait {
                cap: format!("max_vendor_lanes.{vendor} {cap} of worker {worker}"),
                running,
            });
        }
    }
    Ok(())
}

/// Whether a task still has lanes ahead of it before CI: an active task from acceptance
/// through the PR gates (what admission counts against `max_lanes`).
pub fn still_needs_lanes(task: &Task) -> bool {
    task.state == TaskState::Active
        && matches!(
            task.phase,
            Phase::Accept
                | Phase::Checkout
                | Phase::Implement
                | Phase::InnerReview
                | Phase::Publish
                | Phase::Checks
                | Phase::PrGatesGrok
                | Phase::PrGatesCodex
        )
}

/// Whether an active task's next step is starting lanes (what a freed slot lets go on).
pub fn starts_lanes_next(task: &Task) -> bool {
    task.state == TaskState::Active
        && matches!(
            task.phase,
            Phase::Implement | Phase::InnerReview | Phase::PrGatesGrok | Phase::PrGatesCodex
        )
}

/// How many new issues this machine may admit for a worker with `max_lanes` (`None`: no
/// cap, any number), given the worker's `tasks` on this machine: one per free slot, each
/// task that still needs lanes holding one. So machines of one worker take issues as they
/// have room, and an issue nobody has room for stays unclaimed for the first that does.
pub fn admission_room(max_lanes: Option<u64>, tasks: &[Task]) -> Option<u64> {
    let cap = max_lanes?;
    let load = tasks.iter().filter(|t| still_needs_lanes(t)).count() as u64;
    Some(cap.saturating_sub(load))
}

/// How many of `fresh` new issues one machine takes in one tick when `live` machines of the
/// worker beat (itself included): its share, rounded up, so the new issues spread over the
/// machines instead of going to whichever ticks first; what is left over goes to the next
/// tick of any machine with room.
pub fn admission_share(fresh: usize, live: usize) -> usize {
    fresh.div_ceil(live.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::task::tests::task;

    #[test]
    fn each_live_machine_takes_its_share_of_the_new_issues_rounded_up() {
        assert_eq!(admission_share(6, 1), 6);
        assert_eq!(admission_share(6, 3), 2);
        assert_eq!(admission_share(7, 3), 3);
        assert_eq!(admission_share(1, 3), 1, "one issue is still taken");
        assert_eq!(admission_share(0, 3), 0);
        assert_eq!(
            admission_share(5, 0),
            5,
            "no beat known: this machine alone"
        );
    }

    #[test]
    fn only_an_active_task_in_a_lane_phase_starts_lanes_next() {
        let at = |phase: Phase, state: TaskState| {
            let mut t = task();
            t.phase = phase;
            t.state = state;
            t
        };
        for phase in [
            Phase::Implement,
            Phase::InnerReview,
            Phase::PrGatesGrok,
            Phase::PrGatesCodex,
        ] {
            assert!(
                starts_lanes_next(&at(phase, TaskState::Active)),
                "{phase:?}"
            );
            assert!(
                !starts_lanes_next(&at(phase, TaskState::Waiting)),
                "{phase:?}"
            );
        }
        for phase in [
            Phase::Accept,
            Phase::Publish,
            Phase::Checks,
            Phase::Ci,
            Phase::AwaitMerge,
        ] {
            assert!(
                !starts_lanes_next(&at(phase, TaskState::Active)),
                "{phase:?}"
            );
        }
    }

    #[test]
    fn admission_has_room_for_one_issue_per_free_slot() {
        assert_eq!(admission_room(None, &[]), None);
        assert_eq!(admission_room(Some(3), &[]), Some(3));
        let at = |phase: Phase, state: TaskState| {
            let mut t = task();
            t.phase = phase;
            t.state = state;
            t
        };
        let tasks = [
            at(Phase::Implement, TaskState::Active),
            at(Phase::PrGatesCodex, TaskState::Active),
            // Past the gates, waiting for a human, or over: no slot held.
            at(Phase::Ci, TaskState::Active),
            at(Phase::AwaitMerge, TaskState::Active),
            at(Phase::Implement, TaskState::Waiting),
            at(Phase::Implement, TaskState::Uncertain),
            at(Phase::Finished, TaskState::Done),
        ];
        assert_eq!(admission_room(Some(3), &tasks), Some(1));
        assert_eq!(admission_room(Some(2), &tasks), Some(0));
        assert_eq!(admission_room(Some(1), &tasks), Some(0), "never below zero");
    }

    fn caps(worker: Option<u64>, machine: Option<u64>, vendor: &[(&str, u64)]) -> Caps {
        Caps {
            worker,
            machine,
            vendor: vendor.iter().map(|(v, n)| ((*v).to_owned(), *n)).collect(),
        }
    }

    fn in_use(worker: u64, machine: u64, vendor: &[(&str, u64)]) -> InUse {
        InUse {
            worker,
            machine,
            vendor: vendor.iter().map(|(v, n)| ((*v).to_owned(), *n)).collect(),
        }
    }

    #[test]
    fn no_caps_always_start() {
        let wants = [Some("claude"), Some("grok")];
        assert_eq!(
            may_start("w1", &Caps::default(), &in_use(50, 90, &[]), &wants),
            Ok(())
        );
    }

    #[test]
    fn the_worker_cap_counts_the_lanes_that_would_start() {
        let c = caps(Some(4), None, &[]);
        assert_eq!(may_start("w1", &c, &in_use(3, 3, &[]), &[None]), Ok(()));
        let wait = may_start("w1", &c, &in_use(3, 3, &[]), &[None, None]).unwrap_err();
        assert_eq!(wait.cap, "max_lanes 4 of worker w1");
        assert_eq!(wait.running, 3);
        assert_eq!(
            wait.to_string(),
            "max_lanes 4 of worker w1 in use (3 running)"
        );
        assert!(may_start("w1", &c, &in_use(4, 4, &[]), &[None]).is_err());
    }

    #[test]
    fn a_unit_wider_than_its_cap_starts_when_nothing_runs() {
        let c = caps(Some(1), Some(1), &[("codex", 1)]);
        let gates = [Some("codex"), Some("codex")];
        assert_eq!(may_start("w1", &c, &in_use(0, 0, &[]), &gates), Ok(()));
        assert!(may_start("w1", &c, &in_use(1, 1, &[("codex", 1)]), &[None]).is_err());
    }

    #[test]
    fn the_machine_cap_counts_every_worker() {
        let c = caps(Some(8), Some(4), &[]);
        let wait = may_start("w1", &c, &in_use(1, 4, &[]), &[None]).unwrap_err();
        assert_eq!(wait.cap, "machine_max_lanes 4 of this machine");
        assert_eq!(wait.running, 4);
    }

    #[test]
    fn a_vendor_cap_holds_only_that_vendor() {
        let c = caps(None, None, &[("claude", 2)]);
        let busy = in_use(2, 2, &[("claude", 2)]);
        let wait = may_start("w1", &c, &busy, &[Some("claude")]).unwrap_err();
        assert_eq!(wait.cap, "max_vendor_lanes.claude 2 of worker w1");
        assert_eq!(may_start("w1", &c, &busy, &[Some("grok")]), Ok(()));
        // A raw argv lane names no vendor: only the worker and machine caps hold it.
        assert_eq!(may_start("w1", &c, &busy, &[None]), Ok(()));
    }
}
