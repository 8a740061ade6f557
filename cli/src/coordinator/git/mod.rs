//! Git on coordinator worktrees (spec steps 3, 5, 6): the checkout under
//! `workspace_root/<task-id>` with remotes `origin` and `publication`, its ownership markers
//! and pinned base, signed commits and their verification, never-forcing pushes, and the
//! base→head diff for reviewers. Every call goes through the bounded runner; a token reaches
//! git only through its environment and never appears in argv or in an error.

use std::io::ErrorKind;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;

use crate::git_subprocess::parse_ls_remote;
use crate::git_subprocess::parse_push_porcelain;
use crate::process;
use crate::process::Finished;
use crate::process::RunError;

mod checkout;
mod runner;
#[cfg(test)]
mod tests;

use checkout::*;
use runner::*;

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

/// Rebuilds a taken-over task's checkout (see [`checkout::adopt`]), with the same checks
/// as [`prepare`].
pub(crate) fn adopt(
    plan: &CheckoutPlan,
    auth: &GitAuth,
    base_sha: &str,
    head: Option<&str>,
) -> Result<Prepared, GitError> {
    check_not_protected(plan.branch, plan.base, plan.protected)?;
    check_ref("base branch", plan.base)?;
    check_url(plan.origin_url)?;
    check_url(plan.publication_url)?;
    checkout::adopt(plan, auth, base_sha, head)
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

/// Reports whether `head` contains `ancestor` in this checkout; a commit the checkout does
/// not have (someone else's, never fetched) is not contained.
pub(crate) fn contains(dir: &Path, head: &str, ancestor: &str) -> Result<bool, GitError> {
    check_oid(head)?;
    check_oid(ancestor)?;
    let done = Git::local(dir).run(&["merge-base", "--is-ancestor", ancestor, head])?;
    Ok(done.success())
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
