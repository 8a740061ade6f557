//! The only place the `git` executable is run: network transport (ls-remote, fetch, push)
//! and remote configuration. gix stays the only writer of local refs and objects; gix
//! cannot push, and using `git` for both directions keeps credentials and SSH config the
//! same. Pushes always carry an explicit lease and never a `+` refspec.

use std::io::Read;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

use agent_coord_shared::git_porcelain::first_error_line;
pub(crate) use agent_coord_shared::git_porcelain::parse_ls_remote;
pub(crate) use agent_coord_shared::git_porcelain::parse_push_porcelain;
use agent_coord_shared::git_porcelain::PushedRef;

/// How long one git network command may take before it is killed.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// Why a git command failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum GitError {
    /// `git` could not be started.
    #[error("cannot run git: {0}")]
    Spawn(String),
    /// The command ran past its timeout and was killed.
    #[error("git {command} timed out after {secs} s")]
    Timeout {
        /// The git subcommand.
        command: String,
        /// The timeout.
        secs: u64,
    },
    /// The command failed; `message` is git's first error line.
    #[error("git {command} failed: {message}")]
    Failed {
        /// The git subcommand.
        command: String,
        /// What git said.
        message: String,
    },
}

/// A git runner bound to one repository.
pub(crate) struct Git {
    git_dir: PathBuf,
    timeout: Duration,
}

/// One ref update to push, guarded by the value the remote must still have.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PushUpdate {
    /// The full ref name on the remote.
    pub(crate) refname: String,
    /// The object to set it to.
    pub(crate) new: String,
    /// What the remote ref must be now (`None`: it must not exist).
    pub(crate) expected: Option<String>,
}

impl Git {
    /// Returns a runner for the repository at `git_dir`.
    pub(crate) fn new(git_dir: &Path) -> Self {
        let timeout = std::env::var("AGENT_COORD_GIT_TIMEOUT_SECS")
            .ok()
            .and_then(|s| s.parse().ok())
            .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
        Git {
            git_dir: git_dir.to_path_buf(),
            timeout,
        }
    }

    /// Refuses a remote that git would read as an option (`--upload-pack=…`).
    fn check_remote(remote: &str) -> Result<(), GitError> {
        if remote.starts_with('-') {
            return Err(GitError::Failed {
                command: "remote".into(),
                message: format!("a remote cannot start with '-': {remote}"),
            });
        }
        Ok(())
    }

    /// Returns the git command `args` run (after any `-c key=value`), for messages.
    fn command_name(args: &[&str]) -> String {
        let mut rest = args.iter().copied();
        while let Some(arg) = rest.next() {
            if arg == "-c" {
                rest.next();
            } else {
                return arg.to_owned();
            }
        }
        String::new()
    }

