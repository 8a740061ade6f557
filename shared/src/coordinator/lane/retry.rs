//! `RETRY_AFTER` times read from a vendor's usage-limit message: an RFC 3339 time in the text,
//! a Unix time (`…usage limit reached|1767225600`, `resets at 1767225600`), or a delay
//! (`retry in 25.5s`, `try again in 2 hours 5 minutes`, `"retryDelay": "30s"`). A message
//! that gives none leaves the back-off to the caller ([`after`]).

use chrono::DateTime;
use chrono::Duration;
use chrono::Utc;

/// The back-off used when a vendor's usage-limit message gives no reset time, in seconds.
pub const DEFAULT_BACKOFF_SECONDS: u64 = 900;

/// Phrases that introduce a delay.
const DELAY_LEADS: [&str; 7] = [
    "retry in",
    "try again in",
    "retry after",
    "resets in",
    "reset in",
    "retrydelay\": \"",
    "wait",
];

/// Returns when the limit in `message` resets, if the message says so.
pub fn parse(message: &str, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    rfc3339_in(message)
        .or_else(|| unix_time_in(message))
        .or_else(|| delay_in(message).and_then(|d| now.checked_add_signed(d)))
        .filter(|t| *t > now)
}

/// Returns the reset time from `parsed`, else `now` plus `backoff_seconds`.
pub fn after(
    parsed: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
    backoff_seconds: u64,
) -> DateTime<Utc> {
    let backoff = Duration::seconds(i64::try_from(backoff_seconds).unwrap_or(i64::MAX / 1000));
    parsed.unwrap_or_else(|| now.checked_add_signed(backoff).unwrap_or(now))
}

fn rfc3339_in(message: &str) -> Option<DateTime<Utc>> {
    message
        .split(|c: char| c.is_whitespace() || matches!(c, '"' | '\'' | '(' | ')' | '[' | ']' | ','))
        .map(|w| w.trim_end_matches(['.', ';']))
        .find_map(|w| DateTime::parse_from_rfc3339(w).ok())
        .map(|t| t.with_timezone(&Utc))
}

/// A 10-digit Unix time in seconds (or 13 digits in milliseconds) after `|`, `resets at`,
/// `reset at`, `resetsAt` or `reset_at`.
fn unix_time_in(message: &str) -> Option<DateTime<Utc>> {
    let lower = message.to_lowercase();
    [
        "|",
        "resets at ",
        "reset at ",
        "resetsat\":",
        "resets_at\":",
        "reset_at\":",
    ]
    .iter()
    .find_map(|lead| {
        let at = lower.find(lead)? + lead.len();
        let digits: String = lower[at..]
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        let n: i64 = digits.parse().ok()?;
        match digits.len() {
            10 => DateTime::from_timestamp(n, 0),
            13 => DateTime::from_timestamp_millis(n),
            _ => None,
        }
    })
}

/// A delay like `25.5s`, `2 hours 5 minutes`, `1h30m` after one of [`DELAY_LEADS`].
fn delay_in(message: &str) -> Option<Duration> {
    let lower = message.to_lowercase();
    DELAY_LEADS.iter().find_map(|lead| {
        let at = lower.find(lead)? + lead.len();
        duration(&lower[at..])
    })
}

/// Reads number–unit pairs from the start of `text`; at least one pair is needed.
fn duration(text: &str) -> Option<Duration> {
    let mut rest = text.trim_start();
    let mut total_ms: i64 = 0;
    let mut pairs = 0;
    loop {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if number_len == 0 {
            break;
        }
        let Ok(number) = rest[..number_len].parse::<f64>() else {
            break;
        };
        let after = rest[number_len..].trim_start();
        let unit_len = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        let Some(unit_ms) = unit_ms(&after[..unit_len]) else {
            break;
        };
        total_ms = total_ms.saturating_add((number * unit_ms as f64) as i64);
        pairs += 1;
        rest = after[unit_len..].trim_start_matches([' ', ',']);
        rest = rest.strip_prefix("and ").unwrap_or(rest);
    }
    (pairs > 0).then(|| Duration::milliseconds(total_ms))
}

fn unit_ms(unit: &str) -> Option<i64> {
    Some(match unit {
        "ms" => 1,
        "s" | "sec" | "secs" | "second" | "seconds" => 1_000,
        "m" | "min" | "mins" | "minute" | "minutes" => 60_000,
        "h" | "hr" | "hrs" | "hour" | "hours" => 3_600_000,
        "d" | "day" | "days" => 86_400_000,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .expect("valid")
            .with_timezone(&Utc)
    }

    fn at(text: &str) -> Option<String> {
        parse(text, now()).map(|t| t.to_rfc3339())
    }

    #[test]
    fn reads_reset_times_from_vendor_messages() {
        let table = [
            (
                "Claude AI usage limit reached|1767229200",
                Some("2026-01-01T01:00:00+00:00"),
            ),
            (
                "limit hit, resets at 2026-01-01T05:30:00Z.",
                Some("2026-01-01T05:30:00+00:00"),
            ),
            (
                "Quota exceeded. Please retry in 25.5s.",
                Some("2026-01-01T00:00:25.500+00:00"),
            ),
            (
                "You've hit your usage limit. Try again in 2 hours 5 minutes.",
                Some("2026-01-01T02:05:00+00:00"),
            ),
            (
                r#"{"retryDelay": "30s"}"#,
                Some("2026-01-01T00:00:30+00:00"),
            ),
            (
                "rate limited, retry after 1h30m",
                Some("2026-01-01T01:30:00+00:00"),
            ),
            ("resetsAt\":1767225600000", None), // not after now
            ("You've hit your usage limit. Try again at 3:05 PM.", None),
            ("usage limit reached", None),
        ];
        for (text, want) in table {
            assert_eq!(at(text).as_deref(), want, "{text}");
        }
    }

    #[test]
    fn back_off_applies_only_without_a_parsed_time() {
        assert_eq!(
            after(None, now(), 60).to_rfc3339(),
            "2026-01-01T00:01:00+00:00"
        );
        let parsed = parse("retry in 5s", now());
        assert_eq!(
            after(parsed, now(), 60).to_rfc3339(),
            "2026-01-01T00:00:05+00:00"
        );
    }
}
