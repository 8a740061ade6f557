//! `agent-coord lane VENDOR --role ROLE` against small fake vendor CLIs (shell scripts that
//! replay each vendor's documented event format), pointed at by `AGENT_COORD_<VENDOR>_BIN`:
//! the protocol passes through with a USAGE line, usage limits become RETRY_AFTER, planted
//! secrets are redacted in the transcript, GitHub tokens never reach the vendor, and unsafe
//! extra flags are refused.

use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::process::Stdio;

use agent_coord_tests::env::CommandOutput;
use agent_coord_tests::env::TestEnv;
use serde_json::Value;

const PROMPT: &str = "Implement the issue.\n";
const ANSWER: &str =
    "STATUS: complete\\nRESULT: done\\nSUMMARY_EN: Adds a file.\\nSUMMARY_DE: Fügt eine Datei hinzu.\\nbody line";
const ANSWER_TEXT: &str =
    "STATUS: complete\nRESULT: done\nSUMMARY_EN: Adds a file.\nSUMMARY_DE: Fügt eine Datei hinzu.\nbody line\n";
const PLANTED: &str = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
const API_KEY: &str = "sk-ant-test-key-0123456789";

/// Writes a fake vendor script that records its argv, environment and stdin next to it and
/// then prints `events` (shell `printf '%s\n'` arguments, single-quoted).
fn fake(env: &TestEnv, name: &str, events: &[&str]) -> PathBuf {
    let dir = env.root().join("fake");
    std::fs::create_dir_all(&dir).unwrap();
    let lines: Vec<String> = events.iter().map(|e| format!("'{e}'")).collect();
    let script = format!(
        "#!/bin/sh\nd=$(dirname \"$0\")\nprintf '%s\\n' \"$@\" > \"$d/{name}.argv\"\nenv > \"$d/{name}.env\"\ncat > \"$d/{name}.stdin\"\nprintf '%s\\n' {}\n",
        lines.join(" ")
    );
    let path = dir.join(name);
    std::fs::write(&path, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn recorded(env: &TestEnv, name: &str, what: &str) -> String {
    std::fs::read_to_string(env.root().join("fake").join(format!("{name}.{what}")))
        .unwrap_or_default()
}

fn run_lane(env: &TestEnv, args: &[&str], vars: &[(&str, &str)]) -> CommandOutput {
    let mut cmd = env.command(std::iter::once("lane").chain(args.iter().copied()));
    cmd.envs(vars.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(PROMPT.as_bytes())
        .unwrap();
    CommandOutput::new(child.wait_with_output().unwrap(), env.root())
}

/// Splits stdout into the protocol text and the USAGE document (which must be last).
fn split_usage(out: &CommandOutput) -> (String, Value) {
    let body = out.stdout.strip_suffix('\n').unwrap_or(&out.stdout);
    let (protocol, last) = body.rsplit_once('\n').unwrap_or(("", body));
    let json = last
        .strip_prefix("USAGE: ")
        .unwrap_or_else(|| panic!("last line is not USAGE:\n{out}"));
    (format!("{protocol}\n"), serde_json::from_str(json).unwrap())
}

fn bin(vendor: &str) -> String {
    format!("AGENT_COORD_{}_BIN", vendor.to_uppercase())
}

fn claude_events() -> Vec<String> {
    vec![
        r#"{"type":"system","subtype":"init","session_id":"s-1","model":"claude-sonnet-4-5","tools":["Read","Edit"]}"#.into(),
        format!(r#"{{"type":"assistant","message":{{"content":[{{"type":"text","text":"token {PLANTED} key {API_KEY}"}}]}},"session_id":"s-1"}}"#),
        format!(r#"{{"type":"result","subtype":"success","is_error":false,"num_turns":4,"result":"{ANSWER}","session_id":"s-1","total_cost_usd":0.25,"usage":{{"input_tokens":100,"cache_creation_input_tokens":10,"cache_read_input_tokens":1000,"output_tokens":50}}}}"#),
    ]
}

#[test]
fn claude_lane_passes_the_protocol_through_and_ends_with_usage() {
    let env = TestEnv::new();
    let events = claude_events();
    let refs: Vec<&str> = events.iter().map(String::as_str).collect();
    let claude = fake(&env, "claude", &refs);
    let transcript = env.root().join("t.jsonl");
    let out = run_lane(
        &env,
        &[
            "claude",
            "--role",
            "implementer",
            "--model",
            "claude-sonnet-4-5",
            "--transcript",
            transcript.to_str().unwrap(),
        ],
        &[
            (&bin("claude"), claude.to_str().unwrap()),
            ("ANTHROPIC_API_KEY", API_KEY),
        ],
    )
    .success();
    let (protocol, usage) = split_usage(&out);
    assert_eq!(protocol, ANSWER_TEXT);
    assert_eq!(usage["vendor"], "claude");
    assert_eq!(usage["model"], "claude-sonnet-4-5");
    assert_eq!(usage["session_id"], "s-1");
    assert_eq!(usage["input_tokens"], 100);
    assert_eq!(usage["output_tokens"], 50);
    assert_eq!(usage["cache_read_tokens"], 1000);
    assert_eq!(usage["cache_write_tokens"], 10);
    assert_eq!(usage["cost_usd"], 0.25);
    assert_eq!(usage["cost_source"], "vendor");
    assert_eq!(usage["turns"], 4);
    assert!(usage["duration_ms"].is_u64());
    assert_eq!(recorded(&env, "claude", "stdin"), PROMPT);
    let argv = recorded(&env, "claude", "argv");
    assert!(
        argv.contains("acceptEdits\n--tools\nRead,Edit,Write,Glob,Grep\n"),
        "{argv}"
    );
    assert!(argv.contains("--model\nclaude-sonnet-4-5\n"), "{argv}");
}

#[test]
fn planted_tokens_are_redacted_in_the_transcript() {
    let env = TestEnv::new();
    let events = claude_events();
    let refs: Vec<&str> = events.iter().map(String::as_str).collect();
    let claude = fake(&env, "claude", &refs);
    let transcript = env.root().join("t.jsonl");
    run_lane(
        &env,
        &[
            "claude",
            "--role",
            "reviewer",
            "--transcript",
            transcript.to_str().unwrap(),
        ],
        &[
            (&bin("claude"), claude.to_str().unwrap()),
            ("ANTHROPIC_API_KEY", API_KEY),
        ],
    )
    .success();
    let text = std::fs::read_to_string(&transcript).unwrap();
    assert!(!text.contains(PLANTED), "{text}");
    assert!(!text.contains(API_KEY), "{text}");
    assert!(text.contains("token [redacted] key [redacted]"), "{text}");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.first().unwrap()["agent_coord"], "lane");
    assert_eq!(lines.last().unwrap()["agent_coord"], "usage");
    assert_eq!(lines.len(), 5, "{text}");
}

#[test]
fn github_tokens_never_reach_the_vendor() {
    let env = TestEnv::new();
    let events = claude_events();
    let refs: Vec<&str> = events.iter().map(String::as_str).collect();
    let claude = fake(&env, "claude", &refs);
    run_lane(
        &env,
        &["claude", "--role", "implementer"],
        &[
            (&bin("claude"), claude.to_str().unwrap()),
            ("ANTHROPIC_API_KEY", API_KEY),
            ("GITHUB_TOKEN", PLANTED),
            ("GH_TOKEN", PLANTED),
            ("AGENT_COORD_GITHUB_TOKEN", PLANTED),
            ("OPENAI_API_KEY", "sk-other-vendor"),
        ],
    )
    .success();
    let vendor_env = recorded(&env, "claude", "env");
    assert!(
        vendor_env.contains(&format!("ANTHROPIC_API_KEY={API_KEY}")),
        "{vendor_env}"
    );
    for leaked in [
        PLANTED,
        "GITHUB_TOKEN",
        "GH_TOKEN",
        "AGENT_COORD",
        "OPENAI_API_KEY",
    ] {
        assert!(
            !vendor_env.contains(leaked),
            "{leaked} reached the vendor:\n{vendor_env}"
        );
    }
}

#[test]
fn unsafe_extra_flag_is_refused_without_allow_unsafe_flag() {
    let env = TestEnv::new();
    let events = claude_events();
    let refs: Vec<&str> = events.iter().map(String::as_str).collect();
    let claude = fake(&env, "claude", &refs);
    let vars = [(bin("claude"), claude.to_str().unwrap().to_owned())];
    let vars: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let out = run_lane(
        &env,
        &[
            "claude",
            "--role",
            "implementer",
            "--",
            "--dangerously-skip-permissions",
        ],
        &vars,
    )
    .code(1);
    assert!(
        out.stderr
            .contains("refusing unsafe claude flag --dangerously-skip-permissions"),
        "{out}"
    );
    assert_eq!(
        recorded(&env, "claude", "argv"),
        "",
        "the vendor must not run"
    );
    run_lane(
        &env,
        &[
            "claude",
            "--role",
            "implementer",
            "--allow-unsafe-flag",
            "--",
            "--dangerously-skip-permissions",
        ],
        &vars,
    )
    .success();
    assert!(recorded(&env, "claude", "argv").ends_with("--dangerously-skip-permissions\n"));
}

#[test]
fn codex_usage_limit_is_unavailable_with_retry_after() {
    let env = TestEnv::new();
    let codex = fake(
        &env,
        "codex",
        &[
            r#"{"type":"thread.started","thread_id":"th-9"}"#,
            r#"{"type":"turn.started"}"#,
            r#"{"type":"error","message":"You have hit your usage limit. Upgrade to Pro or try again in 2 hours."}"#,
            r#"{"type":"turn.failed","error":{"message":"You have hit your usage limit. Upgrade to Pro or try again in 2 hours."}}"#,
        ],
    );
    let out = run_lane(
        &env,
        &["codex", "--role", "reviewer"],
        &[(&bin("codex"), codex.to_str().unwrap())],
    )
    .success();
    let (protocol, usage) = split_usage(&out);
    assert_eq!(
        protocol,
        "STATUS: unavailable\nRETRY_AFTER: 2026-06-13T14:00:00Z\ncodex usage limit: You have hit your usage limit. Upgrade to Pro or try again in 2 hours.\n"
    );
    assert_eq!(usage["session_id"], "th-9");
    assert_eq!(usage["cost_source"], "unknown");
}

#[test]
fn usage_limit_without_a_reset_time_uses_the_back_off() {
    let env = TestEnv::new();
    let gemini = fake(
        &env,
        "gemini",
        &[
            r#"{"type":"init","session_id":"g-1","model":"gemini-2.5-pro"}"#,
            r#"{"type":"result","status":"error","error":{"type":"TerminalQuotaError","message":"You have exhausted your daily quota on this model."},"stats":{}}"#,
        ],
    );
    let out = run_lane(
        &env,
        &["gemini", "--role", "reviewer", "--backoff-seconds", "60"],
        &[(&bin("gemini"), gemini.to_str().unwrap())],
    )
    .success();
    let (protocol, _) = split_usage(&out);
    assert!(
        protocol.starts_with("STATUS: unavailable\nRETRY_AFTER: 2026-06-13T12:01:00Z\n"),
        "{out}"
    );
}

#[test]
fn codex_run_computes_its_cost_from_the_price_table() {
    let env = TestEnv::new();
    let answer = format!(
        r#"{{"type":"item.completed","item":{{"id":"item_1","type":"agent_message","text":"{ANSWER}"}}}}"#
    );
    let codex = fake(
        &env,
        "codex",
        &[
            r#"{"type":"thread.started","thread_id":"th-1"}"#,
            r#"{"type":"turn.started"}"#,
            &answer,
            r#"{"type":"turn.completed","usage":{"input_tokens":1000000,"cached_input_tokens":0,"output_tokens":100000}}"#,
        ],
    );
    let out = run_lane(
        &env,
        &[
            "codex",
            "--role",
            "implementer",
            "--model",
            "gpt-5",
            "--effort",
            "high",
        ],
        &[(&bin("codex"), codex.to_str().unwrap())],
    )
    .success();
    let (protocol, usage) = split_usage(&out);
    assert_eq!(protocol, ANSWER_TEXT);
    assert_eq!(usage["cost_source"], "computed");
    assert!(
        (usage["cost_usd"].as_f64().unwrap() - 2.25).abs() < 1e-9,
        "{usage}"
    );
    assert_eq!(recorded(&env, "codex", "stdin"), PROMPT);
    let argv = recorded(&env, "codex", "argv");
    assert!(
        argv.starts_with("exec\n--json\n--sandbox\nworkspace-write\n"),
        "{argv}"
    );
    assert!(
        argv.ends_with("model_reasoning_effort=\"high\"\n-\n"),
        "{argv}"
    );
}

#[test]
fn gemini_and_grok_runs_pass_their_final_message_through() {
    let env = TestEnv::new();
    let gemini = fake(
        &env,
        "gemini",
        &[
            r#"{"type":"init","session_id":"g-2","model":"auto"}"#,
            r#"{"type":"message","role":"assistant","content":"STATUS: complete\nRESULT: approved\n","delta":true}"#,
            r#"{"type":"result","status":"success","stats":{"input_tokens":10,"output_tokens":5,"cached":0,"input":10,"models":{"gemini-2.5-flash":{}}}}"#,
        ],
    );
    let out = run_lane(
        &env,
        &["gemini", "--role", "reviewer"],
        &[(&bin("gemini"), gemini.to_str().unwrap())],
    )
    .success();
    let (protocol, usage) = split_usage(&out);
    assert_eq!(protocol, "STATUS: complete\nRESULT: approved\n");
    assert_eq!(usage["model"], "gemini-2.5-flash");
    // Grok reads the prompt from a file; the fake checks that it holds the prompt.
    let dir = env.root().join("fake");
    std::fs::create_dir_all(&dir).unwrap();
    let grok = dir.join("grok");
    std::fs::write(
        &grok,
        "#!/bin/sh\nd=$(dirname \"$0\")\nprintf '%s\\n' \"$@\" > \"$d/grok.argv\"\nwhile [ $# -gt 0 ]; do [ \"$1\" = --prompt-file ] && cp \"$2\" \"$d/grok.stdin\"; shift; done\nprintf '%s\\n' '{\"stopReason\":\"end_turn\",\"text\":\"STATUS: complete\\nRESULT: rejected\\nfinding\",\"usage\":{\"input_tokens\":3,\"output_tokens\":2},\"num_turns\":1}'\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&grok, std::fs::Permissions::from_mode(0o755)).unwrap();
    let out = run_lane(
        &env,
        &["grok", "--role", "implementer"],
        &[(&bin("grok"), grok.to_str().unwrap())],
    )
    .success();
    let (protocol, usage) = split_usage(&out);
    assert_eq!(protocol, "STATUS: complete\nRESULT: rejected\nfinding\n");
    assert_eq!(usage["turns"], 1);
    assert_eq!(recorded(&env, "grok", "stdin"), PROMPT);
    let argv = recorded(&env, "grok", "argv");
    assert!(
        argv.contains("--deny\nBash\n--no-subagents\n--disable-web-search\n"),
        "{argv}"
    );
}

#[test]
fn auth_failure_is_unavailable_with_a_local_error() {
    let env = TestEnv::new();
    // The events Claude Code 2.1.332 prints without a login (trimmed).
    let claude = fake(
        &env,
        "claude",
        &[
            r#"{"type":"system","subtype":"init","session_id":"s-2","model":"claude-opus-5-5"}"#,
            r#"{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"Not logged in · Please run /login"}]},"session_id":"s-2","error":"authentication_failed","is_api_error_message":true}"#,
            r#"{"type":"result","subtype":"success","is_error":true,"num_turns":1,"result":"Not logged in · Please run /login","session_id":"s-2","total_cost_usd":0}"#,
        ],
    );
    let out = run_lane(
        &env,
        &["claude", "--role", "reviewer"],
        &[(&bin("claude"), claude.to_str().unwrap())],
    )
    .success();
    let (protocol, usage) = split_usage(&out);
    assert_eq!(
        protocol,
        "STATUS: unavailable\nclaude authentication failed\n"
    );
    assert_eq!(usage["session_id"], "s-2");
    assert!(
        out.stderr.contains("claude: authentication failed"),
        "{out}"
    );
}

#[test]
fn missing_vendor_binary_is_an_operational_error() {
    let env = TestEnv::new();
    let missing = Path::new("/nonexistent/claude");
    let out = run_lane(
        &env,
        &["codex", "--role", "reviewer"],
        &[
            (&bin("codex"), missing.to_str().unwrap()),
            ("PATH", "/nonexistent"),
        ],
    )
    .code(2);
    assert!(
        out.stderr.contains("cannot start /nonexistent/claude"),
        "{out}"
    );
}