    /// Runs `git --git-dir <dir> <args>`, returning (exit ok, stdout, stderr).
    fn run(&self, args: &[&str]) -> Result<(bool, String, String), GitError> {
        let command = Self::command_name(args);
        let mut child = Command::new("git")
            .arg("--git-dir")
            .arg(&self.git_dir)
            .args(args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("LC_ALL", "C")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| GitError::Spawn(e.to_string()))?;
        let pipe = |p: Option<Box<dyn Read + Send>>| {
            std::thread::spawn(move || {
                let mut buf = String::new();
                if let Some(mut p) = p {
                    let _ = p.read_to_string(&mut buf);
                }
                buf
            })
        };
        let out = pipe(
            child
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let err = pipe(
            child
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn Read + Send>),
        );
        let start = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if start.elapsed() < self.timeout => {
                    std::thread::sleep(Duration::from_millis(2))
                }
                Ok(None) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(GitError::Timeout {
                        command,
                        secs: self.timeout.as_secs(),
                    });
                }
                Err(e) => return Err(GitError::Spawn(e.to_string())),
            }
        };
        let stdout = out.join().unwrap_or_default();
        let stderr = err.join().unwrap_or_default();
        Ok((status.success(), stdout, stderr))
    }

    fn run_ok(&self, args: &[&str]) -> Result<String, GitError> {
        let (ok, stdout, stderr) = self.run(args)?;
        if ok {
            Ok(stdout)
        } else {
            let command = Self::command_name(args);
            Err(GitError::Failed {
                command,
                message: first_error_line(&stderr),
            })
        }
    }

    /// Lists the remote refs matching `patterns`.
    pub(crate) fn ls_remote(
        &self,
        remote: &str,
        patterns: &[&str],
    ) -> Result<Vec<(String, String)>, GitError> {
        Self::check_remote(remote)?;
        let mut args = vec!["ls-remote", remote];
        args.extend_from_slice(patterns);
        Ok(parse_ls_remote(&self.run_ok(&args)?))
    }

    /// Fetches `refspecs` from `remote` (into private tracking refs; pruning vanished ones).
    pub(crate) fn fetch(&self, remote: &str, refspecs: &[String]) -> Result<(), GitError> {
        Self::check_remote(remote)?;
        // No `maintenance --auto` after each fetch: a sync ends with its own `git gc
        // --auto`, spawned only when git's thresholds say there is work (`sync::finish`).
        let mut args = vec![
            "fetch",
            "--quiet",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-auto-maintenance",
            "--prune",
            remote,
        ];
        args.extend(refspecs.iter().map(String::as_str));
        self.run_ok(&args).map(|_| ())
    }

    /// Pushes `updates` atomically, each with its lease; a rejection is an ordinary result.
    pub(crate) fn push(
        &self,
        remote: &str,
        updates: &[PushUpdate],
    ) -> Result<Vec<PushedRef>, GitError> {
        Self::check_remote(remote)?;
        let mut args: Vec<String> = vec![
            "push".into(),
            "--porcelain".into(),
            "--atomic".into(),
            "--no-verify".into(),
        ];
        for u in updates {
            args.push(format!(
                "--force-with-lease={}:{}",
                u.refname,
                u.expected.as_deref().unwrap_or("")
            ));
        }
        args.push(remote.to_owned());
        for u in updates {
            args.push(format!("{}:{}", u.new, u.refname));
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let (ok, stdout, stderr) = self.run(&refs)?;
        let results = parse_push_porcelain(&stdout);
        if results.is_empty() && !ok {
            return Err(GitError::Failed {
                command: "push".into(),
                message: first_error_line(&stderr),
            });
        }
        Ok(results)
    }

    /// Returns a config value of the repository (`None` if unset).
    pub(crate) fn config_get(&self, key: &str) -> Result<Option<String>, GitError> {
        let (ok, stdout, _) = self.run(&["config", "--get", key])?;
        Ok(ok.then(|| stdout.trim().to_owned()))
    }

    /// Returns every value of a multi-valued config key.
    pub(crate) fn config_get_all(&self, key: &str) -> Result<Vec<String>, GitError> {
        let (_, stdout, _) = self.run(&["config", "--get-all", key])?;
        Ok(stdout.lines().map(str::to_owned).collect())
    }

    /// Sets (`add: false`) or adds (`add: true`) a config value.
    pub(crate) fn config_set(&self, key: &str, value: &str, add: bool) -> Result<(), GitError> {
        let args: Vec<&str> = if add {
            vec!["config", "--add", key, value]
        } else {
            vec!["config", key, value]
        };
        self.run_ok(&args).map(|_| ())
    }

    /// Packs the loose objects the refs reach into a new pack (unreachable ones stay for
    /// `gc`'s grace period), then lets `git gc --auto` consolidate packs once there are
    /// many. In the foreground: a detached gc would outlive the command.
    pub(crate) fn pack_loose(&self) -> Result<(), GitError> {
        self.run_ok(&["repack", "-d", "-q"])?;
        self.run_ok(&["-c", "gc.autoDetach=false", "gc", "--auto", "--quiet"])
            .map(|_| ())
    }

    /// Packs loose objects when git thinks it is worth it (after syncs).
    pub(crate) fn maintenance_auto(&self) {
        let _ = self.run(&["gc", "--auto", "--quiet"]);
    }
}
