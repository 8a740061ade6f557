//! The adapter's answer on stdout: the model's final protocol lines unchanged when the vendor
//! ran cleanly, else a `STATUS:` of the adapter's own that never claims completion —
//! `unavailable` (with `RETRY_AFTER: <RFC 3339>` for a usage limit) or `partial` or `timeout`
//! — followed by one line saying why; then the `USAGE:` line.

use chrono::DateTime;
use chrono::SecondsFormat;
use chrono::Utc;

use super::events::Parsed;
use super::retry;
use super::usage;
use super::usage::LaneUsage;
use super::Vendor;
use crate::coordinator::redact::clean;

/// Bytes of a vendor message quoted in the adapter's reason line.
const REASON_MAX: usize = 400;

/// How the vendor process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VendorEnd {
    /// Its exit code; `None` when a signal ended it.
    pub exit_code: Option<i32>,
    /// Whether the adapter killed it at its timeout.
    pub timed_out: bool,
    /// Its wall time in milliseconds.
    pub duration_ms: u64,
}

/// What the adapter prints and reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The protocol text for stdout, ending with a newline (the `USAGE:` line is separate).
    pub protocol: String,
    /// When a usage limit resets, if the vendor hit one.
    pub retry_after: Option<DateTime<Utc>>,
    /// A local error for stderr (an authentication failure), never holding a credential.
    pub local_error: Option<String>,
    /// The usage document.
    pub usage: LaneUsage,
}

/// What the answer is made of besides the parsed events.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The vendor.
    pub vendor: Vendor,
    /// The model asked for, used when the vendor reports none.
    pub model: Option<&'a str>,
    /// The back-off when a usage limit gives no reset time.
    pub backoff_seconds: u64,
    /// The current time.
    pub now: DateTime<Utc>,
    /// Values to redact from quoted vendor messages.
    pub secrets: &'a [&'a str],
}

/// Returns the adapter's answer for what the vendor printed and how it ended.
pub fn compose(parsed: &Parsed, end: VendorEnd, cx: Context) -> Answer {
    let usage = usage_of(parsed, end, &cx);
    let reason = |text: &str| one_line(&clean(text, cx.secrets, REASON_MAX));
    let mut answer = Answer {
        protocol: String::new(),
        retry_after: None,
        local_error: None,
        usage,
    };
    if end.timed_out {
        answer.protocol =
            "STATUS: timeout\nthe vendor CLI ran past the adapter's timeout and was killed\n"
                .into();
    } else if let Some(limit) = &parsed.usage_limit {
        let at = retry::after(limit.resets_at, cx.now, cx.backoff_seconds);
        answer.retry_after = Some(at);
        answer.protocol = format!(
            "STATUS: unavailable\nRETRY_AFTER: {}\n{} usage limit: {}\n",
            at.to_rfc3339_opts(SecondsFormat::Secs, true),
            cx.vendor,
            reason(&limit.message)
        );
    } else if parsed.auth_failed {
        answer.protocol = format!("STATUS: unavailable\n{} authentication failed\n", cx.vendor);
        answer.local_error = Some(format!(
            "{v}: authentication failed (not logged in, or the credential was refused); log in \
             with `{v}` or set its API key variable (see docs/lanes.md)",
            v = cx.vendor
        ));
    } else if let Some(error) = &parsed.vendor_error {
        let status = if parsed.final_message.is_some() {
            "partial"
        } else {
            "unavailable"
        };
        answer.protocol = format!("STATUS: {status}\n{} error: {}\n", cx.vendor, reason(error));
    } else if end.exit_code != Some(0) {
        let how = end.exit_code.map_or_else(
            || "was ended by a signal".to_owned(),
            |c| format!("exited with code {c}"),
        );
        let status = if parsed.final_message.is_some() {
            "partial"
        } else {
            "unavailable"
        };
        answer.protocol = format!("STATUS: {status}\nthe {} CLI {how}\n", cx.vendor);
    } else if let Some(message) = &parsed.final_message {
        answer.protocol = message.clone();
        if !answer.protocol.ends_with('\n') {
            answer.protocol.push('\n');
        }
    } else if parsed.events > 0 {
        answer.protocol = format!(
            "STATUS: partial\nthe {} CLI ended without a final message\n",
            cx.vendor
        );
    } else {
        answer.protocol = format!(
            "STATUS: unavailable\nthe {} CLI printed no events\n",
            cx.vendor
        );
    }
    answer
}

/// Returns the `USAGE:` line for `usage` (without a newline).
pub fn usage_line(usage: &LaneUsage) -> String {
    // A struct of strings and numbers always serializes; non-finite costs became `None`.
    let json = serde_json::to_string(usage).unwrap_or_else(|_| "{}".to_owned());
    format!("USAGE: {json}")
}

