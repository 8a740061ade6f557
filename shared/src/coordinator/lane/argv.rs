//! The vendor command line per vendor and role: hardened flags first (implementers may edit
//! files in the worktree and nothing else, reviewers only read), then `--model`/`--effort`
//! in the vendor's spelling, then the operator's extra arguments, which may not undo the
//! hardening unless the operator says `--allow-unsafe-flag`.
//!
//! The flags follow Claude Code 2.1.332, Codex CLI 0.171.0, Gemini CLI 0.61.0 (their `--help`)
//! and the documented flags of xAI's Grok CLI 1.0.x; docs/lanes.md says what each guarantees.

use super::Role;
use super::Vendor;

/// What to run: the vendor, the role, the binary and what passes through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request<'a> {
    /// The vendor CLI.
    pub vendor: Vendor,
    /// The lane's role.
    pub role: Role,
    /// The vendor binary (`argv[0]`).
    pub program: &'a str,
    /// The model to ask for, if any.
    pub model: Option<&'a str>,
    /// The reasoning effort to ask for, if any.
    pub effort: Option<&'a str>,
    /// Extra arguments after `--`, appended last.
    pub extra: &'a [String],
    /// Whether extra arguments may undo the hardening.
    pub allow_unsafe: bool,
    /// The file holding the prompt, for a vendor that cannot read it on stdin (Grok).
    pub prompt_file: Option<&'a str>,
}

/// Why no command line was built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgvError {
    /// An extra argument would undo the hardening.
    #[error("refusing unsafe {vendor} flag {flag}: it undoes the lane's hardening; pass --allow-unsafe-flag to allow it")]
    Unsafe {
        /// The vendor.
        vendor: Vendor,
        /// The refused argument as given.
        flag: String,
    },
    /// The vendor CLI has no such option.
    #[error("{vendor} has no {what} option; drop --{what} for this lane")]
    Unsupported {
        /// The vendor.
        vendor: Vendor,
        /// The option (`effort`).
        what: &'static str,
    },
    /// Grok needs the prompt in a file.
    #[error("grok reads its prompt from a file, but none was given")]
    NoPromptFile,
}

/// Returns the command line for `request`, or why it is refused.
pub fn build(request: &Request) -> Result<Vec<String>, ArgvError> {
    if !request.allow_unsafe {
        if let Some(flag) = request.extra.iter().find(|a| is_unsafe(request.vendor, a)) {
            return Err(ArgvError::Unsafe {
                vendor: request.vendor,
                flag: flag.clone(),
            });
        }
    }
    let mut argv = vec![request.program.to_owned()];
    let hardened: &[&str] = match (request.vendor, request.role) {
        (Vendor::Claude, Role::Implementer) => &CLAUDE_IMPLEMENTER,
        (Vendor::Claude, Role::Reviewer) => &CLAUDE_REVIEWER,
        (Vendor::Codex, Role::Implementer) => &CODEX_IMPLEMENTER,
        (Vendor::Codex, Role::Reviewer) => &CODEX_REVIEWER,
        (Vendor::Gemini, Role::Implementer) => &GEMINI_IMPLEMENTER,
        (Vendor::Gemini, Role::Reviewer) => &GEMINI_REVIEWER,
        (Vendor::Grok, Role::Implementer) => &GROK_IMPLEMENTER,
        (Vendor::Grok, Role::Reviewer) => &GROK_REVIEWER,
    };
    argv.extend(hardened.iter().map(|s| (*s).to_owned()));
    push_model_and_effort(&mut argv, request)?;
    argv.extend(request.extra.iter().cloned());
    // The prompt source comes last so that extra arguments cannot be read as the prompt.
    match request.vendor {
        Vendor::Codex => argv.push("-".to_owned()),
        Vendor::Gemini => argv.extend(["--prompt".to_owned(), String::new()]),
        Vendor::Grok => {
            let file = request.prompt_file.ok_or(ArgvError::NoPromptFile)?;
            argv.extend(["--prompt-file".to_owned(), file.to_owned()]);
        }
        Vendor::Claude => {}
    }
    Ok(argv)
}

