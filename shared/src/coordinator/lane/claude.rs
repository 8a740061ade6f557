//! Claude Code's `-p --output-format stream-json --verbose` events (followed: Claude Code
//! 2.1.332, captured offline): `system`/`init` (session id, model), `assistant` (text blocks;
//! an API error carries `error`, e.g. `authentication_failed`, `rate_limit`, `billing_error`),
//! `rate_limit_event` (`rate_limit_info.status` `rejected` with `resetsAt` in Unix seconds)
//! and the closing `result` (`result` text, `is_error`, `total_cost_usd`, `usage`,
//! `num_turns`, `session_id`).

use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;

use super::events::first_u64;
use super::events::str_at;
use super::events::u64_at;
use super::events::Parsed;

/// Applies one Claude Code event.
pub(super) fn apply(p: &mut Parsed, event: &Value, now: DateTime<Utc>) {
    if let Some(id) = str_at(event, &["session_id"]) {
        p.session_id = Some(id.to_owned());
    }
    match str_at(event, &["type"]) {
        Some("system") if str_at(event, &["subtype"]) == Some("init") => {
            p.model = str_at(event, &["model"]).map(str::to_owned);
        }
        Some("assistant") => assistant(p, event, now),
        Some("rate_limit_event") => rate_limit(p, event, now),
        Some("result") => result(p, event, now),
        _ => {}
    }
}

fn assistant(p: &mut Parsed, event: &Value, now: DateTime<Utc>) {
    let text = text_of(event);
    match str_at(event, &["error"]) {
        None => {}
        Some("authentication_failed" | "oauth_org_not_allowed") => p.auth_failed = true,
        Some("rate_limit" | "billing_error") => p.limit(text, None, now),
        Some(other) => {
            let message = if text.is_empty() {
                other.to_owned()
            } else {
                text
            };
            p.vendor_error.get_or_insert(message);
        }
    }
}

fn text_of(event: &Value) -> String {
    let Some(blocks) = event.pointer("/message/content").and_then(Value::as_array) else {
        return String::new();
    };
    blocks
        .iter()
        .filter(|b| str_at(b, &["type"]) == Some("text"))
        .filter_map(|b| str_at(b, &["text"]))
        .collect::<Vec<_>>()
        .join("\n")
}

fn rate_limit(p: &mut Parsed, event: &Value, now: DateTime<Utc>) {
    let Some(info) = event.get("rate_limit_info") else {
        return;
    };
    if str_at(info, &["status"]) != Some("rejected") {
        return;
    }
    let kind = str_at(info, &["rateLimitType"]).unwrap_or("usage");
    let resets_at = u64_at(info, &["resetsAt"])
        .and_then(|s| i64::try_from(s).ok())
        .and_then(|s| DateTime::from_timestamp(s, 0));
    p.limit(format!("{kind} usage limit reached"), resets_at, now);
}

fn result(p: &mut Parsed, event: &Value, now: DateTime<Utc>) {
    if let Some(usage) = event.get("usage") {
        p.tokens.input = first_u64(usage, &["input_tokens"]).unwrap_or(0);
        p.tokens.output = first_u64(usage, &["output_tokens"]).unwrap_or(0);
        p.tokens.cache_read = first_u64(usage, &["cache_read_input_tokens"]).unwrap_or(0);
        p.tokens.cache_write = first_u64(usage, &["cache_creation_input_tokens"]).unwrap_or(0);
    }
    p.vendor_cost = event.get("total_cost_usd").and_then(Value::as_f64);
    p.turns = u64_at(event, &["num_turns"]);
    if p.model.is_none() {
        p.model = event
            .get("modelUsage")
            .and_then(Value::as_object)
            .and_then(|m| m.keys().next().cloned());
    }
    let text = str_at(event, &["result"]).unwrap_or_default().to_owned();
    let is_error = event.get("is_error").and_then(Value::as_bool) == Some(true)
        || str_at(event, &["subtype"]).is_some_and(|s| s.starts_with("error"));
    if is_error {
        if !p.auth_failed && p.usage_limit.is_none() {
            let message = if text.is_empty() {
                str_at(event, &["subtype"]).unwrap_or("error").to_owned()
            } else {
                text
            };
            p.error(message, now);
        }
    } else if !text.is_empty() {
        p.final_message = Some(text);
    }
}

