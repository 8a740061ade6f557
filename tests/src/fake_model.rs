//! A scripted fake model API on 127.0.0.1 for the real vendor CLIs (Claude Code, Codex,
//! Gemini CLI), so a whole lane run can go through a CLI's own tools offline.
//!
//! One server answers all three wire formats:
//! - the Anthropic Messages API, streaming (`POST /v1/messages`, SSE `message_start`,
//!   `content_block_start`/`_delta`/`_stop`, `message_delta` with usage, `message_stop`;
//!   followed: Anthropic's "Streaming Messages" reference, API version 2023-06-01);
//! - the OpenAI Responses API, streaming (`POST /v1/responses`, SSE `response.created`,
//!   `response.in_progress`, `response.output_item.added`/`.done`, text and custom-tool-input
//!   deltas, `response.completed` with `usage`; followed: OpenAI's "Responses streaming events"
//!   reference);
//! - the Gemini API (`POST /v1beta/models/M:generateContent` as JSON and
//!   `:streamGenerateContent?alt=sse` as SSE frames of `GenerateContentResponse` with
//!   `usageMetadata`; followed: the Gemini API reference, v1beta).
//!
//! The script has two turns: the first answers with a call of the CLI's own file-writing tool
//! (Claude `Write`, Codex `apply_patch`, Gemini `write_file`) creating [`FILE_NAME`] in the
//! worktree; once the tool's result comes back, the second answers [`FINAL_TEXT`]. Every turn
//! reports the usage in [`USAGE`]; every request is recorded.

use std::io::BufRead;
use std::io::BufReader;
use std::io::Read;
use std::io::Write;
use std::net::TcpListener;
use std::net::TcpStream;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;

use serde_json::json;
use serde_json::Value;

/// The file the first turn's tool call creates, relative to the worktree.
pub const FILE_NAME: &str = "hello.txt";
/// What the tool call writes into it.
pub const FILE_CONTENT: &str = "hello from the fake model\n";
/// The model's final message (the coordinator's protocol).
pub const FINAL_TEXT: &str = "STATUS: done\nRESULT: wrote hello.txt\nSUMMARY_EN: Writes hello.txt.\nSUMMARY_DE: Schreibt hello.txt.";
/// The largest request body read.
const MAX_BODY: usize = 16 << 20;

/// The usage one turn reports, in each wire format's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TurnUsage {
    /// Input tokens not read from the cache.
    pub input: u64,
    /// Input tokens read from the cache.
    pub cache_read: u64,
    /// Input tokens written to the cache (Anthropic only).
    pub cache_write: u64,
    /// Output tokens.
    pub output: u64,
}

/// The usage of the tool-call turn and of the final turn.
pub const USAGE: [TurnUsage; 2] = [
    TurnUsage {
        input: 100,
        cache_read: 1000,
        cache_write: 10,
        output: 20,
    },
    TurnUsage {
        input: 120,
        cache_read: 1100,
        cache_write: 0,
        output: 30,
    },
];

/// One request the fake received.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Recorded {
    /// The HTTP method.
    pub method: String,
    /// The path with its query.
    pub path: String,
    /// The body as text.
    pub body: String,
}

/// A running fake model API.
pub struct FakeModel {
    url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl FakeModel {
    /// Binds 127.0.0.1 on a free port and serves in background threads; tool calls write into
    /// `worktree` (absolute paths for the CLIs that want them).
    pub fn start(worktree: PathBuf) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", 0))?;
        let url = format!("http://{}", listener.local_addr()?);
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&requests);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let log = Arc::clone(&log);
                let worktree = worktree.clone();
                std::thread::spawn(move || {
                    if let Err(e) = serve(stream, &worktree, &log) {
                        eprintln!("fake-model-api: {e}");
                    }
                });
            }
        });
        Ok(FakeModel { url, requests })
    }

    /// Returns `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Returns every request so far.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests
            .lock()
            .map(|r| r.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }
}