fn push_model_and_effort(argv: &mut Vec<String>, request: &Request) -> Result<(), ArgvError> {
    if let Some(model) = request.model {
        let flag = if request.vendor == Vendor::Codex {
            "-m"
        } else {
            "--model"
        };
        argv.extend([flag.to_owned(), model.to_owned()]);
    }
    if let Some(effort) = request.effort {
        match request.vendor {
            Vendor::Claude => argv.extend(["--effort".to_owned(), effort.to_owned()]),
            Vendor::Codex => {
                argv.extend([
                    "-c".to_owned(),
                    format!("model_reasoning_effort=\"{effort}\""),
                ]);
            }
            Vendor::Grok => argv.extend(["--reasoning-effort".to_owned(), effort.to_owned()]),
            Vendor::Gemini => {
                return Err(ArgvError::Unsupported {
                    vendor: Vendor::Gemini,
                    what: "effort",
                })
            }
        }
    }
    Ok(())
}

/// Claude Code implementer: file tools only (no Bash, web, subagents or MCP), edits accepted,
/// only the operator's user settings (a repository's `.claude/settings.json` could add hooks).
const CLAUDE_IMPLEMENTER: [&str; 14] = [
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--permission-mode",
    "acceptEdits",
    "--tools",
    "Read,Edit,Write,Glob,Grep",
    "--disallowedTools",
    "Bash,WebFetch,WebSearch,Task,NotebookEdit",
    "--strict-mcp-config",
    "--setting-sources",
    "user",
    "--disable-slash-commands",
];
/// Claude Code reviewer: read-only tools, anything else denied without asking.
const CLAUDE_REVIEWER: [&str; 14] = [
    "-p",
    "--output-format",
    "stream-json",
    "--verbose",
    "--permission-mode",
    "dontAsk",
    "--tools",
    "Read,Glob,Grep",
    "--disallowedTools",
    "Bash,Edit,Write,WebFetch,WebSearch,Task,NotebookEdit",
    "--strict-mcp-config",
    "--setting-sources",
    "user",
    "--disable-slash-commands",
];
/// Codex implementer: the workspace-write sandbox (writes in the worktree only, no network),
/// never asks, no web search; and its quiet switches (found running Codex 0.171.0 under strace
/// in a loopback-only namespace): `analytics.enabled=false` stops the metrics export to
/// ab.chatgpt.com and chatgpt.com, `features.plugins=false` the plugin marketplace sync that
/// resolves api.github.com, `check_for_update_on_startup=false` the release check.
const CODEX_IMPLEMENTER: [&str; 16] = [
    "exec",
    "--json",
    "--sandbox",
    "workspace-write",
    "-c",
    "approval_policy=\"never\"",
    "-c",
    "sandbox_workspace_write.network_access=false",
    "-c",
    "web_search=\"disabled\"",
    "-c",
    "analytics.enabled=false",
    "-c",
    "features.plugins=false",
    "-c",
    "check_for_update_on_startup=false",
];
/// Codex reviewer: the read-only sandbox.
const CODEX_REVIEWER: [&str; 14] = [
    "exec",
    "--json",
    "--sandbox",
    "read-only",
    "-c",
    "approval_policy=\"never\"",
    "-c",
    "web_search=\"disabled\"",
    "-c",
    "analytics.enabled=false",
    "-c",
    "features.plugins=false",
    "-c",
    "check_for_update_on_startup=false",
];
/// Gemini implementer: edits auto-approved; in headless mode every tool that would ask (the
/// shell, web fetch) is refused. No extensions, no MCP servers.
const GEMINI_IMPLEMENTER: [&str; 9] = [
    "--output-format",
    "stream-json",
    "--approval-mode",
    "auto_edit",
    "--skip-trust",
    "--extensions",
    "none",
    "--allowed-mcp-server-names",
    "none",
];
/// Gemini reviewer: plan mode (read-only tools).
const GEMINI_REVIEWER: [&str; 9] = [
    "--output-format",
    "stream-json",
    "--approval-mode",
    "plan",
    "--skip-trust",
    "--extensions",
    "none",
    "--allowed-mcp-server-names",
    "none",
];
/// Grok implementer (the spec's hardening): no shell, no subagents, no web search; file tools.
const GROK_IMPLEMENTER: [&str; 11] = [
    "--output-format",
    "json",
    "--deny",
    "Bash",
    "--no-subagents",
    "--disable-web-search",
    "--no-memory",
    "--no-auto-update",
    "--verbatim",
    "--tools",
    "read_file,grep,list_dir,search_replace",
];
/// Grok reviewer: plan mode, read-only sandbox, read tools only.
const GROK_REVIEWER: [&str; 21] = [
    "--output-format",
    "json",
    "--permission-mode",
    "plan",
    "--sandbox",
    "read-only",
    "--deny",
    "Bash",
    "--deny",
    "Write",
    "--deny",
    "Edit",
    "--no-subagents",
    "--disable-web-search",
    "--no-memory",
    "--no-auto-update",
    "--verbatim",
    "--tools",
    "read_file,grep,list_dir",
    "--max-turns",
    "50",
];

