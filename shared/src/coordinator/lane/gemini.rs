//! Gemini CLI's headless `--output-format stream-json` events (followed: Gemini CLI 0.61.0,
//! its bundled `StreamJsonFormatter`, and events captured offline): `init` (`session_id`,
//! `model`, which may be `auto`), `message` (`role` `assistant` text arrives in `delta`
//! chunks), `tool_use`, `tool_result`, `error` (`severity`, `message`) and the closing
//! `result` (`status` `success`/`error`, `error.message`, `stats` with `input_tokens`,
//! `output_tokens`, `cached`, `input` (uncached), `duration_ms`, `models`).

use chrono::DateTime;
use chrono::Utc;
use serde_json::Value;

use super::events::str_at;
use super::events::u64_at;
use super::events::Parsed;

/// Applies one Gemini CLI event.
pub(super) fn apply(p: &mut Parsed, event: &Value, now: DateTime<Utc>) {
    match str_at(event, &["type"]) {
        Some("init") => {
            p.session_id = str_at(event, &["session_id"]).map(str::to_owned);
            p.model = str_at(event, &["model"]).map(str::to_owned);
        }
        Some("message") if str_at(event, &["role"]) == Some("assistant") => {
            let segment = p.segment.get_or_insert_with(|| {
                // A new assistant segment: one more model turn.
                String::new()
            });
            if segment.is_empty() {
                p.turns = Some(p.turns.unwrap_or(0) + 1);
            }
            segment.push_str(str_at(event, &["content"]).unwrap_or_default());
        }
        // Text before a tool call is not the final message.
        Some("tool_use" | "tool_result") => p.segment = None,
        Some("error") if str_at(event, &["severity"]) == Some("error") => {
            p.last_error = str_at(event, &["message"]).map(str::to_owned);
        }
        Some("result") => result(p, event, now),
        _ => {}
    }
}

fn result(p: &mut Parsed, event: &Value, now: DateTime<Utc>) {
    if let Some(stats) = event.get("stats") {
        let total_input = u64_at(stats, &["input_tokens"]).unwrap_or(0);
        let cached = u64_at(stats, &["cached"]).unwrap_or(0);
        p.tokens.input = u64_at(stats, &["input"]).unwrap_or(total_input.saturating_sub(cached));
        p.tokens.cache_read = cached;
        p.tokens.output = u64_at(stats, &["output_tokens"]).unwrap_or(0);
        let reported = stats
            .get("models")
            .and_then(Value::as_object)
            .and_then(|m| m.keys().next().cloned());
        if p.model.as_deref().is_none_or(|m| m == "auto") {
            p.model = reported.or(p.model.take());
        }
    }
    if str_at(event, &["status"]) == Some("success") {
        p.final_message = p.segment.take().filter(|t| !t.trim().is_empty());
        p.last_error = None;
    } else {
        let message = str_at(event, &["error", "message"])
            .map(str::to_owned)
            .or_else(|| p.last_error.take())
            .unwrap_or_else(|| "gemini reported an error".to_owned());
        p.last_error = None;
        p.error(message, now);
    }
}

#[cfg(test)]
mod tests {
    use super::super::Vendor;
    use super::*;

    fn parse(lines: &str) -> Parsed {
        super::super::stream::parse_sample(Vendor::Gemini, lines)
    }

    #[test]
    fn real_offline_start_has_session_but_no_final_message() {
        // Captured from Gemini CLI 0.61.0 offline (killed while retrying): init and the prompt.
        let p = parse(include_str!("samples/gemini-offline.jsonl"));
        assert_eq!(
            p.session_id.as_deref(),
            Some("231a3036-09d8-497c-bacc-9e92ec5c3787")
        );
        assert_eq!(p.model.as_deref(), Some("auto"));
        assert_eq!(p.final_message, None);
        assert_eq!(p.events, 2);
    }

    #[test]
    fn success_keeps_the_last_assistant_segment_and_stats() {
        // Event shapes from the bundled StreamJsonFormatter of Gemini CLI 0.61.0.
        let p = parse(concat!(
            r#"{"type":"init","timestamp":"t","session_id":"g1","model":"auto"}"#,
            "\n",
            r#"{"type":"message","role":"user","content":"do it"}"#,
            "\n",
            r#"{"type":"message","role":"assistant","content":"Let me look.","delta":true}"#,
            "\n",
            r#"{"type":"tool_use","tool_name":"read_file","tool_id":"1","parameters":{}}"#,
            "\n",
            r#"{"type":"tool_result","tool_id":"1","status":"success","output":"x"}"#,
            "\n",
            r#"{"type":"message","role":"assistant","content":"STATUS: complete\n","delta":true}"#,
            "\n",
            r#"{"type":"message","role":"assistant","content":"RESULT: approved\n","delta":true}"#,
            "\n",
            r#"{"type":"result","status":"success","stats":{"total_tokens":170,"input_tokens":120,"output_tokens":50,"cached":20,"input":100,"duration_ms":900,"tool_calls":1,"models":{"gemini-2.5-pro":{}}}}"#,
        ));
        assert_eq!(
            p.final_message.as_deref(),
            Some("STATUS: complete\nRESULT: approved\n")
        );
        assert_eq!(p.model.as_deref(), Some("gemini-2.5-pro"));
        assert_eq!(
            (p.tokens.input, p.tokens.cache_read, p.tokens.output),
            (100, 20, 50)
        );
        assert_eq!(p.turns, Some(2));
    }

    #[test]
    fn quota_error_result_is_a_usage_limit() {
        let p = parse(concat!(
            r#"{"type":"error","severity":"error","message":"Quota exceeded for quota metric 'Generate Content API requests per minute'. Please retry in 42s."}"#,
            "\n",
            r#"{"type":"result","status":"error","error":{"type":"TerminalQuotaError","message":"You have exhausted your daily quota on this model. Please retry in 42s."},"stats":{}}"#,
        ));
        let limit = p.usage_limit.expect("a usage limit");
        assert_eq!(limit.resets_at.map(|t| t.timestamp()), Some(1_767_225_642));
    }

    #[test]
    fn warning_errors_are_not_terminal() {
        let p = parse(concat!(
            r#"{"type":"error","severity":"warning","message":"Loop detected"}"#,
            "\n",
            r#"{"type":"message","role":"assistant","content":"STATUS: partial","delta":true}"#,
            "\n",
            r#"{"type":"result","status":"success","stats":{}}"#,
        ));
        assert_eq!(p.final_message.as_deref(), Some("STATUS: partial"));
        assert_eq!(p.vendor_error, None);
    }
}
