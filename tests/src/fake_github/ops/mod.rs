//! The changes to the world that both the REST routes and the control API make: opening issues
//! and pull requests, assignment, comments, closing, and refreshing pull request tips from the
//! bare repositories here; reviews, merging, the merge queue and CI in the submodules. Each returns the JSON
//! GitHub would answer with.

pub mod ci;
pub mod merge;
pub mod queue;
pub mod reviews;

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use super::error::ApiError;
use super::git;
use super::shape;
use super::state::now;
use super::state::Comment;
use super::state::Issue;
use super::state::IssueEvent;
use super::state::Pull;
use super::state::Shared;
use super::state::World;

/// Splits `owner/name`, or 404.
pub fn split_full_name(full_name: &str) -> Result<(&str, &str), ApiError> {
    full_name.split_once('/').ok_or(ApiError::NotFound)
}

/// Opens an issue by `author` and returns its number.
pub fn open_issue(
    world: &mut World,
    full_name: &str,
    author: &str,
    title: &str,
    body: &str,
) -> Result<u64, ApiError> {
    open_issue_numbered(world, full_name, None, author, title, body)
}

/// Opens an issue by `author` numbered `wanted` when that number is free (else the next
/// number) and returns its number.
pub fn open_issue_numbered(
    world: &mut World,
    full_name: &str,
    wanted: Option<u64>,
    author: &str,
    title: &str,
    body: &str,
) -> Result<u64, ApiError> {
    world.user(author)?;
    let (owner, name) = split_full_name(full_name)?;
    let id = world.next_id();
    let repo = world.repo_mut(owner, name)?;
    let number = wanted
        .filter(|n| *n > 0 && !repo.issues.contains_key(n))
        .unwrap_or_else(|| repo.next_number());
    let at = now();
    repo.issues.insert(
        number,
        Issue {
            id,
            number,
            title: title.to_owned(),
            body: body.to_owned(),
            open: true,
            author: author.to_owned(),
            assignees: Vec::new(),
            labels: Vec::new(),
            created_at: at.clone(),
            updated_at: at,
            closed_at: None,
            events: Vec::new(),
            comments: Vec::new(),
            pull: None,
        },
    );
    Ok(number)
}

/// Adds (`add`) or removes an assignee, recording an `assigned`/`unassigned` event by `actor`
/// when that changes anything.
pub fn set_assignee(
    world: &mut World,
    full_name: &str,
    number: u64,
    assignee: &str,
    actor: &str,
    add: bool,
) -> Result<(), ApiError> {
    world.user(assignee)?;
    world.user(actor)?;
    let (owner, name) = split_full_name(full_name)?;
    let id = world.next_id();
    let issue = world.repo_mut(owner, name)?.issue_mut(number)?;
    let present = issue.assignees.iter().any(|a| a == assignee);
    if present == add {
        return Ok(());
    }
    if add {
        issue.assignees.push(assignee.to_owned());
    } else {
        issue.assignees.retain(|a| a != assignee);
    }
    let at = now();
    let event = if add { "assigned" } else { "unassigned" };
    issue.events.push(IssueEvent {
        assignee: Some(assignee.to_owned()),
        ..IssueEvent::new(id, event, Some(actor), &at)
    });
    issue.updated_at = at;
    Ok(())
}

/// Replaces the issue's labels (as `PUT /repos/{owner}/{repo}/issues/{n}/labels` does).
pub fn set_labels(
    world: &mut World,
    full_name: &str,
    number: u64,
    labels: &[String],
) -> Result<(), ApiError> {
    let (owner, name) = split_full_name(full_name)?;
    let issue = world.repo_mut(owner, name)?.issue_mut(number)?;
    issue.labels = labels.to_vec();
    issue.updated_at = now();
    Ok(())
}

/// Adds a comment by `author` and returns it as GitHub shows it.
pub fn comment(
    world: &mut World,
    full_name: &str,
    number: u64,
    author: &str,
    body: &str,
) -> Result<Value, ApiError> {
    world.user(author)?;
    let (owner, name) = split_full_name(full_name)?;
    let id = world.next_id();
    let issue = world.repo_mut(owner, name)?.issue_mut(number)?;
    let at = now();
    let comment = Comment {
        id,
        body: body.to_owned(),
        author: author.to_owned(),
        created_at: at.clone(),
        updated_at: at.clone(),
    };
    issue.comments.push(comment.clone());
    issue.updated_at = at;
    let repo = world.repo(owner, name)?;
    Ok(shape::comment(world, repo, number, &comment))
}

/// Closes an issue or pull request (unmerged), recording a `closed` event by `actor`.
pub fn close(
    world: &mut World,
    full_name: &str,
    number: u64,
    actor: Option<&str>,
) -> Result<(), ApiError> {
    if let Some(actor) = actor {
        world.user(actor)?;
    }
    let (owner, name) = split_full_name(full_name)?;
    let id = world.next_id();
    let issue = world.repo_mut(owner, name)?.issue_mut(number)?;
    if !issue.open {
        return Ok(());
    }
    let at = now();
    issue.open = false;
    issue.closed_at = Some(at.clone());
    issue.updated_at = at.clone();
    let actor = actor.unwrap_or(&issue.author).to_owned();
    issue
        .events
        .push(IssueEvent::new(id, "closed", Some(&actor), &at));
    Ok(())
}

