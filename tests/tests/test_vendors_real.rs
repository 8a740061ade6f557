//! Contract tests of `agent-coord lane VENDOR` against the REAL vendor CLIs (Claude Code,
//! Codex, Gemini CLI at the versions pinned in tests/vendors/package.json, installed by
//! `make vendor-tools`), each run offline in a network namespace that has only loopback,
//! against the scripted fake model API (`agent_coord_tests::fake_model`) in the same namespace.
//!
//! Each run proves: the flags the adapter passes are accepted, the CLI edits a file in the
//! worktree through its own tool, the adapter's stdout is the model's protocol followed by a
//! USAGE line whose figures equal what the fake reported, the transcript holds the vendor's
//! real events, and — from `strace` of the whole process tree — nothing tried to reach an
//! address other than loopback, nor sent a DNS query.

use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Output;
use std::process::Stdio;

use agent_coord_tests::fake_model::Recorded;
use agent_coord_tests::fake_model::FILE_CONTENT;
use agent_coord_tests::fake_model::FILE_NAME;
use agent_coord_tests::fake_model::FINAL_TEXT;
use agent_coord_tests::fake_model::USAGE;
use serde_json::Value;

const PROMPT: &str = "Create hello.txt, then answer with the protocol.\n";

/// Returns the installed CLI `name` under tests/vendors/node_modules/.bin, or fails saying how
/// to install it.
fn vendor_bin(name: &str) -> PathBuf {
    let bin = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("vendors/node_modules/.bin")
        .join(name);
    assert!(
        bin.exists(),
        "{} is missing: the real vendor CLIs are not installed; run `make vendor-tools` \
         (`make test` does it)",
        bin.display()
    );
    bin
}

/// What one run left behind.
struct Run {
    out: Output,
    stdout: String,
    stderr: String,
    worktree: PathBuf,
    requests: Vec<Recorded>,
    strace: String,
    transcript: String,
    _root: tempfile::TempDir,
}

/// Runs `agent-coord lane VENDOR --role implementer` under `strace`, with the fake model API,
/// all inside one `unshare -n` (loopback only). `{url}` in `lane_args` and `vars` is the fake's.
fn run_real(vendor: &str, lane_args: &[&str], vars: &[(&str, String)]) -> Run {
    run_as(vendor, "implementer", &vendor_bin(vendor), lane_args, vars)
}

/// [`run_real`] with a role and the vendor program given.
fn run_as(
    vendor: &str,
    role: &str,
    program: &Path,
    lane_args: &[&str],
    vars: &[(&str, String)],
) -> Run {
    let root = tempfile::tempdir().unwrap();
    let worktree = root.path().join("wt");
    let home = root.path().join("home");
    std::fs::create_dir_all(&worktree).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let git = Command::new("git")
        .args(["init", "--quiet", "."])
        .current_dir(&worktree)
        .status()
        .unwrap();
    assert!(git.success());
    if vendor == "gemini" {
        // API-key auth; usage statistics off (without it Gemini CLI 0.61.0 sends DNS queries).
        std::fs::create_dir_all(home.join(".gemini")).unwrap();
        std::fs::write(
            home.join(".gemini/settings.json"),
            r#"{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false},"general":{"disableAutoUpdate":true,"disableUpdateNag":true}}"#,
        )
        .unwrap();
    }
    let log = root.path().join("requests.json");
    let strace = root.path().join("strace.txt");
    let transcript = root.path().join("transcript.jsonl");
    let mut cmd = Command::new("unshare");
    cmd.args(["-n", "sh", "-c", "ip link set lo up && exec \"$@\"", "sh"])
        .arg(env!("CARGO_BIN_EXE_fake-model-api"))
        .arg("--log")
        .arg(&log)
        .args([
            "--",
            "strace",
            "-f",
            "-qq",
            "-e",
            "trace=connect,sendto,sendmsg",
            "-o",
        ])
        .arg(&strace)
        .arg(agent_coord_tests::env::binary())
        .args(["lane", vendor, "--role", role, "--transcript"])
        .arg(&transcript)
        .args(lane_args)
        .current_dir(&worktree)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &home)
        .env(
            format!("AGENT_COORD_{}_BIN", vendor.to_uppercase()),
            program,
        )
        .envs(vars.iter().map(|(k, v)| (*k, v.as_str())))
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
    let out = child.wait_with_output().unwrap();
    let requests = std::fs::read_to_string(&log)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        out,
        worktree,
        requests,
        strace: std::fs::read_to_string(&strace).unwrap_or_default(),
        transcript: std::fs::read_to_string(&transcript).unwrap_or_default(),
        _root: root,
    }
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {:?}\n--- stdout\n{}\n--- stderr\n{}\n--- requests\n{:?}\n--- transcript (first 4000 bytes)\n{}",
            self.out.status.code(),
            self.stdout,
            self.stderr,
            self.requests
                .iter()
                .map(|r| format!("{} {}", r.method, r.path))
                .collect::<Vec<_>>(),
            self.transcript.chars().take(4000).collect::<String>()
        )
    }
}

