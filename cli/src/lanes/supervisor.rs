//! Lanes that outlive the coordinator that started them (issue 20, "restart without loss").
//!
//! The coordinator writes a lane's [`LaunchSpec`] to `<stem>.launch.json` in the task's
//! control directory and runs `agent-coord lane-supervisor --detach SPEC`, which starts the
//! supervisor proper (`agent-coord lane-supervisor SPEC`) in a process group of its own,
//! writes its pid and start time to `<stem>.pid.json` and exits: the supervisor is nobody's
//! child, so neither a coordinator's death nor a Ctrl-C on its terminal reaches it. The
//! supervisor runs the lane through the one bounded runner (its own process group, the
//! timeout and stall limits, tokens removed) and writes how it ended and what it printed to
//! `<stem>.result.json` (written whole, then renamed). Any later tick on the same machine
//! finds the lane by those files: ended (collect the result), running (a live process with
//! that pid, that start time and the launch's nonce in its environment), or unknown.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;

use serde::Deserialize;
use serde::Serialize;

use crate::process;

/// The variable that carries a launch's nonce into the supervisor and the lane.
pub(crate) const NONCE_ENV: &str = "AGENT_COORD_LANE_NONCE";

/// Everything the supervisor needs to run one lane.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct LaunchSpec {
    pub(crate) argv: Vec<String>,
    pub(crate) cwd: PathBuf,
    /// Variables set for the lane (the transcript's path, the nonce).
    pub(crate) env: Vec<(String, String)>,
    /// Ambient variables removed from the lane (the configured token variables).
    pub(crate) remove_env: Vec<String>,
    /// The file whose bytes are the lane's stdin.
    pub(crate) prompt: PathBuf,
    pub(crate) timeout_ms: u64,
    pub(crate) stall_ms: Option<u64>,
    /// A file whose growth counts as output for the stall limit (the transcript).
    pub(crate) watch: Option<PathBuf>,
    pub(crate) max_output: usize,
    /// Where the supervisor writes its pid ([`PidFile`]); written by `--detach`.
    pub(crate) pid: PathBuf,
    /// Where the supervisor writes the [`LaneResult`].
    pub(crate) result: PathBuf,
}

/// How a lane ended and what it printed on stdout (bounded).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct LaneResult {
    pub(crate) exit_code: Option<i32>,
    pub(crate) timed_out: bool,
    pub(crate) stalled: bool,
    pub(crate) stdout: String,
    pub(crate) elapsed_ms: u64,
}

/// The supervisor's process: its pid and its start time (clock ticks after boot, as
/// `/proc/<pid>/stat` gives it), so a reused pid is never taken for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct PidFile {
    pid: u32,
    start: u64,
}

/// What a later look at a launched lane finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LaneState {
    /// It ended: its result.
    Ended(LaneResult),
    /// Its supervisor still runs.
    Running,
    /// Neither a result nor a live supervisor: its outcome cannot be known.
    Unknown,
}

/// Why a lane could not be launched.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LaunchError {
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot start the lane supervisor: {0}")]
    Spawn(#[source] std::io::Error),
    #[error("the lane supervisor did not start: {0}")]
    Refused(String),
}

/// Writes `spec` beside its result and starts its supervisor, detached; returns once the
/// supervisor's pid file exists. `remove_env` (tokens) never reaches the supervisor.
pub(crate) fn launch(
    spec_path: &Path,
    spec: &LaunchSpec,
    nonce: &str,
    remove_env: &[String],
) -> Result<(), LaunchError> {
    let text = serde_json::to_vec(spec).unwrap_or_default();
    write_whole(spec_path, &text).map_err(|source| LaunchError::Write {
        path: spec_path.to_path_buf(),
        source,
    })?;
    let exe = std::env::current_exe().map_err(LaunchError::Spawn)?;
    let mut command = Command::new(exe);
    command
        .arg("lane-supervisor")
        .arg("--detach")
        .arg(spec_path)
        .env(NONCE_ENV, nonce)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    for name in process::runner::AMBIENT_TOKENS
        .iter()
        .map(|s| (*s).to_owned())
        .chain(remove_env.iter().cloned())
    {
        command.env_remove(name);
    }
    let out = command.output().map_err(LaunchError::Spawn)?;
    if !out.status.success() {
        return Err(LaunchError::Refused(
            String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        ));
    }
    Ok(())
}

