//! What people do to a pull request on github.com that the coordinator never does: merging it
//! with the merge button (a real merge commit on the base branch) and GitHub deciding whether
//! it is mergeable.

use serde_json::Value;

use super::refresh_pulls;
use super::split_full_name;
use crate::fake_github::error::ApiError;
use crate::fake_github::git;
use crate::fake_github::git::Merge;
use crate::fake_github::shape;
use crate::fake_github::state::now;
use crate::fake_github::state::IssueEvent;
use crate::fake_github::state::Shared;
use crate::fake_github::state::World;

/// Merges pull request `number` of `owner/name` as `by` (nobody named when `None`): a merge
/// commit on the base branch, then the pull request closed as merged with `merged` and
/// `closed` events. Returns the pull request.
pub async fn merge(
    shared: &Shared,
    owner: &str,
    name: &str,
    number: u64,
    by: Option<&str>,
) -> Result<Value, ApiError> {
    refresh_pulls(shared, owner, name).await?;
    let (base_path, head_path, base_ref, head_sha) = {
        let world = shared.lock();
        if let Some(by) = by {
            world.user(by)?;
        }
        let repo = world.repo(owner, name)?;
        let (issue, pull) = repo.pull(number)?;
        if pull.merged() {
            return Err(ApiError::Validation(
                "Pull Request is already merged".to_owned(),
            ));
        }
        if !issue.open {
            return Err(ApiError::Validation("Pull Request is closed".to_owned()));
        }
        if pull.mergeable == Some(false) {
            return Err(ApiError::Validation(
                "Pull Request is not mergeable".to_owned(),
            ));
        }
        let head = world.repos.get(&pull.head_repo).unwrap_or(repo);
        (
            repo.path.clone(),
            head.path.clone(),
            pull.base_ref.clone(),
            pull.head_sha.clone(),
        )
    };
    let message = format!("Merge pull request #{number}");
    let merged = git::merge(
        &base_path, &base_ref, &head_path, &head_sha, number, &message,
    )
    .await
    .map_err(|e| ApiError::Internal(e.to_string()))?;
    let mut world = shared.lock();
    let ids = (world.next_id(), world.next_id());
    let issue = world.repo_mut(owner, name)?.issue_mut(number)?;
    let pull = issue.pull.as_mut().ok_or(ApiError::NotFound)?;
    let sha = match merged {
        Merge::Merged(sha) => sha,
        Merge::Conflict => {
            pull.mergeable = Some(false);
            return Err(ApiError::Validation(
                "Pull Request is not mergeable: head and base conflict".to_owned(),
            ));
        }
        Merge::NoBase => {
            return Err(ApiError::Validation(format!(
                "base branch {base_ref} does not exist"
            )));
        }
    };
    let at = now();
    pull.merged_at = Some(at.clone());
    pull.merged_by = by.map(str::to_owned);
    pull.merge_commit_sha = Some(sha.clone());
    issue.open = false;
    issue.closed_at = Some(at.clone());
    issue.updated_at = at.clone();
    issue.events.push(IssueEvent {
        commit_id: Some(sha),
        ..IssueEvent::new(ids.0, "merged", by, &at)
    });
    issue.events.push(IssueEvent::new(ids.1, "closed", by, &at));
    let repo = world.repo(owner, name)?;
    shape::pull(&world, repo, repo.issue(number)?).ok_or(ApiError::NotFound)
}

/// Sets what `mergeable` shows while the pull request is open; returns the pull request.
pub fn set_mergeable(
    world: &mut World,
    full_name: &str,
    number: u64,
    mergeable: Option<bool>,
) -> Result<Value, ApiError> {
    let (owner, name) = split_full_name(full_name)?;
    let issue = world.repo_mut(owner, name)?.issue_mut(number)?;
    let pull = issue.pull.as_mut().ok_or(ApiError::NotFound)?;
    pull.mergeable = mergeable;
    let repo = world.repo(owner, name)?;
    shape::pull(world, repo, repo.issue(number)?).ok_or(ApiError::NotFound)
}