/// Flags that bypass permissions or replace a hardened setting, per vendor.
fn unsafe_flags(vendor: Vendor) -> &'static [&'static str] {
    match vendor {
        Vendor::Claude => &[
            "--dangerously-skip-permissions",
            "--allow-dangerously-skip-permissions",
            "--permission-mode",
            "--tools",
            "--allowedTools",
            "--allowed-tools",
            "--mcp-config",
            "--settings",
            "--setting-sources",
            "--add-dir",
            "--agents",
            "--plugin-dir",
            "--plugin-url",
        ],
        Vendor::Codex => &[
            "--dangerously-bypass-approvals-and-sandbox",
            "--yolo",
            "--full-auto",
            "--approve-for-me",
            "--dangerously-bypass-hook-trust",
            "--trust",
            "-s",
            "--sandbox",
            "--add-dir",
            "-c",
            "--config",
            "--enable",
            "-p",
            "--profile",
            "--remote",
        ],
        Vendor::Gemini => &[
            "-y",
            "--yolo",
            "--approval-mode",
            "--policy",
            "--admin-policy",
            "--allowed-tools",
            "--allowed-mcp-server-names",
            "-e",
            "--extensions",
            "--include-directories",
            "--raw-output",
            "--accept-raw-output-risk",
        ],
        Vendor::Grok => &[
            "--allow",
            "--tools",
            "--permission-mode",
            "--sandbox",
            "--no-sandbox",
            "--allow-net",
            "--dangerously-skip-permissions",
            "--always-approve",
            "--yolo",
        ],
    }
}

