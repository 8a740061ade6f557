//! Codex's `exec --json` events (followed: Codex CLI 0.171.0, captured offline, and
//! codex-rs/exec's documented JSONL): `thread.started` (`thread_id` is the session),
//! `turn.started`, `item.completed` (an `agent_message` item's `text` is the model's message;
//! the last one is final), `turn.completed` (`usage`: `input_tokens` including
//! `cached_input_tokens`, `output_tokens`), `turn.failed` (`error.message`) and `error`
//! (`message`; retries such as "Reconnecting... 2/5" are not terminal unless no turn completes).

use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;

use super::events::str_at;
use super::events::u64_at;
use super::events::Parsed;

/// Applies one Codex event.
pub(super) fn apply(p: &mut Parsed, event: &Value, _now: DateTime<Utc>) {
    match str_at(event, &["type"]) {
        Some("thread.started") => {
            p.session_id = str_at(event, &["thread_id"]).map(str::to_owned);
        }
        Some("item.completed") => {
            if let Some(item) = event.get("item") {
                if str_at(item, &["type"]) == Some("agent_message") {
                    p.final_message = str_at(item, &["text"]).map(str::to_owned);
                }
            }
        }
        Some("turn.completed") => {
            p.turn_completed = true;
            p.last_error = None;
            p.turns = Some(p.turns.unwrap_or(0) + 1);
            if let Some(usage) = event.get("usage") {
                let input = u64_at(usage, &["input_tokens"]).unwrap_or(0);
                let cached = u64_at(usage, &["cached_input_tokens"]).unwrap_or(0);
                p.tokens.input += input.saturating_sub(cached);
                p.tokens.cache_read += cached;
                p.tokens.output += u64_at(usage, &["output_tokens"]).unwrap_or(0);
            }
        }
        Some("turn.failed") => {
            let message = str_at(event, &["error", "message"]).unwrap_or("turn failed");
            // Settled in `finish`: an earlier `error` event may hold the usage-limit text.
            p.last_error = Some(match p.last_error.take() {
                Some(earlier) if earlier != message => format!("{message} ({earlier})"),
                _ => message.to_owned(),
            });
            p.turn_completed = false;
            p.final_message = None;
        }
        Some("error") => {
            if let Some(message) = str_at(event, &["message"]) {
                p.last_error = Some(message.to_owned());
            }
        }
        _ => {}
    }
}

/// Settles the end: an error after which no turn completed is terminal.
pub(super) fn finish(p: &mut Parsed, now: DateTime<Utc>) {
    if !p.turn_completed {
        if let Some(message) = p.last_error.take() {
            p.final_message = None;
            p.error(message, now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::Vendor;
    use super::*;

    fn parse(lines: &str) -> Parsed {
        super::super::stream::parse_sample(Vendor::Codex, lines)
    }

    #[test]
    fn real_offline_stream_is_a_vendor_error_with_its_thread() {
        // Captured from Codex CLI 0.171.0 in a network namespace without a route.
        let p = parse(include_str!("samples/codex-offline.jsonl"));
        assert_eq!(
            p.session_id.as_deref(),
            Some("01a2338b-be9a-7f71-b1c7-5998b1f96927")
        );
        assert_eq!(p.final_message, None);
        let error = p.vendor_error.expect("a vendor error");
        assert!(error.contains("Reconnecting... 5/5"), "{error}");
        assert!(!p.auth_failed && p.usage_limit.is_none());
    }

    #[test]
    fn completed_turn_gives_the_last_agent_message_and_usage() {
        let p = parse(concat!(
            r#"{"type":"thread.started","thread_id":"t-1"}"#,
            "\n",
            r#"{"type":"turn.started"}"#,
            "\n",
            r#"{"type":"error","message":"Reconnecting... 1/5"}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"thinking aloud"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"ls","status":"completed"}}"#,
            "\n",
            r#"{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"STATUS: complete\nRESULT: rejected\nfinding"}}"#,
            "\n",
            r#"{"type":"turn.completed","usage":{"input_tokens":1000,"cached_input_tokens":600,"output_tokens":50}}"#,
        ));
        assert_eq!(
            p.final_message.as_deref(),
            Some("STATUS: complete\nRESULT: rejected\nfinding")
        );
        assert_eq!(p.tokens.input, 400);
        assert_eq!(p.tokens.cache_read, 600);
        assert_eq!(p.tokens.output, 50);
        assert_eq!(p.turns, Some(1));
        assert_eq!(p.vendor_error, None);
    }

    #[test]
    fn usage_limit_failure_is_a_limit_with_its_delay() {
        let p = parse(concat!(
            r#"{"type":"thread.started","thread_id":"t-2"}"#,
            "\n",
            r#"{"type":"error","message":"You've hit your usage limit. Upgrade to Pro or try again in 3 hours."}"#,
            "\n",
            r#"{"type":"turn.failed","error":{"message":"You've hit your usage limit. Upgrade to Pro or try again in 3 hours."}}"#,
        ));
        let limit = p.usage_limit.expect("a usage limit");
        assert_eq!(
            limit.resets_at.map(|t| t.to_rfc3339()).as_deref(),
            Some("2026-01-01T03:00:00+00:00")
        );
        assert_eq!(p.vendor_error, None);
    }

    #[test]
    fn unauthorized_failure_is_an_auth_failure() {
        let p = parse(
            r#"{"type":"turn.failed","error":{"message":"unexpected status 401 Unauthorized: Missing bearer or basic authentication in header"}}"#,
        );
        assert!(p.auth_failed);
    }
}
