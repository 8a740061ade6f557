//! Stand-ins for the four vendor CLIs that `agent-coord lane` drives (the `fake-vendor` binary,
//! started through small per-vendor wrapper scripts that [`write_wrappers`] writes and
//! `AGENT_COORD_<VENDOR>_BIN` names): each reads its prompt as the real CLI does (stdin, or
//! Grok's `--prompt-file`), tells its role from the hardened flags the adapter passed (and
//! refuses to run without them), does the work a scripted lane of [`crate::coord`] does — an
//! implementer appends to the task's feature file in the worktree or asks its question, a
//! reviewer reads the diff the prompt names — and replays the vendor's documented event
//! stream for it (the formats at the top of `shared/src/coordinator/lane/{claude,codex,gemini,grok}.rs`),
//! spread over the lane delay, with token usage in proportion to what it read and wrote and,
//! for Claude Code, its own `total_cost_usd`.
//!
//! Behaviours come from the same mode files as the scripted lanes: `implementer` (`done`,
//! `ask`, `blocked`) and, per vendor, `review-<vendor>` (`approve`, `reject`), each first from
//! the task's own `<name>.<task-id>.modes`.

use std::io::Read;
use std::io::Write;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::json;
use serde_json::Value;

/// The vendors, as the adapter names them.
pub const VENDORS: [&str; 4] = ["claude", "codex", "gemini", "grok"];

/// The model each vendor reports when the lane asks for none.
fn default_model(vendor: &str) -> &'static str {
    match vendor {
        "claude" => "claude-sonnet-4-5",
        "codex" => "gpt-5-codex",
        "gemini" => "gemini-2.5-pro",
        _ => "grok-code-fast-1",
    }
}

/// Writes one wrapper script per vendor into `dir` (`dir/<vendor>`), each running `fake`
/// as that vendor with the fixture folder `modes` and `delay_seconds` of streaming; returns
/// the `AGENT_COORD_<VENDOR>_BIN` variables that point at them.
pub fn write_wrappers(
    dir: &Path,
    fake: &Path,
    modes: &Path,
    delay_seconds: u64,
) -> Vec<(String, PathBuf)> {
    std::fs::create_dir_all(dir).expect("mkdir vendors");
    VENDORS
        .iter()
        .map(|vendor| {
            let path = dir.join(vendor);
            let script = format!(
                "#!/bin/sh\nexec '{}' {vendor} --dir '{}' --delay {delay_seconds} -- \"$@\"\n",
                fake.display(),
                modes.display()
            );
            std::fs::write(&path, script).expect("write wrapper");
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .expect("chmod wrapper");
            (format!("AGENT_COORD_{}_BIN", vendor.to_uppercase()), path)
        })
        .collect()
}

/// What the lane may do, as the adapter's hardened flags say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Implementer,
    Reviewer,
}

/// Returns the role the vendor's argv grants, or `None` without the adapter's hardening.
fn role_of(vendor: &str, argv: &[String]) -> Option<Role> {
    let has = |flag: &str, value: &str| argv.windows(2).any(|w| w[0] == flag && w[1] == value);
    let (implementer, reviewer) = match vendor {
        "claude" => (
            has("--permission-mode", "acceptEdits"),
            has("--permission-mode", "dontAsk"),
        ),
        "codex" => (
            has("--sandbox", "workspace-write"),
            has("--sandbox", "read-only"),
        ),
        "gemini" => (
            has("--approval-mode", "auto_edit"),
            has("--approval-mode", "plan"),
        ),
        _ => (
            has("--deny", "Bash") && !has("--permission-mode", "plan"),
            has("--permission-mode", "plan") && has("--sandbox", "read-only"),
        ),
    };
    match (implementer, reviewer) {
        (true, false) => Some(Role::Implementer),
        (false, true) => Some(Role::Reviewer),
        _ => None,
    }
}

/// The value after `flag` in `argv`.
fn value_of<'a>(argv: &'a [String], flags: &[&str]) -> Option<&'a str> {
    argv.windows(2)
        .find(|w| flags.contains(&w[0].as_str()))
        .map(|w| w[1].as_str())
}

