//! Each machine's lanes packed onto numbered rows: in order of start, a lane takes the
//! lowest row free when it starts (a lane ending as another starts frees its row), so a
//! machine has as many rows as lanes ran on it at once. A lane of no length holds its row
//! for a second, so it never hides under another lane's bar.

use super::intervals::Interval;
use super::window::Window;

/// The lanes with their rows, by machine (named ones by name, an unknown one last), row
/// and start.
#[derive(Debug, Clone, Default)]
pub struct Packed<'a> {
    /// Each lane and its row within its machine.
    pub lanes: Vec<(Interval<'a>, u32)>,
    /// Each machine and its number of rows, in the same order.
    pub machines: Vec<(Option<&'a str>, u32)>,
}

/// Packs `intervals` (clipped to `window`) onto rows per machine.
pub fn pack<'a>(mut intervals: Vec<Interval<'a>>, window: &Window) -> Packed<'a> {
    let clipped = |iv: &Interval<'_>| window.clip(iv.start, iv.end).unwrap_or((iv.start, iv.end));
    intervals.sort_by(|a, b| {
        (a.machine.is_none(), a.machine)
            .cmp(&(b.machine.is_none(), b.machine))
            .then_with(|| clipped(a).cmp(&clipped(b)))
            .then_with(|| a.task.task_id.cmp(&b.task.task_id))
            .then_with(|| a.slot.cmp(b.slot))
    });
    let mut packed = Packed::default();
    // The end of the lane last placed on each row of the current machine.
    let mut ends: Vec<i64> = Vec::new();
    for iv in intervals {
        if packed.machines.last().map(|m| m.0) != Some(iv.machine) {
            packed.machines.push((iv.machine, 0));
            ends.clear();
        }
        let (start, end) = clipped(&iv);
        let end = end.max(start + 1);
        let row = match ends.iter().position(|e| *e <= start) {
            Some(free) => {
                ends[free] = end;
                free
            }
            None => {
                ends.push(end);
                ends.len() - 1
            }
        };
        if let Some(m) = packed.machines.last_mut() {
            m.1 = m.1.max(row as u32 + 1);
        }
        packed.lanes.push((iv, row as u32));
    }
    // Within a machine, by row and then start.
    let order: Vec<Option<&str>> = packed.machines.iter().map(|m| m.0).collect();
    let place = |iv: &Interval<'_>| order.iter().position(|m| *m == iv.machine);
    packed
        .lanes
        .sort_by_key(|(iv, row)| (place(iv), *row, clipped(iv)));
    packed
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::coordinator::task::Phase;
    use crate::coordinator::task::Task;
    use crate::dashboard::fixtures;
    use crate::dashboard::model::LaneOutcome;

    fn some_task() -> Task {
        let v = fixtures::task("acme/app", 7, "active", "implement", 1);
        serde_json::from_value(v).unwrap()
    }

    fn lane<'a>(task: &'a Task, machine: Option<&'a str>, start: i64, end: i64) -> Interval<'a> {
        Interval {
            machine,
            task,
            slot: "grok:implementer",
            phase: Phase::Implement,
            run: None,
            vendor: None,
            n: None,
            outcome: LaneOutcome::Running,
            start,
            end,
            taken_over: false,
            clock_skew: false,
        }
    }

    const W: Window = Window {
        from: 0,
        to: 1_000,
        hours: 1,
    };

    #[test]
    fn overlapping_lanes_take_rows_and_a_freed_row_is_reused() {
        let t = some_task();
        let packed = pack(
            vec![
                lane(&t, Some("b"), 0, 100),
                lane(&t, Some("a"), 10, 50),
                lane(&t, Some("a"), 0, 100),
                lane(&t, Some("a"), 50, 60), // starts as the second ends: row 1 again
                lane(&t, None, 0, 10),       // unknown machine last
                lane(&t, Some("a"), 55, 2_000), // runs past the window's end
            ],
            &W,
        );
        let got: Vec<_> = packed
            .lanes
            .iter()
            .map(|(iv, row)| (iv.machine, *row, iv.start))
            .collect();
        assert_eq!(
            got,
            [
                (Some("a"), 0, 0),
                (Some("a"), 1, 10),
                (Some("a"), 1, 50),
                (Some("a"), 2, 55),
                (Some("b"), 0, 0),
                (None, 0, 0),
            ]
        );
        assert_eq!(packed.machines, [(Some("a"), 3), (Some("b"), 1), (None, 1)]);
    }

    proptest! {
        /// A machine's rows are exactly the most lanes that ran on it at once, and no two
        /// lanes of a row overlap.
        #[test]
        fn rows_are_the_most_lanes_at_once(spans in prop::collection::vec((0i64..900, 0i64..200), 1..40)) {
            let t = some_task();
            let lanes: Vec<_> = spans.iter().map(|(s, len)| lane(&t, Some("m"), *s, s + len)).collect();
            let mut most = 0;
            for (s, _) in &spans {
                // Most at once is reached at some lane's start; a lane of no length holds
                // its second.
                let at = spans.iter().filter(|(s2, l2)| *s2 <= *s && s2 + (*l2).max(1) > *s).count();
                most = most.max(at);
            }
            let packed = pack(lanes, &W);
            prop_assert_eq!(packed.machines[0].1 as usize, most);
            for (a, ra) in &packed.lanes {
                for (b, rb) in &packed.lanes {
                    if std::ptr::eq(a, b) || ra != rb { continue; }
                    let overlap = a.start < b.end.max(b.start + 1) && b.start < a.end.max(a.start + 1);
                    prop_assert!(!overlap, "{:?} and {:?} share row {}", (a.start, a.end), (b.start, b.end), ra);
                }
            }
        }
    }
}
