//! Every lane of the coordinator task checkpoints as an interval in Unix seconds: the
//! recorded lane runs (with their verdicts) and the lanes a pending start says run now,
//! with the machine that ran each, and what was odd about it (a takeover, clocks apart).
//!
//! A recorded run's machine is its transcript's; a run without a transcript ran on the
//! task's machine when the task never changed machines, else nobody can tell. A pending
//! lane runs until the clock while the machine that started it still runs the task and the
//! task is active; otherwise its outcome is unknown (the coordinator will not start another
//! model for it), and it is drawn to the clock but counted in no utilisation. A pending lane's
//! vendor is the one its start recorded (none for a raw argv lane, or a start recorded before
//! starts named vendors).

use std::sync::Arc;

use super::window::Window;
use crate::coordinator::task::LaneRun;
use crate::coordinator::task::PendingLane;
use crate::coordinator::task::Phase;
use crate::coordinator::task::Task;
use crate::coordinator::task::TaskState;
use crate::dashboard::inputs::tasks::TaskIn;
use crate::dashboard::model::LaneOutcome;
use crate::time;

/// One lane in time.
#[derive(Debug, Clone)]
pub struct Interval<'a> {
    /// The machine that ran it, when known.
    pub machine: Option<&'a str>,
    /// The task it ran for.
    pub task: &'a Task,
    /// The lane slot.
    pub slot: &'a str,
    /// The phase that ran it.
    pub phase: Phase,
    /// The recorded run (absent for a pending lane).
    pub run: Option<&'a LaneRun>,
    /// The vendor: the one the run's usage named, or the one a pending start recorded.
    pub vendor: Option<&'a str>,
    /// The run's number on the item page (absent for a pending lane).
    pub n: Option<u64>,
    /// What became of it.
    pub outcome: LaneOutcome,
    /// Its start.
    pub start: i64,
    /// Its end: the recorded one, or the clock for a lane without one.
    pub end: i64,
    /// It ran on a machine that no longer runs the task.
    pub taken_over: bool,
    /// Its recorded times disagree with each other or with the clock.
    pub clock_skew: bool,
}

impl Interval<'_> {
    /// Whether it counts as a lane running (every lane but one of unknown outcome).
    pub fn occupies(&self) -> bool {
        self.outcome != LaneOutcome::Unknown
    }

    /// Whether it has a recorded end.
    pub fn ended(&self) -> bool {
        self.run.is_some()
    }
}

/// The intervals that reach into the window, and how many runs could not be read.
#[derive(Debug, Clone, Default)]
pub struct Lanes<'a> {
    /// The intervals, in the tasks' order, runs before pending lanes.
    pub intervals: Vec<Interval<'a>>,
    /// Runs whose start or end time does not parse (left out).
    pub unreadable: u64,
}

/// Reads every task's lanes that reach into `window`.
pub fn intervals<'a>(tasks: &'a [Arc<TaskIn>], window: &Window) -> Lanes<'a> {
    let mut lanes = Lanes::default();
    for t in tasks {
        let task = &t.task;
        let first = task.earlier_runs.runs + 1;
        for (i, run) in task.lane_runs.iter().enumerate() {
            match of_run(task, run, first + i as u64) {
                Some(iv) => {
                    if window.clip(iv.start, iv.end).is_some() {
                        lanes.intervals.push(iv);
                    }
                }
                None => lanes.unreadable += 1,
            }
        }
        if let Some(pending) = &task.pending {
            match of_pending(task, pending, window) {
                Some(ivs) => lanes.intervals.extend(ivs),
                None => lanes.unreadable += 1,
            }
        }
    }
    lanes
}

/// A recorded run: from its start to its end, or, when the end was recorded before the
/// start, for its measured duration.
fn of_run<'a>(task: &'a Task, run: &'a LaneRun, n: u64) -> Option<Interval<'a>> {
    let start = time::parse(&run.started_at)?.timestamp();
    let end = time::parse(&run.ended_at)?.timestamp();
    let skewed = end < start;
    let end = if skewed {
        start + i64::try_from(run.duration_ms.div_ceil(1000)).unwrap_or(0)
    } else {
        end
    };
    let machine = run
        .transcript
        .as_ref()
        .map(|t| t.machine.as_str())
        .or_else(|| only_machine(task));
    Some(Interval {
        machine,
        task,
        slot: &run.slot,
        phase: run.phase,
        run: Some(run),
        vendor: run.vendor.as_deref(),
        n: Some(n),
        outcome: run.verdict.into(),
        start,
        end,
        taken_over: moved_from(task, machine),
        clock_skew: skewed,
    })
}