/// Reports whether `arg` (`--flag`, `--flag=value`, or `-x` with a value glued on) is one of
/// the vendor's unsafe flags.
pub fn is_unsafe(vendor: Vendor, arg: &str) -> bool {
    let name = arg.split_once('=').map_or(arg, |(name, _)| name);
    unsafe_flags(vendor).iter().any(|flag| {
        name == *flag
            || (flag.len() == 2 && !arg.starts_with("--") && arg.starts_with(flag) && arg.len() > 2)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request<'a>(vendor: Vendor, role: Role, extra: &'a [String]) -> Request<'a> {
        Request {
            vendor,
            role,
            program: "/bin/v",
            model: Some("m1"),
            effort: Some("high"),
            extra,
            allow_unsafe: false,
            prompt_file: Some("/tmp/p.txt"),
        }
    }

    fn joined(vendor: Vendor, role: Role) -> String {
        let extra = ["--x".to_owned()];
        let req = Request {
            effort: (vendor != Vendor::Gemini).then_some("high"),
            ..request(vendor, role, &extra)
        };
        build(&req).expect("builds").join(" ")
    }

    #[test]
    fn argv_per_vendor_and_role() {
        let table = [
            (Vendor::Claude, Role::Implementer, "/bin/v -p --output-format stream-json --verbose --permission-mode acceptEdits --tools Read,Edit,Write,Glob,Grep --disallowedTools Bash,WebFetch,WebSearch,Task,NotebookEdit --strict-mcp-config --setting-sources user --disable-slash-commands --model m1 --effort high --x"),
            (Vendor::Claude, Role::Reviewer, "/bin/v -p --output-format stream-json --verbose --permission-mode dontAsk --tools Read,Glob,Grep --disallowedTools Bash,Edit,Write,WebFetch,WebSearch,Task,NotebookEdit --strict-mcp-config --setting-sources user --disable-slash-commands --model m1 --effort high --x"),
            (Vendor::Codex, Role::Implementer, "/bin/v exec --json --sandbox workspace-write -c approval_policy=\"never\" -c sandbox_workspace_write.network_access=false -c web_search=\"disabled\" -c analytics.enabled=false -c features.plugins=false -c check_for_update_on_startup=false -m m1 -c model_reasoning_effort=\"high\" --x -"),
            (Vendor::Codex, Role::Reviewer, "/bin/v exec --json --sandbox read-only -c approval_policy=\"never\" -c web_search=\"disabled\" -c analytics.enabled=false -c features.plugins=false -c check_for_update_on_startup=false -m m1 -c model_reasoning_effort=\"high\" --x -"),
            (Vendor::Gemini, Role::Implementer, "/bin/v --output-format stream-json --approval-mode auto_edit --skip-trust --extensions none --allowed-mcp-server-names none --model m1 --x --prompt "),
            (Vendor::Gemini, Role::Reviewer, "/bin/v --output-format stream-json --approval-mode plan --skip-trust --extensions none --allowed-mcp-server-names none --model m1 --x --prompt "),
            (Vendor::Grok, Role::Implementer, "/bin/v --output-format json --deny Bash --no-subagents --disable-web-search --no-memory --no-auto-update --verbatim --tools read_file,grep,list_dir,search_replace --model m1 --reasoning-effort high --x --prompt-file /tmp/p.txt"),
            (Vendor::Grok, Role::Reviewer, "/bin/v --output-format json --permission-mode plan --sandbox read-only --deny Bash --deny Write --deny Edit --no-subagents --disable-web-search --no-memory --no-auto-update --verbatim --tools read_file,grep,list_dir --max-turns 50 --model m1 --reasoning-effort high --x --prompt-file /tmp/p.txt"),
        ];
        for (vendor, role, want) in table {
            assert_eq!(joined(vendor, role), want, "{vendor} {role:?}");
        }
    }

    #[test]
    fn unsafe_extra_flags_are_refused_unless_allowed() {
        let table = [
            (Vendor::Claude, "--dangerously-skip-permissions"),
            (Vendor::Claude, "--permission-mode=bypassPermissions"),
            (Vendor::Codex, "--dangerously-bypass-approvals-and-sandbox"),
            (Vendor::Codex, "--yolo"),
            (Vendor::Codex, "-sdanger-full-access"),
            (Vendor::Codex, "-c"),
            (Vendor::Gemini, "--yolo"),
            (Vendor::Gemini, "-y"),
            (Vendor::Gemini, "--approval-mode=yolo"),
            (Vendor::Grok, "--allow"),
        ];
        for (vendor, flag) in table {
            for role in [Role::Implementer, Role::Reviewer] {
                let extra = [flag.to_owned()];
                let req = request(vendor, role, &extra);
                assert_eq!(
                    build(&req),
                    Err(ArgvError::Unsafe {
                        vendor,
                        flag: flag.to_owned()
                    }),
                    "{vendor} {flag}"
                );
                let allowed = Request {
                    allow_unsafe: true,
                    effort: None,
                    ..req
                };
                let argv = build(&allowed).expect("allowed");
                assert!(argv.iter().any(|a| a == flag), "{vendor} {flag}");
            }
        }
    }

    #[test]
    fn safe_extra_flags_pass_through() {
        for (vendor, flag) in [
            (Vendor::Claude, "--max-budget-usd=2"),
            (Vendor::Codex, "--skip-git-repo-check"),
            (Vendor::Gemini, "--sandbox"),
            (Vendor::Grok, "--max-tool-rounds"),
        ] {
            assert!(!is_unsafe(vendor, flag), "{vendor} {flag}");
        }
    }

    #[test]
    fn gemini_effort_and_grok_without_prompt_file_are_refused() {
        let req = request(Vendor::Gemini, Role::Reviewer, &[]);
        assert!(matches!(build(&req), Err(ArgvError::Unsupported { .. })));
        let req = Request {
            prompt_file: None,
            ..request(Vendor::Grok, Role::Reviewer, &[])
        };
        assert_eq!(build(&req), Err(ArgvError::NoPromptFile));
    }
}
