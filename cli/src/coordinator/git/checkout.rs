//! Preparing and reusing a task checkout: ownership markers, the pinned base, drift checks.

use super::*;

/// What `prepare` found in the task's directory.
pub(super) enum Found {
    Empty,
    Ours,
}

/// Classifies `dir` without changing anything but creating it when missing.
pub(super) fn inspect(dir: &Path, task_id: &str) -> Result<Found, GitError> {
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

pub(super) fn create(plan: &CheckoutPlan, auth: &GitAuth) -> Result<Prepared, GitError> {
    let (git, tracking) = begin(plan, auth)?;
    let base_sha = git.ok(&["rev-parse", "--verify", &format!("{tracking}^{{commit}}")])?;
    let base_sha = base_sha.trim().to_owned();
    finish(plan, &git, &base_sha, &base_sha)?;
    Ok(Prepared {
        head: base_sha.clone(),
        base_sha,
        reused: false,
    })
}

/// Starts a checkout in the empty `plan.dir`: a repository marked as an interrupted checkout
/// of the task, its two remotes, and the base branch fetched from origin; returns the
/// repository and the base's tracking ref.
fn begin<'a>(plan: &CheckoutPlan<'a>, auth: &GitAuth) -> Result<(Git<'a>, String), GitError> {
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
    Ok((git, tracking))
}

/// Ends a checkout [`begin`] started: the feature branch at `start`, the identity, the
/// pinned base and ownership markers, and the interrupted-checkout marker removed last.
fn finish(plan: &CheckoutPlan, git: &Git<'_>, base_sha: &str, start: &str) -> Result<(), GitError> {
    let dir = plan.dir;
    git.ok(&[
        "checkout",
        "--quiet",
        "--no-track",
        "-b",
        plan.branch,
        start,
    ])?;
    git.ok(&["config", "user.name", plan.user_name])?;
    git.ok(&["config", "user.email", plan.user_email])?;
    write_marker(dir, BASE_MARKER, base_sha)?;
    write_marker(dir, TASK_MARKER, plan.task_id)?;
    let partial = dir.join(".git").join(PARTIAL_MARKER);
    std::fs::remove_file(&partial).map_err(|e| io(&partial, e))
}

/// Rebuilds a task's checkout on a machine that took the task over: the pinned `base_sha`
/// from origin and, when the task has a pushed `head`, the feature branch from publication
/// at exactly that commit (a branch that moved past the checkpoint is refused, never
/// guessed). An existing checkout of this task on this machine is reused as it is.
pub(super) fn adopt(
    plan: &CheckoutPlan,
    auth: &GitAuth,
    base_sha: &str,
    head: Option<&str>,
) -> Result<Prepared, GitError> {
    check_oid(base_sha)?;
    if let Some(head) = head {
        check_oid(head)?;
    }
    if let Found::Ours = inspect(plan.dir, plan.task_id)? {
        return reuse(plan);
    }
    let dir = plan.dir;
    let (git, _) = begin(plan, auth)?;
    let not_found = |what: &str, sha: &str| GitError::NotOurs {
        dir: dir.to_path_buf(),
        detail: format!("its {what} {sha} cannot be found after the takeover"),
    };
    if !git
        .run(&["cat-file", "-e", &format!("{base_sha}^{{commit}}")])?
        .success()
    {
        return Err(not_found("pinned base", base_sha));
    }
    let start = match head {
        None => base_sha.to_owned(),
        Some(head) => {
            let pushed = format!("refs/remotes/publication/{}", plan.branch);
            let refspec = format!("refs/heads/{}:{pushed}", plan.branch);
            Git::network(dir, plan.publication_url, auth).ok(&[
                "fetch",
                "--quiet",
                "--no-tags",
                "publication",
                &refspec,
            ])?;
            let tip = git.ok(&["rev-parse", "--verify", &format!("{pushed}^{{commit}}")])?;
            if tip.trim() != head {
                return Err(GitError::NotOurs {
                    dir: dir.to_path_buf(),
                    detail: format!(
                        "the pushed branch {} is at {} while the last checkpoint recorded {head}",
                        plan.branch,
                        tip.trim()
                    ),
                });
            }
            head.to_owned()
        }
    };
    finish(plan, &git, base_sha, &start)?;
    Ok(Prepared {
        head: start,
        base_sha: base_sha.to_owned(),
        reused: false,
    })
}

pub(super) fn reuse(plan: &CheckoutPlan) -> Result<Prepared, GitError> {
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

pub(super) fn remote_url(dir: &Path, remote: &str, push: bool) -> Result<String, GitError> {
    let mut args = vec!["remote", "get-url"];
    if push {
        args.push("--push");
    }
    args.push(remote);
    Ok(Git::local(dir).ok(&args)?.trim().to_owned())
}

/// Reads a marker file in `.git`, if present.
pub(super) fn read_marker(dir: &Path, name: &str) -> Result<Option<String>, GitError> {
    let path = dir.join(".git").join(name);
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some(text.trim().to_owned())),
        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::NotADirectory) => Ok(None),
        Err(e) => Err(io(&path, e)),
    }
}

/// Writes a marker atomically (temporary file, then rename) so it is never half there.
pub(super) fn write_marker(dir: &Path, name: &str, content: &str) -> Result<(), GitError> {
    let path = dir.join(".git").join(name);
    let temp = dir.join(".git").join(format!("{name}.tmp"));
    std::fs::write(&temp, format!("{content}\n")).map_err(|e| io(&temp, e))?;
    std::fs::rename(&temp, &path).map_err(|e| io(&path, e))
}
