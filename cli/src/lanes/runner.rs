//! A streaming runner for a vendor CLI, with the coordinator runner's guarantees (explicit
//! argv, cwd and environment — the environment is cleared and only the given variables set —
//! its own process group, a timeout that kills the whole group, bounded stderr), but handing
//! each stdout line to the caller as it arrives instead of keeping the output.

use std::io::BufRead;
use std::io::BufReader;
use std::io::Read;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::Command;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;
use std::time::Instant;

use nix::sys::signal::killpg;
use nix::sys::signal::Signal;
use nix::unistd::Pid;

/// How long to wait for a killed group to be reaped and its pipes to close.
const GRACE: Duration = Duration::from_secs(2);
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
    let pgid = Pid::from_raw(i32::try_from(child.id()).expect("a pid always fits in pid_t"));
    if let Some(mut pipe) = child.stdin.take() {
        let data = spec.stdin.clone();
        // A child that never reads stdin must not block us; EPIPE ends the thread.
        std::thread::spawn(move || {
            let _ = pipe.write_all(&data);
        });
    }
    let stderr = child.stderr.take().map(|p| capture(p, spec.max_stderr));
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
    let exit_code = if timed_out {
        kill_group(pgid);
        let _ = child.wait();
        None
    } else {
        wait_until(&mut child, deadline, pgid, &mut timed_out)
    };
    let elapsed = start.elapsed();
    // Whatever is left of the group dies now.
    kill_group(pgid);
    let stderr = stderr
        .and_then(|rx| rx.recv_timeout(GRACE).ok())
        .unwrap_or_default();
    Ok(Ended {
        exit_code,
        timed_out,
        stderr,
        elapsed,
    })
}

/// Waits for the child after its stdout closed, killing the group at the deadline. The rest
/// of the group is killed while the exited leader is still a zombie (`WNOWAIT`), so the group
/// id cannot have been reused.
fn wait_until(
    child: &mut std::process::Child,
    deadline: Instant,
    pgid: Pid,
    timed_out: &mut bool,
) -> Option<i32> {
    use nix::sys::wait::waitid;
    use nix::sys::wait::Id;
    use nix::sys::wait::WaitPidFlag;
    use nix::sys::wait::WaitStatus;
    let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOWAIT | WaitPidFlag::WNOHANG;
    loop {
        match waitid(Id::Pid(pgid), flags) {
            Ok(WaitStatus::StillAlive) if Instant::now() >= deadline => {
                *timed_out = true;
                kill_group(pgid);
                let _ = child.wait();
                return None;
            }
            Ok(WaitStatus::StillAlive) | Err(nix::errno::Errno::EINTR) => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Ok(_) | Err(_) => {
                kill_group(pgid);
                let status = child.wait().ok()?;
                return status.code().filter(|_| status.signal().is_none());
            }
        }
    }
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

/// Reads a stream on its own thread, keeping the first `max` bytes and draining the rest.
fn capture(mut pipe: impl Read + Send + 'static, max: usize) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buf = [0u8; 16 * 1024];
        loop {
            match pipe.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    let room = max.saturating_sub(kept.len()).min(n);
                    kept.extend_from_slice(&buf[..room]);
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            }
        }
        let _ = tx.send(String::from_utf8_lossy(&kept).into_owned());
    });
    rx
}

/// Sends SIGKILL to the process group; a group that is already gone is fine.
fn kill_group(pgid: Pid) {
    let _ = killpg(pgid, Signal::SIGKILL);
}
