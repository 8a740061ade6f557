//! Git on coordinator worktrees (spec steps 3, 5, 6): the checkout under
//! `workspace_root/<task-id>` with remotes `origin` and `publication`, its ownership markers
//! and pinned base, signed commits and their verification, never-forcing pushes, and the
//! base→head diff for reviewers. Every call goes through the bounded runner; a token reaches
//! git only through its environment and never appears in argv or in an error.

use std::io::ErrorKind;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

use super::process;
use super::process::Finished;
use super::process::RunError;
use crate::git_subprocess::parse_ls_remote;
use crate::git_subprocess::parse_push_porcelain;

/// How long a git command that talks to a remote may run.
const NETWORK_TIMEOUT: Duration = Duration::from_secs(600);
/// How long a local git command may run.
const LOCAL_TIMEOUT: Duration = Duration::from_secs(120);
/// How much of each output stream of a git command is kept.
const MAX_OUTPUT: usize = 1 << 20;
/// The largest diff handed to reviewers; a larger one is an error, never a silent cut.
const MAX_DIFF: usize = 32 << 20;

/// The completion marker (content: the task id), inside `.git` so it is never committed.
const TASK_MARKER: &str = "agent-coord-task";
/// Written right after `git init` and removed once the checkout is complete.
const PARTIAL_MARKER: &str = "agent-coord-task.partial";
/// The base commit the feature branch was created from.
const BASE_MARKER: &str = "agent-coord-base";

/// Ambient variables that would point git at another repository, identity or configuration.
const AMBIENT_GIT: [&str; 16] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
    "GIT_AUTHOR_NAME",
    "GIT_AUTHOR_EMAIL",
    "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_EXTERNAL_DIFF",
];

/// Settings for every call: no hooks or fsmonitor from the worktree run with our credentials,
/// and no ambient credential helper or askpass answers for the operator's own login.
const HARDENING: [&str; 4] = [
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "credential.helper=",
    "core.askPass=",
];

/// Credentials for https remotes.
#[derive(Clone, Default)]
pub(crate) struct GitAuth {
    /// A GitHub token, sent as an `Authorization` header to the remote's URL only.
    pub token: Option<String>,
}

impl std::fmt::Debug for GitAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let token = self.token.as_ref().map(|_| "[redacted]");
        f.debug_struct("GitAuth").field("token", &token).finish()
    }
}

/// How commits are signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SignFormat {
    /// `gpg.format=ssh`; `key` is a key path, verified against allowed signers.
    Ssh,
    /// `gpg.format=openpgp`; `key` is a key id, verified by gpg's trust.
    OpenPgp,
}

/// The git identity that commits and signs, and how its signatures are verified.
#[derive(Debug, Clone)]
pub(crate) struct Signer {
    /// `user.name`.
    pub name: String,
    /// `user.email`.
    pub email: String,
    /// The signature format.
    pub format: SignFormat,
    /// `user.signingkey`.
    pub key: String,
    /// `gpg.ssh.allowedSignersFile` (required for [`SignFormat::Ssh`] verification).
    pub allowed_signers: Option<PathBuf>,
}

/// Where and how a task's checkout is made.
#[derive(Debug, Clone)]
pub(crate) struct CheckoutPlan<'a> {
    /// `workspace_root/<task-id>`.
    pub dir: &'a Path,
    /// The task id written into the ownership markers.
    pub task_id: &'a str,
    /// The target repository's URL (remote `origin`).
    pub origin_url: &'a str,
    /// Where branches are pushed (remote `publication`).
    pub publication_url: &'a str,
    /// The base branch on origin.
    pub base: &'a str,
    /// The task's feature branch.
    pub branch: &'a str,
    /// Branches never checked out as the feature branch nor pushed.
    pub protected: &'a [String],
    /// The local `user.name` of the checkout.
    pub user_name: &'a str,
    /// The local `user.email` of the checkout.
    pub user_email: &'a str,
}

/// A checkout ready for work.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Prepared {
    /// The base commit pinned when the branch was created.
    pub base_sha: String,
    /// The current `HEAD`.
    pub head: String,
    /// Whether an existing checkout of this task was reused.
    pub reused: bool,
}

