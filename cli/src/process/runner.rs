//! The one bounded process runner (DESIGN §6 "Processes"): everything the coordinator starts —
//! git on worktrees, lanes, check and readiness argv, token commands — and the dashboard's
//! `gh auth token` run through [`run`] with an explicit argv, cwd and environment (ambient
//! GitHub tokens removed, an empty temporary `GH_CONFIG_DIR`), optional stdin, a timeout that
//! kills the whole process group, and captured output bounded per stream. Nothing the child
//! leaves behind in its group survives the call.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::ExitStatus;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

use super::capture::Activity;
use super::capture::Capture;
use super::group::Group;
use super::group::GRACE;

/// Ambient GitHub credentials that no child ever inherits.
pub(crate) const AMBIENT_TOKENS: [&str; 4] = [
    "GH_TOKEN",
    "GITHUB_TOKEN",
    "GH_ENTERPRISE_TOKEN",
    "GITHUB_ENTERPRISE_TOKEN",
];

/// What to run, where, with which environment and within which bounds. No `Debug`: `env` can
/// carry a credential (git's `http.extraHeader`).
pub(crate) struct Spec<'a> {
    /// The program and its arguments; `argv[0]` is absolute or a program name found on `PATH`.
    pub argv: &'a [String],
    /// The working directory, which must exist.
    pub cwd: &'a Path,
    /// Variables set after the ambient environment has been cleaned; they win over it.
    pub env: Vec<(String, String)>,
    /// Further ambient variable names to remove (for example configured token variables).
    pub remove_env: Vec<String>,
    /// Bytes written to the child's stdin (`None`: stdin is `/dev/null`).
    pub stdin: Option<Vec<u8>>,
    /// How long the child may run before its process group is killed.
    pub timeout: Duration,
    /// How long the child may stay silent (nothing on stdout or stderr) before its process
    /// group is killed (`None`: no limit but `timeout`).
    pub stall: Option<Duration>,
    /// A file whose growth counts as output for `stall` (a lane's transcript).
    pub watch: Option<PathBuf>,
    /// How many bytes of each of stdout and stderr are kept.
    pub max_output: usize,
    /// `GH_CONFIG_DIR` for the child; `None` gives it a fresh empty directory, removed afterwards.
    pub gh_config_dir: Option<PathBuf>,
}

/// How the child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
    /// It ran past the timeout and its process group was killed.
    TimedOut,
    /// It printed nothing for longer than its stall limit and its process group was killed.
    Stalled,
}

/// A finished child: how it ended and what it printed (bounded, lossy UTF-8).
#[derive(Debug, Clone)]
pub(crate) struct Finished {
    /// How the child ended.
    pub exit: Exit,
    /// The first `max_output` bytes of stdout.
    pub stdout: String,
    /// The first `max_output` bytes of stderr.
    pub stderr: String,
    /// Whether stdout had more than `max_output` bytes.
    pub stdout_truncated: bool,
    /// Whether stderr had more than `max_output` bytes.
    pub stderr_truncated: bool,
    /// Time from spawn until the child ended (or was killed).
    pub elapsed: Duration,
}

impl Finished {
    /// Reports whether the child exited with code 0.
    pub fn success(&self) -> bool {
        self.exit == Exit::Code(0)
    }

    /// Returns the exit code, if the child exited by itself.
    pub fn exit_code(&self) -> Option<i32> {
        match self.exit {
            Exit::Code(code) => Some(code),
            Exit::Signal(_) | Exit::TimedOut | Exit::Stalled => None,
        }
    }

    /// Reports whether the child was killed for running past its timeout.
    pub fn timed_out(&self) -> bool {
        self.exit == Exit::TimedOut
    }

    /// Reports whether the child was killed for staying silent past its stall limit.
    pub fn stalled(&self) -> bool {
        self.exit == Exit::Stalled
    }
}

