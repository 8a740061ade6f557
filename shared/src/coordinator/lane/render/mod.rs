//! A lane transcript as a person reads it: the JSONL `agent-coord lane` writes (a header
//! line, the vendor's events one per line, the adapter's stderr notes, the usage line and a
//! truncation marker; `cli/src/lanes/transcript.rs`) turned into entries — messages, tool
//! calls, tool results, notes and the usage — per vendor (Claude Code's stream-json, Codex's
//! `exec --json`, Gemini CLI's stream-json, Grok's one JSON object).
//!
//! Bounded: at most [`ENTRIES_MAX`] entries (the rest are counted) of at most
//! [`ENTRY_TEXT_MAX`] bytes each, and every text is redacted again (GitHub token shapes,
//! `Authorization` values, URL passwords, private keys), although the adapter wrote it
//! redacted already. Pure: the server reads the file, this renders it, the page shows it.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;

use super::Role;
use super::Vendor;
use crate::coordinator::redact::bound;
use crate::coordinator::redact::redact;

/// The most entries a rendered transcript holds.
pub const ENTRIES_MAX: usize = 2000;
/// The most bytes of one entry's text (cut on a char boundary, with a marker).
pub const ENTRY_TEXT_MAX: usize = 4 * 1024;

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryKind {
    /// Text a model or the user wrote (`role` says who: `user`, `assistant`, `thinking`,
    /// `reasoning`, `result`).
    Message,
    /// A tool the model called (`tool` names it; the text is its input).
    ToolCall,
    /// What a tool answered (`role` is `error` when it failed).
    ToolResult,
    /// The adapter's or the vendor's own line: the header, stderr, sessions, turns, errors,
    /// rate limits, the truncation marker, lines that are not JSON.
    Note,
    /// The usage line: model, tokens, cost, time.
    Usage,
}

/// The wire name (`tool_call`, …).
impl crate::serde_name::WireName for EntryKind {}

/// One entry of a rendered transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// What it is.
    pub kind: EntryKind,
    /// Who wrote it, or what kind of note it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub role: Option<String>,
    /// The tool's name, for a call or a result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// The text (redacted, at most [`ENTRY_TEXT_MAX`] bytes and a marker).
    pub text: String,
    /// Whether the text was cut.
    #[serde(default)]
    pub truncated: bool,
}

/// A transcript rendered for the page.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RenderedTranscript {
    /// The vendor whose events these are (from the header line, else as the run reported).
    pub vendor: Option<Vendor>,
    /// The lane's role, from the header line.
    pub role: Option<Role>,
    /// The entries, in the order the lines came.
    pub entries: Vec<Entry>,
    /// Entries past [`ENTRIES_MAX`], left out.
    pub omitted_entries: u64,
    /// Bytes the adapter dropped at the transcript's own bound (its truncation marker).
    pub dropped_bytes: u64,
    /// Bytes of the file past what the server read (set by the reader, not here).
    #[serde(default)]
    pub unread_bytes: u64,
}

/// Renders the transcript `text`; `vendor` is the run's vendor, used when the text has no
/// header line.
pub fn render(text: &str, vendor: Option<Vendor>) -> RenderedTranscript {
    let mut b = Builder {
        out: RenderedTranscript {
            vendor,
            ..RenderedTranscript::default()
        },
        raw: Vec::new(),
        tools: BTreeMap::new(),
        delta: false,
    };
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        match serde_json::from_str::<Value>(trimmed) {
            Ok(v @ Value::Object(_)) => {
                b.flush_raw();
                b.line(&v);
            }
            _ => b.raw.push(line),
        }
    }
    b.flush_raw();
    b.finish()
}

/// The rendering in progress.
struct Builder<'t> {
    out: RenderedTranscript,
    /// Consecutive lines that are not JSON objects (Grok may pretty-print its one object).
    raw: Vec<&'t str>,
    /// Tool names by call id, so a result names the tool it answers.
    tools: BTreeMap<String, String>,
    /// Whether the last entry is a Gemini assistant message that deltas extend.
    delta: bool,
}

