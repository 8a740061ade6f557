//! Pruning the heartbeat refs of silent machines (`gc --machines --older-than <duration>`):
//! which machines have been silent longer than the retention period. A machine's last sign
//! of life is its newest heartbeat's `updated_at` across every copy of its ref (local and
//! fetched), else the time its ref was last written; a machine with neither is kept, and
//! this machine's own ref never goes.

use std::collections::BTreeMap;

use chrono::Duration;

use crate::time::Instant;

/// One copy of a machine's heartbeat ref, as read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineRef {
    /// The machine id (the ref's last segment).
    pub machine: String,
    /// The full ref name (local, or a remote's copy fetched here).
    pub refname: String,
    /// The newest `updated_at` among the heartbeats it holds.
    pub last_beat: Option<Instant>,
    /// When its commit was written.
    pub committed_at: Option<Instant>,
}

/// A machine to prune, with every copy of its ref.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Silent {
    /// The machine id.
    pub machine: String,
    /// Its last sign of life.
    pub last_seen: Instant,
    /// Every ref name that holds its heartbeats here.
    pub refs: Vec<String>,
}

/// A retention period that does not read as a positive whole number and a unit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{text:?} is not a duration: use a positive whole number and a unit, as in 30d, 12h, 90m, 45s or 2w")]
pub struct DurationError {
    /// The text given.
    pub text: String,
}

/// Reads a retention period: a whole number followed by `s`, `m`, `h`, `d` or `w`
/// (`30d`, `12h`); it must be positive.
pub fn parse_older_than(text: &str) -> Result<Duration, DurationError> {
    let bad = || DurationError {
        text: text.to_owned(),
    };
    let t = text.trim();
    let unit = t.chars().last().ok_or_else(bad)?;
    let n: i64 = t[..t.len() - unit.len_utf8()].parse().map_err(|_| bad())?;
    if n <= 0 {
        return Err(bad());
    }
    let seconds = match unit {
        's' => Some(n),
        'm' => n.checked_mul(60),
        'h' => n.checked_mul(3_600),
        'd' => n.checked_mul(86_400),
        'w' => n.checked_mul(604_800),
        _ => None,
    }
    .ok_or_else(bad)?;
    // Past about 290,000 years chrono gives up; nothing that old is in a record anyway.
    Duration::try_seconds(seconds).ok_or_else(bad)
}

/// The machines silent for longer than `older_than` at `now`, sorted by id; never `own`.
pub fn select(refs: &[MachineRef], own: &str, older_than: Duration, now: Instant) -> Vec<Silent> {
    let mut by_machine: BTreeMap<&str, Vec<&MachineRef>> = BTreeMap::new();
    for r in refs {
        by_machine.entry(r.machine.as_str()).or_default().push(r);
    }
    by_machine
        .into_iter()
        .filter(|(machine, _)| *machine != own)
        .filter_map(|(machine, copies)| {
            // A beat anywhere says the machine lives; only a ref with no readable beat at
            // all falls back to when it was written.
            let last_seen = copies
                .iter()
                .filter_map(|c| c.last_beat)
                .max()
                .or_else(|| copies.iter().filter_map(|c| c.committed_at).max())?;
            (now - last_seen > older_than).then(|| Silent {
                machine: machine.to_owned(),
                last_seen,
                refs: copies.iter().map(|c| c.refname.clone()).collect(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time;

    fn now() -> Instant {
        time::parse("2026-11-29T12:00:00Z").unwrap()
    }

    fn days_ago(d: i64) -> Option<Instant> {
        Some(now() - Duration::days(d))
    }

    fn copy(
        machine: &str,
        refname: &str,
        beat: Option<Instant>,
        at: Option<Instant>,
    ) -> MachineRef {
        MachineRef {
            machine: machine.into(),
            refname: refname.into(),
            last_beat: beat,
            committed_at: at,
        }
    }

    #[test]
    fn durations_read_with_their_unit() {
        for (text, seconds) in [
            ("45s", 45),
            ("90m", 5_400),
            ("12h", 43_200),
            ("30d", 2_592_000),
            (" 2w ", 1_209_600),
        ] {
            assert_eq!(
                parse_older_than(text).unwrap(),
                Duration::seconds(seconds),
                "{text}"
            );
        }
        for text in [
            "",
            "d",
            "30",
            "0d",
            "-1d",
            "1.5d",
            "30y",
            "9999999999999999w",
            "3 d",
        ] {
            assert_eq!(
                parse_older_than(text).unwrap_err(),
                DurationError {
                    text: text.to_owned()
                },
                "{text}"
            );
        }
    }

    #[test]
    fn only_machines_silent_past_the_period_go_never_this_one() {
        let refs = [
            copy(
                "old",
                "refs/agent-coord/heartbeats/old",
                days_ago(40),
                days_ago(1),
            ),
            copy(
                "old",
                "refs/agent-coord/remotes/origin/heartbeats/old",
                days_ago(45),
                None,
            ),
            copy(
                "fresh",
                "refs/agent-coord/heartbeats/fresh",
                days_ago(2),
                None,
            ),
            // Silent on one copy, alive on another: it lives.
            copy(
                "moved",
                "refs/agent-coord/heartbeats/moved",
                days_ago(60),
                None,
            ),
            copy(
                "moved",
                "refs/agent-coord/remotes/origin/heartbeats/moved",
                days_ago(1),
                None,
            ),
            copy("me", "refs/agent-coord/heartbeats/me", days_ago(90), None),
            // No readable beat: when the ref was written decides.
            copy(
                "empty",
                "refs/agent-coord/heartbeats/empty",
                None,
                days_ago(31),
            ),
            copy("blank", "refs/agent-coord/heartbeats/blank", None, None),
        ];
        let silent = select(&refs, "me", Duration::days(30), now());
        let names: Vec<&str> = silent.iter().map(|s| s.machine.as_str()).collect();
        assert_eq!(names, ["empty", "old"]);
        assert_eq!(silent[1].last_seen, days_ago(40).unwrap());
        assert_eq!(
            silent[1].refs,
            [
                "refs/agent-coord/heartbeats/old",
                "refs/agent-coord/remotes/origin/heartbeats/old"
            ]
        );
        let row = crate::output::gc::PrunedMachine::new(&silent[1], now(), None, None);
        let json = serde_json::to_value(row).unwrap();
        assert_eq!(json["silent_seconds"], serde_json::json!(40 * 86_400));
        assert_eq!(json["last_seen"], serde_json::json!("2026-10-20T12:00:00Z"));
        // Exactly the period is not longer than it.
        let edge = [copy("m", "r", days_ago(30), None)];
        assert!(select(&edge, "me", Duration::days(30), now()).is_empty());
        assert_eq!(select(&edge, "me", Duration::days(29), now()).len(), 1);
    }
}