/// The lanes of a pending start, one per slot, each running until the clock (a start after
/// the clock is a clock apart: drawn from the clock).
fn of_pending<'a>(
    task: &'a Task,
    pending: &'a PendingLane,
    window: &Window,
) -> Option<Vec<Interval<'a>>> {
    let started = time::parse(&pending.started_at)?.timestamp();
    let machine = match &pending.launch {
        Some(launch) => Some(launch.machine.as_str()),
        None => only_machine(task),
    };
    let taken_over = moved_from(task, machine);
    // A start without a launch record ran inside a tick of an earlier version: nobody can
    // find it again. One on a machine that handed the task over, or of a task that is not
    // active (uncertain), has no outcome anyone will collect.
    let outcome = if pending.launch.is_some() && !taken_over && task.state == TaskState::Active {
        LaneOutcome::Running
    } else {
        LaneOutcome::Unknown
    };
    let start = started.min(window.to);
    Some(
        pending
            .slot
            .split('+')
            .filter(|slot| !slot.is_empty())
            .enumerate()
            .map(|(i, slot)| Interval {
                machine,
                task,
                slot,
                phase: pending.phase,
                run: None,
                vendor: pending
                    .launch
                    .as_ref()
                    .and_then(|l| l.vendors.get(i))
                    .and_then(|v| v.as_deref()),
                n: None,
                outcome,
                start,
                end: window.to,
                taken_over,
                clock_skew: started > window.to,
            })
            .filter(|iv| window.clip(iv.start, iv.end).is_some())
            .collect(),
    )
}

/// The task's machine when it never ran on another one (then every lane ran there).
fn only_machine(task: &Task) -> Option<&str> {
    task.machine
        .as_deref()
        .filter(|_| task.previous_machines.is_empty())
}