/// `lane-supervisor --detach`: starts the supervisor in its own process group with no
/// terminal and no pipes, records its pid, and returns.
pub(crate) fn detach(spec_path: &Path) -> Result<(), String> {
    let spec = read_spec(spec_path)?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find agent-coord: {e}"))?;
    let child = Command::new(exe)
        .arg("lane-supervisor")
        .arg(spec_path)
        .current_dir("/")
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the supervisor: {e}"))?;
    let pid = child.id();
    let start = start_time(pid).ok_or("the supervisor ended before it could be recorded")?;
    let text = serde_json::to_vec(&PidFile { pid, start }).unwrap_or_default();
    write_whole(&spec.pid, &text)
        .map_err(|e| format!("cannot write {}: {e}", spec.pid.display()))?;
    // The supervisor is left to run; its parent (this process) ends now, so init reaps it.
    drop(child);
    Ok(())
}

/// `lane-supervisor SPEC`: runs the lane and writes its result.
pub(crate) fn supervise(spec_path: &Path) -> Result<(), String> {
    let spec = read_spec(spec_path)?;
    let result = run(&spec);
    let text = serde_json::to_vec(&result).unwrap_or_default();
    write_whole(&spec.result, &text)
        .map_err(|e| format!("cannot write {}: {e}", spec.result.display()))
}

/// Runs the lane as the coordinator used to inline: a failure to start is a non-zero end
/// with the reason as output (never approval).
fn run(spec: &LaunchSpec) -> LaneResult {
    let prompt = match std::fs::read(&spec.prompt) {
        Ok(bytes) => bytes,
        Err(e) => return not_started(format!("cannot read the prompt: {e}")),
    };
    let run = process::run(&process::Spec {
        argv: &spec.argv,
        cwd: &spec.cwd,
        env: spec.env.clone(),
        remove_env: spec.remove_env.clone(),
        stdin: Some(prompt),
        timeout: Duration::from_millis(spec.timeout_ms),
        stall: spec.stall_ms.map(Duration::from_millis),
        watch: spec.watch.clone(),
        max_output: spec.max_output,
        gh_config_dir: None,
    });
    match run {
        Ok(done) => LaneResult {
            exit_code: done.exit_code(),
            timed_out: done.timed_out() || done.stalled(),
            stalled: done.stalled(),
            stdout: done.stdout,
            elapsed_ms: u64::try_from(done.elapsed.as_millis()).unwrap_or(u64::MAX),
        },
        Err(e) => not_started(format!("cannot start the lane: {e}")),
    }
}

/// The result of a lane that never ran.
pub(crate) fn not_started(why: String) -> LaneResult {
    LaneResult {
        exit_code: None,
        timed_out: false,
        stalled: false,
        stdout: why,
        elapsed_ms: 0,
    }
}

/// Writes a result for a lane whose launch failed, so it is collected as a failed lane.
pub(crate) fn record_not_started(spec: &LaunchSpec, why: String) -> std::io::Result<()> {
    let text = serde_json::to_vec(&not_started(why)).unwrap_or_default();
    write_whole(&spec.result, &text)
}

/// What a lane launched with `spec` (files as written by [`launch`]) is now.
pub(crate) fn state(result: &Path, pid: &Path, nonce: &str) -> LaneState {
    if let Some(r) = read_result(result) {
        return LaneState::Ended(r);
    }
    let recorded: Option<PidFile> = std::fs::read(pid)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok());
    if recorded.is_some_and(|p| alive(p, nonce)) {
        return LaneState::Running;
    }
    // It may have ended between the two looks.
    match read_result(result) {
        Some(r) => LaneState::Ended(r),
        None => LaneState::Unknown,
    }
}

/// Stops every process of a launch, found by the nonce in its environment (the supervisor
/// and the lane, whose process groups are signalled whole, so what the lane started goes
/// too): SIGTERM, then SIGKILL for what is left after a short grace. Returns how many
/// processes carried the nonce.
pub(crate) fn stop(nonce: &str) -> usize {
    use nix::sys::signal::killpg;
    use nix::sys::signal::Signal;
    use nix::unistd::getpgid;
    use nix::unistd::Pid;
    let found = with_nonce(nonce);
    let groups: std::collections::BTreeSet<i32> = found
        .iter()
        .filter_map(|pid| getpgid(Some(Pid::from_raw(*pid))).ok())
        .map(Pid::as_raw)
        // Never our own group (a test or a coordinator that carries the nonce).
        .filter(|g| Ok(Pid::from_raw(*g)) != getpgid(None))
        .collect();
    for signal in [Signal::SIGTERM, Signal::SIGKILL] {
        for g in &groups {
            let _ = killpg(Pid::from_raw(*g), signal);
        }
        let until = std::time::Instant::now() + Duration::from_secs(2);
        while std::time::Instant::now() < until && !with_nonce(nonce).is_empty() {
            std::thread::sleep(Duration::from_millis(20));
        }
        if with_nonce(nonce).is_empty() {
            break;
        }
    }
    found.len()
}

