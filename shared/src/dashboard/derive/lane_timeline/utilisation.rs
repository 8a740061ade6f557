//! How busy a machine or a vendor was: per bucket of the window, the lane-seconds of its
//! lanes inside the bucket, and that over the bucket's length — the lanes running on
//! average. A lane whose outcome is unknown holds no slot and counts nowhere.

use std::collections::BTreeMap;

use super::intervals::Interval;
use super::window::Window;
use super::window::BUCKETS;
use crate::dashboard::model::Utilisation;

/// The lane-seconds per bucket of every key `key` gives the lanes, named keys by name and
/// the unknown one (`None`) last; a key whose lanes all have unknown outcomes has zeros.
pub fn busy<'a, 'i>(
    lanes: impl IntoIterator<Item = &'i Interval<'a>>,
    key: impl Fn(&Interval<'a>) -> Option<&'a str>,
    window: &Window,
) -> BTreeMap<(bool, Option<&'a str>), Vec<i64>>
where
    'a: 'i,
{
    let mut by_key: BTreeMap<(bool, Option<&'a str>), Vec<i64>> = BTreeMap::new();
    let size = window.bucket_secs().max(1);
    for iv in lanes {
        let k = key(iv);
        let buckets = by_key
            .entry((k.is_none(), k))
            .or_insert_with(|| vec![0; BUCKETS as usize]);
        let Some((start, end)) = window.clip(iv.start, iv.end).filter(|_| iv.occupies()) else {
            continue;
        };
        let mut at = start;
        while at < end {
            let b = ((at - window.from) / size).min(BUCKETS - 1);
            let bucket_end = (window.from + (b + 1) * size).min(end);
            let bucket_end = if b == BUCKETS - 1 { end } else { bucket_end };
            if let Some(slot) = buckets.get_mut(b as usize) {
                *slot += bucket_end - at;
            }
            at = bucket_end;
        }
    }
    by_key
}

/// One key's lane-seconds per bucket as the model shows them.
pub fn utilisation(key: Option<&str>, busy_secs: Vec<i64>, window: &Window) -> Utilisation {
    let size = window.bucket_secs().max(1) as f64;
    let lanes: Vec<f64> = busy_secs.iter().map(|b| *b as f64 / size).collect();
    let peak = lanes.iter().copied().fold(0.0_f64, f64::max);
    let mean = busy_secs.iter().sum::<i64>() as f64 / window.secs().max(1) as f64;
    Utilisation {
        key: key.map(str::to_owned),
        busy_secs,
        lanes,
        peak,
        mean,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::task::Phase;
    use crate::coordinator::task::Task;
    use crate::dashboard::fixtures;
    use crate::dashboard::model::LaneOutcome;

    const W: Window = Window {
        from: 0,
        to: 3_600,
        hours: 1,
    };

    fn some_task() -> Task {
        serde_json::from_value(fixtures::task("acme/app", 7, "active", "implement", 1)).unwrap()
    }

    fn lane<'a>(task: &'a Task, machine: &'a str, start: i64, end: i64) -> Interval<'a> {
        Interval {
            machine: Some(machine),
            task,
            slot: "grok:implementer",
            phase: Phase::Implement,
            run: None,
            vendor: None,
            n: None,
            outcome: LaneOutcome::Approved,
            start,
            end,
            taken_over: false,
            clock_skew: false,
        }
    }

    #[test]
    fn lane_seconds_are_split_across_buckets_and_averaged() {
        let t = some_task();
        // Buckets of 50 s: a lane over the first 75 s, another from 25 s to 50 s.
        let lanes = [
            lane(&t, "a", 0, 75),
            lane(&t, "a", 25, 50),
            lane(&t, "b", -100, 10), // starts before the window
            Interval {
                outcome: LaneOutcome::Unknown,
                ..lane(&t, "c", 0, 3_600)
            },
        ];
        let busy = busy(&lanes, |iv| iv.machine, &W);
        let a = &busy[&(false, Some("a"))];
        assert_eq!(&a[..3], [75, 25, 0]);
        assert_eq!(busy[&(false, Some("b"))][0], 10);
        assert!(
            busy[&(false, Some("c"))].iter().all(|b| *b == 0),
            "unknown outcome counts nowhere"
        );
        let u = utilisation(Some("a"), a.clone(), &W);
        assert_eq!(u.lanes[..2], [1.5, 0.5]);
        assert_eq!(u.peak, 1.5);
        assert!((u.mean - 100.0 / 3_600.0).abs() < 1e-12);
        assert_eq!(u.busy_secs.len(), BUCKETS as usize);
    }

    #[test]
    fn a_lane_running_to_the_clock_fills_the_last_bucket() {
        let t = some_task();
        let lanes = [lane(&t, "a", 3_500, 3_600)];
        let busy = busy(&lanes, |iv| iv.machine, &W);
        let a = &busy[&(false, Some("a"))];
        assert_eq!(a[70..], [50, 50]);
        assert_eq!(a.iter().sum::<i64>(), 100);
    }

    #[test]
    fn the_unknown_key_sorts_last() {
        let t = some_task();
        let lanes = [
            Interval {
                machine: None,
                ..lane(&t, "x", 0, 10)
            },
            lane(&t, "z", 0, 10),
            lane(&t, "b", 0, 10),
        ];
        let keys: Vec<_> = busy(&lanes, |iv| iv.machine, &W)
            .into_keys()
            .map(|k| k.1)
            .collect();
        assert_eq!(keys, [Some("b"), Some("z"), None]);
    }
}