/// Whether `machine` ran the task before another machine took it over.
fn moved_from(task: &Task, machine: Option<&str>) -> bool {
    matches!((machine, task.machine.as_deref()), (Some(m), Some(now)) if m != now)
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use serde_json::Value;

    use super::*;
    use crate::dashboard::fixtures;
    use crate::dashboard::fixtures::ago;
    use crate::dashboard::inputs::tasks::parse_task;

    fn run(slot: &str, from: i64, to: i64, machine: Option<&str>) -> Value {
        let mut v = json!({"slot": slot, "phase": "implement", "round": 1, "vendor": "claude",
            "started_at": ago(from), "ended_at": ago(to), "duration_ms": (from - to).max(0) * 60_000,
            "verdict": "done", "exit_code": 0, "cost_source": "unknown"});
        if let Some(m) = machine {
            v["transcript"] =
                json!({"machine": m, "path": "t.jsonl", "bytes": 1, "sha256": "sha256:00"});
        }
        v
    }

    fn task(edit: impl FnOnce(&mut Value)) -> Vec<Arc<TaskIn>> {
        let mut v = fixtures::task("acme/app", 7, "active", "implement", 1);
        v["machine"] = json!("box-1");
        edit(&mut v);
        let path = "coordinator/tasks/acme/app/7.json";
        vec![Arc::new(
            parse_task(path, &serde_json::to_vec(&v).unwrap()).unwrap(),
        )]
    }

    fn window() -> Window {
        Window::ending(fixtures::now(), 6).unwrap()
    }

    #[test]
    fn runs_inside_the_window_are_read_with_their_machine_and_number() {
        let tasks = task(|v| {
            v["earlier_runs"] = json!({"runs": 4, "input_tokens": 0, "output_tokens": 0,
                "cache_read_tokens": 0, "cache_write_tokens": 0, "cost_usd": 0.0, "unpriced_runs": 0});
            v["lane_runs"] = json!([
                run("grok:implementer", 600, 500, Some("box-1")), // before the window
                run("grok:implementer", 400, 340, None),          // ends in it
                run("grok:reviewer", 30, 20, Some("box-2")),
            ]);
        });
        let lanes = intervals(&tasks, &window());
        assert_eq!(lanes.unreadable, 0);
        let got: Vec<_> = lanes
            .intervals
            .iter()
            .map(|i| (i.slot, i.machine, i.n, i.outcome, i.ended()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "grok:implementer",
                    Some("box-1"),
                    Some(6),
                    LaneOutcome::Done,
                    true
                ),
                (
                    "grok:reviewer",
                    Some("box-2"),
                    Some(7),
                    LaneOutcome::Done,
                    true
                ),
            ]
        );
        assert!(
            lanes.intervals[1].taken_over,
            "box-2 is not the task's machine"
        );
        assert!(!lanes.intervals[0].taken_over);
    }

    #[test]
    fn a_run_without_a_transcript_after_a_takeover_has_no_machine() {
        let tasks = task(|v| {
            v["previous_machines"] = json!(["box-0"]);
            v["lane_runs"] = json!([run("grok:implementer", 30, 20, None)]);
        });
        let lanes = intervals(&tasks, &window());
        assert_eq!(lanes.intervals[0].machine, None);
        assert!(!lanes.intervals[0].taken_over);
    }

    #[test]
    fn an_end_before_the_start_is_a_clock_skew_drawn_for_the_measured_duration() {
        let tasks = task(|v| {
            let mut r = run("grok:implementer", 30, 40, Some("box-1"));
            r["duration_ms"] = json!(90_500);
            v["lane_runs"] = json!([r]);
        });
        let iv = &intervals(&tasks, &window()).intervals[0];
        assert!(iv.clock_skew);
        assert_eq!(iv.end - iv.start, 91);
    }

    #[test]
    fn unreadable_times_are_counted_and_left_out() {
        let tasks = task(|v| {
            let mut r = run("grok:implementer", 30, 20, None);
            r["ended_at"] = json!("yesterday");
            v["lane_runs"] = json!([r, run("grok:reviewer", 10, 5, None)]);
        });
        let lanes = intervals(&tasks, &window());
        assert_eq!(lanes.unreadable, 1);
        assert_eq!(lanes.intervals.len(), 1);
    }

    fn pending(machine: Option<&str>, started: i64) -> Value {
        let mut p = json!({"slot": "grok:pr-reviewer-quality+grok:pr-reviewer-logic",
            "phase": "pr_gates_grok", "started_at": ago(started)});
        if let Some(m) = machine {
            p["launch"] = json!({"machine": m, "nonce": "n", "stems": ["a", "b"]});
        }
        p
    }

    #[test]
    fn a_pending_start_is_one_running_lane_per_slot_until_the_clock() {
        let tasks = task(|v| v["pending"] = pending(Some("box-1"), 15));
        let w = window();
        let lanes = intervals(&tasks, &w);
        let got: Vec<_> = lanes
            .intervals
            .iter()
            .map(|i| (i.slot, i.outcome, i.end == w.to, i.ended(), i.occupies()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "grok:pr-reviewer-quality",
                    LaneOutcome::Running,
                    true,
                    false,
                    true
                ),
                (
                    "grok:pr-reviewer-logic",
                    LaneOutcome::Running,
                    true,
                    false,
                    true
                ),
            ]
        );
    }

    #[test]
    fn a_pending_lane_counts_under_the_vendor_its_start_recorded() {
        let tasks = task(|v| {
            let mut p = pending(Some("box-1"), 15);
            p["launch"]["vendors"] = json!(["grok", null]);
            v["pending"] = p;
        });
        let lanes = intervals(&tasks, &window());
        let vendors: Vec<_> = lanes.intervals.iter().map(|i| i.vendor).collect();
        assert_eq!(vendors, [Some("grok"), None]);
        // A start recorded before vendors were names none.
        let old = task(|v| v["pending"] = pending(Some("box-1"), 15));
        assert!(intervals(&old, &window())
            .intervals
            .iter()
            .all(|i| i.vendor.is_none()));
    }

    #[test]
    fn a_pending_lane_nobody_will_collect_has_an_unknown_outcome() {
        // Started on a machine that handed the task over.
        let taken = task(|v| v["pending"] = pending(Some("box-0"), 15));
        let iv = &intervals(&taken, &window()).intervals[0];
        assert_eq!(
            (iv.outcome, iv.machine, iv.taken_over, iv.occupies()),
            (LaneOutcome::Unknown, Some("box-0"), true, false)
        );
        // Of an uncertain task.
        let uncertain = task(|v| {
            v["state"] = json!("uncertain");
            v["pending"] = pending(Some("box-1"), 15);
        });
        assert_eq!(
            intervals(&uncertain, &window()).intervals[0].outcome,
            LaneOutcome::Unknown
        );
        // Run inside a tick of an earlier version: on the task's one machine, unknown.
        let inline = task(|v| v["pending"] = pending(None, 15));
        let iv = &intervals(&inline, &window()).intervals[0];
        assert_eq!(
            (iv.outcome, iv.machine),
            (LaneOutcome::Unknown, Some("box-1"))
        );
    }

    #[test]
    fn a_pending_start_after_the_clock_is_drawn_from_the_clock() {
        let tasks = task(|v| v["pending"] = pending(Some("box-1"), -10));
        let w = window();
        let iv = &intervals(&tasks, &w).intervals[0];
        assert_eq!((iv.start, iv.end, iv.clock_skew), (w.to, w.to, true));
        // One that started long before the window still runs into it.
        let old = task(|v| v["pending"] = pending(Some("box-1"), 24 * 60));
        assert_eq!(intervals(&old, &w).intervals.len(), 2);
    }
}