/// The live processes (not zombies) whose environment carries `nonce`.
fn with_nonce(nonce: &str) -> Vec<i32> {
    let wanted = format!("{NONCE_ENV}={nonce}");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != std::process::id())
        .filter(|pid| stat(*pid).is_some_and(|(state, _)| !matches!(state, 'Z' | 'X')))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .map(|env| env.split(|b| *b == 0).any(|v| v == wanted.as_bytes()))
                .unwrap_or(false)
        })
        .filter_map(|pid| i32::try_from(pid).ok())
        .collect()
}

fn read_result(path: &Path) -> Option<LaneResult> {
    serde_json::from_slice(&std::fs::read(path).ok()?).ok()
}

fn read_spec(path: &Path) -> Result<LaunchSpec, String> {
    let mut text = Vec::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_end(&mut text))
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_slice(&text).map_err(|e| format!("{} is not a launch: {e}", path.display()))
}

/// Whether the recorded process still runs: same pid, same start time, not a zombie, and
/// the launch's nonce in its environment.
fn alive(p: PidFile, nonce: &str) -> bool {
    let Some((state, start)) = stat(p.pid) else {
        return false;
    };
    if start != p.start || matches!(state, 'Z' | 'X') {
        return false;
    }
    let wanted = format!("{NONCE_ENV}={nonce}");
    std::fs::read(format!("/proc/{}/environ", p.pid))
        .map(|env| env.split(|b| *b == 0).any(|v| v == wanted.as_bytes()))
        .unwrap_or(false)
}

/// A process's start time, as `/proc/<pid>/stat` gives it.
fn start_time(pid: u32) -> Option<u64> {
    stat(pid).map(|(_, start)| start)
}

/// A process's state letter and start time from `/proc/<pid>/stat` (fields 3 and 22; the
/// command name before them is in parentheses and may hold spaces).
fn stat(pid: u32) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((state, start))
}

/// Writes `bytes` to a temporary file beside `path` and renames it there.
fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_ends_every_process_carrying_the_nonce_and_its_group() {
        use std::os::unix::process::CommandExt;
        let nonce = format!("stop-test-{}", std::process::id());
        // A lane-like child in a group of its own that starts a grandchild without the nonce.
        let mut child = Command::new("sh")
            .args(["-c", "env -u AGENT_COORD_LANE_NONCE sleep 30 & sleep 30"])
            .env(NONCE_ENV, &nonce)
            .process_group(0)
            .spawn()
            .expect("spawn");
        let group = child.id();
        let until = std::time::Instant::now() + Duration::from_secs(5);
        while with_nonce(&nonce).is_empty() && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        // The shell, and its background child until it drops the nonce: one or two.
        assert!((1..=2).contains(&stop(&nonce)));
        let status = child.wait().expect("wait");
        assert!(!status.success(), "it was killed");
        assert!(with_nonce(&nonce).is_empty());
        // The grandchild (without the nonce) shared the group and is gone too.
        let live_in_group = || {
            std::fs::read_dir("/proc")
                .expect("proc")
                .filter_map(Result::ok)
                .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
                .filter_map(|pid| std::fs::read_to_string(format!("/proc/{pid}/stat")).ok())
                .filter(|text| {
                    let after = &text[text.rfind(')').map_or(0, |i| i + 1)..];
                    let fields: Vec<&str> = after.split_whitespace().collect();
                    fields.first().is_some_and(|s| *s != "Z" && *s != "X")
                        && fields.get(2) == Some(&group.to_string().as_str())
                })
                .count()
        };
        let until = std::time::Instant::now() + Duration::from_secs(2);
        while live_in_group() > 0 && std::time::Instant::now() < until {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(live_in_group(), 0, "nothing is left in the lane's group");
        assert_eq!(stop("no-such-nonce"), 0);
    }

    #[test]
    fn this_process_is_alive_only_with_its_own_start_time_and_nonce() {
        let pid = std::process::id();
        let start = start_time(pid).expect("own stat");
        // This test process has no nonce in its environment.
        assert!(!alive(PidFile { pid, start }, "n1"));
        assert!(stat(pid).is_some_and(|(s, _)| s != 'Z'));
        assert_eq!(start_time(u32::MAX), None);
    }

    #[test]
    fn a_result_is_read_whole_and_wins_over_a_dead_process() {
        let dir = tempfile::tempdir().unwrap();
        let result = dir.path().join("x.result.json");
        let pid = dir.path().join("x.pid.json");
        assert_eq!(state(&result, &pid, "n"), LaneState::Unknown);
        std::fs::write(&pid, br#"{"pid": 4294967295, "start": 1}"#).unwrap();
        assert_eq!(state(&result, &pid, "n"), LaneState::Unknown);
        let ended = not_started("boom".into());
        write_whole(&result, &serde_json::to_vec(&ended).unwrap()).unwrap();
        assert_eq!(state(&result, &pid, "n"), LaneState::Ended(ended));
    }
}
