//! GitHub's merge queue as a person or a bot uses it on github.com, which the coordinator
//! never does: putting a pull request into the queue (an `added_to_merge_queue` event whose
//! actor is the enqueuer) and the queue merging it. The queue merges as its own app account,
//! [`MERGE_QUEUE_LOGIN`] of type `Bot`: it removes the entry (`removed_from_merge_queue`),
//! then merges as the merge button does, so `merged_by` and the `merged` and `closed` events
//! name the app, not the enqueuer — the person is only on the timeline.

use serde_json::Value;

use super::merge;
use super::refresh_pulls;
use crate::fake_github::error::ApiError;
use crate::fake_github::git;
use crate::fake_github::shape;
use crate::fake_github::state::now;
use crate::fake_github::state::IssueEvent;
use crate::fake_github::state::Shared;
use crate::fake_github::state::User;
use crate::fake_github::state::UserKind;
use crate::fake_github::state::World;

/// The merge queue's app account, as GitHub names it.
pub const MERGE_QUEUE_LOGIN: &str = "github-merge-queue[bot]";

/// Puts pull request `number` of `owner/name` into the merge queue as `by`; returns the pull
/// request. Refused with 422: a closed or draft pull request, or one already queued.
pub fn enqueue(
    world: &mut World,
    owner: &str,
    name: &str,
    number: u64,
    by: &str,
) -> Result<Value, ApiError> {
    world.user(by)?;
    if !world.users.contains_key(MERGE_QUEUE_LOGIN) {
        let id = world.next_id();
        let queue = User {
            id,
            kind: UserKind::Bot,
        };
        world.users.insert(MERGE_QUEUE_LOGIN.to_owned(), queue);
    }
    let id = world.next_id();
    let issue = world.repo_mut(owner, name)?.issue_mut(number)?;
    let open = issue.open;
    let pull = issue.pull.as_mut().ok_or(ApiError::NotFound)?;
    if !open || pull.merged() {
        return Err(ApiError::Validation("Pull Request is closed".to_owned()));
    }
    if pull.draft {
        return Err(ApiError::Validation(
            "a draft pull request cannot be added to the merge queue".to_owned(),
        ));
    }
    if pull.queued_by.is_some() {
        return Err(ApiError::Validation(
            "Pull Request is already in the merge queue".to_owned(),
        ));
    }
    pull.queued_by = Some(by.to_owned());
    let at = now();
    issue.updated_at = at.clone();
    issue
        .events
        .push(IssueEvent::new(id, "added_to_merge_queue", Some(by), &at));
    let repo = world.repo(owner, name)?;
    shape::pull(world, repo, repo.issue(number)?).ok_or(ApiError::NotFound)
}

/// The queue merges queued pull request `number`; with `move_head` the head branch first gets
/// a new commit (someone's push landing before the queue built its merge group), so the queue
/// merges a head other than the one that was approved. Returns the pull request. Refused with
/// 422 when it is not in the queue (or when the merge is, as for the button).
pub async fn merge_queued(
    shared: &Shared,
    owner: &str,
    name: &str,
    number: u64,
    move_head: bool,
) -> Result<Value, ApiError> {
    let (head_path, head_ref) = {
        let world = shared.lock();
        let repo = world.repo(owner, name)?;
        let (_, pull) = repo.pull(number)?;
        if pull.queued_by.is_none() {
            return Err(ApiError::Validation(
                "Pull Request is not in the merge queue".to_owned(),
            ));
        }
        let head = world.repos.get(&pull.head_repo).unwrap_or(repo);
        (head.path.clone(), pull.head_ref.clone())
    };
    if move_head {
        let file = format!("moved-before-queue-{number}.txt");
        git::commit_on(&head_path, &head_ref, &file, "a push the queue merged\n")
            .await
            .map_err(|e| ApiError::Internal(e.to_string()))?;
        refresh_pulls(shared, owner, name).await?;
    }
    {
        let mut world = shared.lock();
        let id = world.next_id();
        let issue = world.repo_mut(owner, name)?.issue_mut(number)?;
        if let Some(pull) = issue.pull.as_mut() {
            pull.queued_by = None;
        }
        let at = now();
        issue.events.push(IssueEvent::new(
            id,
            "removed_from_merge_queue",
            Some(MERGE_QUEUE_LOGIN),
            &at,
        ));
    }
    merge::merge(shared, owner, name, number, Some(MERGE_QUEUE_LOGIN)).await
}