/// Pops the next mode of `name` for `task` from the mode files in `dir` (the task's own
/// file first), or `fallback`.
fn pop_mode(dir: &Path, name: &str, task: &str, fallback: &str) -> String {
    let own = dir.join(format!("{name}.{task}.modes"));
    let shared = dir.join(format!("{name}.modes"));
    let nonempty = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.len() > 0);
    let file = if nonempty(&own) { own } else { shared };
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default().trim().to_owned();
    if !text.is_empty() {
        let rest: Vec<&str> = lines.collect();
        let rest = if rest.is_empty() {
            String::new()
        } else {
            format!("{}\n", rest.join("\n"))
        };
        let _ = std::fs::write(&file, rest);
    }
    if first.is_empty() {
        fallback.to_owned()
    } else {
        first
    }
}

/// Appends `line` to `dir/name`; returns how many lines the file has now.
fn append(dir: &Path, name: &str, line: &str) -> usize {
    let path = dir.join(name);
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
    {
        let _ = writeln!(f, "{line}");
    }
    std::fs::read_to_string(&path)
        .map(|t| t.lines().count())
        .unwrap_or(0)
}

/// Tokens as a rough tokenizer counts them: four bytes each.
fn tokens(text: &str) -> u64 {
    (text.len() as u64).div_ceil(4)
}

/// One tool call the model made: its name, its input, and what came back.
struct ToolCall {
    name: &'static str,
    input: Value,
    output: String,
}

/// What the model did and answered, whatever the vendor.
struct Work {
    /// Text before the tool call.
    preamble: String,
    tool: Option<ToolCall>,
    /// The final protocol answer.
    answer: String,
}

/// Token counts of one run (input not read from the cache, as the adapter counts it).
#[derive(Debug, Clone, Copy, Default)]
struct Usage {
    input: u64,
    output: u64,
    cache_read: u64,
    cache_write: u64,
}

/// The token usage of a run: the prompt and the tool output are fresh input, the vendor's
/// system prompt and tool definitions are read from the cache on every turn (and written to
/// it once), the model's text and tool input are output plus some reasoning per turn.
fn usage_of(vendor: &str, prompt: &str, work: &Work, turns: u64) -> Usage {
    let (system, reasoning) = match vendor {
        "claude" => (14_312, 96),
        "codex" => (9_216, 448),
        "gemini" => (7_040, 512),
        _ => (6_144, 320),
    };
    let tool_out = work.tool.as_ref().map_or(0, |t| tokens(&t.output));
    let tool_in = work
        .tool
        .as_ref()
        .map_or(0, |t| tokens(&t.input.to_string()));
    Usage {
        input: tokens(prompt) + tool_out + 24 * turns,
        output: tokens(&work.preamble) + tool_in + tokens(&work.answer) + reasoning * turns,
        cache_read: system * turns,
        cache_write: if vendor == "claude" { 1_920 } else { 0 },
    }
}

/// Claude Sonnet 4.5's list prices (US dollars per million tokens), which Claude Code uses
/// for its own `total_cost_usd`.
fn claude_cost(u: Usage) -> f64 {
    (u.input as f64 * 3.0
        + u.output as f64 * 15.0
        + u.cache_read as f64 * 0.3
        + u.cache_write as f64 * 3.75)
        / 1_000_000.0
}

/// Does the scripted work of an implementer: the mode's edit in the worktree and its answer.
fn implement(dir: &Path, cwd: &Path, task: &str, vendor: &str) -> Work {
    let mode = pop_mode(dir, "implementer", task, "done");
    let count = append(dir, "implementer.log", &mode);
    append(
        dir,
        "vendor.log",
        &format!("{vendor} implementer {mode} {task}"),
    );
    match mode.as_str() {
        "ask" => Work {
            preamble: "The issue does not say where the entry goes.".into(),
            tool: None,
            answer: "STATUS: complete\nRESULT: ask\nWhich file should hold the feature?".into(),
        },
        "blocked" => Work {
            preamble: String::new(),
            tool: None,
            answer:
                "STATUS: complete\nRESULT: blocked\nThe issue needs access to a private service."
                    .into(),
        },
        _ => {
            let file = cwd.join(format!("feature-{task}.txt"));
            let line = format!("change {count}\n");
            let before = std::fs::read_to_string(&file).unwrap_or_default();
            let written = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&file)
                .and_then(|mut f| f.write_all(line.as_bytes()));
            let output = match written {
                Ok(()) if before.is_empty() => {
                    format!("File created successfully at: {}", file.display())
                }
                Ok(()) => format!("The file {} has been updated.", file.display()),
                Err(e) => format!("Error writing {}: {e}", file.display()),
            };
            Work {
                preamble: format!("I'll add the entry to feature-{task}.txt."),
                tool: Some(ToolCall {
                    name: "Write",
                    input: json!({"file_path": file.display().to_string(), "content": format!("{before}{line}")}),
                    output,
                }),
                answer: format!(
                    "STATUS: complete\nRESULT: done\nSUMMARY_EN: Adds the feature file.\nSUMMARY_DE: Fügt die Feature-Datei hinzu.\nAppended \"change {count}\" to feature-{task}.txt."
                ),
            }
        }
    }
}

