//! A streaming runner for a vendor CLI, with the bounded runner's guarantees (explicit argv,
//! cwd and environment — the environment is cleared and only the given variables set — its
//! own process group, a timeout that kills the whole group, bounded stderr), built on the same
//! `crate::process` group and capture, but handing each stdout line to the caller as it
//! arrives instead of keeping the output.

use std::io::BufRead;
use std::io::BufReader;
use std::io::Read;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;
use std::time::Instant;

use crate::process::capture::Activity;
use crate::process::capture::Capture;
use crate::process::group::Group;
use crate::process::group::GRACE;

/// The longest stdout line kept whole; longer lines are cut (the rest is read and dropped).
pub(crate) const MAX_LINE: usize = 4 * 1024 * 1024;

/// What to run. No `Debug`: `env` carries the vendor's API key.
pub(crate) struct Spec<'a> {
    /// The program and its arguments.
    pub argv: &'a [String],
    /// The working directory.
    pub cwd: &'a Path,
    /// The child's whole environment.
    pub env: &'a [(String, String)],
    /// Bytes written to the child's stdin, which is then closed.
    pub stdin: Vec<u8>,
    /// How long the child may run before its process group is killed.
    pub timeout: Duration,
    /// How many bytes of stderr are kept.
    pub max_stderr: usize,
}

/// How the child ended.
#[derive(Debug, Clone)]
pub(crate) struct Ended {
    /// Its exit code; `None` for a signal or a kill at the timeout.
    pub exit_code: Option<i32>,
    /// Whether it ran past the timeout and its group was killed.
    pub timed_out: bool,
    /// The first `max_stderr` bytes of its stderr (lossy UTF-8).
    pub stderr: String,
    /// Time from spawn to its end.
    pub elapsed: Duration,
}

/// Why the vendor could not be run.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RunError {
    /// The argv was empty.
    #[error("nothing to run: the argv is empty")]
    EmptyArgv,
    /// The program could not be started.
    #[error("cannot start {program}: {source}; check that it is installed and executable")]
    Spawn {
        /// `argv[0]`.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// Runs `spec`, calling `on_line` with each stdout line (without its newline) as it arrives.
pub(crate) fn run(spec: &Spec, on_line: &mut dyn FnMut(&str)) -> Result<Ended, RunError> {
    let (program, args) = spec.argv.split_first().ok_or(RunError::EmptyArgv)?;
    let start = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .current_dir(spec.cwd)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .process_group(0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| RunError::Spawn {
            program: program.clone(),
            source,
        })?;
    if let Some(mut pipe) = child.stdin.take() {
        let data = spec.stdin.clone();
        // A child that never reads stdin must not block us; EPIPE ends the thread.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&data);
        });
    }
    let stderr = child
        .stderr
        .take()
        .map(|p| Capture::start(p, spec.max_stderr, Activity::start()));
    let (tx, rx) = mpsc::sync_channel::<String>(256);
    if let Some(pipe) = child.stdout.take() {
        std::thread::spawn(move || read_lines(pipe, &tx));
    }
    let deadline = start + spec.timeout;
    let mut timed_out = false;
    loop {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) => on_line(&line),
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                timed_out = true;
                break;
            }
        }
    }
    // Watched only now: the group lives as long as anything in it holds stdout open.
    let group = Group::watch(child);
    let exit_code = if timed_out {
        group.kill_and_reap();
        None
    } else {
        // Its stdout closed: wait for the leader itself, still within the deadline.
        match group.wait_until(deadline) {
            Ok(Some(status)) => status.code(),
            Ok(None) => {
                timed_out = true;
                None
            }
            Err(_) => None,
        }
    };
    let elapsed = start.elapsed();
    // Whatever is left of the group dies now.
    group.kill();
    let stderr = stderr.map_or_else(String::new, |c| c.finish(Instant::now() + GRACE).0);
    Ok(Ended {
        exit_code,
        timed_out,
        stderr,
        elapsed,
    })
}

fn read_lines(pipe: impl Read, tx: &mpsc::SyncSender<String>) {
    let mut reader = BufReader::with_capacity(64 * 1024, pipe);
    let mut buf = Vec::new();
    loop {
        buf.clear();
        match (&mut reader)
            .take(MAX_LINE as u64)
            .read_until(b'\n', &mut buf)
        {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if buf.last() != Some(&b'\n') && buf.len() >= MAX_LINE {
            // Drop the rest of an over-long line.
            let mut rest = Vec::new();
            let _ = reader.read_until(b'\n', &mut rest);
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim_end_matches(['\n', '\r']);
        if tx.send(line.to_owned()).is_err() {
            return;
        }
    }
}
