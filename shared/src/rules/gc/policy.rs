//! Retention windows (`--hot-days`, `--archive-days`, `--synthetic-hot-days`) and the
//! check that keeps every time gc compares or writes within the range a record can hold.

use crate::time;
use crate::time::Instant;

/// A window that keeps finished records hot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// How long finished records stay hot.
    Hot,
    /// How long finished synthetic records stay hot.
    SyntheticHot,
}

impl std::fmt::Display for Window {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Window::Hot => "hot",
            Window::SyntheticHot => "synthetic hot",
        })
    }
}

/// Why a retention policy cannot run: a window would put a time outside the range a record
/// can hold ([`time::earliest`] to [`time::latest`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum PolicyError {
    /// A hot window reaches before the earliest time (or after the latest).
    #[error("a {window} window of {days} days before now is out of range")]
    HotOutOfRange {
        /// [`Window::Hot`] or [`Window::SyntheticHot`].
        window: Window,
        /// The window, in days.
        days: i64,
    },
    /// The archive window keeps archives past the latest time.
    #[error(
        "an archive window of {days} days keeps archives past the latest time a record can hold"
    )]
    ArchiveOutOfRange {
        /// The window, in days.
        days: i64,
    },
}

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
    /// record can hold; the error names the window.
    pub fn check(&self, now: Instant) -> Result<(), PolicyError> {
        let hot = [
            (Window::Hot, self.hot_days),
            (Window::SyntheticHot, self.synthetic_hot_days),
        ];
        if let Some((window, days)) = hot
            .into_iter()
            .find(|(_, n)| time::days_before(now, *n).is_none())
        {
            return Err(PolicyError::HotOutOfRange { window, days });
        }
        if time::days_after(now, self.archive_days).is_none() {
            return Err(PolicyError::ArchiveOutOfRange {
                days: self.archive_days,
            });
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