/// Does a reviewer's work: reads the diff the prompt names and answers the mode's verdict.
fn review(dir: &Path, prompt: &str, task: &str, vendor: &str) -> Work {
    let mode = pop_mode(dir, &format!("review-{vendor}"), task, "approve");
    append(
        dir,
        "vendor.log",
        &format!("{vendor} reviewer {mode} {task}"),
    );
    let diff = prompt
        .split("The change is the diff in ")
        .nth(1)
        .and_then(|rest| rest.split(" (base to head)").next())
        .map(str::to_owned);
    let focus = prompt
        .split("Focus on ")
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .and_then(|rest| rest.split('.').next())
        .unwrap_or("the change")
        .to_owned();
    let tool = diff.map(|path| {
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| format!("error: {e}"));
        ToolCall {
            name: "Read",
            input: json!({"file_path": path}),
            output: text,
        }
    });
    let lines = tool.as_ref().map_or(0, |t| t.output.lines().count());
    let answer = match mode.as_str() {
        "reject" => "STATUS: complete\nRESULT: rejected\nThe feature file lacks a header.".into(),
        _ => format!(
            "STATUS: complete\nRESULT: approved\nReviewed the {lines}-line diff for {focus}: no findings."
        ),
    };
    Work {
        preamble: "I'll read the diff first.".into(),
        tool,
        answer,
    }
}

/// The vendor's events for `work`, one JSON document per line (Grok: its one object).
fn events(
    vendor: &str,
    role: Role,
    model: &str,
    cwd: &Path,
    prompt: &str,
    work: &Work,
) -> Vec<Value> {
    let session = format!(
        "{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}",
        fastrand::u32(..),
        fastrand::u16(..),
        fastrand::u16(..0x1000),
        fastrand::u16(..0x1000),
        fastrand::u64(..1 << 48)
    );
    let turns = if work.tool.is_some() { 2 } else { 1 };
    let usage = usage_of(vendor, prompt, work, turns);
    match vendor {
        "claude" => claude(role, model, cwd, &session, work, usage, turns),
        "codex" => codex(&session, work, usage),
        "gemini" => gemini(model, prompt, &session, work, usage),
        _ => grok(model, &session, work, usage, turns),
    }
}

