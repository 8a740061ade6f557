//! How the benchmarks run the binary: the fixed clock, a generated and imported fixture,
//! one scrubbed command builder, timing, medians and peak memory.

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

use agent_coord_tests::env::git;
use agent_coord_tests::fleet;

/// A fixed "now" for the generated fleet (2026-06-13T12:00:00Z).
pub const NOW_UNIX: i64 = 1_781_352_000;
/// The same instant as RFC 3339.
pub const NOW: &str = "2026-06-13T12:00:00Z";

/// Returns the binary under test: `AGENT_COORD_BIN`, or `agent-coord` next to the bench.
pub fn binary() -> PathBuf {
    if let Some(p) = std::env::var_os("AGENT_COORD_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("bench path");
    exe.with_file_name("agent-coord")
}

/// A temporary folder with a bare state repository.
pub struct Fixture {
    _root: tempfile::TempDir,
    /// The bare state repository.
    pub repo: PathBuf,
    /// The folder holding it, also the working folder and HOME.
    pub dir: PathBuf,
}

impl Fixture {
    /// Creates a temporary folder with an empty bare `state.git`.
    pub fn empty() -> Fixture {
        let root = tempfile::tempdir().expect("temp dir");
        let fx = Fixture {
            repo: root.path().join("state.git"),
            dir: root.path().to_path_buf(),
            _root: root,
        };
        init_bare(&fx.dir, "state.git");
        fx
    }

    /// An existing state repository (the folder above it is the working folder); it is
    /// left in place.
    pub fn at(repo: &str) -> Fixture {
        let repo = PathBuf::from(repo);
        let dir = repo.parent().map(Path::to_path_buf).unwrap_or_default();
        Fixture {
            _root: tempfile::tempdir().expect("temp dir"),
            repo,
            dir,
        }
    }

    /// Runs `git --git-dir <state.git> ARGS` and returns its trimmed stdout.
    pub fn git(&self, args: &[&str]) -> String {
        let mut full = vec!["--git-dir", self.repo.to_str().expect("utf-8")];
        full.extend_from_slice(args);
        let out = git(&self.dir, &full);
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }
}

/// Creates the bare repository `dir/name` and returns its path.
pub fn init_bare(dir: &Path, name: &str) -> PathBuf {
    assert!(git(dir, &["init", "--quiet", "--bare", name])
        .status
        .success());
    dir.join(name)
}

/// Returns the binary with a scrubbed environment against `repo`, as `machine` at `now`.
fn scrubbed(repo: &Path, machine: &str, now: &str, args: &[&str]) -> Command {
    scrubbed_bin(&binary(), repo, machine, now, args)
}

/// Returns `bin` with a scrubbed environment against `repo`, as `machine` at `now`.
fn scrubbed_bin(bin: &Path, repo: &Path, machine: &str, now: &str, args: &[&str]) -> Command {
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("AGENT_COORD_GIT_DIR", repo)
        .env("AGENT_COORD_MACHINE_ID", machine)
        .env("AGENT_COORD_NOW", now)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

/// Returns the binary against the fixture's repository, as `bench-box` at [`NOW`].
pub fn cli(fx: &Fixture, args: &[&str]) -> Command {
    cli_bin(&binary(), fx, args)
}

/// Returns `bin` (a build of agent-coord) as [`cli`] runs the binary under test.
pub fn cli_bin(bin: &Path, fx: &Fixture, args: &[&str]) -> Command {
    let mut cmd = scrubbed_bin(bin, &fx.repo, "bench-box", NOW, args);
    cmd.current_dir(&fx.dir).env("HOME", &fx.dir);
    cmd
}

/// Gives `cmd` exactly the environment of `cli(fx, …)`, for a program other than the binary.
pub fn with_cli_env(fx: &Fixture, cmd: &mut Command) {
    cmd.env_clear().current_dir(&fx.dir);
    for (k, v) in cli(fx, &[]).get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
}

/// Runs `args` in the fixture, asserts success and returns the wall time.
pub fn run_ok(fx: &Fixture, args: &[&str]) -> Duration {
    let start = Instant::now();
    let out = cli(fx, args).output().expect("agent-coord runs");
    let took = start.elapsed();
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

/// Runs the CLI against `repo` as `machine` at `now`, asserting success.
pub fn at(repo: &Path, machine: &str, now: &str, args: &[&str]) {
    let out = scrubbed(repo, machine, now, args)
        .output()
        .expect("agent-coord runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs [`at`] at [`NOW`] and returns the wall time.
pub fn timed(repo: &Path, machine: &str, args: &[&str]) -> Duration {
    let start = Instant::now();
    at(repo, machine, NOW, args);
    start.elapsed()
}

/// Returns the median of `v`.
pub fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Formats a duration as milliseconds with one decimal.
pub fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// Runs `args` in a child of a fresh `bench rss` process and returns the child's max RSS.
pub fn peak_rss_kib(fx: &Fixture, args: &[&str]) -> u64 {
    let exe = std::env::current_exe().expect("bench path");
    let mut cmd = Command::new(exe);
    with_cli_env(fx, &mut cmd);
    cmd.arg("rss").arg(binary()).args(args);
    let out = cmd.output().expect("bench rss runs");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

/// `bench rss PROGRAM ARGS...`: runs the program, prints its max RSS in KiB.
pub fn rss_child(args: &[String]) -> ! {
    let status = Command::new(&args[0])
        .args(&args[1..])
        .stdout(Stdio::null())
        .status()
        .expect("runs");
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .expect("getrusage");
    println!("{}", usage.max_rss());
    std::process::exit(if status.success() { 0 } else { 1 });
}

/// Generates a fleet of `scale` and imports it (which packs it) into a fresh fixture;
/// returns the fixture, its record count and the import's wall time.
pub fn fixture(scale: usize) -> (Fixture, usize, Duration) {
    let fx = Fixture::empty();
    let src = fx.dir.join("legacy");
    let counts = fleet::generate(&src, scale, NOW_UNIX);
    let took = run_ok(&fx, &["import", "--from", src.to_str().expect("utf-8")]);
    (fx, counts.total(), took)
}
