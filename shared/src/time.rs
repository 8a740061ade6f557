//! Timestamps: how records write them and how rules read them.
//!
//! Records carry UTC ISO-8601 strings with second precision (`2026-06-13T00:30:00Z`).
//! Reading is tolerant of any RFC 3339 offset; [`is_rfc3339`] is the strict check that
//! audit and terminal-marker validation use.

use chrono::DateTime;
use chrono::SecondsFormat;
use chrono::Utc;

/// A point in time, always UTC.
pub type Instant = DateTime<Utc>;

/// Seconds from the Unix epoch to 0000-01-01T00:00:00Z, the earliest record time.
const EARLIEST_UNIX: i64 = -62_167_219_200;
/// Seconds from the Unix epoch to 9999-12-31T23:59:59Z, the latest record time.
const LATEST_UNIX: i64 = 253_402_300_799;

/// Returns the earliest time a record can hold, `0000-01-01T00:00:00Z`.
///
/// RFC 3339 has four-digit years, so [`parse`] reads nothing outside
/// [`earliest`]..=[`latest`]; writers check against these bounds so that they never
/// store a time their own reader rejects.
pub fn earliest() -> Instant {
    DateTime::from_timestamp(EARLIEST_UNIX, 0).expect("year 0 is within chrono's range")
}

/// Returns the latest time a record can hold, `9999-12-31T23:59:59Z`.
pub fn latest() -> Instant {
    DateTime::from_timestamp(LATEST_UNIX, 0).expect("year 9999 is within chrono's range")
}

/// Reports whether `t` formats as a timestamp that [`parse`] reads back.
pub fn is_writable(t: Instant) -> bool {
    (earliest()..=latest()).contains(&t)
}

/// Returns `t` moved by `secs` seconds (negative moves back), or `None` when the result
/// is not a writable record time (or not representable at all).
pub fn offset_seconds(t: Instant, secs: i64) -> Option<Instant> {
    let moved = t.checked_add_signed(chrono::TimeDelta::try_seconds(secs)?)?;
    is_writable(moved).then_some(moved)
}

/// Returns `t` plus `days` days, or `None` when that is not a writable record time.
pub fn days_after(t: Instant, days: i64) -> Option<Instant> {
    offset_seconds(t, days.checked_mul(86_400)?)
}

/// Returns `t` minus `days` days, or `None` when that is not a writable record time.
pub fn days_before(t: Instant, days: i64) -> Option<Instant> {
    offset_seconds(t, days.checked_mul(86_400)?.checked_neg()?)
}

/// Formats `t` as a record timestamp: UTC, second precision, `Z` suffix.
pub fn format(t: Instant) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Parses a record timestamp (any RFC 3339 form), or `None` when it is not one.
pub fn parse(s: &str) -> Option<Instant> {
    DateTime::parse_from_rfc3339(s.trim())
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// The instant `ms` milliseconds after the Unix epoch (a browser's `Date.now()`).
pub fn from_unix_millis(ms: i64) -> Option<Instant> {
    DateTime::from_timestamp_millis(ms)
}

/// Reports whether `s` is a real RFC 3339 date-time with a mandatory `Z` or offset.
///
/// Lowercase `t`/`z` and fractional seconds are accepted; impossible calendar dates and
/// out-of-range components are not.
pub fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    // chrono also accepts a space separator; RFC 3339 (as the contract uses it) does not.
    b.len() >= 20 && matches!(b[10], b'T' | b't') && DateTime::parse_from_rfc3339(s).is_ok()
}

/// Returns an ordinary event id: `YYYYMMDDTHHMMSS.ffffffZ-<8 lowercase hex>`.
pub fn event_id(now: Instant, suffix: u32) -> String {
    format!("{}-{suffix:08x}", event_stamp(now))
}

/// Returns the time part of an event id, `YYYYMMDDTHHMMSS.ffffffZ` (the part before `-`).
pub fn event_stamp(now: Instant) -> String {
    now.format("%Y%m%dT%H%M%S.%6fZ").to_string()
}

/// `Ns`, `Nm`, `Nh` or `Nd` (floored; a time in the future is `0s`), `—` when unknown.
pub fn age_label(at: Option<Instant>, now: Instant) -> String {
    let Some(at) = at else {
        return "—".into();
    };
    let secs = (now - at).num_seconds().max(0);
    match secs {
        s if s < 60 => format!("{s}s"),
        s if s < 3_600 => format!("{}m", s / 60),
        s if s < 86_400 => format!("{}h", s / 3_600),
        s => format!("{}d", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_with_second_precision() {
        let t = parse("2026-06-13T00:30:00.987+02:00").unwrap();
        assert_eq!(format(t), "2026-06-12T22:30:00Z");
    }

    #[test]
    fn strict_rfc3339() {
        for ok in [
            "2026-07-12T01:07:00Z",
            "2026-07-12t01:07:00z",
            "2026-07-12T01:07:00.123456+05:30",
            "2024-02-29T00:00:00Z",
            "1500-01-01T00:00:00Z",
        ] {
            assert!(is_rfc3339(ok), "{ok}");
        }
        for bad in [
            "2026-02-30T00:00:00Z",
            "2025-02-29T00:00:00Z",
            "2026-07-12T24:00:00Z",
            "2026-07-12T01:07:00",
            "2026-07-12 01:07:00Z",
            "2026-07-12T01:07:00+24:00",
            "yesterday",
            "",
        ] {
            assert!(!is_rfc3339(bad), "{bad}");
        }
    }

    #[test]
    fn regression_unreadable_expiry_bounds_round_trip() {
        for t in [earliest(), latest()] {
            assert_eq!(parse(&format(t)), Some(t), "{}", format(t));
        }
        assert_eq!(format(latest()), "9999-12-31T23:59:59Z");
        assert_eq!(format(earliest()), "0000-01-01T00:00:00Z");
        let now = parse("2026-06-13T12:00:00Z").unwrap();
        assert_eq!(offset_seconds(now, i64::MAX), None);
        assert_eq!(offset_seconds(now, i64::MIN), None);
        assert_eq!(offset_seconds(now, 300_000_000_000), None);
        assert_eq!(offset_seconds(latest(), 1), None);
        assert_eq!(offset_seconds(latest(), 0), Some(latest()));
        assert_eq!(days_after(now, i64::MAX), None);
        assert_eq!(days_before(now, i64::MAX), None);
        assert_eq!(days_before(now, i64::MIN), None);
        assert_eq!(format(days_after(now, 1).unwrap()), "2026-06-14T12:00:00Z");
        assert_eq!(format(days_before(now, 1).unwrap()), "2026-06-12T12:00:00Z");
    }

    #[test]
    fn event_ids_sort_by_time() {
        let a = event_id(parse("2026-07-08T23:55:00.123456Z").unwrap(), 0xdeadbeef);
        assert_eq!(a, "20260708T235500.123456Z-deadbeef");
        let b = event_id(parse("2026-07-08T23:55:01Z").unwrap(), 0);
        assert!(a < b);
    }
}
