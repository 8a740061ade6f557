//! What a vendor's event stream says, collected line by line: the final message, model,
//! session id, tokens, the vendor's own cost and turn count, and whether it ended in an error,
//! an authentication failure or a usage limit. One module per vendor reads its own format
//! (`claude.rs`, `codex.rs`, `gemini.rs`, `grok.rs`); this one holds the shared state, the
//! dispatch and the classification of error messages.

use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;

use super::retry;
use super::usage::Tokens;

/// A usage limit the vendor reported (rate limit, quota, "usage limit reached").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageLimit {
    /// The vendor's message (unredacted; callers clean it before printing).
    pub message: String,
    /// When the vendor says the limit resets, if it says so.
    pub resets_at: Option<DateTime<Utc>>,
}

/// What a vendor's events said so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parsed {
    /// The model's final message, once the vendor has reported one.
    pub final_message: Option<String>,
    /// The model the vendor reported.
    pub model: Option<String>,
    /// The vendor's session or thread id.
    pub session_id: Option<String>,
    /// Tokens the vendor reported.
    pub tokens: Tokens,
    /// The cost the vendor reported itself, in US dollars.
    pub vendor_cost: Option<f64>,
    /// Model turns the vendor reported or its events showed.
    pub turns: Option<u64>,
    /// A terminal vendor error (not a usage limit or an authentication failure).
    pub vendor_error: Option<String>,
    /// Whether the vendor refused its credentials or has none.
    pub auth_failed: bool,
    /// A usage limit, if the vendor hit one.
    pub usage_limit: Option<UsageLimit>,
    /// How many lines parsed as JSON events.
    pub events: u64,
    /// Lines that did not parse as JSON (kept whole by Grok's single-object output).
    pub(super) raw: String,
    /// Text of the current assistant segment (Gemini streams it in deltas).
    pub(super) segment: Option<String>,
    /// The last non-terminal error message, which becomes terminal if no turn completes.
    pub(super) last_error: Option<String>,
    /// Whether a turn completed (Codex).
    pub(super) turn_completed: bool,
}

/// How a vendor error message reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorClass {
    /// A rate limit, quota or usage limit.
    UsageLimit,
    /// Missing or refused credentials.
    Auth,
    /// Anything else.
    Other,
}

const LIMIT_WORDS: [&str; 11] = [
    "usage limit",
    "rate limit",
    "rate_limit",
    "ratelimit",
    "quota",
    "resource_exhausted",
    "resource exhausted",
    "too many requests",
    "hit your limit",
    "spend limit",
    "status 429",
];
const AUTH_WORDS: [&str; 12] = [
    "not logged in",
    "please run /login",
    "authentication",
    "unauthorized",
    "unauthenticated",
    "invalid api key",
    "invalid x-api-key",
    "api key not valid",
    "api_key_invalid",
    "no api key",
    "api key required",
    "status 401",
];

/// Returns how a vendor's error message reads: a usage limit, an authentication failure or
/// another error.
pub fn classify(message: &str) -> ErrorClass {
    let lower = message.to_lowercase();
    if LIMIT_WORDS.iter().any(|w| lower.contains(w)) || lower.contains(" 429") {
        ErrorClass::UsageLimit
    } else if AUTH_WORDS.iter().any(|w| lower.contains(w)) || lower.contains(" 401") {
        ErrorClass::Auth
    } else {
        ErrorClass::Other
    }
}

impl Parsed {
    /// Records a terminal vendor error, classified as a usage limit, an authentication
    /// failure or another error.
    pub(super) fn error(&mut self, message: String, now: DateTime<Utc>) {
        match classify(&message) {
            ErrorClass::UsageLimit => self.limit(message, None, now),
            ErrorClass::Auth => self.auth_failed = true,
            ErrorClass::Other => {
                self.vendor_error.get_or_insert(message);
            }
        }
    }

    /// Records a usage limit; a reset time the vendor gave in a field wins over one in text.
    pub(super) fn limit(
        &mut self,
        message: String,
        resets_at: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) {
        let resets_at = resets_at.or_else(|| retry::parse(&message, now));
        match &mut self.usage_limit {
            Some(limit) => {
                if limit.resets_at.is_none() {
                    limit.resets_at = resets_at;
                }
            }
            None => self.usage_limit = Some(UsageLimit { message, resets_at }),
        }
    }
}

/// Returns the string at `path` in `value`.
pub(super) fn str_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(value, path)?.as_str()
}

/// Returns the unsigned number at `path` in `value` (a float is truncated).
pub(super) fn u64_at(value: &Value, path: &[&str]) -> Option<u64> {
    let v = at(value, path)?;
    v.as_u64()
        .or_else(|| v.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
}

/// Returns the first unsigned number found under any of `names` in `value`.
pub(super) fn first_u64(value: &Value, names: &[&str]) -> Option<u64> {
    names.iter().find_map(|n| u64_at(value, &[n]))
}

fn at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(value, |v, key| v.get(key))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::lane::Vendor;

    #[test]
    fn classifies_vendor_messages() {
        let table = [
            (
                "You've hit your usage limit. Try again at 3:05 PM.",
                ErrorClass::UsageLimit,
            ),
            (
                "Claude AI usage limit reached|1767225600",
                ErrorClass::UsageLimit,
            ),
            (
                "[API Error: Quota exceeded for quota metric]",
                ErrorClass::UsageLimit,
            ),
            (
                "unexpected status 429 Too Many Requests",
                ErrorClass::UsageLimit,
            ),
            ("Not logged in · Please run /login", ErrorClass::Auth),
            ("Invalid API key · Fix external API key", ErrorClass::Auth),
            (
                "unexpected status 401 Unauthorized: Missing bearer",
                ErrorClass::Auth,
            ),
            ("stream disconnected before completion", ErrorClass::Other),
        ];
        for (message, class) in table {
            assert_eq!(classify(message), class, "{message}");
        }
    }

    #[test]
    fn non_json_lines_are_kept_raw_and_blank_lines_ignored() {
        let mut p = Parsed::default();
        let now = DateTime::from_timestamp(1_767_225_600, 0).expect("valid");
        p.feed(Vendor::Claude, "", now);
        p.feed(Vendor::Claude, "not json", now);
        p.feed(Vendor::Claude, "[1,2]", now);
        assert_eq!(p.events, 0);
        assert_eq!(p.raw, "not json\n[1,2]\n");
    }
}
