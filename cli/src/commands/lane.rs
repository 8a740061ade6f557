//! `agent-coord lane VENDOR --role ROLE`: a built-in lane that drives a vendor model CLI
//! (Claude Code, Codex, Gemini CLI, Grok) with hardened flags for its role, reads the
//! coordinator's prompt on stdin, streams the vendor's events into a redacted, bounded
//! transcript, passes the model's final protocol answer through on stdout and prints a
//! `USAGE: {json}` line last. The pure rules live in
//! `agent_coord_shared::coordinator::lane`; this file spawns and prints.

use std::io::Read;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

use agent_coord_shared::coordinator::lane::answer;
use agent_coord_shared::coordinator::lane::argv;
use agent_coord_shared::coordinator::lane::env;
use agent_coord_shared::coordinator::lane::events::Parsed;
use agent_coord_shared::coordinator::lane::retry::DEFAULT_BACKOFF_SECONDS;
use agent_coord_shared::coordinator::lane::Role;
use agent_coord_shared::coordinator::lane::Vendor;

use crate::command_error::CommandError;
use crate::context::Context;
use crate::lanes::runner;
use crate::lanes::transcript::Transcript;
use crate::lanes::transcript::DEFAULT_MAX_BYTES;
use crate::output::Report;

/// The most prompt bytes read from stdin.
const MAX_PROMPT: u64 = 32 * 1024 * 1024;
/// Bytes of the vendor's stderr kept for the transcript.
const MAX_STDERR: usize = 64 * 1024;

/// Run a vendor model CLI as a coordinator lane
///
/// Reads the prompt on stdin and runs the vendor binary (AGENT_COORD_<VENDOR>_BIN, else the
/// vendor's name on PATH) in the current directory with hardened flags: an implementer may edit
/// files in the worktree and nothing else (no shell where the CLI can deny it, no web, no
/// subagents), a reviewer only reads. The vendor gets only its own variables (API key, config
/// home, base URL) and HOME/PATH/TMPDIR/locale; never a GitHub token. Its events go to the
/// transcript (JSONL, redacted, bounded); stdout is the model's final STATUS/RESULT answer as it
/// wrote it, or the adapter's own STATUS: unavailable/partial/timeout with a reason (and
/// RETRY_AFTER: <RFC 3339> for a usage limit), then one line `USAGE: {json}`. See docs/lanes.md.
/// Exit codes: 0 the lane ran and printed its answer (whatever the verdict), 1 usage (a refused
/// unsafe flag, an option the vendor lacks), 2 the vendor could not be found or started, or the
/// transcript could not be written.
#[derive(clap::Args, Debug)]
pub(crate) struct LaneArgs {
    /// The vendor CLI to drive
    #[arg(value_enum)]
    vendor: VendorArg,
    /// What the lane may do: implementer (edit files in the worktree) or reviewer (read only)
    #[arg(long, value_enum)]
    role: RoleArg,
    /// Model to ask the vendor for (passed through)
    #[arg(long)]
    model: Option<String>,
    /// Reasoning effort to ask for (claude --effort, codex model_reasoning_effort, grok
    /// --reasoning-effort; gemini has none)
    #[arg(long)]
    effort: Option<String>,
    /// Write the vendor's events here as JSONL (redacted, bounded); keep it outside the worktree.
    /// The coordinator names one for every lane it starts
    #[arg(long, value_name = "PATH", env = crate::lanes::TRANSCRIPT_ENV)]
    transcript: Option<PathBuf>,
    /// Bound of the transcript in bytes
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BYTES)]
    transcript_max_bytes: u64,
    /// Kill the vendor's process group after this many seconds (STATUS: timeout)
    #[arg(long, value_name = "SECONDS", default_value_t = 3600)]
    timeout_seconds: u64,
    /// RETRY_AFTER is now plus this many seconds when a usage limit names no reset time
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_BACKOFF_SECONDS)]
    backoff_seconds: u64,
    /// Let extra arguments undo the hardening (e.g. --dangerously-skip-permissions, --yolo)
    #[arg(long)]
    allow_unsafe_flag: bool,
    /// Extra arguments for the vendor CLI, after `--`
    #[arg(last = true, value_name = "EXTRA")]
    extra: Vec<String>,
}

/// The vendors on the command line.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum VendorArg {
    Claude,
    Codex,
    Gemini,
    Grok,
}

/// The roles on the command line.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum RoleArg {
    Implementer,
    Reviewer,
}

impl LaneArgs {
    fn vendor(&self) -> Vendor {
        match self.vendor {
            VendorArg::Claude => Vendor::Claude,
            VendorArg::Codex => Vendor::Codex,
            VendorArg::Gemini => Vendor::Gemini,
            VendorArg::Grok => Vendor::Grok,
        }
    }

    fn role(&self) -> Role {
        match self.role {
            RoleArg::Implementer => Role::Implementer,
            RoleArg::Reviewer => Role::Reviewer,
        }
    }
}

