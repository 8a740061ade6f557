//! How long a sync keeps trying when other machines keep publishing first, and how long it
//! waits between tries.
//!
//! A sync is bounded by time, not by a count of lost rounds: with ten writers a count runs
//! out in a few seconds for whoever is unlucky, and the same machine then fails command
//! after command while the others progress. Between rounds a loser sleeps a random time
//! below a ceiling that doubles with each loss up to a small cap (full jitter), so racing
//! machines spread out without anyone backing off so far that fresh writers always win.

use std::time::Duration;
use std::time::Instant;

/// How long a sync that must publish (a claim, a release, `sync` itself) keeps trying.
const FULL: Duration = Duration::from_secs(30);
/// How long a write that may publish later (an event, a manifest, a heartbeat's branch)
/// tries before it leaves publishing to the next sync.
const BRIEF: Duration = Duration::from_secs(3);
/// The first back-off ceiling.
const BASE: Duration = Duration::from_millis(20);
/// The largest back-off ceiling.
const CAP: Duration = Duration::from_millis(320);
/// Every sync tries at least this many rounds, however slow the remote is.
const MIN_ROUNDS: u32 = 3;

/// The time budget of one sync.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Patience {
    start: Instant,
    budget: Duration,
}

impl Patience {
    /// Returns the budget of a sync whose caller needs the remote's verdict.
    pub(crate) fn full() -> Self {
        Patience {
            start: Instant::now(),
            budget: FULL,
        }
    }

    /// Returns the budget of a sync whose caller can publish later.
    pub(crate) fn brief() -> Self {
        Patience {
            start: Instant::now(),
            budget: BRIEF,
        }
    }

    /// Returns the seconds spent so far.
    pub(crate) fn elapsed_secs(&self) -> u64 {
        self.start.elapsed().as_secs()
    }

    /// Reports whether a sync that has lost `rounds` rounds should give up.
    pub(crate) fn exhausted(&self, rounds: u32) -> bool {
        rounds >= MIN_ROUNDS && self.start.elapsed() >= self.budget
    }

    /// Sleeps before the round after the `losses`-th lost one.
    pub(crate) fn back_off(&self, losses: u32) {
        std::thread::sleep(pause(losses, fastrand::f64()));
    }
}

/// Returns the pause after the `losses`-th lost round for a uniform draw `u` in [0, 1):
/// `u` times a ceiling that starts at [`BASE`] and doubles per loss up to [`CAP`].
fn pause(losses: u32, u: f64) -> Duration {
    let doublings = losses.saturating_sub(1).min(16);
    let ceiling = BASE.saturating_mul(1 << doublings).min(CAP);
    ceiling.mul_f64(u.clamp(0.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn back_off_doubles_up_to_the_cap_and_is_jittered() {
        let ceilings: Vec<u128> = (1..=7).map(|l| pause(l, 1.0).as_millis()).collect();
        assert_eq!(ceilings, [20, 40, 80, 160, 320, 320, 320]);
        assert_eq!(pause(1_000, 1.0), CAP, "no overflow after many losses");
        assert_eq!(pause(3, 0.0), Duration::ZERO);
        assert_eq!(pause(3, 0.5).as_millis(), 40);
    }

    #[test]
    fn a_sync_is_bounded_by_time_not_by_lost_rounds() {
        let fresh = Patience::full();
        assert!(
            !fresh.exhausted(12),
            "twelve quick losses are no reason to stop"
        );
        assert!(!fresh.exhausted(1_000));
        let spent = Patience {
            start: Instant::now() - FULL,
            budget: FULL,
        };
        assert!(
            !spent.exhausted(MIN_ROUNDS - 1),
            "a slow remote still gets its rounds"
        );
        assert!(spent.exhausted(MIN_ROUNDS));
    }
}