impl Builder<'_> {
    fn push(&mut self, kind: EntryKind, role: Option<&str>, tool: Option<&str>, text: String) {
        self.delta = false;
        if self.out.entries.len() >= ENTRIES_MAX {
            self.out.omitted_entries += 1;
            return;
        }
        self.out.entries.push(Entry {
            kind,
            role: role.map(str::to_owned),
            tool: tool.map(str::to_owned),
            text,
            truncated: false,
        });
    }

    fn note(&mut self, role: &str, text: String) {
        self.push(EntryKind::Note, Some(role), None, text);
    }

    /// Redacts and bounds every text (the whole text first: a secret cut in two by the
    /// bound could escape the patterns).
    fn finish(mut self) -> RenderedTranscript {
        for e in &mut self.out.entries {
            let clean = redact(&e.text, &[]);
            e.truncated = clean.len() > ENTRY_TEXT_MAX;
            e.text = bound(&clean, ENTRY_TEXT_MAX);
        }
        self.out
    }

    fn flush_raw(&mut self) {
        if self.raw.is_empty() {
            return;
        }
        let joined = std::mem::take(&mut self.raw).join("\n");
        // A pretty-printed object, terminal bytes around it ignored.
        if let (Some(start), Some(end)) = (joined.find('{'), joined.rfind('}')) {
            if start < end {
                if let Ok(v @ Value::Object(_)) =
                    serde_json::from_str::<Value>(&joined[start..=end])
                {
                    self.line(&v);
                    return;
                }
            }
        }
        self.note("raw", joined);
    }

    fn line(&mut self, v: &Value) {
        if let Some(kind) = str_of(v, "agent_coord") {
            return self.adapter(kind, v);
        }
        match self.out.vendor {
            Some(Vendor::Claude) => self.claude(v),
            Some(Vendor::Codex) => self.codex(v),
            Some(Vendor::Gemini) => self.gemini(v),
            Some(Vendor::Grok) => self.grok(v),
            None => self.note("event", compact(v)),
        }
    }

    /// The adapter's own lines.
    fn adapter(&mut self, kind: &str, v: &Value) {
        match kind {
            "lane" => {
                self.out.vendor = v
                    .get("vendor")
                    .and_then(|x| serde_json::from_value(x.clone()).ok())
                    .or(self.out.vendor);
                self.out.role = v
                    .get("role")
                    .and_then(|x| serde_json::from_value(x.clone()).ok());
                let argv: Vec<&str> = v
                    .get("argv")
                    .and_then(Value::as_array)
                    .map(|a| a.iter().filter_map(Value::as_str).collect())
                    .unwrap_or_default();
                let who = [str_of(v, "vendor"), str_of(v, "role")]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(" ");
                self.note("lane", format!("{who}: {}", argv.join(" ")));
            }
            "stderr" => self.note("stderr", str_of(v, "text").unwrap_or_default().to_owned()),
            "truncated" => {
                let dropped = u64_of(v, "dropped_bytes").unwrap_or(0);
                self.out.dropped_bytes += dropped;
                self.note(
                    "truncated",
                    format!("{dropped} bytes past the transcript's bound were dropped"),
                );
            }
            "usage" => {
                let text = usage_text(v);
                self.push(EntryKind::Usage, None, None, text);
            }
            other => {
                let text = str_of(v, "text").map_or_else(|| compact(v), str::to_owned);
                self.note(other, text);
            }
        }
    }

    /// Claude Code's stream-json: `system`, `assistant` and `user` messages with content
    /// blocks (`text`, `thinking`, `tool_use`, `tool_result`), `rate_limit_event`, `result`.
    fn claude(&mut self, v: &Value) {
        match str_of(v, "type") {
            Some("system") => {
                let text = [
                    str_of(v, "subtype"),
                    str_of(v, "model"),
                    str_of(v, "session_id"),
                ]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" · ");
                self.note("system", text);
            }
            Some(role @ ("assistant" | "user")) => {
                match v.pointer("/message/content") {
                    Some(Value::String(s)) => {
                        self.push(EntryKind::Message, Some(role), None, s.clone())
                    }
                    Some(Value::Array(blocks)) => {
                        for block in blocks {
                            self.claude_block(role, block);
                        }
                    }
                    _ => {}
                }
                if let Some(error) = str_of(v, "error") {
                    self.note("error", error.to_owned());
                }
            }
            Some("rate_limit_event") => {
                let info = v.get("rate_limit_info").unwrap_or(&Value::Null);
                let mut text = [str_of(info, "rateLimitType"), str_of(info, "status")]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(" ");
                if let Some(at) = u64_of(info, "resetsAt")
                    .and_then(|s| i64::try_from(s).ok())
                    .and_then(|s| chrono::DateTime::from_timestamp(s, 0))
                {
                    text.push_str(&format!(", resets {}", crate::time::format(at)));
                }
                self.note("rate_limit", text);
            }
            Some("result") => {
                let failed = v.get("is_error").and_then(Value::as_bool) == Some(true);
                let text = str_of(v, "result")
                    .map(str::to_owned)
                    .or_else(|| str_of(v, "subtype").map(str::to_owned))
                    .unwrap_or_default();
                let role = if failed { "error" } else { "result" };
                self.push(EntryKind::Message, Some(role), None, text);
            }
            _ => {}
        }
    }

    fn claude_block(&mut self, role: &str, block: &Value) {
        match str_of(block, "type") {
            Some("text") => {
                let text = str_of(block, "text").unwrap_or_default().to_owned();
                self.push(EntryKind::Message, Some(role), None, text);
            }
            Some("thinking") => {
                let text = str_of(block, "thinking").unwrap_or_default().to_owned();
                self.push(EntryKind::Message, Some("thinking"), None, text);
            }
            Some("tool_use") => {
                let name = str_of(block, "name").unwrap_or("tool").to_owned();
                if let Some(id) = str_of(block, "id") {
                    self.tools.insert(id.to_owned(), name.clone());
                }
                let input = block.get("input").map(compact).unwrap_or_default();
                self.push(EntryKind::ToolCall, None, Some(&name), input);
            }
            Some("tool_result") => {
                let tool = str_of(block, "tool_use_id").and_then(|id| self.tools.get(id).cloned());
                let failed = block.get("is_error").and_then(Value::as_bool) == Some(true);
                let text = match block.get("content") {
                    Some(Value::String(s)) => s.clone(),
                    Some(Value::Array(parts)) => parts
                        .iter()
                        .map(|p| str_of(p, "text").map_or_else(|| compact(p), str::to_owned))
                        .collect::<Vec<_>>()
                        .join("\n"),
                    Some(other) => compact(other),
                    None => String::new(),
                };
                let role = failed.then_some("error");
                self.push(EntryKind::ToolResult, role, tool.as_deref(), text);
            }
            _ => {}
        }
    }

    /// Codex's `exec --json`: `thread.started`, `item.completed` (agent messages, reasoning,
    /// commands, file changes, MCP tool calls, web searches, to-do lists, errors),
    /// `turn.completed` with its usage, `turn.failed` and `error`.
    fn codex(&mut self, v: &Value) {
        match str_of(v, "type") {
            Some("thread.started") => {
                let id = str_of(v, "thread_id").unwrap_or_default();
                self.note("session", format!("thread {id}"));
            }
            Some("item.completed") => {
                if let Some(item) = v.get("item") {
                    self.codex_item(item);
                }
            }
            Some("turn.completed") => {
                let usage = v.get("usage").unwrap_or(&Value::Null);
                let n = |k| u64_of(usage, k).unwrap_or(0);
                self.note(
                    "turn",
                    format!(
                        "turn completed: {} input ({} cached), {} output tokens",
                        n("input_tokens"),
                        n("cached_input_tokens"),
                        n("output_tokens")
                    ),
                );
            }
            Some("turn.failed") => {
                let text = v
                    .pointer("/error/message")
                    .and_then(Value::as_str)
                    .unwrap_or("turn failed")
                    .to_owned();
                self.note("error", text);
            }
            Some("error") => {
                self.note("error", str_of(v, "message").unwrap_or_default().to_owned());
            }
            _ => {}
        }
    }

    fn codex_item(&mut self, item: &Value) {
        let text = |k| str_of(item, k).unwrap_or_default().to_owned();
        match str_of(item, "type") {
            Some("agent_message") => {
                self.push(EntryKind::Message, Some("assistant"), None, text("text"))
            }
            Some("reasoning") => {
                self.push(EntryKind::Message, Some("reasoning"), None, text("text"))
            }
            Some("command_execution") => {
                self.push(EntryKind::ToolCall, None, Some("command"), text("command"));
                let exit = item.get("exit_code").and_then(Value::as_i64);
                let failed =
                    exit.is_some_and(|c| c != 0) || str_of(item, "status") == Some("failed");
                let mut out = text("aggregated_output");
                if let Some(code) = exit {
                    if !out.is_empty() && !out.ends_with('\n') {
                        out.push('\n');
                    }
                    out.push_str(&format!("[exit code {code}]"));
                }
                self.push(
                    EntryKind::ToolResult,
                    failed.then_some("error"),
                    Some("command"),
                    out,
                );
            }
            Some("file_change") => {
                let changes = item
                    .get("changes")
                    .and_then(Value::as_array)
                    .map(|cs| {
                        cs.iter()
                            .map(|c| {
                                format!(
                                    "{} {}",
                                    str_of(c, "kind").unwrap_or("change"),
                                    str_of(c, "path").unwrap_or_default()
                                )
                            })
                            .collect::<Vec<_>>()
                            .join("\n")
                    })
                    .unwrap_or_default();
                self.push(EntryKind::ToolCall, None, Some("file_change"), changes);
            }
            Some("mcp_tool_call") => {
                let name = [str_of(item, "server"), str_of(item, "tool")]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join("/");
                let args = item.get("arguments").map(compact).unwrap_or_default();
                self.push(EntryKind::ToolCall, None, Some(&name), args);
                if let Some(result) = item.get("result").or_else(|| item.get("error")) {
                    let failed = item.get("error").is_some_and(|e| !e.is_null());
                    self.push(
                        EntryKind::ToolResult,
                        failed.then_some("error"),
                        Some(&name),
                        compact(result),
                    );
                }
            }
            Some("web_search") => {
                self.push(EntryKind::ToolCall, None, Some("web_search"), text("query"))
            }
            Some("todo_list") => {
                let items = item
                    .get("items")
                    .and_then(Value::as_array)
                    .map(|is| {
                        is.iter()
                            .map(|i| {
                                let done =
                                    i.get("completed").and_then(Value::as_bool) == Some(true);
                                format!(
                                    "[{}] {}",
                                    if done { "x" } else { " " },
                                    str_of(i, "text").unwrap_or_default()
                                )
                            })
                            .collect::<Vec<_>>()
                            .join("\n")
                    })
                    .unwrap_or_default();
                self.note("todo", items);
            }
            Some("error") => self.note("error", text("message")),
            Some(other) => self.note(other, compact(item)),
            None => {}
        }
    }

    /// Gemini CLI's stream-json: `init`, `message` (assistant text in `delta` chunks, joined
    /// here), `tool_use`, `tool_result`, `error` and `result`.
    fn gemini(&mut self, v: &Value) {
        match str_of(v, "type") {
            Some("init") => {
                let text = [str_of(v, "model"), str_of(v, "session_id")]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(" · ");
                self.note("session", text);
            }
            Some("message") => {
                let role = str_of(v, "role").unwrap_or("assistant");
                let content = str_of(v, "content").unwrap_or_default();
                let delta = v.get("delta").and_then(Value::as_bool) == Some(true);
                if delta && self.delta {
                    if let Some(last) = self.out.entries.last_mut() {
                        if last.text.len() <= ENTRY_TEXT_MAX * 2 {
                            last.text.push_str(content);
                        }
                        return;
                    }
                }
                self.push(EntryKind::Message, Some(role), None, content.to_owned());
                self.delta = delta && role == "assistant" && self.out.omitted_entries == 0;
            }
            Some("tool_use") => {
                let name = str_of(v, "tool_name").unwrap_or("tool").to_owned();
                if let Some(id) = str_of(v, "tool_id") {
                    self.tools.insert(id.to_owned(), name.clone());
                }
                let params = v.get("parameters").map(compact).unwrap_or_default();
                self.push(EntryKind::ToolCall, None, Some(&name), params);
            }
            Some("tool_result") => {
                let tool = str_of(v, "tool_id").and_then(|id| self.tools.get(id).cloned());
                let ok = str_of(v, "status") == Some("success");
                let text = str_of(v, "output")
                    .map(str::to_owned)
                    .or_else(|| {
                        v.pointer("/error/message")
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                    })
                    .unwrap_or_default();
                self.push(
                    EntryKind::ToolResult,
                    (!ok).then_some("error"),
                    tool.as_deref(),
                    text,
                );
            }
            Some("error") => {
                let severity = str_of(v, "severity").unwrap_or("error");
                self.note(
                    severity,
                    str_of(v, "message").unwrap_or_default().to_owned(),
                );
            }
            Some("result") => {
                let status = str_of(v, "status").unwrap_or("unknown");
                let mut text = format!("result: {status}");
                if let Some(m) = v.pointer("/error/message").and_then(Value::as_str) {
                    text.push_str(&format!(" ({m})"));
                }
                let role = if status == "success" {
                    "result"
                } else {
                    "error"
                };
                self.note(role, text);
            }
            _ => {}
        }
    }

    /// Grok's one object: the answer in `text` (or `result`), an `error` when it failed.
    fn grok(&mut self, v: &Value) {
        let error = v
            .pointer("/error/message")
            .and_then(Value::as_str)
            .or_else(|| str_of(v, "error"));
        if let Some(text) = str_of(v, "text").or_else(|| str_of(v, "result")) {
            self.push(EntryKind::Message, Some("assistant"), None, text.to_owned());
        }
        if let Some(e) = error {
            self.note("error", e.to_owned());
        }
    }
}