/// What a new pull request asks for, after `head` has been resolved to a repository.
#[derive(Debug)]
pub struct NewPull {
    pub title: String,
    pub body: String,
    pub author: String,
    pub head_repo: String,
    pub head_ref: String,
    pub base_ref: String,
    pub draft: bool,
}

/// Resolves a pull request's `head` (`branch` or `owner:branch`) in the target `owner/name`:
/// returns the head repository's full name and path and the branch. `owner:branch` names that
/// owner's repository of the same name when it exists (a fork), else the target.
pub fn resolve_head(
    world: &World,
    full_name: &str,
    head: &str,
) -> Result<(String, PathBuf, String), ApiError> {
    let (owner, name) = split_full_name(full_name)?;
    let target = world.repo(owner, name)?;
    let (head_owner, branch) = head.split_once(':').unwrap_or((owner, head));
    let repo = world.repo(head_owner, name).unwrap_or(target);
    Ok((repo.full_name(), repo.path.clone(), branch.to_owned()))
}

/// Opens a pull request after checking its branches against the current tips: `head_tips` of
/// the head repository, `base_tips` of the target. Returns its JSON.
pub fn open_pull(
    world: &mut World,
    full_name: &str,
    new: NewPull,
    head_tips: &BTreeMap<String, String>,
    base_tips: &BTreeMap<String, String>,
) -> Result<Value, ApiError> {
    world.user(&new.author)?;
    let (owner, name) = split_full_name(full_name)?;
    let Some(head_sha) = head_tips.get(&new.head_ref) else {
        return Err(ApiError::Validation(format!(
            "head branch {} does not exist in {}",
            new.head_ref, new.head_repo
        )));
    };
    let Some(base_sha) = base_tips.get(&new.base_ref) else {
        return Err(ApiError::Validation(format!(
            "base branch {} does not exist in {full_name}",
            new.base_ref
        )));
    };
    if head_sha == base_sha {
        return Err(ApiError::Validation(format!(
            "No commits between {} and {}",
            new.base_ref, new.head_ref
        )));
    }
    let pull = Pull {
        head_repo: new.head_repo,
        head_ref: new.head_ref,
        head_sha: head_sha.clone(),
        base_ref: new.base_ref,
        base_sha: base_sha.clone(),
        draft: new.draft,
        merged_at: None,
        merged_by: None,
        merge_commit_sha: None,
        mergeable: Some(true),
        queued_by: None,
        reviews: Vec::new(),
    };
    let label = pull.head_label();
    let repo = world.repo(owner, name)?;
    let duplicate = repo.issues.values().any(|i| {
        i.open
            && i.pull
                .as_ref()
                .is_some_and(|p| p.head_label() == label && p.base_ref == pull.base_ref)
    });
    if duplicate {
        return Err(ApiError::Validation(format!(
            "A pull request already exists for {label}."
        )));
    }
    let number = open_issue(world, full_name, &new.author, &new.title, &new.body)?;
    let repo = world.repo_mut(owner, name)?;
    let issue = repo.issue_mut(number)?;
    issue.pull = Some(pull);
    let repo = world.repo(owner, name)?;
    shape::pull(world, repo, repo.issue(number)?).ok_or(ApiError::NotFound)
}

/// Reads the tips of every branch the open pull requests of `owner/name` point at and records
/// them, so `head.sha` and `base.sha` follow pushes. Closed pull requests keep their last tips.
pub async fn refresh_pulls(shared: &Shared, owner: &str, name: &str) -> Result<(), ApiError> {
    let paths: BTreeMap<String, PathBuf> = {
        let world = shared.lock();
        let repo = world.repo(owner, name)?;
        let mut paths = BTreeMap::from([(repo.full_name(), repo.path.clone())]);
        for pull in repo.issues.values().filter(|i| i.open) {
            if let Some(p) = &pull.pull {
                if let Some(head) = world.repos.get(&p.head_repo) {
                    paths.insert(p.head_repo.clone(), head.path.clone());
                }
            }
        }
        paths
    };
    let mut tips = BTreeMap::new();
    for (full_name, path) in paths {
        let branches = git::branches(&path)
            .await
            .map_err(|e| ApiError::Internal(e.to_string()))?;
        tips.insert(full_name, branches);
    }
    let mut world = shared.lock();
    let repo = world.repo_mut(owner, name)?;
    let full_name = repo.full_name();
    for issue in repo.issues.values_mut().filter(|i| i.open) {
        let Some(pull) = issue.pull.as_mut() else {
            continue;
        };
        if let Some(sha) = tips
            .get(&pull.head_repo)
            .and_then(|t| t.get(&pull.head_ref))
        {
            pull.head_sha = sha.clone();
        }
        if let Some(sha) = tips.get(&full_name).and_then(|t| t.get(&pull.base_ref)) {
            pull.base_sha = sha.clone();
        }
    }
    Ok(())
}