/// Why a worktree git operation failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum GitError {
    /// The directory holds something other than this task's checkout.
    #[error("{} is not empty and is not the checkout of task {task_id}; move it away by hand (the coordinator never deletes a directory)", dir.display())]
    Foreign {
        /// The directory.
        dir: PathBuf,
        /// The task that wanted it.
        task_id: String,
    },
    /// A checkout of this task was interrupted before it completed.
    #[error("{} holds an interrupted checkout of this task; inspect it and remove it by hand to check out again", dir.display())]
    Interrupted {
        /// The directory.
        dir: PathBuf,
    },
    /// The branch is the base or a protected branch.
    #[error("branch {branch} is the base or a protected branch; the coordinator only works on its own feature branches, so configure another branch name")]
    Protected {
        /// The refused branch.
        branch: String,
    },
    /// A directory carries this task's marker but is not set up as expected.
    #[error("{} is marked as this task's checkout but {detail}; fix it or move it away by hand", dir.display())]
    NotOurs {
        /// The directory.
        dir: PathBuf,
        /// What differs.
        detail: String,
    },
    /// A commit lacks a valid signature from an allowed signer.
    #[error("commit {sha} does not carry a valid signature from an allowed signer ({detail}); check the signing key and the allowed signers")]
    Verify {
        /// The commit.
        sha: String,
        /// What git said (redacted).
        detail: String,
    },
    /// The publication remote refused the update (it moved elsewhere: never forced).
    #[error("publication rejected branch {branch} ({detail}); the remote branch moved, so reconcile it by hand instead of forcing")]
    Rejected {
        /// The branch.
        branch: String,
        /// git's summary (redacted).
        detail: String,
    },
    /// A name or id that would be unsafe to hand to git.
    #[error("{what} {value:?} is not valid; fix the coordinator configuration")]
    Invalid {
        /// What kind of value.
        what: &'static str,
        /// The value.
        value: String,
    },
    /// A git command failed.
    #[error("{what} failed: {detail}; check the repository and its remotes, then retry")]
    Failed {
        /// The command and directory.
        what: String,
        /// git's error lines (redacted).
        detail: String,
    },
    /// A git command ran past its timeout and was killed.
    #[error("{what} timed out and was killed; check the network and the remote, then retry")]
    TimedOut {
        /// The command and directory.
        what: String,
    },
    /// A marker file could not be read or written.
    #[error("cannot access {}: {source}; check its permissions", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// git could not be run at all.
    #[error(transparent)]
    Run(#[from] RunError),
}

/// Makes (or reuses) the checkout of `plan.task_id` in `plan.dir`, refusing anything else.
pub(crate) fn prepare(plan: &CheckoutPlan, auth: &GitAuth) -> Result<Prepared, GitError> {
    check_not_protected(plan.branch, plan.base, plan.protected)?;
    check_ref("base branch", plan.base)?;
    check_url(plan.origin_url)?;
    check_url(plan.publication_url)?;
    let id = plan.task_id;
    if id.is_empty() || id.trim() != id || id.chars().any(char::is_control) {
        return Err(invalid("task id", id));
    }
    match inspect(plan.dir, id)? {
        Found::Empty => create(plan, auth),
        Found::Ours => reuse(plan),
    }
}

/// Reports whether the worktree has no staged, unstaged or untracked changes.
pub(crate) fn is_clean(dir: &Path) -> Result<bool, GitError> {
    let args = ["status", "--porcelain", "-z", "--untracked-files=all"];
    Ok(Git::local(dir).ok(&args)?.is_empty())
}

/// Returns the commit `HEAD` points to.
pub(crate) fn head(dir: &Path) -> Result<String, GitError> {
    let out = Git::local(dir).ok(&["rev-parse", "--verify", "HEAD^{commit}"])?;
    Ok(out.trim().to_owned())
}

/// Stages everything and makes one signed commit; `None` when there is nothing to commit.
pub(crate) fn commit_all(
    dir: &Path,
    message: &str,
    signer: &Signer,
) -> Result<Option<String>, GitError> {
    if message.trim().is_empty() {
        return Err(invalid("commit message", message));
    }
    let git = Git::local(dir).redacting_signer(signer);
    git.ok(&["add", "-A"])?;
    let staged = git.run(&["diff", "--cached", "--quiet", "--no-ext-diff"])?;
    match staged.exit_code() {
        Some(0) => return Ok(None),
        Some(1) => {}
        _ => return Err(git.failed("diff", &staged)),
    }
    let format = match signer.format {
        SignFormat::Ssh => "ssh",
        SignFormat::OpenPgp => "openpgp",
    };
    let mut args: Vec<String> = Vec::new();
    for (key, value) in [
        ("user.name", signer.name.as_str()),
        ("user.email", &signer.email),
        ("author.name", &signer.name),
        ("author.email", &signer.email),
        ("committer.name", &signer.name),
        ("committer.email", &signer.email),
        ("gpg.format", format),
        ("user.signingkey", &signer.key),
        ("commit.gpgsign", "true"),
    ] {
        args.extend(["-c".to_owned(), format!("{key}={value}")]);
    }
    // `whitespace` keeps lines such as `#42 …` that the default cleanup would drop.
    args.extend(
        [
            "commit",
            "--quiet",
            "--no-verify",
            "-S",
            "--cleanup=whitespace",
            "-F",
            "-",
        ]
        .map(String::from),
    );
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    git.with_stdin(message.as_bytes()).ok(&args)?;
    head(dir).map(Some)
}

/// Checks with `git verify-commit` that `sha` is signed by an allowed signer.
pub(crate) fn verify(dir: &Path, sha: &str, signer: &Signer) -> Result<(), GitError> {
    check_oid(sha)?;
    let mut setting = None;
    if signer.format == SignFormat::Ssh {
        let Some(file) = &signer.allowed_signers else {
            return Err(GitError::Verify {
                sha: sha.to_owned(),
                detail: "no allowed signers file is configured for ssh signatures".to_owned(),
            });
        };
        setting = Some(format!("gpg.ssh.allowedSignersFile={}", file.display()));
    }
    let mut args = Vec::new();
    if let Some(setting) = &setting {
        args.extend(["-c", setting.as_str()]);
    }
    args.extend(["verify-commit", sha]);
    let git = Git::local(dir).redacting_signer(signer);
    let done = git.run(&args)?;
    if done.success() {
        Ok(())
    } else {
        Err(GitError::Verify {
            sha: sha.to_owned(),
            detail: git.detail(&done),
        })
    }
}

