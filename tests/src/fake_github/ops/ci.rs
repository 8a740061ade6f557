//! A repository's CI as the routes and the control API change it: resolving a ref to a commit,
//! materialising a commit's CI from the plan the first time anything asks about it, and
//! replacing one commit's CI.

use std::path::PathBuf;

use crate::fake_github::ci;
use crate::fake_github::error::ApiError;
use crate::fake_github::git;
use crate::fake_github::state::now;
use crate::fake_github::state::CiSpec;
use crate::fake_github::state::Repo;
use crate::fake_github::state::Shared;
use crate::fake_github::state::World;

/// Returns the commit that `reference` (a full sha or a branch name) names in `owner/name`,
/// making its CI from the repository's plan if it has none yet; `None` when it names no commit
/// of the repository or of a fork one of its pull requests comes from.
pub async fn ensure(
    shared: &Shared,
    owner: &str,
    name: &str,
    reference: &str,
) -> Result<Option<String>, ApiError> {
    let (paths, repo_path) = {
        let world = shared.lock();
        let repo = world.repo(owner, name)?;
        if repo.ci.contains_key(reference) {
            return Ok(Some(reference.to_owned()));
        }
        (commit_paths(&world, repo), repo.path.clone())
    };
    let internal = |e: git::GitError| ApiError::Internal(e.to_string());
    let sha = if git::is_sha(reference) {
        let mut found = false;
        for path in &paths {
            if git::commit_exists(path, reference)
                .await
                .map_err(internal)?
            {
                found = true;
                break;
            }
        }
        if !found {
            return Ok(None);
        }
        reference.to_owned()
    } else {
        let branches = git::branches(&repo_path).await.map_err(internal)?;
        match branches.get(reference) {
            Some(sha) => sha.clone(),
            None => return Ok(None),
        }
    };
    let mut world = shared.lock();
    // Another request may have made it while git ran; the plan is popped once per commit.
    if !world.repo(owner, name)?.ci.contains_key(&sha) {
        let spec = world.repo_mut(owner, name)?.ci_plan.next();
        replace(&mut world, owner, name, &sha, &spec)?;
    }
    Ok(Some(sha))
}

/// Makes the CI of `sha` in `owner/name` from `spec`, replacing what it had; runs, jobs, check
/// runs and statuses that it had keep their ids.
pub fn replace(
    world: &mut World,
    owner: &str,
    name: &str,
    sha: &str,
    spec: &CiSpec,
) -> Result<(), ApiError> {
    let old = world
        .repo(owner, name)?
        .ci
        .get(sha)
        .map(ci::id_keys)
        .unwrap_or_default();
    let at = now();
    let made = ci::materialise(spec, sha, &at, &mut |key| {
        old.get(key).copied().unwrap_or_else(|| world.next_id())
    });
    world.repo_mut(owner, name)?.ci.insert(sha.to_owned(), made);
    Ok(())
}

/// Returns the bare repositories a commit of `repo` may live in: its own and the forks its pull
/// requests come from.
fn commit_paths(world: &World, repo: &Repo) -> Vec<PathBuf> {
    let mut paths = vec![repo.path.clone()];
    for pull in repo.issues.values().filter_map(|i| i.pull.as_ref()) {
        if let Some(head) = world.repos.get(&pull.head_repo) {
            if !paths.contains(&head.path) {
                paths.push(head.path.clone());
            }
        }
    }
    paths
}
