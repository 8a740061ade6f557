//! `TestEnv`: a temporary root with a bare coordination repository, a scrubbed
//! environment, isolated git config and a pinned clock, so every run is reproducible.

use std::cell::RefCell;
use std::fmt;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Output;
use std::process::Stdio;

use serde_json::Value;

/// The clock every `TestEnv` starts at.
pub const START: &str = "2026-06-13T12:00:00Z";

/// Returns the path of the built `agent-coord` binary.
///
/// `CARGO_BIN_EXE_*` is only set inside the package that owns the binary, so it is found
/// next to the test executable (`target/<profile>/deps/..`).
pub fn binary() -> PathBuf {
    if let Some(p) = std::env::var_os("AGENT_COORD_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("test executable path");
    let mut dir = exe
        .parent()
        .expect("test executable has a folder")
        .to_path_buf();
    if dir.ends_with("deps") {
        dir.pop();
    }
    let bin = dir.join("agent-coord");
    assert!(
        bin.exists(),
        "{} is missing: build it with `cargo build -p agent-coord`",
        bin.display()
    );
    bin
}

/// Returns another binary of this package (`fake-vendor`, …) next to the running executable
/// (a test's `deps/` folder counts as its parent).
pub fn sibling_binary(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("executable path");
    let mut dir = exe.parent().expect("executable has a folder").to_path_buf();
    if dir.ends_with("deps") {
        dir.pop();
    }
    let bin = dir.join(name);
    assert!(
        bin.exists(),
        "{} is missing: build it with `cargo build -p agent-coord-tests --bin {name}`",
        bin.display()
    );
    bin
}

/// Runs `git` with an isolated configuration.
pub fn git(dir: &Path, args: &[&str]) -> Output {
    Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git runs")
}

/// Commits `files` (path, contents) on the state branch of the bare repository `repo`, on
/// top of its tip, with git plumbing — a temporary index read from the tip, the blobs added,
/// a tree, a commit whose parent is the tip, and a ref update that expects that tip — as a
/// writer the CLI does not know (the coordinator's checkpoints) lands; returns the commit.
pub fn commit_state_files(repo: &Path, files: &[(&str, &str)]) -> String {
    let scratch = tempfile::tempdir().expect("temp dir");
    let run = |args: &[&str], input: Option<&str>| -> Output {
        let mut child = Command::new("git")
            .arg("--git-dir")
            .arg(repo)
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("HOME", scratch.path())
            .env("GIT_INDEX_FILE", scratch.path().join("index"))
            .env("GIT_AUTHOR_NAME", "coordinator")
            .env("GIT_AUTHOR_EMAIL", "coordinator@example.invalid")
            .env("GIT_COMMITTER_NAME", "coordinator")
            .env("GIT_COMMITTER_EMAIL", "coordinator@example.invalid")
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("git runs");
        if let Some(input) = input {
            feed(&mut child, input.as_bytes());
        }
        child.wait_with_output().expect("git finishes")
    };
    let ok = |args: &[&str], input: Option<&str>| -> String {
        let out = run(args, input);
        assert!(
            out.status.success(),
            "git {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    let tip = run(&["rev-parse", "--verify", "--quiet", BRANCH], None);
    let tip = String::from_utf8_lossy(&tip.stdout).trim().to_owned();
    if !tip.is_empty() {
        ok(&["read-tree", &tip], None);
    }
    for (path, contents) in files {
        let blob = ok(&["hash-object", "-w", "--stdin"], Some(contents));
        ok(
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("100644,{blob},{path}"),
            ],
            None,
        );
    }
    let tree = ok(&["write-tree"], None);
    let mut commit = vec!["commit-tree", &tree, "-m", "coordinator: checkpoint"];
    if !tip.is_empty() {
        commit.extend(["-p", &tip]);
    }
    let commit = ok(&commit, None);
    // The expected old value: an empty one means "must not exist yet".
    ok(&["update-ref", BRANCH, &commit, &tip], None);
    commit
}

/// The state branch.
const BRANCH: &str = "refs/heads/agent-coord";

/// Writes `input` to a child's piped standard input and closes it.
fn feed(child: &mut std::process::Child, input: &[u8]) {
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input)
        .expect("write stdin");
}

/// A temporary coordination repository and the environment to drive the CLI against it.
pub struct TestEnv {
    root: tempfile::TempDir,
    /// The bare coordination repository.
    pub repo: PathBuf,
    now: RefCell<Option<String>>,
    machine: RefCell<Option<String>>,
    /// Whether the repository must pass `git fsck` when the test ends (a fault test that
    /// damages it on purpose turns this off).
    fsck_at_end: std::cell::Cell<bool>,
}

impl Drop for TestEnv {
    /// Every test that made a repository ends with `git fsck`: whatever the commands did,
    /// they must have left it whole (not checked while a test is already failing).
    fn drop(&mut self) {
        if std::thread::panicking() || !self.fsck_at_end.get() || !self.repo.join("HEAD").exists() {
            return;
        }
        let out = git(
            self.root(),
            &[
                "--git-dir",
                self.repo.to_str().unwrap_or_default(),
                "fsck",
                "--full",
                "--no-dangling",
                "--no-progress",
            ],
        );
        assert!(
            out.status.success(),
            "git fsck failed on the test repository:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

impl Default for TestEnv {
    fn default() -> Self {
        Self::new()
    }
}

impl TestEnv {
    /// Creates a root with a bare repository `repo.git`, clock at [`START`], machine `box-1`.
    pub fn new() -> Self {
        let root = tempfile::tempdir().expect("temp dir");
        let repo = root.path().join("repo.git");
        let out = git(root.path(), &["init", "--quiet", "--bare", "repo.git"]);
        assert!(out.status.success(), "git init failed");
        TestEnv {
            root,
            repo,
            now: RefCell::new(Some(START.to_owned())),
            machine: RefCell::new(Some("box-1".into())),
            fsck_at_end: std::cell::Cell::new(true),
        }
    }

    /// Says the test damages the repository on purpose: no `git fsck` at the end.
    pub fn damaged_on_purpose(&self) {
        self.fsck_at_end.set(false);
    }

    /// Returns the temporary root folder.
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// Pins the clock to `t` (RFC 3339).
    pub fn set_now(&self, t: &str) {
        *self.now.borrow_mut() = Some(t.to_owned());
    }

    /// Lets commands run on the real clock (no `AGENT_COORD_NOW`), as a live demo must: the
    /// dashboard judges liveness by the time it is now.
    pub fn unpin_clock(&self) {
        *self.now.borrow_mut() = None;
    }

    /// Moves the clock `secs` seconds from [`START`].
    pub fn at(&self, secs: i64) {
        let start = chrono::DateTime::parse_from_rfc3339(START).expect("start");
        let t = start + chrono::Duration::seconds(secs);
        self.set_now(
            &t.to_utc()
                .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        );
    }

    /// Sets (or with `None` unsets) `AGENT_COORD_MACHINE_ID`.
    pub fn set_machine(&self, m: Option<&str>) {
        *self.machine.borrow_mut() = m.map(str::to_owned);
    }

    /// Returns a command for the binary with the scrubbed environment.
    pub fn command<I, S>(&self, args: I) -> Command
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let mut cmd = self.scrubbed(binary());
        cmd.args(args);
        cmd
    }

    /// Returns `sh -c script` with the same scrubbed environment (for loops of CLI calls).
    pub fn shell(&self, script: &str) -> Command {
        let mut cmd = self.scrubbed("sh");
        cmd.arg("-c").arg(script);
        cmd
    }

    fn scrubbed(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut cmd = Command::new(program);
        cmd.current_dir(self.root())
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.root().join("home"))
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("AGENT_COORD_GIT_DIR", &self.repo)
            .stdin(Stdio::null());
        if let Some(now) = self.now.borrow().as_deref() {
            cmd.env("AGENT_COORD_NOW", now);
        }
        if let Some(m) = self.machine.borrow().as_deref() {
            cmd.env("AGENT_COORD_MACHINE_ID", m);
        }
        cmd
    }

    /// Runs the binary and captures its output.
    #[must_use]
    pub fn run<I, S>(&self, args: I) -> CommandOutput
    where
        I: IntoIterator<Item = S>,
        S: AsRef<std::ffi::OsStr>,
    {
        let out = self.command(args).output().expect("agent-coord runs");
        CommandOutput::new(out, self.root())
    }

    /// Runs the binary with `stdin` as standard input.
    #[must_use]
    pub fn run_with_stdin(&self, args: &[&str], stdin: &[u8]) -> CommandOutput {
        let mut child = self
            .command(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("agent-coord runs");
        feed(&mut child, stdin);
        CommandOutput::new(child.wait_with_output().expect("wait"), self.root())
    }

    /// Runs `git` against the coordination repository and returns its trimmed stdout.
    pub fn git(&self, args: &[&str]) -> String {
        let out = self.git_output(args);
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Runs `git` against the coordination repository and returns all it did.
    pub fn git_output(&self, args: &[&str]) -> Output {
        let mut full = vec!["--git-dir", self.repo.to_str().expect("utf-8 path")];
        full.extend_from_slice(args);
        git(self.root(), &full)
    }

    /// Runs `git` against the coordination repository with `input` on standard input
    /// (for plumbing such as `mktree` and `hash-object --stdin`).
    pub fn git_stdin(&self, args: &[&str], input: &str) -> String {
        let mut child = Command::new("git")
            .arg("--git-dir")
            .arg(&self.repo)
            .args(args)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("git runs");
        feed(&mut child, input.as_bytes());
        let out = child.wait_with_output().expect("git finishes");
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Returns the id a ref points at, if it exists.
    pub fn tip(&self, name: &str) -> Option<String> {
        let out = self.git(&["rev-parse", "--verify", "--quiet", name]);
        (!out.is_empty()).then_some(out)
    }

    /// Returns the state branch tip.
    pub fn state_tip(&self) -> Option<String> {
        self.tip("refs/heads/agent-coord")
    }

    /// Returns how many commits the state branch has.
    pub fn commit_count(&self) -> usize {
        self.git(&["rev-list", "--count", "refs/heads/agent-coord"])
            .parse()
            .unwrap_or(0)
    }

    /// Reads a record from the state branch tip.
    pub fn record(&self, path: &str) -> Option<Value> {
        let out = self.git(&["show", &format!("refs/heads/agent-coord:{path}")]);
        serde_json::from_str(&out).ok()
    }

    /// Returns who holds `repo#target` according to its claim record on the state branch tip.
    pub fn holder(&self, repo: &str, target: &str) -> Option<String> {
        let claim = self.record(&format!("claims/{repo}/{target}.json"))?;
        claim["agent_id"].as_str().map(str::to_owned)
    }

    /// Lists the paths below `prefix` on the state branch tip.
    pub fn paths(&self, prefix: &str) -> Vec<String> {
        self.git(&[
            "ls-tree",
            "-r",
            "--name-only",
            "refs/heads/agent-coord",
            prefix,
        ])
        .lines()
        .map(str::to_owned)
        .filter(|l| !l.is_empty())
        .collect()
    }

    /// Points the state branch at a new commit (on top of its tip, if any) whose tree holds
    /// only `path` with `contents`, as a bad manual edit with git plumbing would; returns
    /// the commit id.
    pub fn force_state_file(&self, path: &str, contents: &str) -> String {
        let blob = self.git_stdin(&["hash-object", "-w", "--stdin"], contents);
        let (dirs, name) = path.rsplit_once('/').unwrap_or(("", path));
        let mut entry = format!("100644 blob {blob}\t{name}\n");
        for dir in dirs.rsplit('/').filter(|d| !d.is_empty()) {
            let tree = self.git_stdin(&["mktree"], &entry);
            entry = format!("040000 tree {tree}\t{dir}\n");
        }
        let root = self.git_stdin(&["mktree"], &entry);
        let mut args = vec![
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit-tree",
            &root,
            "-m",
            "corrupt",
        ];
        let parent = self.state_tip();
        if let Some(parent) = &parent {
            args.extend(["-p", parent]);
        }
        let commit = self.git(&args);
        self.git(&["update-ref", "refs/heads/agent-coord", &commit]);
        commit
    }

    /// Commits `files` (path, contents) on top of the state branch tip with git plumbing
    /// ([`commit_state_files`]); returns the commit.
    pub fn put_state_files(&self, files: &[(&str, &str)]) -> String {
        commit_state_files(&self.repo, files)
    }

    /// Writes `contents` to a file under the root and returns its path.
    pub fn write_file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.root().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(&path, contents).expect("write file");
        path
    }
}

/// Captured output of one CLI run, with the temporary root replaced by `[ROOT]`.
#[derive(Debug, Clone)]
pub struct CommandOutput {
    /// Exit code (`-1` when killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl CommandOutput {
    pub fn new(out: Output, root: &Path) -> Self {
        let root = root.to_string_lossy();
        let norm = |b: &[u8]| String::from_utf8_lossy(b).replace(root.as_ref(), "[ROOT]");
        CommandOutput {
            code: out.status.code().unwrap_or(-1),
            stdout: norm(&out.stdout),
            stderr: norm(&out.stderr),
        }
    }

    /// Asserts exit 0 and returns self.
    #[track_caller]
    pub fn success(self) -> Self {
        assert_eq!(self.code, 0, "expected success:\n{self}");
        self
    }

    /// Asserts exit `code` and returns self.
    #[track_caller]
    pub fn code(self, code: i32) -> Self {
        assert_eq!(self.code, code, "expected exit {code}:\n{self}");
        self
    }

    /// Parses stdout as JSON.
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}):\n{self}"))
    }
}

impl fmt::Display for CommandOutput {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.stdout.is_empty() {
            write!(f, "------- stdout -------\n{}", self.stdout)?;
            if !self.stdout.ends_with('\n') {
                writeln!(f)?;
            }
        }
        if !self.stderr.is_empty() {
            write!(f, "------- stderr -------\n{}", self.stderr)?;
            if !self.stderr.ends_with('\n') {
                writeln!(f)?;
            }
        }
        write!(f, "[exit status: {}]", self.code)
    }
}