pub(crate) fn cmd_lane(cx: &Context, args: &LaneArgs) -> Result<Report, CommandError> {
    let vendor = args.vendor();
    let program = find_program(vendor)?;
    let mut prompt = Vec::new();
    std::io::stdin()
        .take(MAX_PROMPT)
        .read_to_end(&mut prompt)
        .map_err(|e| CommandError::operational(format!("cannot read the prompt on stdin: {e}")))?;
    // Grok reads its prompt from a file: a private one in TMPDIR, removed when this returns.
    let prompt_file = match vendor {
        Vendor::Grok => Some(write_prompt_file(&prompt)?),
        _ => None,
    };
    let prompt_path = prompt_file
        .as_ref()
        .map(|f| f.path().to_string_lossy().into_owned());
    let request = argv::Request {
        vendor,
        role: args.role(),
        program: &program,
        model: args.model.as_deref(),
        effort: args.effort.as_deref(),
        extra: &args.extra,
        allow_unsafe: args.allow_unsafe_flag,
        prompt_file: prompt_path.as_deref(),
    };
    let argv = argv::build(&request).map_err(|e| CommandError::usage(e.to_string()))?;
    let ambient: Vec<(String, String)> = std::env::vars().collect();
    let pairs = || ambient.iter().map(|(k, v)| (k.as_str(), v.as_str()));
    let child_env = env::filter(vendor, pairs());
    let secrets = env::secret_values(pairs());
    let mut transcript = Transcript::create(
        args.transcript.as_deref(),
        secrets.clone(),
        args.transcript_max_bytes,
    )
    .map_err(|e| transcript_error(args.transcript.as_deref(), &e))?;
    transcript.header(vendor, args.role(), &argv);
    let cwd = std::env::current_dir().map_err(|e| {
        CommandError::operational(format!("cannot read the current directory: {e}"))
    })?;
    let spec = runner::Spec {
        argv: &argv,
        cwd: &cwd,
        env: &child_env,
        stdin: if vendor == Vendor::Grok {
            Vec::new()
        } else {
            prompt
        },
        timeout: Duration::from_secs(args.timeout_seconds),
        max_stderr: MAX_STDERR,
    };
    let now = cx.now();
    let mut parsed = Parsed::default();
    let ended = runner::run(&spec, &mut |line| {
        transcript.event(line);
        parsed.feed(vendor, line, now);
    })
    .map_err(|e| CommandError::operational(e.to_string()))?;
    parsed.finish(vendor, now);
    transcript.stderr(&ended.stderr);
    let end = answer::VendorEnd {
        exit_code: ended.exit_code,
        timed_out: ended.timed_out,
        duration_ms: u64::try_from(ended.elapsed.as_millis()).unwrap_or(u64::MAX),
    };
    let secret_refs: Vec<&str> = secrets.iter().map(String::as_str).collect();
    let context = answer::Context {
        vendor,
        model: args.model.as_deref(),
        backoff_seconds: args.backoff_seconds,
        now,
        secrets: &secret_refs,
    };
    let answer = answer::compose(&parsed, end, context);
    let (dropped, failed) = transcript.finish(&answer.usage);
    if let Some(e) = failed {
        return Err(transcript_error(args.transcript.as_deref(), &e));
    }
    let mut stderr: Vec<String> = answer.local_error.into_iter().collect();
    if dropped > 0 {
        stderr.push(format!(
            "lane: the transcript reached its bound of {} bytes; {dropped} bytes were dropped",
            args.transcript_max_bytes
        ));
    }
    let stdout = format!("{}{}\n", answer.protocol, answer::usage_line(&answer.usage));
    Ok(Report::text(stdout).with_stderr(stderr))
}

/// Returns the vendor binary: `AGENT_COORD_<VENDOR>_BIN`, else the vendor's name on `PATH`.
fn find_program(vendor: Vendor) -> Result<String, CommandError> {
    crate::lanes::find_vendor(vendor)
        .map(|p| p.to_string_lossy().into_owned())
        .ok_or_else(|| {
            CommandError::operational(format!(
                "cannot find the {vendor} CLI: `{}` is not on PATH and {} is not set; install it (see docs/lanes.md)",
                vendor.program(),
                vendor.bin_variable()
            ))
        })
}

fn write_prompt_file(prompt: &[u8]) -> Result<tempfile::NamedTempFile, CommandError> {
    use std::io::Write;
    let mut file = tempfile::Builder::new()
        .prefix("agent-coord-prompt-")
        .suffix(".txt")
        .tempfile()
        .map_err(|e| CommandError::operational(format!("cannot create the prompt file: {e}")))?;
    file.write_all(prompt)
        .and_then(|()| file.flush())
        .map_err(|e| CommandError::operational(format!("cannot write the prompt file: {e}")))?;
    Ok(file)
}

fn transcript_error(path: Option<&Path>, e: &std::io::Error) -> CommandError {
    let shown = path.map_or_else(String::new, |p| p.display().to_string());
    CommandError::operational(format!(
        "cannot write the transcript {shown}: {e}; check the directory exists and is writable"
    ))
}