/// Pushes `refs/heads/<branch>` to `publication` as a fast-forward (never forced).
pub(crate) fn push(
    dir: &Path,
    branch: &str,
    base: &str,
    protected: &[String],
    auth: &GitAuth,
) -> Result<(), GitError> {
    check_not_protected(branch, base, protected)?;
    let url = remote_url(dir, "publication", true)?;
    let refname = format!("refs/heads/{branch}");
    let refspec = format!("{refname}:{refname}");
    let git = Git::network(dir, &url, auth);
    let args = [
        "push",
        "--porcelain",
        "--no-verify",
        "publication",
        refspec.as_str(),
    ];
    let done = git.run(&args)?;
    match parse_push_porcelain(&done.stdout)
        .into_iter()
        .find(|r| r.refname == refname)
    {
        Some(r) if r.accepted() && done.success() => Ok(()),
        Some(r) if !r.accepted() => Err(GitError::Rejected {
            branch: branch.to_owned(),
            detail: git.redact(&r.summary),
        }),
        _ => Err(git.failed("push", &done)),
    }
}

/// Returns the commit `branch` points to on `remote`, or `None` if it has no such branch.
pub(crate) fn remote_branch(
    dir: &Path,
    remote: &str,
    branch: &str,
    auth: &GitAuth,
) -> Result<Option<String>, GitError> {
    check_ref("branch", branch)?;
    if remote.is_empty() || remote.starts_with('-') {
        return Err(invalid("remote", remote));
    }
    let url = remote_url(dir, remote, false)?;
    let refname = format!("refs/heads/{branch}");
    let out = Git::network(dir, &url, auth).ok(&["ls-remote", "--refs", remote, &refname])?;
    Ok(parse_ls_remote(&out)
        .into_iter()
        .find(|(name, _)| *name == refname)
        .map(|(_, oid)| oid))
}

/// Stages every change in the worktree (index only: nothing is committed) and returns the
/// diff from the pinned base to it — the inner reviewer's artifact before the signed commit.
pub(crate) fn staged_diff(dir: &Path, base_sha: &str) -> Result<String, GitError> {
    check_oid(base_sha)?;
    let git = Git::local(dir);
    let done = git.run(&["add", "-A"])?;
    if !done.success() {
        return Err(git.failed("add", &done));
    }
    let mut git = Git::local(dir);
    git.max_output = MAX_DIFF;
    let done = git.run(&[
        "diff",
        "--cached",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        base_sha,
        "--",
    ])?;
    if !done.success() {
        return Err(git.failed("diff", &done));
    }
    if done.stdout_truncated {
        return Err(GitError::Failed {
            what: git.what("diff"),
            detail: format!("the diff is larger than {} MiB", MAX_DIFF >> 20),
        });
    }
    Ok(done.stdout)
}

enum Found {
    Empty,
    Ours,
}

/// Classifies `dir` without changing anything but creating it when missing.
fn inspect(dir: &Path, task_id: &str) -> Result<Found, GitError> {
    let foreign = || GitError::Foreign {
        dir: dir.to_path_buf(),
        task_id: task_id.to_owned(),
    };
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
            return Ok(Found::Empty);
        }
        Err(e) => return Err(io(dir, e)),
        Ok(meta) if !meta.is_dir() => return Err(foreign()),
        Ok(_) => {}
    }
    if let Some(owner) = read_marker(dir, TASK_MARKER)? {
        return if owner == task_id {
            Ok(Found::Ours)
        } else {
            Err(foreign())
        };
    }
    if let Some(owner) = read_marker(dir, PARTIAL_MARKER)? {
        return if owner == task_id {
            Err(GitError::Interrupted {
                dir: dir.to_path_buf(),
            })
        } else {
            Err(foreign())
        };
    }
    let mut entries = std::fs::read_dir(dir).map_err(|e| io(dir, e))?;
    if entries.next().is_none() {
        Ok(Found::Empty)
    } else {
        Err(foreign())
    }
}

fn create(plan: &CheckoutPlan, auth: &GitAuth) -> Result<Prepared, GitError> {
    let dir = plan.dir;
    let git = Git::local(dir);
    git.init()?;
    write_marker(dir, PARTIAL_MARKER, plan.task_id)?;
    git.ok(&["remote", "add", "origin", plan.origin_url])?;
    git.ok(&["remote", "add", "publication", plan.publication_url])?;
    let tracking = format!("refs/remotes/origin/{}", plan.base);
    let refspec = format!("refs/heads/{}:{tracking}", plan.base);
    Git::network(dir, plan.origin_url, auth).ok(&[
        "fetch",
        "--quiet",
        "--no-tags",
        "origin",
        &refspec,
    ])?;
    let base_sha = git.ok(&["rev-parse", "--verify", &format!("{tracking}^{{commit}}")])?;
    let base_sha = base_sha.trim().to_owned();
    git.ok(&[
        "checkout",
        "--quiet",
        "--no-track",
        "-b",
        plan.branch,
        &base_sha,
    ])?;
    git.ok(&["config", "user.name", plan.user_name])?;
    git.ok(&["config", "user.email", plan.user_email])?;
    write_marker(dir, BASE_MARKER, &base_sha)?;
    write_marker(dir, TASK_MARKER, plan.task_id)?;
    let partial = dir.join(".git").join(PARTIAL_MARKER);
    std::fs::remove_file(&partial).map_err(|e| io(&partial, e))?;
    Ok(Prepared {
        head: base_sha.clone(),
        base_sha,
        reused: false,
    })
}

