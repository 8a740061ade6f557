//! Retention windows (`--hot-days`, `--archive-days`, `--synthetic-hot-days`) and the
//! check that keeps every time gc compares or writes within the range a record can hold.

use super::super::usage;
use super::super::RuleError;
use crate::time;
use crate::time::Instant;

/// Retention windows in days, as `gc --json` and `config show --json` print them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Policy {
    /// How long finished records stay hot.
    pub hot_days: i64,
    /// How long archives are kept.
    pub archive_days: i64,
    /// How long finished synthetic records stay hot.
    pub synthetic_hot_days: i64,
}

impl Policy {
    /// Checks that every window keeps the times gc compares and writes within the range a
    /// record can hold; the error names the flag.
    pub fn check(&self, now: Instant) -> Result<(), RuleError> {
        let hot = [
            ("--hot-days", self.hot_days),
            ("--synthetic-hot-days", self.synthetic_hot_days),
        ];
        if let Some((flag, n)) = hot
            .into_iter()
            .find(|(_, n)| time::days_before(now, *n).is_none())
        {
            return Err(usage(format!(
                "{flag} {n} is out of range: {n} days before now is not between {} and {}",
                time::format(time::earliest()),
                time::format(time::latest())
            )));
        }
        if time::days_after(now, self.archive_days).is_none() {
            return Err(usage(format!(
                "--archive-days {} is out of range: archives would be kept past {}, the latest time a record can hold",
                self.archive_days,
                time::format(time::latest())
            )));
        }
        Ok(())
    }
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            hot_days: 7,
            archive_days: 30,
            synthetic_hot_days: 1,
        }
    }
}