/// Answers one request, then closes the connection (SSE bodies end with the connection).
fn serve(
    stream: TcpStream,
    worktree: &std::path::Path,
    log: &Mutex<Vec<Recorded>>,
) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut line = String::new();
    reader.read_line(&mut line)?;
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_owned();
    let path = parts.next().unwrap_or_default().to_owned();
    let mut length = 0usize;
    loop {
        let mut header = String::new();
        if reader.read_line(&mut header)? == 0 || header.trim().is_empty() {
            break;
        }
        if let Some((name, value)) = header.split_once(':') {
            if name.trim().eq_ignore_ascii_case("content-length") {
                length = value.trim().parse().unwrap_or(0).min(MAX_BODY);
            }
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let body = String::from_utf8_lossy(&body).into_owned();
    if let Ok(mut log) = log.lock() {
        log.push(Recorded {
            method: method.clone(),
            path: path.clone(),
            body: body.clone(),
        });
    }
    let request: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let answer = route(&method, &path, &request, worktree);
    write_answer(stream, &answer)
}

/// What to send back.
enum Answer {
    /// Server-sent events: (event name, data).
    Events(Vec<(Option<&'static str>, Value)>),
    /// One JSON document with a status.
    Json(u16, Value),
}

fn route(method: &str, path: &str, request: &Value, worktree: &std::path::Path) -> Answer {
    let turn = usize::from(has_tool_result(request));
    let usage = USAGE[turn];
    if method != "POST" {
        return not_found(path);
    }
    if path.starts_with("/v1/messages") {
        Answer::Events(anthropic(request, turn, usage, worktree))
    } else if path.starts_with("/v1/responses") {
        Answer::Events(openai(request, turn, usage))
    } else if path.contains(":streamGenerateContent") {
        Answer::Events(vec![(None, gemini(turn, usage, worktree))])
    } else if path.contains(":generateContent") {
        // Gemini CLI's model router asks which model to use.
        let choice = json!({"reasoning": "a small edit", "model_choice": "flash"}).to_string();
        Answer::Json(
            200,
            json!({
                "candidates": [{"content": {"role": "model", "parts": [{"text": choice}]},
                                "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 0, "candidatesTokenCount": 0, "totalTokenCount": 0},
            }),
        )
    } else {
        not_found(path)
    }
}

fn not_found(path: &str) -> Answer {
    Answer::Json(
        404,
        json!({"error": {"type": "not_found_error", "message": format!("the fake model API has no {path}")}}),
    )
}

/// Whether the conversation already holds a tool's result (then the final turn is due).
fn has_tool_result(v: &Value) -> bool {
    match v {
        Value::Object(map) => {
            map.contains_key("functionResponse")
                || map.get("type").and_then(Value::as_str).is_some_and(|t| {
                    t == "tool_result"
                        || t == "function_call_output"
                        || t == "custom_tool_call_output"
                })
                || map.values().any(has_tool_result)
        }
        Value::Array(items) => items.iter().any(has_tool_result),
        _ => false,
    }
}

fn anthropic(
    request: &Value,
    turn: usize,
    usage: TurnUsage,
    worktree: &std::path::Path,
) -> Vec<(Option<&'static str>, Value)> {
    let model = request.get("model").cloned().unwrap_or(Value::Null);
    let (block, delta, stop) = if turn == 0 {
        let input = json!({
            "file_path": worktree.join(FILE_NAME).to_string_lossy(),
            "content": FILE_CONTENT,
        });
        (
            json!({"type": "tool_use", "id": "toolu_fake_1", "name": "Write", "input": {}}),
            json!({"type": "input_json_delta", "partial_json": input.to_string()}),
            "tool_use",
        )
    } else {
        (
            json!({"type": "text", "text": ""}),
            json!({"type": "text_delta", "text": FINAL_TEXT}),
            "end_turn",
        )
    };
    vec![
        (
            Some("message_start"),
            json!({"type": "message_start", "message": {
                "id": format!("msg_fake_{turn}"), "type": "message", "role": "assistant",
                "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
                "usage": {"input_tokens": usage.input, "output_tokens": 1,
                          "cache_read_input_tokens": usage.cache_read,
                          "cache_creation_input_tokens": usage.cache_write}}}),
        ),
        (
            Some("content_block_start"),
            json!({"type": "content_block_start", "index": 0, "content_block": block}),
        ),
        (Some("ping"), json!({"type": "ping"})),
        (
            Some("content_block_delta"),
            json!({"type": "content_block_delta", "index": 0, "delta": delta}),
        ),
        (
            Some("content_block_stop"),
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            Some("message_delta"),
            json!({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": null},
                   "usage": {"output_tokens": usage.output}}),
        ),
        (Some("message_stop"), json!({"type": "message_stop"})),
    ]
}

fn openai(request: &Value, turn: usize, usage: TurnUsage) -> Vec<(Option<&'static str>, Value)> {
    let model = request.get("model").cloned().unwrap_or(Value::Null);
    let id = format!("resp_fake_{turn}");
    let response = |status: &str, output: Value, usage: Value| {
        json!({"id": id, "object": "response", "created_at": 1_767_225_600, "status": status,
               "model": model, "output": output, "usage": usage})
    };
    let mut events = vec![
        (
            Some("response.created"),
            json!({"type": "response.created", "sequence_number": 0,
                   "response": response("in_progress", json!([]), Value::Null)}),
        ),
        (
            Some("response.in_progress"),
            json!({"type": "response.in_progress", "sequence_number": 1,
                   "response": response("in_progress", json!([]), Value::Null)}),
        ),
    ];
    let done = if turn == 0 {
        let patch = format!(
            "*** Begin Patch\n*** Add File: {FILE_NAME}\n+{}\n*** End Patch\n",
            FILE_CONTENT.trim_end()
        );
        let item = json!({"type": "custom_tool_call", "id": "ctc_fake_1", "call_id": "call_fake_1",
                          "name": "apply_patch", "input": "", "status": "in_progress"});
        let done = json!({"type": "custom_tool_call", "id": "ctc_fake_1", "call_id": "call_fake_1",
                          "name": "apply_patch", "input": patch, "status": "completed"});
        events.push((
            Some("response.output_item.added"),
            json!({"type": "response.output_item.added", "sequence_number": 2, "output_index": 0, "item": item}),
        ));
        events.push((
            Some("response.custom_tool_call_input.delta"),
            json!({"type": "response.custom_tool_call_input.delta", "sequence_number": 3,
                   "output_index": 0, "item_id": "ctc_fake_1", "delta": patch}),
        ));
        done
    } else {
        let part = json!({"type": "output_text", "text": FINAL_TEXT, "annotations": []});
        let item = json!({"type": "message", "id": "msg_fake_1", "role": "assistant",
                          "status": "in_progress", "content": []});
        events.push((
            Some("response.output_item.added"),
            json!({"type": "response.output_item.added", "sequence_number": 2, "output_index": 0, "item": item}),
        ));
        events.push((
            Some("response.output_text.delta"),
            json!({"type": "response.output_text.delta", "sequence_number": 3, "output_index": 0,
                   "item_id": "msg_fake_1", "content_index": 0, "delta": FINAL_TEXT}),
        ));
        events.push((
            Some("response.output_text.done"),
            json!({"type": "response.output_text.done", "sequence_number": 4, "output_index": 0,
                   "item_id": "msg_fake_1", "content_index": 0, "text": FINAL_TEXT}),
        ));
        json!({"type": "message", "id": "msg_fake_1", "role": "assistant", "status": "completed",
               "content": [part]})
    };
    events.push((
        Some("response.output_item.done"),
        json!({"type": "response.output_item.done", "sequence_number": 5, "output_index": 0, "item": done}),
    ));
    // Responses usage counts cached tokens inside input_tokens.
    let total_input = usage.input + usage.cache_read;
    let usage = json!({"input_tokens": total_input,
                       "input_tokens_details": {"cached_tokens": usage.cache_read},
                       "output_tokens": usage.output,
                       "output_tokens_details": {"reasoning_tokens": 0},
                       "total_tokens": total_input + usage.output});
    events.push((
        Some("response.completed"),
        json!({"type": "response.completed", "sequence_number": 6,
               "response": response("completed", json!([done]), usage)}),
    ));
    events
}

fn gemini(turn: usize, usage: TurnUsage, worktree: &std::path::Path) -> Value {
    let parts = if turn == 0 {
        json!([{"functionCall": {"name": "write_file", "args": {
            "file_path": worktree.join(FILE_NAME).to_string_lossy(),
            "content": FILE_CONTENT}}}])
    } else {
        json!([{"text": FINAL_TEXT}])
    };
    // Gemini's promptTokenCount includes cachedContentTokenCount.
    let prompt = usage.input + usage.cache_read;
    json!({
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": {"promptTokenCount": prompt, "candidatesTokenCount": usage.output,
                          "cachedContentTokenCount": usage.cache_read,
                          "totalTokenCount": prompt + usage.output},
        "modelVersion": "gemini-2.5-pro",
        "responseId": format!("fake-{turn}"),
    })
}

fn write_answer(mut stream: TcpStream, answer: &Answer) -> std::io::Result<()> {
    match answer {
        Answer::Json(status, body) => {
            let body = body.to_string();
            let reason = if *status == 200 { "OK" } else { "Not Found" };
            write!(
                stream,
                "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            )?;
        }
        Answer::Events(events) => {
            write!(
                stream,
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n"
            )?;
            for (name, data) in events {
                if let Some(name) = name {
                    writeln!(stream, "event: {name}")?;
                }
                write!(stream, "data: {data}\n\n")?;
                stream.flush()?;
            }
        }
    }
    stream.flush()
}