fn claude(
    role: Role,
    model: &str,
    cwd: &Path,
    session: &str,
    work: &Work,
    usage: Usage,
    turns: u64,
) -> Vec<Value> {
    let (tools, permission) = match role {
        Role::Implementer => (vec!["Edit", "Glob", "Grep", "Read", "Write"], "acceptEdits"),
        Role::Reviewer => (vec!["Glob", "Grep", "Read"], "dontAsk"),
    };
    let assistant = |content: Value| json!({"type": "assistant", "message": {"model": model, "role": "assistant", "type": "message", "content": [content]}, "parent_tool_use_id": null, "session_id": session});
    let mut out = vec![json!({
        "type": "system", "subtype": "init", "cwd": cwd.display().to_string(), "session_id": session,
        "tools": tools, "mcp_servers": [], "model": model, "permissionMode": permission,
        "apiKeySource": "ANTHROPIC_API_KEY", "claude_code_version": "2.1.332"
    })];
    if !work.preamble.is_empty() {
        out.push(assistant(json!({"type": "text", "text": work.preamble})));
    }
    if let Some(tool) = &work.tool {
        let name = if role == Role::Implementer {
            tool.name
        } else {
            "Read"
        };
        out.push(assistant(
            json!({"type": "tool_use", "id": "toolu_01", "name": name, "input": tool.input}),
        ));
        out.push(json!({"type": "user", "message": {"role": "user", "content": [{"tool_use_id": "toolu_01", "type": "tool_result", "content": tool.output}]}, "session_id": session}));
    }
    out.push(assistant(json!({"type": "text", "text": work.answer})));
    let cost = claude_cost(usage);
    out.push(json!({
        "type": "result", "subtype": "success", "is_error": false, "num_turns": turns,
        "result": work.answer, "session_id": session, "total_cost_usd": cost,
        "usage": {"input_tokens": usage.input, "cache_creation_input_tokens": usage.cache_write,
                  "cache_read_input_tokens": usage.cache_read, "output_tokens": usage.output,
                  "service_tier": "standard"},
        "modelUsage": {model: {"inputTokens": usage.input, "outputTokens": usage.output,
                               "cacheReadInputTokens": usage.cache_read,
                               "cacheCreationInputTokens": usage.cache_write, "costUSD": cost}},
        "permission_denials": [], "stop_reason": "end_turn"
    }));
    out
}

fn codex(session: &str, work: &Work, usage: Usage) -> Vec<Value> {
    let mut out = vec![
        json!({"type": "thread.started", "thread_id": session}),
        json!({"type": "turn.started"}),
        json!({"type": "item.completed", "item": {"id": "item_0", "type": "reasoning", "text": format!("**Planning** {}", work.preamble)}}),
    ];
    if let Some(tool) = &work.tool {
        let item = match tool.input["file_path"].as_str() {
            Some(path) if tool.name == "Write" => {
                json!({"id": "item_1", "type": "file_change", "changes": [{"path": path, "kind": "update"}], "status": "completed"})
            }
            path => json!({
                "id": "item_1", "type": "command_execution",
                "command": format!("bash -lc 'cat {}'", path.unwrap_or_default()),
                "aggregated_output": tool.output, "exit_code": 0, "status": "completed"
            }),
        };
        let mut started = item.clone();
        started["status"] = json!("in_progress");
        out.push(json!({"type": "item.started", "item": started}));
        out.push(json!({"type": "item.completed", "item": item}));
    }
    out.push(json!({"type": "item.completed", "item": {"id": "item_2", "type": "agent_message", "text": work.answer}}));
    out.push(json!({"type": "turn.completed", "usage": {
        "input_tokens": usage.input + usage.cache_read, "cached_input_tokens": usage.cache_read,
        "output_tokens": usage.output
    }}));
    out
}

fn gemini(model: &str, prompt: &str, session: &str, work: &Work, usage: Usage) -> Vec<Value> {
    let now = || chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let mut out = vec![
        json!({"type": "init", "timestamp": now(), "session_id": session, "model": model}),
        json!({"type": "message", "timestamp": now(), "role": "user", "content": prompt}),
    ];
    if let Some(tool) = &work.tool {
        let name = if tool.name == "Write" {
            "write_file"
        } else {
            "read_file"
        };
        out.push(json!({"type": "message", "timestamp": now(), "role": "assistant", "content": work.preamble, "delta": true}));
        out.push(json!({"type": "tool_use", "timestamp": now(), "tool_name": name, "tool_id": format!("{name}-1"), "parameters": tool.input}));
        out.push(json!({"type": "tool_result", "timestamp": now(), "tool_id": format!("{name}-1"), "status": "success", "output": tool.output}));
    }
    // The answer streams in chunks of a line each.
    for chunk in work.answer.split_inclusive('\n') {
        out.push(json!({"type": "message", "timestamp": now(), "role": "assistant", "content": chunk, "delta": true}));
    }
    let input_total = usage.input + usage.cache_read;
    out.push(json!({"type": "result", "timestamp": now(), "status": "success", "stats": {
        "total_tokens": input_total + usage.output, "input_tokens": input_total,
        "output_tokens": usage.output, "cached": usage.cache_read, "input": usage.input,
        "duration_ms": 1200, "tool_calls": u64::from(work.tool.is_some()),
        "models": {model: {"total_tokens": input_total + usage.output, "input_tokens": input_total,
                            "output_tokens": usage.output, "cached": usage.cache_read}}
    }}));
    out
}