/// The usage line in one sentence: model, tokens, cost, time.
fn usage_text(v: &Value) -> String {
    let n = |k| u64_of(v, k).unwrap_or(0);
    let mut parts = Vec::new();
    if let Some(m) = str_of(v, "model") {
        parts.push(m.to_owned());
    }
    parts.push(format!(
        "{} input, {} output, {} cache read, {} cache write tokens",
        n("input_tokens"),
        n("output_tokens"),
        n("cache_read_tokens"),
        n("cache_write_tokens")
    ));
    let source = str_of(v, "cost_source").unwrap_or("unknown");
    parts.push(match v.get("cost_usd").and_then(Value::as_f64) {
        Some(usd) => format!("${usd:.4} ({source})"),
        None => "cost unknown".to_owned(),
    });
    if let Some(ms) = u64_of(v, "duration_ms") {
        parts.push(format!("{:.1} s", ms as f64 / 1000.0));
    }
    if let Some(t) = u64_of(v, "turns") {
        parts.push(format!("{t} turns"));
    }
    parts.join(" · ")
}

fn str_of<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

fn u64_of(v: &Value, key: &str) -> Option<u64> {
    v.get(key).and_then(Value::as_u64)
}

/// A JSON value as one line (a string as itself).
fn compact(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests;