#[cfg(test)]
mod tests {
    use super::super::Vendor;
    use super::*;

    fn parse(lines: &str) -> Parsed {
        super::super::stream::parse_sample(Vendor::Claude, lines)
    }

    #[test]
    fn real_not_logged_in_stream_is_an_auth_failure() {
        // Captured from Claude Code 2.1.332 run offline without a login.
        let p = parse(include_str!("samples/claude-not-logged-in.jsonl"));
        assert!(p.auth_failed);
        assert_eq!(p.final_message, None);
        assert_eq!(p.vendor_error, None);
        assert_eq!(p.model.as_deref(), Some("claude-opus-5-5"));
        assert_eq!(
            p.session_id.as_deref(),
            Some("dac818c0-fc92-4829-b2fc-e3ad67f9b805")
        );
        assert_eq!(p.turns, Some(1));
        assert_eq!(p.vendor_cost, Some(0.0));
    }

    #[test]
    fn success_result_is_the_final_message_with_usage_and_cost() {
        // Shape of the documented stream-json `result` event.
        let p = parse(concat!(
            r#"{"type":"system","subtype":"init","session_id":"s1","model":"claude-sonnet-4-5"}"#,
            "\n",
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"working"}]},"session_id":"s1"}"#,
            "\n",
            r#"{"type":"result","subtype":"success","is_error":false,"num_turns":3,"result":"STATUS: complete\nRESULT: approved","session_id":"s1","total_cost_usd":0.0123,"usage":{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":30,"output_tokens":40}}"#,
        ));
        assert_eq!(
            p.final_message.as_deref(),
            Some("STATUS: complete\nRESULT: approved")
        );
        assert_eq!(p.tokens.input, 10);
        assert_eq!(p.tokens.cache_write, 20);
        assert_eq!(p.tokens.cache_read, 30);
        assert_eq!(p.tokens.output, 40);
        assert_eq!(p.vendor_cost, Some(0.0123));
        assert_eq!(p.turns, Some(3));
        assert!(!p.auth_failed && p.vendor_error.is_none() && p.usage_limit.is_none());
    }

    #[test]
    fn rejected_rate_limit_event_gives_the_reset_time() {
        let p = parse(concat!(
            r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1893456000,"rateLimitType":"five_hour"},"session_id":"s"}"#,
            "\n",
            r#"{"type":"assistant","message":{"content":[{"type":"text","text":"You've hit your limit · resets 3pm"}]},"error":"rate_limit"}"#,
            "\n",
            r#"{"type":"result","subtype":"success","is_error":true,"result":"You've hit your limit · resets 3pm","session_id":"s"}"#,
        ));
        let limit = p.usage_limit.expect("a usage limit");
        assert_eq!(
            limit.resets_at.map(|t| t.to_rfc3339()).as_deref(),
            Some("2030-01-01T00:00:00+00:00")
        );
        assert_eq!(p.final_message, None);
    }

    #[test]
    fn allowed_rate_limit_event_is_not_a_limit() {
        let p = parse(
            r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed_warning","resetsAt":1893456000}}"#,
        );
        assert_eq!(p.usage_limit, None);
    }

    #[test]
    fn legacy_usage_limit_text_carries_its_unix_reset() {
        let p = parse(
            r#"{"type":"result","subtype":"success","is_error":true,"result":"Claude AI usage limit reached|1893456000"}"#,
        );
        let limit = p.usage_limit.expect("a usage limit");
        assert_eq!(limit.resets_at.map(|t| t.timestamp()), Some(1_893_456_000));
    }

    #[test]
    fn error_result_without_text_is_a_vendor_error() {
        let p = parse(r#"{"type":"result","subtype":"error_max_turns","is_error":true}"#);
        assert_eq!(p.vendor_error.as_deref(), Some("error_max_turns"));
    }
}