/// The strace lines of a connect/sendto/sendmsg to an internet address other than loopback,
/// and of every DNS query (port 53), whatever its address.
fn outbound(strace: &str) -> Vec<&str> {
    strace
        .lines()
        .filter(|l| l.contains("sa_family=AF_INET"))
        .filter(|l| {
            let loopback = l.contains("inet_addr(\"127.0.0.1\")")
                || l.contains("\"::1\"")
                || l.contains("\"::ffff:127.0.0.1\"");
            !loopback || l.contains("htons(53)")
        })
        .collect()
}

/// Asserts what every real run must show; returns the USAGE document.
fn assert_contract(run: &Run, model_paths: &[&str]) -> Value {
    assert!(run.out.status.success(), "{run}");
    for refused in [
        "unknown option",
        "unknown argument",
        "unexpected argument",
        "Unknown arguments",
    ] {
        assert!(!run.stderr.contains(refused), "a flag was refused: {run}");
        assert!(
            !run.transcript.contains(refused),
            "a flag was refused: {run}"
        );
    }
    let written = std::fs::read_to_string(run.worktree.join(FILE_NAME))
        .unwrap_or_else(|e| panic!("{FILE_NAME} was not written ({e}): {run}"));
    assert_eq!(written, FILE_CONTENT, "{run}");
    let body = run.stdout.strip_suffix('\n').unwrap_or(&run.stdout);
    let (protocol, last) = body.rsplit_once('\n').unwrap_or(("", body));
    assert_eq!(protocol, FINAL_TEXT, "{run}");
    let usage: Value = serde_json::from_str(
        last.strip_prefix("USAGE: ")
            .unwrap_or_else(|| panic!("the last line is not USAGE: {run}")),
    )
    .unwrap();
    let sum = |f: fn(&agent_coord_tests::fake_model::TurnUsage) -> u64| -> u64 {
        USAGE.iter().map(f).sum()
    };
    assert_eq!(usage["input_tokens"], sum(|u| u.input), "{run}");
    assert_eq!(usage["output_tokens"], sum(|u| u.output), "{run}");
    assert_eq!(usage["cache_read_tokens"], sum(|u| u.cache_read), "{run}");
    assert!(usage["session_id"].is_string(), "{usage}");
    // Exactly the two scripted turns reached the fake, on the vendor's documented paths.
    let paths: Vec<&str> = run.requests.iter().map(|r| r.path.as_str()).collect();
    assert_eq!(paths, model_paths, "{run}");
    assert!(run.requests.iter().all(|r| r.method == "POST"), "{run}");
    let tried = outbound(&run.strace);
    assert!(
        tried.is_empty(),
        "the CLI tried to reach an address other than loopback (or sent DNS):\n{}",
        tried.join("\n")
    );
    assert!(
        run.strace.contains("127.0.0.1"),
        "strace saw no connection to the fake at all: is strace working?\n{}",
        run.strace
    );
    usage
}