fn grok(model: &str, session: &str, work: &Work, usage: Usage, turns: u64) -> Vec<Value> {
    vec![json!({
        "text": work.answer, "stopReason": "end_turn", "session_id": session, "num_turns": turns,
        "usage": {"input_tokens": usage.input, "output_tokens": usage.output,
                  "cache_read_input_tokens": usage.cache_read},
        "modelUsage": {model: {"inputTokens": usage.input, "outputTokens": usage.output,
                                "cacheReadInputTokens": usage.cache_read}}
    })]
}

/// The command line: `fake-vendor VENDOR --dir DIR --delay SECONDS -- VENDOR-ARGV…`.
struct Args {
    vendor: String,
    dir: PathBuf,
    delay: u64,
    argv: Vec<String>,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    match args {
        [vendor, d, dir, l, delay, dashes, argv @ ..]
            if d == "--dir"
                && l == "--delay"
                && dashes == "--"
                && VENDORS.contains(&vendor.as_str()) =>
        {
            Ok(Args {
                vendor: vendor.clone(),
                dir: PathBuf::from(dir),
                delay: delay.parse().map_err(|_| format!("bad delay {delay:?}"))?,
                argv: argv.to_vec(),
            })
        }
        _ => Err(
            "usage: fake-vendor claude|codex|gemini|grok --dir DIR --delay SECONDS -- ARGV..."
                .into(),
        ),
    }
}

/// Runs the stand-in: returns the exit code (0 after a full event stream, 2 when the adapter
/// did not pass its hardening or the prompt is unreadable).
pub fn main(args: &[String]) -> u8 {
    let args = match parse_args(args) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("{message}");
            return 1;
        }
    };
    let vendor = args.vendor.as_str();
    let Some(role) = role_of(vendor, &args.argv) else {
        eprintln!(
            "fake {vendor}: the adapter's hardened flags are missing: {:?}",
            args.argv
        );
        return 2;
    };
    let prompt = if vendor == "grok" {
        let file = value_of(&args.argv, &["--prompt-file"]).unwrap_or_default();
        std::fs::read_to_string(file)
    } else {
        let mut text = String::new();
        std::io::stdin().read_to_string(&mut text).map(|_| text)
    };
    let prompt = match prompt {
        Ok(p) if !p.trim().is_empty() => p,
        Ok(_) => {
            eprintln!("fake {vendor}: the prompt is empty");
            return 2;
        }
        Err(e) => {
            eprintln!("fake {vendor}: cannot read the prompt: {e}");
            return 2;
        }
    };
    let cwd = std::env::current_dir().unwrap_or_default();
    let task = cwd
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let model = value_of(&args.argv, &["--model", "-m"])
        .unwrap_or(default_model(vendor))
        .to_owned();
    let work = match role {
        Role::Implementer => implement(&args.dir, &cwd, &task, vendor),
        Role::Reviewer => review(&args.dir, &prompt, &task, vendor),
    };
    let events = events(vendor, role, &model, &cwd, &prompt, &work);
    let pause = Duration::from_millis(args.delay * 1000 / events.len().max(1) as u64);
    let mut stdout = std::io::stdout().lock();
    for event in events {
        std::thread::sleep(pause);
        if writeln!(stdout, "{event}")
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return 2;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_role_comes_from_the_adapters_hardening_only() {
        assert_eq!(
            role_of("claude", &argv(&["-p", "--permission-mode", "acceptEdits"])),
            Some(Role::Implementer)
        );
        assert_eq!(
            role_of("codex", &argv(&["exec", "--sandbox", "read-only"])),
            Some(Role::Reviewer)
        );
        assert_eq!(
            role_of(
                "grok",
                &argv(&[
                    "--permission-mode",
                    "plan",
                    "--sandbox",
                    "read-only",
                    "--deny",
                    "Bash"
                ])
            ),
            Some(Role::Reviewer)
        );
        assert_eq!(role_of("gemini", &argv(&["--yolo"])), None);
    }
}
