//! The transcript renderer on realistic lines of each vendor (the captured samples beside
//! the parsers, and the documented event shapes), the adapter's own lines, and its bounds.

use super::*;

const HEADER_CLAUDE: &str = r#"{"agent_coord":"lane","vendor":"claude","role":"implementer","argv":["claude","-p","--output-format","stream-json","--verbose"]}"#;
const USAGE: &str = r#"{"agent_coord":"usage","vendor":"claude","model":"claude-sonnet-4-5","session_id":"s1","duration_ms":12345,"input_tokens":10,"output_tokens":40,"cache_read_tokens":30,"cache_write_tokens":20,"cost_usd":0.0123,"cost_source":"vendor","turns":3}"#;

fn kinds(r: &RenderedTranscript) -> Vec<(EntryKind, Option<&str>, Option<&str>)> {
    r.entries
        .iter()
        .map(|e| (e.kind, e.role.as_deref(), e.tool.as_deref()))
        .collect()
}

fn lines(ls: &[&str]) -> String {
    ls.join("\n")
}

#[test]
fn a_claude_run_shows_messages_tool_calls_results_and_usage() {
    let text = lines(&[
        HEADER_CLAUDE,
        r#"{"type":"system","subtype":"init","cwd":"/w","session_id":"s1","tools":["Read","Edit"],"model":"claude-sonnet-4-5","permissionMode":"acceptEdits"}"#,
        r#"{"type":"assistant","message":{"id":"m1","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"thinking","thinking":"Look at the parser first."},{"type":"text","text":"I'll read the parser."},{"type":"tool_use","id":"toolu_01","name":"Read","input":{"file_path":"/w/src/parse.rs"}}]},"session_id":"s1"}"#,
        r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_01","type":"tool_result","content":"fn parse() {}\n"}]},"session_id":"s1"}"#,
        r#"{"type":"assistant","message":{"content":[{"type":"tool_use","id":"toolu_02","name":"Edit","input":{"file_path":"/w/src/parse.rs","old_string":"{}","new_string":"{ parse(input) }"}}]},"session_id":"s1"}"#,
        r#"{"type":"user","message":{"content":[{"tool_use_id":"toolu_02","type":"tool_result","is_error":true,"content":[{"type":"text","text":"File has not been read yet"}]}]}}"#,
        r#"{"type":"result","subtype":"success","is_error":false,"num_turns":3,"result":"STATUS: complete\nRESULT: done","session_id":"s1","total_cost_usd":0.0123,"usage":{"input_tokens":10,"output_tokens":40}}"#,
        r#"{"agent_coord":"stderr","text":"warning: slow network"}"#,
        USAGE,
    ]);
    let r = render(&text, None);
    assert_eq!(r.vendor, Some(Vendor::Claude));
    assert_eq!(r.role, Some(Role::Implementer));
    use EntryKind::*;
    assert_eq!(
        kinds(&r),
        [
            (Note, Some("lane"), None),
            (Note, Some("system"), None),
            (Message, Some("thinking"), None),
            (Message, Some("assistant"), None),
            (ToolCall, None, Some("Read")),
            (ToolResult, None, Some("Read")),
            (ToolCall, None, Some("Edit")),
            (ToolResult, Some("error"), Some("Edit")),
            (Message, Some("result"), None),
            (Note, Some("stderr"), None),
            (Usage, None, None),
        ]
    );
    assert_eq!(
        r.entries[0].text,
        "claude implementer: claude -p --output-format stream-json --verbose"
    );
    assert_eq!(r.entries[3].text, "I'll read the parser.");
    assert_eq!(r.entries[4].text, r#"{"file_path":"/w/src/parse.rs"}"#);
    assert_eq!(r.entries[5].text, "fn parse() {}\n");
    assert_eq!(r.entries[7].text, "File has not been read yet");
    assert_eq!(r.entries[8].text, "STATUS: complete\nRESULT: done");
    assert_eq!(
        r.entries[10].text,
        "claude-sonnet-4-5 · 10 input, 40 output, 30 cache read, 20 cache write tokens · $0.0123 (vendor) · 12.3 s · 3 turns"
    );
    assert_eq!((r.omitted_entries, r.dropped_bytes), (0, 0));
}

#[test]
fn the_captured_claude_login_failure_reads_as_its_message_and_error() {
    let r = render(
        include_str!("../samples/claude-not-logged-in.jsonl"),
        Some(Vendor::Claude),
    );
    use EntryKind::*;
    assert_eq!(
        kinds(&r),
        [
            (Note, Some("system"), None),
            (Message, Some("assistant"), None),
            (Note, Some("error"), None),
            (Message, Some("error"), None),
        ]
    );
    assert_eq!(r.entries[1].text, "Not logged in · Please run /login");
    assert_eq!(r.entries[2].text, "authentication_failed");
    assert!(r.entries[0].text.contains("claude-opus-5-5"));
}

#[test]
fn a_claude_rate_limit_says_when_it_resets() {
    let r = render(
        r#"{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1893456000,"rateLimitType":"five_hour"},"session_id":"s"}"#,
        Some(Vendor::Claude),
    );
    assert_eq!(r.entries.len(), 1);
    assert_eq!(r.entries[0].role.as_deref(), Some("rate_limit"));
    assert!(
        r.entries[0]
            .text
            .starts_with("five_hour rejected, resets 2030-01-01T00:00:00"),
        "{}",
        r.entries[0].text
    );
}

#[test]
fn a_codex_run_shows_reasoning_commands_file_changes_and_turns() {
    let text = lines(&[
        r#"{"agent_coord":"lane","vendor":"codex","role":"reviewer","argv":["codex","exec","--json"]}"#,
        r#"{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}"#,
        r#"{"type":"turn.started"}"#,
        r#"{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"**Checking the diff**"}}"#,
        r#"{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"bash -lc 'git diff --stat'","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#,
        r#"{"type":"item.completed","item":{"id":"item_1","type":"command_execution","command":"bash -lc 'git diff --stat'","aggregated_output":" src/lib.rs | 2 +-\n","exit_code":0,"status":"completed"}}"#,
        r#"{"type":"item.completed","item":{"id":"item_2","type":"command_execution","command":"bash -lc 'cargo test'","aggregated_output":"error[E0425]","exit_code":101,"status":"failed"}}"#,
        r#"{"type":"item.completed","item":{"id":"item_3","type":"file_change","changes":[{"path":"src/lib.rs","kind":"update"},{"path":"src/new.rs","kind":"add"}],"status":"completed"}}"#,
        r#"{"type":"item.completed","item":{"id":"item_4","type":"todo_list","items":[{"text":"read diff","completed":true},{"text":"run tests","completed":false}]}}"#,
        r#"{"type":"item.completed","item":{"id":"item_5","type":"agent_message","text":"STATUS: complete\nRESULT: rejected\nThe tests fail."}}"#,
        r#"{"type":"turn.completed","usage":{"input_tokens":24763,"cached_input_tokens":24448,"output_tokens":122}}"#,
    ]);
    let r = render(&text, None);
    assert_eq!(
        (r.vendor, r.role),
        (Some(Vendor::Codex), Some(Role::Reviewer))
    );
    use EntryKind::*;
    assert_eq!(
        kinds(&r),
        [
            (Note, Some("lane"), None),
            (Note, Some("session"), None),
            (Message, Some("reasoning"), None),
            (ToolCall, None, Some("command")),
            (ToolResult, None, Some("command")),
            (ToolCall, None, Some("command")),
            (ToolResult, Some("error"), Some("command")),
            (ToolCall, None, Some("file_change")),
            (Note, Some("todo"), None),
            (Message, Some("assistant"), None),
            (Note, Some("turn"), None),
        ],
        "an item is shown once, when it completes"
    );
    assert_eq!(r.entries[3].text, "bash -lc 'git diff --stat'");
    assert_eq!(r.entries[4].text, " src/lib.rs | 2 +-\n[exit code 0]");
    assert_eq!(r.entries[6].text, "error[E0425]\n[exit code 101]");
    assert_eq!(r.entries[7].text, "update src/lib.rs\nadd src/new.rs");
    assert_eq!(r.entries[8].text, "[x] read diff\n[ ] run tests");
    assert_eq!(
        r.entries[10].text,
        "turn completed: 24763 input (24448 cached), 122 output tokens"
    );
}

#[test]
fn the_captured_codex_offline_run_is_its_thread_and_errors() {
    let r = render(
        include_str!("../samples/codex-offline.jsonl"),
        Some(Vendor::Codex),
    );
    let roles: Vec<Option<&str>> = r.entries.iter().map(|e| e.role.as_deref()).collect();
    assert_eq!(
        roles,
        [
            Some("session"),
            Some("error"),
            Some("error"),
            Some("error"),
            Some("error"),
            Some("error")
        ]
    );
    assert!(r.entries[4].text.starts_with("Reconnecting... 5/5"));
    assert!(r.entries[5]
        .text
        .starts_with("Falling back from WebSockets"));
}

#[test]
fn a_gemini_run_joins_assistant_deltas_and_names_tool_results() {
    let text = lines(&[
        r#"{"type":"init","timestamp":"2026-12-01T21:40:25.254Z","session_id":"g1","model":"gemini-2.5-pro"}"#,
        r#"{"type":"message","timestamp":"2026-12-01T21:40:25.259Z","role":"user","content":"Fix the parser\n"}"#,
        r#"{"type":"message","role":"assistant","content":"Let me ","delta":true}"#,
        r#"{"type":"message","role":"assistant","content":"look.","delta":true}"#,
        r#"{"type":"tool_use","timestamp":"t","tool_name":"read_file","tool_id":"read_file-1","parameters":{"absolute_path":"/w/src/parse.rs"}}"#,
        r#"{"type":"tool_result","timestamp":"t","tool_id":"read_file-1","status":"success","output":"fn parse() {}"}"#,
        r#"{"type":"tool_use","tool_name":"run_shell_command","tool_id":"sh-2","parameters":{"command":"cargo test"}}"#,
        r#"{"type":"tool_result","tool_id":"sh-2","status":"error","error":{"type":"EXECUTION_FAILED","message":"exit 101"}}"#,
        r#"{"type":"error","severity":"warning","message":"Loop detected"}"#,
        r#"{"type":"message","role":"assistant","content":"STATUS: complete\n","delta":true}"#,
        r#"{"type":"message","role":"assistant","content":"RESULT: done\n","delta":true}"#,
        r#"{"type":"result","status":"success","stats":{"total_tokens":170,"input_tokens":120,"output_tokens":50,"duration_ms":900,"tool_calls":2}}"#,
    ]);
    let r = render(&text, Some(Vendor::Gemini));
    use EntryKind::*;
    assert_eq!(
        kinds(&r),
        [
            (Note, Some("session"), None),
            (Message, Some("user"), None),
            (Message, Some("assistant"), None),
            (ToolCall, None, Some("read_file")),
            (ToolResult, None, Some("read_file")),
            (ToolCall, None, Some("run_shell_command")),
            (ToolResult, Some("error"), Some("run_shell_command")),
            (Note, Some("warning"), None),
            (Message, Some("assistant"), None),
            (Note, Some("result"), None),
        ]
    );
    assert_eq!(r.entries[2].text, "Let me look.");
    assert_eq!(r.entries[6].text, "exit 101");
    assert_eq!(r.entries[8].text, "STATUS: complete\nRESULT: done\n");
    assert_eq!(r.entries[9].text, "result: success");
}

#[test]
fn the_captured_gemini_offline_start_is_its_session_and_prompt() {
    let r = render(
        include_str!("../samples/gemini-offline.jsonl"),
        Some(Vendor::Gemini),
    );
    assert_eq!(r.entries.len(), 2);
    assert_eq!(
        r.entries[0].text,
        "auto · 231a3036-09d8-497c-bacc-9e92ec5c3787"
    );
    assert_eq!(r.entries[1].text, "Say hi\n");
}

#[test]
fn a_grok_answer_is_one_message_even_pretty_printed() {
    let one = render(
        r#"{"stopReason":"end_turn","text":"STATUS: complete\nRESULT: approved","usage":{"input_tokens":12,"output_tokens":7},"num_turns":2,"modelUsage":{"grok-4":{}},"session_id":"x1"}"#,
        Some(Vendor::Grok),
    );
    assert_eq!(kinds(&one), [(EntryKind::Message, Some("assistant"), None)]);
    assert_eq!(one.entries[0].text, "STATUS: complete\nRESULT: approved");
    let pretty = render(
        "\u{1b}[0m{\n  \"stopReason\": \"end_turn\",\n  \"text\": \"STATUS: partial\"\n}\n",
        Some(Vendor::Grok),
    );
    assert_eq!(pretty.entries.len(), 1);
    assert_eq!(pretty.entries[0].text, "STATUS: partial");
    let failed = render(
        r#"{"is_error":true,"error":{"message":"Invalid API key"}}"#,
        Some(Vendor::Grok),
    );
    assert_eq!(kinds(&failed), [(EntryKind::Note, Some("error"), None)]);
}

#[test]
fn text_that_is_not_json_is_a_raw_note_and_the_marker_counts_dropped_bytes() {
    let text = lines(&[
        HEADER_CLAUDE,
        "panic: something broke",
        "  at line 2",
        r#"{"agent_coord":"truncated","dropped_bytes":4096}"#,
    ]);
    let r = render(&text, None);
    assert_eq!(r.entries[1].role.as_deref(), Some("raw"));
    assert_eq!(r.entries[1].text, "panic: something broke\n  at line 2");
    assert_eq!(r.dropped_bytes, 4096);
    assert_eq!(
        r.entries[2].text,
        "4096 bytes past the transcript's bound were dropped"
    );
    // Without a header or a known vendor, events are shown as they are.
    let r = render(r#"{"type":"x"}"#, None);
    assert_eq!(r.entries[0].role.as_deref(), Some("event"));
}

#[test]
fn every_text_is_redacted_again_and_bounded() {
    let token = format!("ghp_{}", "a1B2c3D4e5".repeat(4));
    let text = lines(&[
        &format!(
            r#"{{"type":"assistant","message":{{"content":[{{"type":"text","text":"the token is {token} ok"}}]}}}}"#
        ),
        &format!(r#"{{"agent_coord":"stderr","text":"Authorization: Bearer {token}"}}"#),
        &format!(
            r#"{{"type":"result","is_error":false,"result":"{}"}}"#,
            "x".repeat(ENTRY_TEXT_MAX * 3)
        ),
    ]);
    let r = render(&text, Some(Vendor::Claude));
    let all: String = r.entries.iter().map(|e| e.text.as_str()).collect();
    assert!(!all.contains(&token), "{all}");
    assert!(!all.contains("ghp_a1B2"), "{all}");
    assert_eq!(r.entries[0].text, "the token is [redacted] ok");
    let long = &r.entries[2];
    assert!(long.truncated);
    assert!(long.text.len() < ENTRY_TEXT_MAX + 64);
    assert!(
        long.text.ends_with("bytes]"),
        "{}",
        &long.text[long.text.len() - 40..]
    );
    assert!(!r.entries[0].truncated);
}

#[test]
fn entries_past_the_bound_are_counted_not_kept() {
    let line = r#"{"type":"item.completed","item":{"type":"agent_message","text":"hi"}}"#;
    let text = vec![line; ENTRIES_MAX + 7].join("\n");
    let r = render(&text, Some(Vendor::Codex));
    assert_eq!(r.entries.len(), ENTRIES_MAX);
    assert_eq!(r.omitted_entries, 7);
    let v = serde_json::to_value(&r).expect("json");
    assert_eq!(v["omittedEntries"], serde_json::json!(7));
    assert_eq!(v["entries"][0]["kind"], serde_json::json!("message"));
}
