//! The real bare repositories behind the fake: creating one with an initial commit and a hook
//! that refuses pushes to protected branches, recording which branches are protected, reading
//! branch tips, asking whether a commit exists, and merging a pull request as GitHub's merge
//! button does. Every `git` the fake runs is spawned here, with an isolated configuration; no
//! argument comes from a client except through `for-each-ref` output or as a checked full sha.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;
use std::process::Stdio;

use tokio::io::AsyncWriteExt;
use tokio::process::Command;

/// The file in a bare repository that lists its protected branches, one a line.
pub const PROTECTED_FILE: &str = "fake-github-protected";

/// Set this environment variable on a `git push` to bypass branch protection (the test playing
/// an administrator).
pub const ALLOW_PROTECTED_ENV: &str = "FAKE_GITHUB_ALLOW_PROTECTED";

/// Date of the initial commit, pinned so that every fresh repository has the same commit id.
const INITIAL_DATE: &str = "2024-01-01T00:00:00Z";

/// Why a git command failed.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// `git` could not be started or waited for.
    #[error("git {args}: {source}")]
    Spawn {
        /// The arguments, space-separated.
        args: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// `git` exited unsuccessfully.
    #[error("git {args}: exit {status}: {stderr}")]
    Failed {
        /// The arguments, space-separated.
        args: String,
        /// The exit status.
        status: std::process::ExitStatus,
        /// What it printed on stderr.
        stderr: String,
    },
    /// Writing a file in the repository failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
}