fn reuse(plan: &CheckoutPlan) -> Result<Prepared, GitError> {
    let dir = plan.dir;
    let not_ours = |detail: String| GitError::NotOurs {
        dir: dir.to_path_buf(),
        detail,
    };
    for (remote, expected, push) in [
        ("origin", plan.origin_url, false),
        ("publication", plan.publication_url, false),
        ("publication", plan.publication_url, true),
    ] {
        let found = remote_url(dir, remote, push).map_err(|e| match e {
            GitError::Failed { .. } => not_ours(format!("has no remote {remote}")),
            e => e,
        })?;
        if found != expected {
            return Err(not_ours(format!(
                "remote {remote} points to {found} instead of {expected}"
            )));
        }
    }
    let current = Git::local(dir).run(&["symbolic-ref", "--quiet", "HEAD"])?;
    if current.stdout.trim() != format!("refs/heads/{}", plan.branch) {
        return Err(not_ours(format!(
            "branch {} is not checked out",
            plan.branch
        )));
    }
    let base_sha = read_marker(dir, BASE_MARKER)?
        .filter(|s| check_oid(s).is_ok())
        .ok_or_else(|| {
            not_ours(format!(
                "its pinned base (.git/{BASE_MARKER}) is missing or malformed"
            ))
        })?;
    Ok(Prepared {
        head: head(dir)?,
        base_sha,
        reused: true,
    })
}

fn remote_url(dir: &Path, remote: &str, push: bool) -> Result<String, GitError> {
    let mut args = vec!["remote", "get-url"];
    if push {
        args.push("--push");
    }
    args.push(remote);
    Ok(Git::local(dir).ok(&args)?.trim().to_owned())
}

/// One git invocation's settings: the worktree, bounds, environment and what to redact.
struct Git<'a> {
    dir: &'a Path,
    timeout: Duration,
    max_output: usize,
    env: Vec<(String, String)>,
    stdin: Option<Vec<u8>>,
    /// Secrets and their stand-ins, replaced in every error detail.
    secrets: Vec<(String, &'static str)>,
}

impl<'a> Git<'a> {
    fn local(dir: &'a Path) -> Self {
        Git {
            dir,
            timeout: LOCAL_TIMEOUT,
            max_output: MAX_OUTPUT,
            env: vec![("LC_ALL".into(), "C".into())],
            stdin: None,
            secrets: Vec::new(),
        }
    }

    /// A call that contacts `url`; the token goes only to that URL, through the environment.
    fn network(dir: &'a Path, url: &str, auth: &GitAuth) -> Self {
        let mut git = Git::local(dir);
        git.timeout = NETWORK_TIMEOUT;
        if let Some(token) = auth.token.as_deref().filter(|t| !t.is_empty()) {
            let header = basic_auth(token);
            if url.starts_with("https://") || url.starts_with("http://") {
                git.env.extend(auth_env(url, &header));
            }
            git.secrets.push((header, "[redacted]"));
            git.secrets.push((token.to_owned(), "[redacted]"));
        }
        git
    }

    fn redacting_signer(mut self, signer: &Signer) -> Self {
        if !signer.key.is_empty() {
            self.secrets.push((signer.key.clone(), "[signing key]"));
        }
        if let Some(file) = &signer.allowed_signers {
            self.secrets
                .push((file.display().to_string(), "[allowed signers]"));
        }
        self
    }

    fn with_stdin(mut self, data: &[u8]) -> Self {
        self.stdin = Some(data.to_vec());
        self
    }

    /// Runs `git init` in the directory itself (no repository exists yet).
    fn init(&self) -> Result<(), GitError> {
        self.spawn(&["init", "--quiet"], false).and_then(|done| {
            if done.success() {
                Ok(())
            } else {
                Err(self.failed("init", &done))
            }
        })
    }

    fn run(&self, args: &[&str]) -> Result<Finished, GitError> {
        self.spawn(args, true)
    }

    fn spawn(&self, args: &[&str], in_repo: bool) -> Result<Finished, GitError> {
        let mut argv = vec!["git".to_owned()];
        for setting in HARDENING {
            argv.extend(["-c".to_owned(), setting.to_owned()]);
        }
        argv.extend(args.iter().map(|a| (*a).to_owned()));
        let mut env = self.env.clone();
        if in_repo {
            // Exactly this checkout: never a repository git would discover above it.
            env.push(("GIT_DIR".into(), ".git".into()));
            env.push(("GIT_WORK_TREE".into(), ".".into()));
        }
        let spec = process::Spec {
            argv: &argv,
            cwd: self.dir,
            env,
            remove_env: AMBIENT_GIT.map(String::from).to_vec(),
            stdin: self.stdin.clone(),
            timeout: self.timeout,
            max_output: self.max_output,
            gh_config_dir: None,
        };
        let done = process::run(&spec)?;
        if done.timed_out() {
            return Err(GitError::TimedOut {
                what: self.what(subcommand(args)),
            });
        }
        Ok(done)
    }

