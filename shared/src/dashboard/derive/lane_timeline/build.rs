//! The timeline put together: the lanes that reach into the window, packed onto rows per
//! machine, with each bar placed in seconds from the window's start, and the utilisation
//! per machine and per vendor.

use std::sync::Arc;

use super::intervals::intervals;
use super::intervals::Interval;
use super::rows::pack;
use super::utilisation::busy;
use super::utilisation::utilisation;
use super::window::Window;
use crate::coordinator::config::LaneSlot;
use crate::dashboard::inputs::tasks::TaskIn;
use crate::dashboard::model::LaneBar;
use crate::dashboard::model::LaneOutcome;
use crate::dashboard::model::LaneTimeline;
use crate::dashboard::model::TimelineMachine;
use crate::serde_name::from_serde_name;
use crate::time;

/// The timeline of `tasks` over `window`.
pub fn timeline(tasks: &[Arc<TaskIn>], window: &Window) -> LaneTimeline {
    let lanes = intervals(tasks, window);
    let packed = pack(lanes.intervals, window);
    let mut machines = Vec::with_capacity(packed.machines.len());
    let mut first_row = 0;
    for (machine, rows) in &packed.machines {
        let mine = packed.lanes.iter().filter(|(iv, _)| iv.machine == *machine);
        let (lanes, running) = mine.fold((0, 0), |(n, r), (iv, _)| {
            (n + 1, r + u32::from(iv.outcome == LaneOutcome::Running))
        });
        machines.push(TimelineMachine {
            machine: machine.map(str::to_owned),
            first_row,
            rows: *rows,
            lanes,
            running,
        });
        first_row += rows;
    }
    let bars = packed
        .lanes
        .iter()
        .map(|(iv, row)| {
            let first = machines
                .iter()
                .find(|m| m.machine.as_deref() == iv.machine)
                .map_or(0, |m| m.first_row);
            bar(iv, *row, first + row, window)
        })
        .collect();
    let lanes_only = packed.lanes.iter().map(|(iv, _)| iv);
    let by_machine = busy(lanes_only.clone(), |iv| iv.machine, window)
        .into_iter()
        .map(|((_, key), secs)| utilisation(key, secs, window))
        .collect();
    let by_vendor = busy(lanes_only, |iv| iv.vendor, window)
        .into_iter()
        .map(|((_, key), secs)| utilisation(key, secs, window))
        .collect();
    LaneTimeline {
        from: time::format(instant(window.from)),
        to: time::format(instant(window.to)),
        hours: window.hours,
        window_secs: window.secs(),
        bucket_secs: window.bucket_secs(),
        machines,
        bars,
        by_machine,
        by_vendor,
        unreadable: lanes.unreadable,
    }
}

/// One lane as the chart draws it.
fn bar(iv: &Interval<'_>, slot_row: u32, row: u32, window: &Window) -> LaneBar {
    let (start, end) = window.clip(iv.start, iv.end).unwrap_or((iv.start, iv.end));
    LaneBar {
        machine: iv.machine.map(str::to_owned),
        slot_row,
        row,
        task_id: iv.task.task_id.clone(),
        repo: iv.task.repo.clone(),
        issue: iv.task.issue,
        slot: iv.slot.to_owned(),
        role: role(iv.slot).to_owned(),
        phase: iv.phase,
        round: iv.run.map(|r| r.round),
        run: iv.n,
        vendor: iv.vendor.map(str::to_owned),
        model: iv.run.and_then(|r| r.model.clone()),
        outcome: iv.outcome,
        started_at: time::format(instant(iv.start)),
        ended_at: iv.ended().then(|| time::format(instant(iv.end))),
        duration_secs: iv.end - iv.start,
        offset_secs: start - window.from,
        span_secs: end - start,
        taken_over: iv.taken_over,
        clock_skew: iv.clock_skew,
    }
}