/// Runs `git --git-dir <git_dir> <args>` with `stdin`, returning trimmed stdout.
async fn git(git_dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Result<String, GitError> {
    let out = run(git_dir, args, stdin).await?;
    if !out.status.success() {
        return Err(failed(args, &out));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// Returns the error for a git that exited unsuccessfully.
fn failed(args: &[&str], out: &Output) -> GitError {
    GitError::Failed {
        args: args.join(" "),
        status: out.status,
        stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
    }
}

/// Runs `git --git-dir <git_dir> <args>` with `stdin` and returns what it did, whatever its
/// exit status.
async fn run(git_dir: &Path, args: &[&str], stdin: Option<&[u8]>) -> Result<Output, GitError> {
    let shown = args.join(" ");
    let spawn_err = |source| GitError::Spawn {
        args: shown.clone(),
        source,
    };
    let mut child = Command::new("git")
        .arg("--git-dir")
        .arg(git_dir)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", git_dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Fake GitHub")
        .env("GIT_AUTHOR_EMAIL", "fake-github@example.invalid")
        .env("GIT_AUTHOR_DATE", INITIAL_DATE)
        .env("GIT_COMMITTER_NAME", "Fake GitHub")
        .env("GIT_COMMITTER_EMAIL", "fake-github@example.invalid")
        .env("GIT_COMMITTER_DATE", INITIAL_DATE)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(spawn_err)?;
    if let (Some(input), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(input).await.map_err(spawn_err)?;
        // Dropping the pipe closes it, so git sees the end of its input.
    }
    child.wait_with_output().await.map_err(spawn_err)
}

/// Creates a bare repository at `path` whose `default_branch` holds one commit adding
/// `README.md`, with the protection hook installed. An existing repository is left as it is.
pub async fn init_bare(path: &Path, name: &str, default_branch: &str) -> Result<(), GitError> {
    if path.join("HEAD").exists() {
        return Ok(());
    }
    let io_err = |source| GitError::Io {
        path: path.display().to_string(),
        source,
    };
    std::fs::create_dir_all(path).map_err(io_err)?;
    let branch_arg = format!("--initial-branch={default_branch}");
    git(path, &["init", "--quiet", "--bare", &branch_arg], None).await?;
    let readme = format!("# {name}\n");
    let blob = git(
        path,
        &["hash-object", "-w", "--stdin"],
        Some(readme.as_bytes()),
    )
    .await?;
    let tree = git(
        path,
        &["mktree"],
        Some(format!("100644 blob {blob}\tREADME.md\n").as_bytes()),
    )
    .await?;
    let commit = git(path, &["commit-tree", &tree, "-m", "Initial commit"], None).await?;
    let reference = format!("refs/heads/{default_branch}");
    git(path, &["update-ref", &reference, &commit], None).await?;
    install_hook(path)?;
    write_protected(path, &BTreeSet::new())
}

/// Installs the `pre-receive` hook that refuses updates of protected branches unless the pusher
/// sets [`ALLOW_PROTECTED_ENV`].
fn install_hook(path: &Path) -> Result<(), GitError> {
    let hook = path.join("hooks").join("pre-receive");
    let io_err = |source| GitError::Io {
        path: hook.display().to_string(),
        source,
    };
    let script = format!(
        "#!/bin/sh\n\
         # Installed by fake-github: refuses pushes to the branches listed in {PROTECTED_FILE}.\n\
         [ -n \"${ALLOW_PROTECTED_ENV}\" ] && exit 0\n\
         status=0\n\
         while read old new ref; do\n\
         \x20 branch=${{ref#refs/heads/}}\n\
         \x20 if [ \"$branch\" != \"$ref\" ] && grep -qxF \"$branch\" \"$GIT_DIR/{PROTECTED_FILE}\" 2>/dev/null; then\n\
         \x20   echo \"fake-github: branch $branch is protected\" >&2\n\
         \x20   status=1\n\
         \x20 fi\n\
         done\n\
         exit $status\n"
    );
    std::fs::create_dir_all(path.join("hooks")).map_err(io_err)?;
    std::fs::write(&hook, script).map_err(io_err)?;
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).map_err(io_err)
}

/// Creates `branch` as a new commit on the tip of `base` (adding `<branch>.txt`, so the
/// branch differs from its base) and returns the commit.
pub async fn branch_from(path: &Path, base: &str, branch: &str) -> Result<String, GitError> {
    let tip = git(path, &["rev-parse", &format!("refs/heads/{base}")], None).await?;
    let blob = git(
        path,
        &["hash-object", "-w", "--stdin"],
        Some(branch.as_bytes()),
    )
    .await?;
    let file = format!("{}.txt", branch.replace('/', "-"));
    let listing = git(path, &["ls-tree", &tip], None).await?;
    let tree_text = format!("{listing}\n100644 blob {blob}\t{file}\n");
    let tree = git(path, &["mktree"], Some(tree_text.trim_start().as_bytes())).await?;
    let message = format!("Work on {branch}");
    let commit = git(
        path,
        &["commit-tree", &tree, "-p", &tip, "-m", &message],
        None,
    )
    .await?;
    let reference = format!("refs/heads/{branch}");
    git(path, &["update-ref", &reference, &commit], None).await?;
    Ok(commit)
}

/// Adds a commit on the tip of `branch` that writes `file` (a new file at the top of the
/// tree) with `text`, moves the branch to it, and returns the commit: someone pushing to it.
pub async fn commit_on(
    path: &Path,
    branch: &str,
    file: &str,
    text: &str,
) -> Result<String, GitError> {
    let reference = format!("refs/heads/{branch}");
    let tip = git(path, &["rev-parse", &reference], None).await?;
    let blob = git(
        path,
        &["hash-object", "-w", "--stdin"],
        Some(text.as_bytes()),
    )
    .await?;
    let listing = git(path, &["ls-tree", &tip], None).await?;
    let tree_text = format!("{listing}\n100644 blob {blob}\t{file}\n");
    let tree = git(path, &["mktree"], Some(tree_text.trim_start().as_bytes())).await?;
    let message = format!("Add {file}");
    let commit = git(
        path,
        &["commit-tree", &tree, "-p", &tip, "-m", &message],
        None,
    )
    .await?;
    git(path, &["update-ref", &reference, &commit, &tip], None).await?;
    Ok(commit)
}

/// Records the protected branches of a repository for its hook.
pub fn write_protected(path: &Path, branches: &BTreeSet<String>) -> Result<(), GitError> {
    let file = path.join(PROTECTED_FILE);
    let text: String = branches.iter().map(|b| format!("{b}\n")).collect();
    std::fs::write(&file, text).map_err(|source| GitError::Io {
        path: file.display().to_string(),
        source,
    })
}

/// Returns every branch of a repository with its tip.
pub async fn branches(path: &Path) -> Result<BTreeMap<String, String>, GitError> {
    let out = git(
        path,
        &[
            "for-each-ref",
            "--format=%(objectname) %(refname)",
            "refs/heads/",
        ],
        None,
    )
    .await?;
    Ok(parse_for_each_ref(&out))
}

/// Returns whether `text` is a full commit id as the fake accepts it: 40 lowercase hex digits.
pub fn is_sha(text: &str) -> bool {
    text.len() == 40 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Returns whether `sha` (a full id, else `false` without running git) names a commit in the
/// repository.
pub async fn commit_exists(path: &Path, sha: &str) -> Result<bool, GitError> {
    if !is_sha(sha) {
        return Ok(false);
    }
    let object = format!("{sha}^{{commit}}");
    Ok(run(path, &["cat-file", "-e", &object], None)
        .await?
        .status
        .success())
}

/// What merging a pull request did.
#[derive(Debug, PartialEq, Eq)]
pub enum Merge {
    /// The base branch now points at this merge commit.
    Merged(String),
    /// Head and base conflict; nothing changed.
    Conflict,
    /// The base branch does not exist (any more).
    NoBase,
}

/// Merges `head_sha` into branch `base_ref` of the repository at `base` as GitHub's merge button
/// does: a three-way merge of the trees (`merge-tree --write-tree`, so a base that moved on
/// keeps its changes), a merge commit with parents base tip and head, and the branch moved with
/// its expected previous value. A head only in `head` (a fork) is fetched first, as GitHub's
/// `refs/pull/<number>/head`.
pub async fn merge(
    base: &Path,
    base_ref: &str,
    head: &Path,
    head_sha: &str,
    number: u64,
    message: &str,
) -> Result<Merge, GitError> {
    if !commit_exists(base, head_sha).await? {
        let source = head.to_str().ok_or_else(|| GitError::Io {
            path: head.display().to_string(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "path is not UTF-8"),
        })?;
        let refspec = format!("{head_sha}:refs/pull/{number}/head");
        git(
            base,
            &["fetch", "--quiet", "--no-tags", source, &refspec],
            None,
        )
        .await?;
    }
    let Some(base_tip) = branches(base).await?.remove(base_ref) else {
        return Ok(Merge::NoBase);
    };
    let args = ["merge-tree", "--write-tree", &base_tip, head_sha];
    let out = run(base, &args, None).await?;
    match out.status.code() {
        Some(0) => {}
        Some(1) => return Ok(Merge::Conflict),
        _ => return Err(failed(&args, &out)),
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let tree = stdout.lines().next().unwrap_or_default().trim().to_owned();
    let commit = git(
        base,
        &[
            "commit-tree",
            &tree,
            "-p",
            &base_tip,
            "-p",
            head_sha,
            "-m",
            message,
        ],
        None,
    )
    .await?;
    let reference = format!("refs/heads/{base_ref}");
    git(base, &["update-ref", &reference, &commit, &base_tip], None).await?;
    Ok(Merge::Merged(commit))
}

/// Parses `<sha> refs/heads/<branch>` lines into branch → sha.
fn parse_for_each_ref(out: &str) -> BTreeMap<String, String> {
    out.lines()
        .filter_map(|line| {
            let (sha, name) = line.split_once(' ')?;
            let branch = name.strip_prefix("refs/heads/")?;
            Some((branch.to_owned(), sha.to_owned()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn for_each_ref_output_is_parsed() {
        let out = "0123abcd refs/heads/main\n4567ef01 refs/heads/feature/x\n";
        let got = parse_for_each_ref(out);
        assert_eq!(got["main"], "0123abcd");
        assert_eq!(got["feature/x"], "4567ef01");
        assert_eq!(got.len(), 2);
    }

    #[test]
    fn only_full_lowercase_shas_pass() {
        assert!(is_sha("0123456789abcdef0123456789abcdef01234567"));
        for bad in [
            "",
            "0123456",
            "0123456789ABCDEF0123456789abcdef01234567",
            "0123456789abcdef0123456789abcdef0123456g",
            "-123456789abcdef0123456789abcdef01234567",
            "0123456789abcdef0123456789abcdef012345678",
        ] {
            assert!(!is_sha(bad), "{bad}");
        }
    }
}
