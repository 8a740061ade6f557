//! The timeline's window: the last `hours` hours before the clock, cut into
//! [`BUCKETS`] equal utilisation buckets (five minutes each over six hours).

use crate::dashboard::model::TIMELINE_MAX_HOURS;
use crate::time::Instant;

/// How many utilisation buckets a window has, whatever its length.
pub const BUCKETS: i64 = 72;

/// The window a timeline covers, in Unix seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Its start.
    pub from: i64,
    /// Its end: the clock.
    pub to: i64,
    /// How many hours it covers.
    pub hours: u32,
}

/// Why a window cannot be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WindowError {
    /// The hours asked for are not a whole number from 1 to the longest window.
    #[error("hours must be a whole number from 1 to {TIMELINE_MAX_HOURS}, not {0:?}")]
    Hours(String),
}

impl Window {
    /// The `hours` hours that end at `now`.
    pub fn ending(now: Instant, hours: u32) -> Result<Window, WindowError> {
        if !(1..=TIMELINE_MAX_HOURS).contains(&hours) {
            return Err(WindowError::Hours(hours.to_string()));
        }
        let to = now.timestamp();
        Ok(Window {
            from: to - i64::from(hours) * 3600,
            to,
            hours,
        })
    }

    /// The window `raw` asks for (`?hours=`), ending at `now`.
    pub fn parse(now: Instant, raw: &str) -> Result<Window, WindowError> {
        let hours = raw
            .trim()
            .parse::<u32>()
            .map_err(|_| WindowError::Hours(raw.to_owned()))?;
        Window::ending(now, hours).map_err(|_| WindowError::Hours(raw.to_owned()))
    }

    /// Its length in seconds.
    pub fn secs(&self) -> i64 {
        self.to - self.from
    }

    /// The length of one bucket in seconds (`hours × 50`: a whole number that divides the
    /// window into exactly [`BUCKETS`]).
    pub fn bucket_secs(&self) -> i64 {
        self.secs() / BUCKETS
    }

    /// `[start, end)` clipped to the window, if anything of it is inside; an interval of no
    /// length counts when it lies in the window.
    pub fn clip(&self, start: i64, end: i64) -> Option<(i64, i64)> {
        let (s, e) = (start.max(self.from), end.min(self.to));
        (s < e || (start == end && (self.from..=self.to).contains(&start))).then_some((s, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dashboard::fixtures::now;

    #[test]
    fn six_hours_are_seventy_two_five_minute_buckets_ending_at_the_clock() {
        let w = Window::ending(now(), 6).unwrap();
        assert_eq!(w.to, now().timestamp());
        assert_eq!(w.secs(), 6 * 3600);
        assert_eq!(w.bucket_secs(), 300);
        assert_eq!(Window::ending(now(), 1).unwrap().bucket_secs(), 50);
        assert_eq!(
            Window::ending(now(), 168).unwrap().bucket_secs() * BUCKETS,
            168 * 3600
        );
    }

    #[test]
    fn hours_outside_one_to_a_week_are_refused_with_the_value() {
        for bad in ["0", "169", "-1", "6.5", "", "six"] {
            let e = Window::parse(now(), bad).unwrap_err();
            assert_eq!(e, WindowError::Hours(bad.to_owned()));
            assert!(e.to_string().contains("from 1 to 168"), "{e}");
        }
        assert_eq!(Window::parse(now(), " 12 ").unwrap().hours, 12);
    }

    #[test]
    fn clipping_keeps_what_lies_inside() {
        let w = Window {
            from: 100,
            to: 200,
            hours: 1,
        };
        assert_eq!(w.clip(50, 150), Some((100, 150)));
        assert_eq!(w.clip(150, 250), Some((150, 200)));
        assert_eq!(w.clip(20, 90), None);
        assert_eq!(w.clip(200, 300), None);
        assert_eq!(
            w.clip(100, 100),
            Some((100, 100)),
            "an instant at the start"
        );
        assert_eq!(w.clip(200, 200), Some((200, 200)), "an instant at the end");
        assert_eq!(w.clip(50, 100), None, "ends where the window starts");
    }
}