/// Why a process could not be run (its own failure is a [`Finished`], not an error).
#[derive(Debug, thiserror::Error)]
pub(crate) enum RunError {
    /// The argv was empty.
    #[error("nothing to run: the argv is empty; configure a program to run")]
    EmptyArgv,
    /// The working directory does not exist.
    #[error("working directory {} does not exist; create it or fix the configured path", dir.display())]
    Cwd {
        /// The missing directory.
        dir: PathBuf,
    },
    /// The temporary `GH_CONFIG_DIR` could not be created.
    #[error("cannot create a temporary GH_CONFIG_DIR: {0}; check that TMPDIR is writable")]
    TempDir(#[source] std::io::Error),
    /// The program could not be started.
    #[error("cannot start {program}: {source}; check that it is installed and executable")]
    Spawn {
        /// `argv[0]`.
        program: String,
        /// Why the spawn failed.
        #[source]
        source: std::io::Error,
    },
    /// The started program could not be waited for.
    #[error("lost track of {program} while waiting for it: {source}")]
    Wait {
        /// `argv[0]`.
        program: String,
        /// Why waiting failed.
        #[source]
        source: std::io::Error,
    },
}

/// Runs `spec` to completion or timeout and returns how it ended with its bounded output.
pub(crate) fn run(spec: &Spec) -> Result<Finished, RunError> {
    let (program, args) = spec.argv.split_first().ok_or(RunError::EmptyArgv)?;
    if !spec.cwd.is_dir() {
        return Err(RunError::Cwd {
            dir: spec.cwd.to_path_buf(),
        });
    }
    // Dropped (and removed) when `run` returns, after the child and its group are gone.
    let temp_gh;
    let gh_config_dir = match &spec.gh_config_dir {
        Some(dir) => dir.as_path(),
        None => {
            temp_gh = tempfile::Builder::new()
                .prefix("agent-coord-gh-")
                .tempdir()
                .map_err(RunError::TempDir)?;
            temp_gh.path()
        }
    };
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(spec.cwd)
        .env_clear()
        .envs(child_env(std::env::vars_os(), spec, gh_config_dir))
        .process_group(0)
        .stdin(if spec.stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = command.spawn().map_err(|source| RunError::Spawn {
        program: program.clone(),
        source,
    })?;
    // A child that never reads its stdin must not block us: write from a thread that ends
    // with EPIPE once the group is killed.
    if let (Some(data), Some(mut pipe)) = (spec.stdin.clone(), child.stdin.take()) {
        std::thread::spawn(move || {
            let _ = pipe.write_all(&data);
        });
    }
    let activity = Activity::start();
    let stdout = child
        .stdout
        .take()
        .map(|p| Capture::start(p, spec.max_output, activity.clone()));
    let stderr = child
        .stderr
        .take()
        .map(|p| Capture::start(p, spec.max_output, activity.clone()));

    let group = Group::watch(child);
    let silence = Silence {
        stall: spec.stall,
        activity: &activity,
        watch: spec.watch.as_deref(),
    };
    let exit =
        supervise(&group, start + spec.timeout, &silence).map_err(|source| RunError::Wait {
            program: program.clone(),
            source,
        })?;
    let elapsed = start.elapsed();
    // Whatever is left of the group dies now, so no orphan keeps running or holds the pipes.
    group.kill();

    let deadline = Instant::now() + GRACE;
    let (stdout, stdout_truncated) = stdout.map_or((String::new(), false), |c| c.finish(deadline));
    let (stderr, stderr_truncated) = stderr.map_or((String::new(), false), |c| c.finish(deadline));
    Ok(Finished {
        exit,
        stdout,
        stderr,
        stdout_truncated,
        stderr_truncated,
        elapsed,
    })
}

/// What counts as the child being silent: nothing on its streams and no growth of the
/// watched file for `stall`.
struct Silence<'a> {
    stall: Option<Duration>,
    activity: &'a Activity,
    watch: Option<&'a Path>,
}

/// Waits for the group's leader until `deadline`, or until it has been silent for `stall`,
/// killing the group at whichever comes first.
fn supervise(group: &Group, deadline: Instant, silence: &Silence) -> std::io::Result<Exit> {
    let Some(stall) = silence.stall else {
        return Ok(group.wait_until(deadline)?.map_or(Exit::TimedOut, exit_of));
    };
    let watched_len = || {
        silence
            .watch
            .and_then(|p| std::fs::metadata(p).ok())
            .map_or(0, |m| m.len())
    };
    let mut seen = watched_len();
    loop {
        let silent_until = silence.activity.last() + stall;
        if let Some(status) = group.wait_for(deadline.min(silent_until))? {
            return Ok(exit_of(status));
        }
        let now = Instant::now();
        if now >= deadline {
            group.kill_and_reap();
            return Ok(Exit::TimedOut);
        }
        let len = watched_len();
        if len != seen {
            seen = len;
            silence.activity.touch();
        }
        // Output may have arrived while we waited: only a silence that is still whole counts.
        if now >= silence.activity.last() + stall {
            group.kill_and_reap();
            return Ok(Exit::Stalled);
        }
    }
}

/// Returns the child's environment: `base` without ambient GitHub tokens, `remove_env` and the
/// variables the runner sets itself, plus `GIT_TERMINAL_PROMPT=0`, `GH_CONFIG_DIR` and then
/// `spec.env` (explicit entries win: a caller that names a variable means it).
pub(crate) fn child_env(
    base: impl IntoIterator<Item = (OsString, OsString)>,
    spec: &Spec,
    gh_config_dir: &Path,
) -> Vec<(OsString, OsString)> {
    let removed = |name: &OsString| {
        AMBIENT_TOKENS.iter().any(|t| name == t)
            || spec.remove_env.iter().any(|r| name == r.as_str())
            || name == "GH_CONFIG_DIR"
            || name == "GIT_TERMINAL_PROMPT"
    };
    let mut env: Vec<(OsString, OsString)> =
        base.into_iter().filter(|(k, _)| !removed(k)).collect();
    env.push(("GIT_TERMINAL_PROMPT".into(), "0".into()));
    env.push(("GH_CONFIG_DIR".into(), gh_config_dir.as_os_str().to_owned()));
    for (key, value) in &spec.env {
        env.retain(|(k, _)| k != key.as_str());
        env.push((key.into(), value.into()));
    }
    env
}

fn exit_of(status: ExitStatus) -> Exit {
    match (status.code(), status.signal()) {
        (Some(code), _) => Exit::Code(code),
        (None, Some(signal)) => Exit::Signal(signal),
        // `wait` only reports terminated children, which have one or the other.
        (None, None) => Exit::Code(-1),
    }
}

#[cfg(test)]
mod tests {
    use nix::unistd::Pid;

