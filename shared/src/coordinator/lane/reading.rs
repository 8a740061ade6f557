//! The coordinator's side of the adapter's answer: a lane's stdout split into the protocol
//! text the lane protocol parses, the `USAGE:` document (the last line, when it is one) and
//! the `RETRY_AFTER:` time of a usage limit (`STATUS: unavailable` answers only).
//!
//! Any lane may print these lines, not only `agent-coord lane`: a raw argv lane that prints
//! none of them is read exactly as before (no usage, no pause).

use chrono::DateTime;
use chrono::Utc;

use super::usage::LaneUsage;

/// A lane's stdout as the coordinator reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct LaneAnswer {
    /// Everything but the `USAGE:` line: what the lane protocol parses.
    pub protocol: String,
    /// The `USAGE:` document, when the last non-empty line is one that parses.
    pub usage: Option<LaneUsage>,
    /// When the vendor's usage limit resets: only from an answer whose first line is
    /// `STATUS: unavailable` and that has a `RETRY_AFTER: <RFC 3339>` line.
    pub retry_after: Option<DateTime<Utc>>,
}

/// Splits a lane's stdout (see the module documentation).
pub fn read(stdout: &str) -> LaneAnswer {
    let trimmed = stdout.trim_end();
    let (head, last) = match trimmed.rfind('\n') {
        Some(i) => (&trimmed[..=i], &trimmed[i + 1..]),
        None => ("", trimmed),
    };
    let usage = last
        .strip_prefix("USAGE: ")
        .and_then(|json| serde_json::from_str::<LaneUsage>(json).ok());
    let protocol = if usage.is_some() {
        head.to_owned()
    } else {
        stdout.to_owned()
    };
    let retry_after = retry_after(&protocol);
    LaneAnswer {
        protocol,
        usage,
        retry_after,
    }
}

fn retry_after(protocol: &str) -> Option<DateTime<Utc>> {
    let mut lines = protocol.lines();
    if lines.next()?.trim_end() != "STATUS: unavailable" {
        return None;
    }
    let value = lines.find_map(|l| l.strip_prefix("RETRY_AFTER: "))?;
    DateTime::parse_from_rfc3339(value.trim())
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

#[cfg(test)]
mod tests {
    use super::*;

    const USAGE: &str = r#"USAGE: {"vendor":"claude","model":"claude-sonnet-4-5","session_id":"s1","duration_ms":12,"input_tokens":10,"output_tokens":20,"cache_read_tokens":30,"cache_write_tokens":40,"cost_usd":0.01,"cost_source":"vendor","turns":2}"#;

    #[test]
    fn the_usage_line_is_split_off_and_the_protocol_kept_unchanged() {
        let out = format!("STATUS: complete\nRESULT: approved\nfine\n{USAGE}\n");
        let read = read(&out);
        assert_eq!(read.protocol, "STATUS: complete\nRESULT: approved\nfine\n");
        let usage = read.usage.expect("usage parsed");
        assert_eq!(usage.output_tokens, 20);
        assert_eq!(usage.session_id.as_deref(), Some("s1"));
        assert_eq!(read.retry_after, None);
    }

    #[test]
    fn a_lane_without_usage_is_read_as_before() {
        let out = "STATUS: complete\nRESULT: done\nUSAGE: not json\n";
        let read = read(out);
        assert_eq!(read.protocol, out);
        assert!(read.usage.is_none());
        let usage_only = read_only_usage();
        assert_eq!(usage_only.protocol, "");
        assert!(usage_only.usage.is_some());
    }

    fn read_only_usage() -> LaneAnswer {
        read(USAGE)
    }

    #[test]
    fn retry_after_counts_only_on_an_unavailable_answer() {
        let paused = read(&format!(
            "STATUS: unavailable\nRETRY_AFTER: 2026-01-01T05:00:00Z\nclaude usage limit: reached\n{USAGE}\n"
        ));
        assert_eq!(
            paused.retry_after.map(|t| t.to_rfc3339()),
            Some("2026-01-01T05:00:00+00:00".to_owned())
        );
        let complete = read("STATUS: complete\nRETRY_AFTER: 2026-01-01T05:00:00Z\n");
        assert_eq!(
            complete.retry_after, None,
            "a model cannot pause its vendor"
        );
        let garbled = read("STATUS: unavailable\nRETRY_AFTER: soon\n");
        assert_eq!(garbled.retry_after, None);
    }
}