    /// Runs and returns stdout, or [`GitError::Failed`] on a non-zero exit.
    fn ok(&self, args: &[&str]) -> Result<String, GitError> {
        let done = self.run(args)?;
        if done.success() {
            Ok(done.stdout)
        } else {
            Err(self.failed(subcommand(args), &done))
        }
    }

    fn what(&self, sub: &str) -> String {
        format!("git {sub} in {}", self.dir.display())
    }

    fn failed(&self, sub: &str, done: &Finished) -> GitError {
        GitError::Failed {
            what: self.what(sub),
            detail: self.detail(done),
        }
    }

    /// Returns git's error lines (at most three, without `fatal:`), redacted.
    fn detail(&self, done: &Finished) -> String {
        let lines: Vec<&str> = done
            .stderr
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| {
                l.strip_prefix("fatal: ")
                    .or_else(|| l.strip_prefix("error: "))
                    .unwrap_or(l)
            })
            .take(3)
            .collect();
        if lines.is_empty() {
            return format!("exit {:?} without error output", done.exit);
        }
        self.redact(&lines.join(" / "))
    }

    fn redact(&self, text: &str) -> String {
        self.secrets
            .iter()
            .fold(text.to_owned(), |t, (secret, stand_in)| {
                t.replace(secret.as_str(), stand_in)
            })
    }
}

/// Returns the git subcommand in `args` (the first word after any `-c key=value`).
fn subcommand<'s>(args: &[&'s str]) -> &'s str {
    let mut words = args.iter().copied();
    while let Some(word) = words.next() {
        if word == "-c" {
            words.next();
        } else {
            return word;
        }
    }
    "git"
}

/// Returns the `GIT_CONFIG_*` variables that send `header` to `url` (and nowhere else).
fn auth_env(url: &str, header: &str) -> [(String, String); 3] {
    [
        ("GIT_CONFIG_COUNT".into(), "1".into()),
        ("GIT_CONFIG_KEY_0".into(), format!("http.{url}.extraHeader")),
        (
            "GIT_CONFIG_VALUE_0".into(),
            format!("Authorization: Basic {header}"),
        ),
    ]
}

/// Returns base64(`x-access-token:TOKEN`), GitHub's basic-auth form of a token.
fn basic_auth(token: &str) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let input = format!("x-access-token:{token}");
    let mut out = String::with_capacity(input.len().div_ceil(3) * 4);
    for chunk in input.as_bytes().chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn check_not_protected(branch: &str, base: &str, protected: &[String]) -> Result<(), GitError> {
    check_ref("branch", branch)?;
    let bare = |b: &str| b.strip_prefix("refs/heads/").unwrap_or(b).to_owned();
    if bare(branch) == bare(base) || protected.iter().any(|p| bare(p) == bare(branch)) {
        return Err(GitError::Protected {
            branch: branch.to_owned(),
        });
    }
    Ok(())
}

/// Accepts a branch name git would accept (`git check-ref-format --branch`), refusing anything
/// git could read as an option.
fn check_ref(what: &'static str, name: &str) -> Result<(), GitError> {
    let bad_char = |c: char| c.is_control() || " ~^:?*[\\".contains(c);
    let bad = name.is_empty()
        || name.starts_with('-')
        || name == "@"
        || name.contains("..")
        || name.contains("@{")
        || name.chars().any(bad_char)
        || name.ends_with('.')
        || name
            .split('/')
            .any(|c| c.is_empty() || c.starts_with('.') || c.ends_with(".lock"));
    if bad {
        Err(invalid(what, name))
    } else {
        Ok(())
    }
}

fn check_url(url: &str) -> Result<(), GitError> {
    if url.is_empty() || url.starts_with('-') || url.chars().any(char::is_control) {
        return Err(invalid("remote url", url));
    }
    Ok(())
}

/// Accepts a full SHA-1 or SHA-256 object id in lowercase hex.
fn check_oid(sha: &str) -> Result<(), GitError> {
    let hex = sha
        .bytes()
        .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
    if (sha.len() == 40 || sha.len() == 64) && hex {
        Ok(())
    } else {
        Err(invalid("commit id", sha))
    }
}

fn invalid(what: &'static str, value: &str) -> GitError {
    GitError::Invalid {
        what,
        value: value.to_owned(),
    }
}

fn io(path: &Path, source: std::io::Error) -> GitError {
    GitError::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn read_marker(dir: &Path, name: &str) -> Result<Option<String>, GitError> {
    let path = dir.join(".git").join(name);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(text.trim().to_owned())),
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => Ok(None),
        Err(e) => Err(io(&path, e)),
    }
}

/// Writes a marker atomically (temporary file, then rename) so it is never half there.
fn write_marker(dir: &Path, name: &str, content: &str) -> Result<(), GitError> {
    let path = dir.join(".git").join(name);
    let temp = dir.join(".git").join(format!("{name}.tmp"));
    std::fs::write(&temp, format!("{content}\n")).map_err(|e| io(&temp, e))?;
    std::fs::rename(&temp, &path).map_err(|e| io(&path, e))
}

#[cfg(test)]
mod tests {
    use std::io::Read as _;
    use std::io::Write as _;
    use std::process::Command;

    use super::*;

    const TASK: &str = "acme-app-7";