    use super::*;

    fn sh(script: &str) -> Vec<String> {
        vec!["/bin/sh".into(), "-c".into(), script.into()]
    }

    fn spec<'a>(argv: &'a [String], cwd: &'a Path) -> Spec<'a> {
        Spec {
            argv,
            cwd,
            env: Vec::new(),
            remove_env: Vec::new(),
            stdin: None,
            timeout: Duration::from_secs(30),
            stall: None,
            watch: None,
            max_output: 1 << 20,
            gh_config_dir: None,
        }
    }

    /// Reports whether `pid` is a running process (a zombie waiting for init counts as dead).
    fn alive(pid: i32) -> bool {
        if nix::sys::signal::kill(Pid::from_raw(pid), None).is_err() {
            return false;
        }
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Ok(stat) => !stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with(['Z', 'X'])),
            Err(_) => !Path::new("/proc/self").exists(),
        }
    }

    fn dies_soon(pid: i32) -> bool {
        let until = Instant::now() + Duration::from_secs(5);
        while Instant::now() < until {
            if !alive(pid) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }

    fn read_pid(path: &Path) -> i32 {
        std::fs::read_to_string(path)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    #[test]
    fn a_silent_child_is_killed_at_its_stall_limit_with_its_group() {
        let tmp = tempfile::tempdir().unwrap();
        let pid_file = tmp.path().join("grandchild.pid");
        let argv = sh(&format!(
            "echo started; sleep 300 & echo $! > '{}'; sleep 300",
            pid_file.display()
        ));
        let mut s = spec(&argv, tmp.path());
        s.stall = Some(Duration::from_millis(400));
        let done = run(&s).unwrap();
        assert_eq!(done.exit, Exit::Stalled);
        assert!(done.stalled() && !done.timed_out());
        assert_eq!(done.stdout, "started\n", "what it printed before is kept");
        assert!(
            dies_soon(read_pid(&pid_file)),
            "the group survived the stall"
        );
    }

    #[test]
    fn a_child_that_keeps_printing_outlives_its_stall_limit() {
        let tmp = tempfile::tempdir().unwrap();
        // 2 s of work, never silent for more than 0.1 s, against a 1.5 s stall limit.
        let argv = sh("for i in $(seq 20); do echo tick >&2; sleep 0.1; done; echo done");
        let mut s = spec(&argv, tmp.path());
        s.stall = Some(Duration::from_millis(1500));
        let done = run(&s).unwrap();
        assert_eq!(done.exit, Exit::Code(0), "{}", done.stderr);
        assert_eq!(done.stdout, "done\n");
    }

    #[test]
    fn a_growing_watched_file_counts_as_output() {
        let tmp = tempfile::tempdir().unwrap();
        let transcript = tmp.path().join("t.jsonl");
        // Silent on its streams for 2 s, but its transcript grows every 0.1 s.
        let argv = sh(&format!(
            "for i in $(seq 20); do echo '{{}}' >> '{}'; sleep 0.1; done; echo done",
            transcript.display()
        ));
        let mut s = spec(&argv, tmp.path());
        s.stall = Some(Duration::from_millis(1500));
        s.watch = Some(transcript.clone());
        let done = run(&s).unwrap();
        assert_eq!(done.exit, Exit::Code(0), "{}", done.stderr);

        // The same child without the watched file stalls.
        std::fs::remove_file(&transcript).unwrap();
        s.watch = None;
        assert_eq!(run(&s).unwrap().exit, Exit::Stalled);
    }

    #[test]
    fn the_timeout_still_bounds_a_child_with_a_stall_limit() {
        let tmp = tempfile::tempdir().unwrap();
        let argv = sh("while true; do echo tick; sleep 0.1; done");
        let mut s = spec(&argv, tmp.path());
        s.timeout = Duration::from_millis(700);
        s.stall = Some(Duration::from_secs(5));
        let done = run(&s).unwrap();
        assert_eq!(done.exit, Exit::TimedOut);
    }

    #[test]
    fn reports_exit_code_and_signal() {
        let tmp = tempfile::tempdir().unwrap();
        let argv = sh("echo out; echo err >&2; exit 3");
        let done = run(&spec(&argv, tmp.path())).unwrap();
        assert_eq!(done.exit, Exit::Code(3));
        assert_eq!(done.exit_code(), Some(3));
        assert!(!done.success() && !done.timed_out());
        assert_eq!(
            (done.stdout.as_str(), done.stderr.as_str()),
            ("out\n", "err\n")
        );

        let argv = sh("kill -9 $$");
        let done = run(&spec(&argv, tmp.path())).unwrap();
        assert_eq!(done.exit, Exit::Signal(9));
        assert_eq!(done.exit_code(), None);

        let argv = sh("pwd");
        let done = run(&spec(&argv, tmp.path())).unwrap();
        assert!(done.success());
        let pwd = PathBuf::from(done.stdout.trim());
        assert_eq!(
            pwd.canonicalize().unwrap(),
            tmp.path().canonicalize().unwrap()
        );
    }

    #[test]
    fn delivers_stdin() {
        let tmp = tempfile::tempdir().unwrap();
        let argv = vec!["cat".to_owned()];
        let mut s = spec(&argv, tmp.path());
        s.stdin = Some(b"line one\nline two\n".to_vec());
        let done = run(&s).unwrap();
        assert!(done.success());
        assert_eq!(done.stdout, "line one\nline two\n");
    }

    #[test]
    fn child_that_never_reads_stdin_does_not_block() {
        let tmp = tempfile::tempdir().unwrap();
        let argv = sh("sleep 0.2; exit 0");
        let mut s = spec(&argv, tmp.path());
        s.stdin = Some(vec![b'x'; 4 << 20]);
        let done = run(&s).unwrap();
        assert!(done.success());
        assert!(done.elapsed < Duration::from_secs(10));
    }

    #[test]
    fn bounds_output_per_stream() {
        let tmp = tempfile::tempdir().unwrap();
        let argv = sh("head -c 300000 /dev/zero | tr '\\0' a; echo short >&2");
        let mut s = spec(&argv, tmp.path());
        s.max_output = 1000;
        let done = run(&s).unwrap();
        assert!(done.success());
        assert_eq!(done.stdout.len(), 1000);
        assert!(done.stdout.bytes().all(|b| b == b'a'));
        assert!(done.stdout_truncated);
        assert_eq!(done.stderr, "short\n");
        assert!(!done.stderr_truncated);
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        let tmp = tempfile::tempdir().unwrap();
        let pidfile = tmp.path().join("pid");
        // The grandchild ignores SIGTERM; only a group SIGKILL ends it.
        let argv = sh("trap '' TERM; sleep 1000 & echo $! > pid; wait");
        let mut s = spec(&argv, tmp.path());
        s.timeout = Duration::from_millis(500);
        let done = run(&s).unwrap();
        assert!(done.timed_out());
        assert_eq!(done.exit_code(), None);
        assert!(done.elapsed >= Duration::from_millis(500));
        assert!(done.elapsed < Duration::from_secs(10));
        assert!(
            dies_soon(read_pid(&pidfile)),
            "grandchild survived the timeout"
        );
    }

    #[test]
    fn regression_background_process_left_after_exit_is_killed() {
        let tmp = tempfile::tempdir().unwrap();
        // The first holds our stdout pipe; the second has let go of every pipe.
        let argv = sh(
            "sleep 1000 & echo $! > a; sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > b; echo done",
        );
        let done = run(&spec(&argv, tmp.path())).unwrap();
        assert!(done.success());
        assert_eq!(done.stdout, "done\n");
        assert!(done.elapsed < Duration::from_secs(10));
        assert!(dies_soon(read_pid(&tmp.path().join("a"))));
        assert!(dies_soon(read_pid(&tmp.path().join("b"))));
    }

    #[test]
    fn child_env_removes_tokens_and_sets_gh_config_dir() {
        let argv = vec!["env".to_owned()];
        let cwd = Path::new("/");
        let mut s = spec(&argv, cwd);
        s.remove_env = vec!["WORKER_TOKEN".into()];
        s.env = vec![("LC_ALL".into(), "C".into()), ("KEEP".into(), "new".into())];
        let base = [
            ("GH_TOKEN", "a"),
            ("GITHUB_TOKEN", "b"),
            ("GH_ENTERPRISE_TOKEN", "c"),
            ("GITHUB_ENTERPRISE_TOKEN", "d"),
            ("WORKER_TOKEN", "e"),
            ("GH_CONFIG_DIR", "/home/me/.config/gh"),
            ("GIT_TERMINAL_PROMPT", "1"),
            ("PATH", "/usr/bin:/bin"),
            ("KEEP", "old"),
        ]
        .map(|(k, v)| (OsString::from(k), OsString::from(v)));
        let mut env: Vec<(String, String)> = child_env(base, &s, Path::new("/tmp/gh"))
            .into_iter()
            .map(|(k, v)| (k.into_string().unwrap(), v.into_string().unwrap()))
            .collect();
        env.sort();
        let expected = [
            ("GH_CONFIG_DIR", "/tmp/gh"),
            ("GIT_TERMINAL_PROMPT", "0"),
            ("KEEP", "new"),
            ("LC_ALL", "C"),
            ("PATH", "/usr/bin:/bin"),
        ]
        .map(|(k, v)| (k.to_owned(), v.to_owned()));
        assert_eq!(env, expected);
    }

    #[test]
    fn child_gets_an_empty_temporary_gh_config_dir() {
        let tmp = tempfile::tempdir().unwrap();
        let argv = sh(
            "echo \"$GH_CONFIG_DIR\"; test -d \"$GH_CONFIG_DIR\" && ls -A \"$GH_CONFIG_DIR\" | wc -l; \
             echo \"prompt=$GIT_TERMINAL_PROMPT gone=${WORKER_TOKEN-unset} set=$EXTRA\"",
        );
        let mut s = spec(&argv, tmp.path());
        s.remove_env = vec!["WORKER_TOKEN".into()];
        s.env = vec![("EXTRA".into(), "yes".into())];
        let done = run(&s).unwrap();
        assert!(done.success(), "{done:?}");
        let lines: Vec<&str> = done.stdout.lines().collect();
        assert_eq!(lines[1].trim(), "0");
        assert_eq!(lines[2], "prompt=0 gone=unset set=yes");
        assert!(
            !Path::new(lines[0]).exists(),
            "temporary GH_CONFIG_DIR was not removed"
        );

        let given = tmp.path().join("gh");
        std::fs::create_dir(&given).unwrap();
        s.gh_config_dir = Some(given.clone());
        let done = run(&s).unwrap();
        assert_eq!(done.stdout.lines().next(), given.to_str());
        assert!(given.is_dir());
    }

    #[test]
    fn spawn_and_cwd_errors_are_typed() {
        let tmp = tempfile::tempdir().unwrap();
        let argv = vec!["/nonexistent/agent-coord-no-such-program".to_owned()];
        let err = run(&spec(&argv, tmp.path())).unwrap_err();
        assert!(matches!(err, RunError::Spawn { .. }), "{err}");
        let missing = tmp.path().join("missing");
        let argv = sh("true");
        let err = run(&spec(&argv, &missing)).unwrap_err();
        assert!(matches!(err, RunError::Cwd { .. }), "{err}");
        assert!(matches!(
            run(&spec(&[], tmp.path())),
            Err(RunError::EmptyArgv)
        ));
    }
}
