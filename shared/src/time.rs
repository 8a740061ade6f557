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
pub fn event_id(now: Instant, random: u32) -> String {
    format!("{}-{random:08x}", now.format("%Y%m%dT%H%M%S.%6fZ"))
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
    fn event_ids_sort_by_time() {
        let a = event_id(parse("2026-07-08T23:55:00.123456Z").unwrap(), 0xdeadbeef);
        assert_eq!(a, "20260708T235500.123456Z-deadbeef");
        let b = event_id(parse("2026-07-08T23:55:01Z").unwrap(), 0);
        assert!(a < b);
    }
}