fn usage_of(parsed: &Parsed, end: VendorEnd, cx: &Context) -> LaneUsage {
    let model = parsed
        .model
        .clone()
        .filter(|m| m != "auto" && !m.starts_with('<'))
        .or_else(|| cx.model.map(str::to_owned));
    let (cost_usd, cost_source) =
        usage::PriceTable::default().cost(parsed.vendor_cost, model.as_deref(), parsed.tokens);
    LaneUsage {
        vendor: cx.vendor,
        model,
        session_id: parsed.session_id.clone(),
        duration_ms: end.duration_ms,
        input_tokens: parsed.tokens.input,
        output_tokens: parsed.tokens.output,
        cache_read_tokens: parsed.tokens.cache_read,
        cache_write_tokens: parsed.tokens.cache_write,
        cost_usd,
        cost_source,
        turns: parsed.turns,
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::super::events::UsageLimit;
    use super::super::usage::CostSource;
    use super::*;

    fn now() -> DateTime<Utc> {
        DateTime::from_timestamp(1_767_225_600, 0).expect("valid")
    }

    fn cx(vendor: Vendor) -> Context<'static> {
        Context {
            vendor,
            model: Some("gpt-5"),
            backoff_seconds: 600,
            now: now(),
            secrets: &["sk-secret-value"],
        }
    }

    const OK: VendorEnd = VendorEnd {
        exit_code: Some(0),
        timed_out: false,
        duration_ms: 7,
    };

    #[test]
    fn final_protocol_passes_through_unchanged() {
        let parsed = Parsed {
            final_message: Some(
                "STATUS: complete\nRESULT: done\nSUMMARY_EN: A.\nSUMMARY_DE: B.".into(),
            ),
            events: 3,
            ..Parsed::default()
        };
        let answer = compose(&parsed, OK, cx(Vendor::Codex));
        assert_eq!(
            answer.protocol,
            "STATUS: complete\nRESULT: done\nSUMMARY_EN: A.\nSUMMARY_DE: B.\n"
        );
        assert_eq!(answer.usage.cost_source, CostSource::Computed);
        assert_eq!(answer.usage.model.as_deref(), Some("gpt-5"));
        assert_eq!(answer.usage.duration_ms, 7);
    }

    #[test]
    fn usage_limit_is_unavailable_with_retry_after() {
        let parsed = Parsed {
            usage_limit: Some(UsageLimit {
                message: "You've hit\nyour usage limit (key sk-secret-value)".into(),
                resets_at: None,
            }),
            final_message: Some("STATUS: complete\nRESULT: approved".into()),
            ..Parsed::default()
        };
        let answer = compose(&parsed, OK, cx(Vendor::Codex));
        assert_eq!(
            answer.protocol,
            "STATUS: unavailable\nRETRY_AFTER: 2026-01-01T00:10:00Z\ncodex usage limit: You've hit your usage limit (key [redacted])\n"
        );
        assert_eq!(
            answer.retry_after.map(|t| t.timestamp()),
            Some(1_767_226_200)
        );
    }

    #[test]
    fn auth_failure_is_unavailable_with_a_local_error() {
        let parsed = Parsed {
            auth_failed: true,
            ..Parsed::default()
        };
        let answer = compose(&parsed, OK, cx(Vendor::Claude));
        assert_eq!(
            answer.protocol,
            "STATUS: unavailable\nclaude authentication failed\n"
        );
        let local = answer.local_error.expect("a local error");
        assert!(local.contains("authentication failed"), "{local}");
    }

    #[test]
    fn missing_final_message_is_partial_or_unavailable_never_complete() {
        let some_events = Parsed {
            events: 2,
            ..Parsed::default()
        };
        let answer = compose(&some_events, OK, cx(Vendor::Gemini));
        assert!(
            answer.protocol.starts_with("STATUS: partial\n"),
            "{}",
            answer.protocol
        );
        let nothing = Parsed::default();
        let answer = compose(&nothing, OK, cx(Vendor::Gemini));
        assert!(
            answer.protocol.starts_with("STATUS: unavailable\n"),
            "{}",
            answer.protocol
        );
    }

    #[test]
    fn nonzero_exit_or_vendor_error_never_passes_a_complete_answer() {
        let parsed = Parsed {
            final_message: Some("STATUS: complete\nRESULT: approved".into()),
            ..Parsed::default()
        };
        let failed = VendorEnd {
            exit_code: Some(1),
            ..OK
        };
        let answer = compose(&parsed, failed, cx(Vendor::Claude));
        assert_eq!(
            answer.protocol,
            "STATUS: partial\nthe claude CLI exited with code 1\n"
        );
        let errored = Parsed {
            vendor_error: Some("boom".into()),
            ..parsed
        };
        let answer = compose(&errored, OK, cx(Vendor::Claude));
        assert_eq!(answer.protocol, "STATUS: partial\nclaude error: boom\n");
        let timed_out = VendorEnd {
            timed_out: true,
            ..OK
        };
        let answer = compose(&errored, timed_out, cx(Vendor::Claude));
        assert!(answer.protocol.starts_with("STATUS: timeout\n"));
    }

    #[test]
    fn usage_line_is_one_json_line() {
        let answer = compose(&Parsed::default(), OK, cx(Vendor::Grok));
        let line = usage_line(&answer.usage);
        assert!(line.starts_with("USAGE: {\"vendor\":\"grok\""), "{line}");
        assert!(!line.contains('\n'));
    }
}
