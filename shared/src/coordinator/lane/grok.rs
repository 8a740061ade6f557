//! The Grok CLI's headless `--output-format json` answer (followed: the documented behaviour
//! of xAI's Grok CLI 1.0.x as used by public wrappers; not captured here, the CLI is not on a
//! public registry): one JSON object, possibly spread over lines, with the final response in
//! `text`, `stopReason`, `usage`, `num_turns`, `modelUsage`, and when present `session_id`
//! (or `sessionId`), `is_error`/`error` and `total_cost_usd`.

use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;

use super::events::first_u64;
use super::events::str_at;
use super::events::u64_at;
use super::events::Parsed;

/// Applies one JSON object printed by the Grok CLI.
pub(super) fn apply(p: &mut Parsed, event: &Value, now: DateTime<Utc>) {
    if let Some(id) = str_at(event, &["session_id"]).or_else(|| str_at(event, &["sessionId"])) {
        p.session_id = Some(id.to_owned());
    }
    if let Some(usage) = event.get("usage") {
        p.tokens.input =
            first_u64(usage, &["input_tokens", "inputTokens", "prompt_tokens"]).unwrap_or(0);
        p.tokens.output = first_u64(
            usage,
            &["output_tokens", "outputTokens", "completion_tokens"],
        )
        .unwrap_or(0);
        p.tokens.cache_read = first_u64(
            usage,
            &[
                "cache_read_input_tokens",
                "cached_tokens",
                "cachedInputTokens",
            ],
        )
        .unwrap_or(0);
        p.tokens.cache_write =
            first_u64(usage, &["cache_creation_input_tokens", "cacheWriteTokens"]).unwrap_or(0);
        p.tokens.input = p
            .tokens
            .input
            .saturating_sub(if usage.get("prompt_tokens").is_some() {
                p.tokens.cache_read
            } else {
                0
            });
    }
    p.turns = u64_at(event, &["num_turns"]).or(p.turns);
    p.vendor_cost = event
        .get("total_cost_usd")
        .or_else(|| event.get("cost_usd"))
        .and_then(Value::as_f64)
        .or(p.vendor_cost);
    let model = str_at(event, &["model"]).map(str::to_owned).or_else(|| {
        event
            .get("modelUsage")
            .and_then(Value::as_object)
            .and_then(|m| m.keys().next().cloned())
    });
    p.model = model.or(p.model.take());
    let error = str_at(event, &["error", "message"])
        .or_else(|| str_at(event, &["error"]))
        .map(str::to_owned);
    let is_error = event.get("is_error").and_then(Value::as_bool) == Some(true) || error.is_some();
    let text = str_at(event, &["text"]).or_else(|| str_at(event, &["result"]));
    if is_error {
        let message = error
            .or_else(|| text.map(str::to_owned))
            .unwrap_or_else(|| "grok reported an error".to_owned());
        p.error(message, now);
    } else if let Some(text) = text.filter(|t| !t.trim().is_empty()) {
        p.final_message = Some(text.to_owned());
    }
}

/// Parses a pretty-printed object from the lines that were not JSON by themselves (the text
/// from the first `{` through the last `}`, terminal bytes around it ignored).
pub(super) fn finish(p: &mut Parsed, now: DateTime<Utc>) {
    if p.events > 0 || p.raw.is_empty() {
        return;
    }
    let raw = std::mem::take(&mut p.raw);
    let (Some(start), Some(end)) = (raw.find('{'), raw.rfind('}')) else {
        p.raw = raw;
        return;
    };
    if start < end {
        if let Ok(event @ Value::Object(_)) = serde_json::from_str::<Value>(&raw[start..=end]) {
            p.events += 1;
            apply(p, &event, now);
        }
    }
    p.raw = raw;
}

#[cfg(test)]
mod tests {
    use super::super::Vendor;
    use super::*;

    fn parse(lines: &str) -> Parsed {
        super::super::stream::parse_sample(Vendor::Grok, lines)
    }

    #[test]
    fn one_line_answer_gives_text_usage_and_turns() {
        let p = parse(
            r#"{"stopReason":"end_turn","text":"STATUS: complete\nRESULT: approved","usage":{"input_tokens":12,"output_tokens":7},"num_turns":2,"modelUsage":{"grok-4":{}},"session_id":"x1"}"#,
        );
        assert_eq!(
            p.final_message.as_deref(),
            Some("STATUS: complete\nRESULT: approved")
        );
        assert_eq!((p.tokens.input, p.tokens.output), (12, 7));
        assert_eq!(p.turns, Some(2));
        assert_eq!(p.model.as_deref(), Some("grok-4"));
        assert_eq!(p.session_id.as_deref(), Some("x1"));
    }

    #[test]
    fn pretty_printed_answer_with_terminal_noise_is_read_whole() {
        let p = parse(
            "\u{1b}[0m{\n  \"stopReason\": \"end_turn\",\n  \"text\": \"STATUS: partial\"\n}\n",
        );
        assert_eq!(p.final_message.as_deref(), Some("STATUS: partial"));
    }

    #[test]
    fn empty_object_has_no_final_message() {
        let p = parse("{}");
        assert_eq!(p.final_message, None);
        assert_eq!(p.events, 1);
    }

    #[test]
    fn error_answer_is_classified() {
        let p = parse(
            r#"{"is_error":true,"error":"429 Too Many Requests: rate limit exceeded, retry in 60s"}"#,
        );
        assert!(p.usage_limit.is_some());
        let p = parse(r#"{"is_error":true,"error":{"message":"Invalid API key"}}"#);
        assert!(p.auth_failed);
    }
}