fn claude_vars() -> Vec<(&'static str, String)> {
    vec![
        ("ANTHROPIC_BASE_URL", "{url}".into()),
        ("ANTHROPIC_API_KEY", "sk-ant-fake-0123456789".into()),
        ("DISABLE_TELEMETRY", "1".into()),
        ("DISABLE_AUTOUPDATER", "1".into()),
        ("DISABLE_ERROR_REPORTING", "1".into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
    ]
}

#[test]
fn real_claude_code_implementer_edits_through_its_write_tool_and_reports_usage() {
    let run = run_real("claude", &["--model", "claude-sonnet-4-5"], &claude_vars());
    let usage = assert_contract(&run, &["/v1/messages?beta=true", "/v1/messages?beta=true"]);
    assert_eq!(usage["vendor"], "claude");
    assert_eq!(usage["model"], "claude-sonnet-4-5");
    assert_eq!(
        usage["cache_write_tokens"],
        USAGE.iter().map(|u| u.cache_write).sum::<u64>()
    );
    assert_eq!(usage["turns"], 2, "{run}");
    // Claude Code prices the run itself.
    assert_eq!(usage["cost_source"], "vendor", "{usage}");
    assert!(
        usage["cost_usd"].as_f64().is_some_and(|c| c > 0.0),
        "{usage}"
    );
    // The transcript holds Claude Code's own stream-json events, the Write tool call among them.
    for event in [
        r#""type":"system""#,
        r#""name":"Write""#,
        r#""type":"result""#,
    ] {
        assert!(run.transcript.contains(event), "no {event}: {run}");
    }
    // The tools the adapter allowed are the ones the session had.
    assert!(
        run.transcript
            .contains(r#""tools":["Edit","Glob","Grep","Read","Write"]"#),
        "{run}"
    );
}

/// Codex's lane arguments and variables for the fake model provider.
fn codex_setup(codex_home: &Path) -> (Vec<&'static str>, Vec<(&'static str, String)>) {
    let args = vec![
        "--model",
        "gpt-5.5",
        // A custom model provider needs -c, which the adapter refuses without this flag.
        "--allow-unsafe-flag",
        "--",
        "-c",
        "model_provider=\"fake\"",
        "-c",
        "model_providers.fake.name=\"fake\"",
        "-c",
        "model_providers.fake.base_url=\"{url}/v1\"",
        "-c",
        "model_providers.fake.wire_api=\"responses\"",
    ];
    let vars = vec![
        ("CODEX_HOME", codex_home.to_string_lossy().into_owned()),
        ("OPENAI_API_KEY", "sk-fake-0123456789".into()),
    ];
    (args, vars)
}

#[test]
fn real_codex_reviewer_cannot_apply_a_patch() {
    let codex_home = tempfile::tempdir().unwrap();
    let (args, vars) = codex_setup(codex_home.path());
    let run = run_as("codex", "reviewer", &vendor_bin("codex"), &args, &vars);
    assert!(run.out.status.success(), "{run}");
    // The fake still sends apply_patch; the read-only sandbox refuses it.
    // The tool call was answered (refused) and the final turn followed.
    assert_eq!(run.requests.len(), 2, "{run}");
    assert!(!run.worktree.join(FILE_NAME).exists(), "{run}");
    assert!(outbound(&run.strace).is_empty(), "{}", run.strace);
}

#[test]
fn real_codex_implementer_edits_through_apply_patch_and_reports_usage() {
    let codex_home = tempfile::tempdir().unwrap();
    let (args, vars) = codex_setup(codex_home.path());
    let run = run_real("codex", &args, &vars);
    let usage = assert_contract(&run, &["/v1/responses", "/v1/responses"]);
    assert_eq!(usage["vendor"], "codex");
    assert_eq!(usage["model"], "gpt-5.5");
    assert_eq!(usage["cache_write_tokens"], 0);
    assert_eq!(usage["turns"], 1, "one `codex exec` turn: {usage}");
    // Codex reports no cost: computed from the table (gpt-5 prices).
    assert_eq!(usage["cost_source"], "computed", "{usage}");
    let tools = &run.requests[0].body;
    assert!(tools.contains(r#""name":"apply_patch""#), "{tools:.2000}");
    for event in [
        r#""type":"thread.started""#,
        r#""type":"file_change""#,
        r#""type":"turn.completed""#,
    ] {
        assert!(run.transcript.contains(event), "no {event}: {run}");
    }
}

#[test]
fn real_gemini_cli_implementer_edits_through_write_file_and_reports_usage() {
    let run = run_real(
        "gemini",
        &["--model", "gemini-2.5-pro"],
        &[
            ("GEMINI_API_KEY", "fake-gemini-key-0123456789".into()),
            ("GOOGLE_GEMINI_BASE_URL", "{url}".into()),
        ],
    );
    let stream = "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse";
    let usage = assert_contract(&run, &[stream, stream]);
    assert_eq!(usage["vendor"], "gemini");
    assert_eq!(usage["model"], "gemini-2.5-pro");
    assert_eq!(usage["cost_source"], "computed", "{usage}");
    for event in [
        r#""type":"init""#,
        r#""tool_name":"write_file""#,
        r#""type":"result""#,
    ] {
        assert!(run.transcript.contains(event), "no {event}: {run}");
    }
}

#[test]
fn real_claude_code_reviewer_has_no_write_tool() {
    let run = run_as(
        "claude",
        "reviewer",
        &vendor_bin("claude"),
        &["--model", "claude-sonnet-4-5"],
        &claude_vars(),
    );
    assert!(run.out.status.success(), "{run}");
    // The fake still asks for Write; the reviewer's session has no such tool.
    // The tool call was answered (refused) and the final turn followed.
    assert_eq!(run.requests.len(), 2, "{run}");
    assert!(!run.worktree.join(FILE_NAME).exists(), "{run}");
    assert!(
        run.transcript.contains(r#""tools":["Glob","Grep","Read"]"#),
        "{run}"
    );
    assert!(
        run.transcript.contains(r#""is_error":true"#),
        "the Write call was not refused: {run}"
    );
    assert!(outbound(&run.strace).is_empty(), "{}", run.strace);
}

#[test]
fn real_gemini_cli_reviewer_is_refused_write_file() {
    let run = run_as(
        "gemini",
        "reviewer",
        &vendor_bin("gemini"),
        &["--model", "gemini-2.5-pro"],
        &[
            ("GEMINI_API_KEY", "fake-gemini-key-0123456789".into()),
            ("GOOGLE_GEMINI_BASE_URL", "{url}".into()),
        ],
    );
    assert!(run.out.status.success(), "{run}");
    // Plan mode refuses write_file; the refusal goes back and the final turn follows.
    assert_eq!(run.requests.len(), 2, "{run}");
    assert!(!run.worktree.join(FILE_NAME).exists(), "{run}");
    assert!(outbound(&run.strace).is_empty(), "{}", run.strace);
}

/// The harness itself: a stand-in vendor that resolves a name is caught by the strace check
/// (the namespace makes the attempt fail; the check makes the test fail).
#[test]
fn a_vendor_that_tries_the_network_is_caught() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("claude");
    std::fs::write(
        &script,
        "#!/bin/sh\ngetent hosts api.anthropic.com >/dev/null 2>&1\ncat >/dev/null\necho '{\"type\":\"result\",\"is_error\":false,\"result\":\"STATUS: done\"}'\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let run = run_as("claude", "implementer", &script, &[], &[]);
    assert!(run.out.status.success(), "{run}");
    let tried = outbound(&run.strace);
    assert!(
        tried.iter().any(|l| l.contains("htons(53)")),
        "the DNS query was not seen:\n{}",
        run.strace
    );
}

#[test]
fn outbound_attempts_are_found_in_strace_output() {
    let lines = "1 connect(7, {sa_family=AF_INET, sin_port=htons(8765), sin_addr=inet_addr(\"127.0.0.1\")}, 16) = 0\n\
                 2 sendto(45, \"x\", 32, MSG_NOSIGNAL, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr(\"10.255.255.53\")}, 16) = -1 ENETUNREACH\n\
                 3 connect(9, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, \"2606:4700::1\", &sin6_addr), sin6_scope_id=0}, 28) = -1\n\
                 4 connect(3, {sa_family=AF_UNIX, sun_path=\"/run/x\"}, 110) = 0\n\
                 5 sendto(6, \"\\1\", 1, MSG_NOSIGNAL, NULL, 0) = 1\n";
    let found: Vec<char> = outbound(lines)
        .iter()
        .filter_map(|l| l.chars().next())
        .collect();
    assert_eq!(found, ['2', '3']);
}