    /// Runs test-side git (fixtures only), isolated from the coordinator's own calls.
    fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args(["-c", "user.name=Test", "-c", "user.email=test@example.com"])
            .args([
                "-c",
                "commit.gpgsign=false",
                "-c",
                "init.defaultBranch=develop",
            ])
            .args(args)
            .current_dir(dir)
            .env_remove("GIT_DIR")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "git {args:?}: {stderr}");
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// A bare origin with one commit on `develop`, a bare publication and a seed clone.
    struct Fx {
        tmp: tempfile::TempDir,
        origin: String,
        publication: String,
        base_sha: String,
        protected: Vec<String>,
    }

    impl Fx {
        fn new() -> Self {
            let tmp = tempfile::tempdir().unwrap();
            let root = tmp.path();
            git(root, &["init", "-q", "--bare", "origin.git"]);
            git(root, &["init", "-q", "--bare", "publication.git"]);
            git(root, &["init", "-q", "seed"]);
            let origin = root.join("origin.git").display().to_string();
            let seed = root.join("seed");
            std::fs::write(seed.join("README"), "hello\n").unwrap();
            git(&seed, &["add", "-A"]);
            git(&seed, &["commit", "-qm", "seed"]);
            git(&seed, &["push", "-q", &origin, "HEAD:refs/heads/develop"]);
            Fx {
                base_sha: git(&seed, &["rev-parse", "HEAD"]),
                publication: root.join("publication.git").display().to_string(),
                origin,
                protected: vec!["main".into(), "release".into()],
                tmp,
            }
        }

        fn root(&self) -> &Path {
            self.tmp.path()
        }

        fn plan<'a>(&'a self, dir: &'a Path, branch: &'a str) -> CheckoutPlan<'a> {
            CheckoutPlan {
                dir,
                task_id: TASK,
                origin_url: &self.origin,
                publication_url: &self.publication,
                base: "develop",
                branch,
                protected: &self.protected,
                user_name: "Coord Bot",
                user_email: "bot@example.com",
            }
        }

        /// Returns a signer whose key is listed in the allowed signers file, and one whose key
        /// is not.
        fn signers(&self) -> (Signer, Signer) {
            let root = self.root();
            let mut allowed = String::new();
            let mut signers = Vec::new();
            for name in ["listed", "unlisted"] {
                let key = root.join(name);
                let out = Command::new("ssh-keygen")
                    .args(["-q", "-t", "ed25519", "-N", "", "-C", name, "-f"])
                    .arg(&key)
                    .output()
                    .unwrap();
                assert!(out.status.success());
                if name == "listed" {
                    let public = std::fs::read_to_string(key.with_extension("pub")).unwrap();
                    allowed = format!("bot@example.com namespaces=\"git\" {public}");
                }
                signers.push(Signer {
                    name: "Coord Bot".into(),
                    email: "bot@example.com".into(),
                    format: SignFormat::Ssh,
                    key: key.display().to_string(),
                    allowed_signers: Some(root.join("allowed_signers")),
                });
            }
            std::fs::write(root.join("allowed_signers"), allowed).unwrap();
            let unlisted = signers.pop().unwrap();
            (signers.pop().unwrap(), unlisted)
        }
    }

    #[test]
    fn prepare_creates_a_marked_checkout_on_the_pinned_base() {
        let fx = Fx::new();
        let dir = fx.root().join("work").join(TASK);
        let got = prepare(&fx.plan(&dir, "coord/acme-app-7"), &GitAuth::default()).unwrap();
        assert_eq!(
            got,
            Prepared {
                base_sha: fx.base_sha.clone(),
                head: fx.base_sha.clone(),
                reused: false
            }
        );
        let marker = |name: &str| std::fs::read_to_string(dir.join(".git").join(name)).ok();
        assert_eq!(marker(TASK_MARKER).as_deref(), Some("acme-app-7\n"));
        assert_eq!(marker(BASE_MARKER), Some(format!("{}\n", fx.base_sha)));
        assert_eq!(marker(PARTIAL_MARKER), None);
        assert_eq!(
            git(&dir, &["symbolic-ref", "HEAD"]),
            "refs/heads/coord/acme-app-7"
        );
        assert_eq!(git(&dir, &["remote", "get-url", "origin"]), fx.origin);
        assert_eq!(
            git(&dir, &["remote", "get-url", "publication"]),
            fx.publication
        );
        assert_eq!(
            git(&dir, &["config", "--local", "user.email"]),
            "bot@example.com"
        );
        assert!(is_clean(&dir).unwrap());
        assert_eq!(head(&dir).unwrap(), fx.base_sha);

        // An existing empty directory is as good as a missing one.
        let empty = fx.root().join("empty");
        std::fs::create_dir(&empty).unwrap();
        assert!(
            !prepare(&fx.plan(&empty, "coord/x"), &GitAuth::default())
                .unwrap()
                .reused
        );
    }

    #[test]
    fn prepare_reuses_its_own_checkout_and_keeps_the_pinned_base() {
        let fx = Fx::new();
        let dir = fx.root().join(TASK);
        prepare(&fx.plan(&dir, "coord/7"), &GitAuth::default()).unwrap();
        std::fs::write(dir.join("new.txt"), "x\n").unwrap();
        git(&dir, &["add", "-A"]);
        git(&dir, &["commit", "-qm", "local"]);
        // Origin's develop moves on; the task keeps the base it started from.
        let seed = fx.root().join("seed");
        git(&seed, &["commit", "-q", "--allow-empty", "-m", "later"]);
        git(
            &seed,
            &["push", "-q", &fx.origin, "HEAD:refs/heads/develop"],
        );
        let again = prepare(&fx.plan(&dir, "coord/7"), &GitAuth::default()).unwrap();
        assert!(again.reused);
        assert_eq!(again.base_sha, fx.base_sha);
        assert_eq!(again.head, git(&dir, &["rev-parse", "HEAD"]));
        assert_ne!(again.head, fx.base_sha);
    }

    #[test]
    fn prepare_refuses_interrupted_and_foreign_directories_without_deleting() {
        let fx = Fx::new();
        let auth = GitAuth::default();
        let interrupted = fx.root().join("interrupted");
        std::fs::create_dir_all(interrupted.join(".git")).unwrap();
        std::fs::write(interrupted.join(".git").join(PARTIAL_MARKER), TASK).unwrap();
        let err = prepare(&fx.plan(&interrupted, "coord/7"), &auth).unwrap_err();
        assert!(matches!(err, GitError::Interrupted { .. }), "{err}");
        assert!(interrupted.join(".git").join(PARTIAL_MARKER).exists());

        let other_task = fx.root().join("other");
        std::fs::create_dir_all(other_task.join(".git")).unwrap();
        std::fs::write(other_task.join(".git").join(TASK_MARKER), "acme-app-8\n").unwrap();
        let stray = fx.root().join("stray");
        std::fs::create_dir(&stray).unwrap();
        std::fs::write(stray.join("notes.txt"), "mine").unwrap();
        let file = fx.root().join("file");
        std::fs::write(&file, "x").unwrap();
        for dir in [&other_task, &stray, &file] {
            let err = prepare(&fx.plan(dir, "coord/7"), &auth).unwrap_err();
            assert!(matches!(err, GitError::Foreign { .. }), "{err}");
        }
        assert_eq!(
            std::fs::read_to_string(stray.join("notes.txt")).unwrap(),
            "mine"
        );
        let message = GitError::Foreign {
            dir: stray,
            task_id: TASK.into(),
        }
        .to_string();
        assert!(message.contains("stray is not empty") && message.contains("move it away"));
    }

    #[test]
    fn prepare_refuses_a_marked_checkout_that_drifted() {
        let fx = Fx::new();
        let dir = fx.root().join(TASK);
        prepare(&fx.plan(&dir, "coord/7"), &GitAuth::default()).unwrap();
        git(
            &dir,
            &[
                "remote",
                "set-url",
                "--push",
                "publication",
                "/elsewhere.git",
            ],
        );
        let err = prepare(&fx.plan(&dir, "coord/7"), &GitAuth::default()).unwrap_err();
        assert!(matches!(err, GitError::NotOurs { .. }), "{err}");
        git(&dir, &["config", "--unset", "remote.publication.pushurl"]);
        git(&dir, &["checkout", "-q", "-b", "elsewhere"]);
        let err = prepare(&fx.plan(&dir, "coord/7"), &GitAuth::default()).unwrap_err();
        assert!(
            err.to_string()
                .contains("branch coord/7 is not checked out"),
            "{err}"
        );
    }

    #[test]
    fn base_and_protected_branches_are_refused() {
        let fx = Fx::new();
        let dir = fx.root().join(TASK);
        for branch in ["develop", "main", "refs/heads/release"] {
            let err = prepare(&fx.plan(&dir, branch), &GitAuth::default()).unwrap_err();
            assert!(matches!(err, GitError::Protected { .. }), "{err}");
            let err = push(&dir, branch, "develop", &fx.protected, &GitAuth::default());
            assert!(matches!(err, Err(GitError::Protected { .. })));
        }
        assert!(!dir.exists());
        let err = prepare(&fx.plan(&dir, "--force"), &GitAuth::default()).unwrap_err();
        assert!(matches!(err, GitError::Invalid { .. }), "{err}");
    }

    #[test]
    fn commit_all_signs_and_verify_accepts_only_listed_keys() {
        let fx = Fx::new();
        let (listed, unlisted) = fx.signers();
        let dir = fx.root().join(TASK);
        prepare(&fx.plan(&dir, "coord/7"), &GitAuth::default()).unwrap();
        assert_eq!(commit_all(&dir, "nothing", &listed).unwrap(), None);

        std::fs::write(dir.join("new.txt"), "hello\n").unwrap();
        let sha = commit_all(&dir, "#7 add new.txt\n", &listed)
            .unwrap()
            .unwrap();
        assert!(is_clean(&dir).unwrap());
        assert_eq!(head(&dir).unwrap(), sha);
        assert_eq!(
            git(&dir, &["log", "-1", "--format=%an <%ae>|%cn|%B"]),
            "Coord Bot <bot@example.com>|Coord Bot|#7 add new.txt"
        );
        verify(&dir, &sha, &listed).unwrap();

        std::fs::write(dir.join("new.txt"), "rogue\n").unwrap();
        let rogue = commit_all(&dir, "rogue", &unlisted).unwrap().unwrap();
        let err = verify(&dir, &rogue, &listed).unwrap_err();
        assert!(matches!(err, GitError::Verify { .. }), "{err}");
        assert!(!err.to_string().contains(&listed.key), "{err}");

        std::fs::write(dir.join("new.txt"), "unsigned\n").unwrap();
        git(&dir, &["commit", "-qam", "unsigned"]);
        let unsigned = head(&dir).unwrap();
        assert!(matches!(
            verify(&dir, &unsigned, &listed),
            Err(GitError::Verify { .. })
        ));
        let no_list = Signer {
            allowed_signers: None,
            ..listed.clone()
        };
        assert!(matches!(
            verify(&dir, &sha, &no_list),
            Err(GitError::Verify { .. })
        ));
        assert!(matches!(
            verify(&dir, "HEAD", &listed),
            Err(GitError::Invalid { .. })
        ));
    }

    #[test]
    fn push_fast_forwards_and_never_forces() {
        let fx = Fx::new();
        let (signer, _) = fx.signers();
        let auth = GitAuth::default();
        let dir = fx.root().join(TASK);
        prepare(&fx.plan(&dir, "coord/7"), &auth).unwrap();
        assert_eq!(
            remote_branch(&dir, "publication", "coord/7", &auth).unwrap(),
            None
        );
        std::fs::write(dir.join("a.txt"), "a\n").unwrap();
        let first = commit_all(&dir, "a", &signer).unwrap().unwrap();
        push(&dir, "coord/7", "develop", &fx.protected, &auth).unwrap();
        let published = remote_branch(&dir, "publication", "coord/7", &auth).unwrap();
        assert_eq!(published.as_deref(), Some(first.as_str()));

        // Someone else moves the published branch; our next push is refused, not forced.
        let other = fx.root().join("other");
        git(
            fx.root(),
            &["clone", "-q", "-b", "coord/7", &fx.publication, "other"],
        );
        git(&other, &["commit", "-q", "--allow-empty", "-m", "theirs"]);
        git(&other, &["push", "-q", "origin", "coord/7"]);
        let theirs = git(&other, &["rev-parse", "HEAD"]);
        std::fs::write(dir.join("b.txt"), "b\n").unwrap();
        commit_all(&dir, "b", &signer).unwrap().unwrap();
        let err = push(&dir, "coord/7", "develop", &fx.protected, &auth).unwrap_err();
        assert!(matches!(err, GitError::Rejected { .. }), "{err}");
        let published = remote_branch(&dir, "publication", "coord/7", &auth).unwrap();
        assert_eq!(published, Some(theirs));
    }

    #[test]
    fn token_travels_as_a_header_to_its_remote_only_and_never_in_errors() {
        let fx = Fx::new();
        let dir = fx.root().join(TASK);
        prepare(&fx.plan(&dir, "coord/7"), &GitAuth::default()).unwrap();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/acme/app.git", listener.local_addr().unwrap());
        git(&dir, &["remote", "add", "fake", &url]);
        let server = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                let n = stream.read(&mut buf).unwrap();
                if n == 0 {
                    break;
                }
                request.extend_from_slice(&buf[..n]);
            }
            let reply = b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";
            stream.write_all(reply).unwrap();
            String::from_utf8_lossy(&request).into_owned()
        });
        let auth = GitAuth {
            token: Some("ghs_abc123".into()),
        };
        let err = remote_branch(&dir, "fake", "coord/7", &auth).unwrap_err();
        let request = server.join().unwrap();
        let expected = "Authorization: Basic eC1hY2Nlc3MtdG9rZW46Z2hzX2FiYzEyMw==";
        assert!(request.lines().any(|l| l.trim() == expected), "{request}");
        assert!(matches!(err, GitError::Failed { .. }), "{err}");
        assert!(!err.to_string().contains("ghs_abc123"));
        assert!(!format!("{auth:?}").contains("ghs_abc123"));

        // git echoing the token or the header anywhere in its error text gets it redacted.
        let git = Git::network(&dir, &url, &auth);
        let echoed = "fatal: ghs_abc123 / eC1hY2Nlc3MtdG9rZW46Z2hzX2FiYzEyMw== refused";
        assert_eq!(git.redact(echoed), "fatal: [redacted] / [redacted] refused");
        let [(_, count), (_, key), (_, value)] = auth_env(&url, &basic_auth("ghs_abc123"));
        assert_eq!((count.as_str(), value.as_str()), ("1", expected));
        assert_eq!(key, format!("http.{url}.extraHeader"));
    }

    #[test]
    fn helpers_on_samples() {
        assert_eq!(basic_auth(""), "eC1hY2Nlc3MtdG9rZW46");
        assert_eq!(
            basic_auth("ghs_abc123"),
            "eC1hY2Nlc3MtdG9rZW46Z2hzX2FiYzEyMw=="
        );
        for good in ["coord/acme-7", "feature.x", "a/b/c"] {
            assert!(check_ref("branch", good).is_ok(), "{good}");
        }
        for bad in [
            "", "-f", "a..b", "a b", "a/", "/a", "a.lock", ".a", "a@{1}", "a:b", "@",
        ] {
            assert!(check_ref("branch", bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            subcommand(&["-c", "a=b", "verify-commit", "x"]),
            "verify-commit"
        );
        assert!(check_oid(&"a".repeat(40)).is_ok() && check_oid(&"A".repeat(40)).is_err());
    }
}