/// What a lane slot does, in words (an unknown slot reads as itself).
pub fn role(slot: &str) -> &str {
    match from_serde_name::<LaneSlot>(slot) {
        Some(LaneSlot::GrokImplementer) => "implementer",
        Some(LaneSlot::GrokReviewer) => "inner reviewer",
        Some(LaneSlot::GrokPrReviewerQuality) => "grok quality",
        Some(LaneSlot::GrokPrReviewerLogic) => "grok logic",
        Some(LaneSlot::CodexPrReviewerQuality) => "codex quality",
        Some(LaneSlot::CodexPrReviewerLogic) => "codex logic",
        None => slot,
    }
}

/// A Unix second as an instant (the window's seconds all come from parsed instants).
fn instant(secs: i64) -> time::Instant {
    time::from_unix_millis(secs.saturating_mul(1000)).unwrap_or_else(time::earliest)
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use serde_json::Value;

    use super::*;
    use crate::dashboard::fixtures;
    use crate::dashboard::fixtures::ago;
    use crate::dashboard::inputs::tasks::parse_task;
    use crate::serde_name::WireName;

    fn run(slot: &str, vendor: &str, from: i64, to: i64, machine: &str, verdict: &str) -> Value {
        json!({"slot": slot, "phase": "implement", "round": 2, "vendor": vendor,
            "started_at": ago(from), "ended_at": ago(to), "duration_ms": (from - to) * 60_000,
            "verdict": verdict, "exit_code": 0, "cost_source": "unknown",
            "transcript": {"machine": machine, "path": "t.jsonl", "bytes": 1, "sha256": "sha256:00"}})
    }

    fn task(issue: u64, machine: &str, runs: Vec<Value>, pending: Option<Value>) -> Arc<TaskIn> {
        let mut v = fixtures::task("acme/app", issue, "active", "pr_gates_grok", 1);
        v["machine"] = json!(machine);
        v["lane_runs"] = json!(runs);
        if let Some(p) = pending {
            v["pending"] = p;
        }
        let path = format!("coordinator/tasks/acme/app/{issue}.json");
        Arc::new(parse_task(&path, &serde_json::to_vec(&v).unwrap()).unwrap())
    }

    /// Two machines: box-1 ran an implementer and, overlapping it, another task's inner
    /// review, then runs two PR gates now; box-2 ran one rejected gate.
    fn fleet() -> Vec<Arc<TaskIn>> {
        vec![
            task(
                1,
                "box-1",
                vec![run("grok:implementer", "claude", 120, 60, "box-1", "done")],
                Some(
                    json!({"slot": "grok:pr-reviewer-quality+grok:pr-reviewer-logic",
                    "phase": "pr_gates_grok", "started_at": ago(30),
                    "launch": {"machine": "box-1", "nonce": "n", "stems": ["a", "b"]}}),
                ),
            ),
            task(
                2,
                "box-1",
                vec![run("grok:reviewer", "codex", 90, 80, "box-1", "approved")],
                None,
            ),
            task(
                3,
                "box-2",
                vec![run(
                    "codex:pr-reviewer-logic",
                    "codex",
                    50,
                    45,
                    "box-2",
                    "rejected",
                )],
                None,
            ),
        ]
    }

    #[test]
    fn bars_are_packed_per_machine_with_their_outcome_role_and_place() {
        let w = Window::ending(fixtures::now(), 6).unwrap();
        let t = timeline(&fleet(), &w);
        let bars: Vec<_> = t
            .bars
            .iter()
            .map(|b| {
                (
                    b.machine.as_deref().unwrap_or("?"),
                    b.row,
                    b.issue,
                    b.role.as_str(),
                    b.outcome.wire_name(),
                )
            })
            .collect();
        assert_eq!(
            bars,
            [
                ("box-1", 0, 1, "implementer", "done"),
                ("box-1", 0, 1, "grok logic", "running"),
                ("box-1", 1, 2, "inner reviewer", "approved"),
                ("box-1", 1, 1, "grok quality", "running"),
                ("box-2", 2, 3, "codex logic", "rejected"),
            ]
        );
        let m: Vec<_> = t
            .machines
            .iter()
            .map(|m| (m.machine.clone(), m.first_row, m.rows, m.lanes, m.running))
            .collect();
        assert_eq!(
            m,
            [
                (Some("box-1".into()), 0, 2, 4, 2),
                (Some("box-2".into()), 2, 1, 1, 0)
            ]
        );
        let implementer = &t.bars[0];
        assert_eq!(implementer.offset_secs, 4 * 3600);
        assert_eq!(
            (implementer.span_secs, implementer.duration_secs),
            (3600, 3600)
        );
        assert_eq!(implementer.ended_at.as_deref(), Some(ago(60).as_str()));
        assert_eq!((implementer.run, implementer.round), (Some(1), Some(2)));
        let running = &t.bars[1];
        assert_eq!((running.ended_at.clone(), running.span_secs), (None, 1800));
        assert_eq!(
            (running.run, running.round, running.vendor.clone()),
            (None, None, None)
        );
        assert_eq!(t.from, ago(360));
        assert_eq!(t.to, ago(0));
        assert_eq!((t.hours, t.window_secs, t.bucket_secs), (6, 21_600, 300));
    }

    #[test]
    fn utilisation_is_lanes_running_per_bucket_per_machine_and_vendor() {
        let w = Window::ending(fixtures::now(), 6).unwrap();
        let t = timeline(&fleet(), &w);
        let keys = |u: &[crate::dashboard::model::Utilisation]| {
            u.iter().map(|u| u.key.clone()).collect::<Vec<_>>()
        };
        assert_eq!(
            keys(&t.by_machine),
            [Some("box-1".into()), Some("box-2".into())]
        );
        assert_eq!(
            keys(&t.by_vendor),
            [Some("claude".into()), Some("codex".into()), None],
            "running lanes report no vendor yet"
        );
        let box1 = &t.by_machine[0];
        // 60 min of the implementer, 10 of the inner review, 2 × 30 of the gates, over 6 h.
        assert_eq!(box1.busy_secs.iter().sum::<i64>(), (60 + 10 + 60) * 60);
        assert!((box1.mean - 130.0 / 360.0).abs() < 1e-12);
        // 90 to 80 minutes ago the implementer and the inner review ran at once.
        assert_eq!(box1.peak, 2.0);
        let bucket = |minutes_ago: i64| ((360 - minutes_ago) / 5) as usize;
        assert_eq!(box1.lanes[bucket(85)], 2.0);
        assert_eq!(box1.lanes[bucket(100)], 1.0);
        assert_eq!(box1.lanes[bucket(40)], 0.0);
        assert_eq!(box1.lanes[71], 2.0, "the two gates run to the clock");
        let codex = &t.by_vendor[1];
        assert_eq!(codex.busy_secs.iter().sum::<i64>(), 15 * 60);
    }

    #[test]
    fn a_shorter_window_leaves_out_what_ended_before_it() {
        let w = Window::ending(fixtures::now(), 1).unwrap();
        let t = timeline(&fleet(), &w);
        let issues: Vec<_> = t.bars.iter().map(|b| (b.issue, b.slot.as_str())).collect();
        assert_eq!(
            issues,
            [
                (1, "grok:pr-reviewer-logic"),
                (1, "grok:pr-reviewer-quality"),
                (3, "codex:pr-reviewer-logic")
            ]
        );
        assert_eq!(t.bucket_secs, 50);
    }

    #[test]
    fn nothing_ran_is_an_empty_timeline() {
        let w = Window::ending(fixtures::now(), 6).unwrap();
        let t = timeline(&[], &w);
        assert!(t.bars.is_empty() && t.machines.is_empty() && t.by_vendor.is_empty());
        assert_eq!(t.unreadable, 0);
    }

    #[test]
    fn every_slot_has_a_role_and_an_unknown_one_reads_as_itself() {
        let roles: Vec<_> = LaneSlot::ALL.iter().map(|s| role(s.wire_name())).collect();
        assert_eq!(
            roles,
            [
                "implementer",
                "inner reviewer",
                "grok quality",
                "grok logic",
                "codex quality",
                "codex logic"
            ]
        );
        assert_eq!(role("x:y"), "x:y");
    }
}
