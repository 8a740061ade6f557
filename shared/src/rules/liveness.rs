//! Heartbeat liveness: live, stale, dead or unknown, from a record's own timestamps.

use std::fmt;

use crate::record::field::Field;
use crate::record::field::EXPIRES_AT;
use crate::record::field::UPDATED_AT;
use crate::record::Record;
use crate::serde_name::WireName;
use crate::time;
use crate::time::Instant;

/// How many TTLs past `updated_at` a silent heartbeat stays stale before it is dead.
pub const DEAD_AFTER_TTL_MULTIPLIER: i32 = 4;

/// The liveness of one heartbeat record; its serde name is the lowercase word output uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Liveness {
    /// Before `expires_at`.
    Live,
    /// Past `expires_at`, within `updated_at + 4 × ttl`.
    Stale,
    /// Past the stale window, or a non-positive ttl.
    Dead,
    /// Timestamps missing or unparseable.
    Unknown,
}

/// The lowercase name used in output.
impl WireName for Liveness {}

impl fmt::Display for Liveness {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.wire_name())
    }
}

/// Returns the liveness of a heartbeat with these timestamps at `now`.
pub fn of_times(
    updated_at: Option<Instant>,
    expires_at: Option<Instant>,
    now: Instant,
) -> Liveness {
    let (Some(updated), Some(expires)) = (updated_at, expires_at) else {
        return Liveness::Unknown;
    };
    let ttl = expires - updated;
    if ttl <= chrono::Duration::zero() {
        Liveness::Dead
    } else if now < expires {
        Liveness::Live
    } else if now < updated + ttl * DEAD_AFTER_TTL_MULTIPLIER {
        Liveness::Stale
    } else {
        Liveness::Dead
    }
}

/// Returns the liveness of a heartbeat record at `now`.
pub fn of_record(r: &Record, now: Instant) -> Liveness {
    let ts = |f: Field| f.text(r).and_then(time::parse);
    of_times(ts(UPDATED_AT), ts(EXPIRES_AT), now)
}

/// Returns the record's `updated_at` if it parses; used to pick the newest of several copies.
pub fn updated_at(r: &Record) -> Option<Instant> {
    UPDATED_AT.text(r).and_then(time::parse)
}

#[cfg(test)]
mod tests {
    use chrono::Duration;

    use super::*;

    fn at(mins: i64) -> Option<Instant> {
        Some(time::parse("2026-06-13T12:00:00Z").unwrap() + Duration::minutes(mins))
    }

    #[test]
    fn liveness_table() {
        let now = at(0).unwrap();
        // (updated, expires, expected) with ttl = 15 min unless stated.
        let cases = [
            (at(-5), at(10), Liveness::Live),
            (at(-20), at(-5), Liveness::Stale),
            (at(-70), at(-55), Liveness::Dead),
            (at(-15), at(0), Liveness::Stale), // now == expires is no longer live
            (at(-60), at(-45), Liveness::Dead), // exactly updated + 4 ttl
            (at(-59), at(-44), Liveness::Stale),
            (at(0), at(0), Liveness::Dead), // zero ttl
            (at(5), at(1), Liveness::Dead), // negative ttl
            (None, at(10), Liveness::Unknown),
            (at(-5), None, Liveness::Unknown),
        ];
        for (updated, expires, want) in cases {
            assert_eq!(
                of_times(updated, expires, now),
                want,
                "{updated:?} {expires:?}"
            );
        }
    }

    #[test]
    fn record_with_garbage_timestamps_is_unknown() {
        let r: Record = serde_json::from_str(r#"{"updated_at":"soon","expires_at":3}"#).unwrap();
        assert_eq!(of_record(&r, at(0).unwrap()), Liveness::Unknown);
    }

    #[test]
    fn liveness_names_are_the_output_words() {
        let all = [
            Liveness::Live,
            Liveness::Stale,
            Liveness::Dead,
            Liveness::Unknown,
        ];
        let names: Vec<String> = all.iter().map(ToString::to_string).collect();
        assert_eq!(names, ["live", "stale", "dead", "unknown"]);
    }
}
