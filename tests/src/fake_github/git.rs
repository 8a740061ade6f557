//! The real bare repositories behind the fake: creating one with an initial commit and a hook
//! that refuses pushes to protected branches, recording which branches are protected, and
//! reading branch tips. Every `git` the fake runs is spawned here, with an isolated
//! configuration; no argument comes from a client except through `for-each-ref` output.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
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
    let out = child.wait_with_output().await.map_err(spawn_err)?;
    if !out.status.success() {
        return Err(GitError::Failed {
            args: shown,
            status: out.status,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
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
}
