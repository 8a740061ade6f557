//! GitHub's JSON shapes for the fake's objects: users, repositories, issues (pull requests
//! included), events, comments and pull requests. One function per shape, so a field is spelled
//! once whichever route or control call shows it.

use serde_json::json;
use serde_json::Value;

use super::state::Comment;
use super::state::Issue;
use super::state::IssueEvent;
use super::state::Repo;
use super::state::World;

/// Returns the short user object (`{login, id, type, …}`); an unknown login shows as a `User`.
pub fn user(world: &World, login: &str) -> Value {
    let (id, kind) = world
        .users
        .get(login)
        .map_or((0, "User"), |u| (u.id, u.kind.as_str()));
    json!({
        "login": login,
        "id": id,
        "type": kind,
        "site_admin": false,
        "html_url": format!("{}/{login}", world.base_url),
    })
}

/// Returns a repository object; `clone_url` is the bare repository as a `file://` URL.
pub fn repo(world: &World, repo: &Repo) -> Value {
    let full_name = repo.full_name();
    json!({
        "id": repo.id,
        "name": repo.name,
        "full_name": full_name,
        "owner": user(world, &repo.owner),
        "private": false,
        "default_branch": repo.default_branch,
        "clone_url": format!("file://{}", repo.path.display()),
        "html_url": format!("{}/{full_name}", world.base_url),
    })
}

/// Returns an issue as the issues API shows it; a pull request carries `pull_request`.
pub fn issue(world: &World, repo: &Repo, issue: &Issue) -> Value {
    let full_name = repo.full_name();
    let assignees: Vec<Value> = issue.assignees.iter().map(|a| user(world, a)).collect();
    let html_kind = if issue.pull.is_some() {
        "pull"
    } else {
        "issues"
    };
    let mut value = json!({
        "id": issue.id,
        "number": issue.number,
        "title": issue.title,
        "body": issue.body,
        "state": state(issue),
        "state_reason": Value::Null,
        "locked": false,
        "user": user(world, &issue.author),
        "assignee": assignees.first().cloned().unwrap_or(Value::Null),
        "assignees": assignees,
        "labels": [],
        "comments": issue.comments.len(),
        "created_at": issue.created_at,
        "updated_at": issue.updated_at,
        "closed_at": issue.closed_at,
        "html_url": format!("{}/{full_name}/{html_kind}/{}", world.base_url, issue.number),
        "url": format!("{}/repos/{full_name}/issues/{}", world.base_url, issue.number),
    });
    if let Some(pull) = &issue.pull {
        value["pull_request"] = json!({
            "url": format!("{}/repos/{full_name}/pulls/{}", world.base_url, issue.number),
            "html_url": format!("{}/{full_name}/pull/{}", world.base_url, issue.number),
            "merged_at": pull.merged_at,
        });
    }
    value
}

/// Returns a pull request as the pulls API shows it, or `None` for a plain issue.
pub fn pull(world: &World, repo: &Repo, issue: &Issue) -> Option<Value> {
    let pull = issue.pull.as_ref()?;
    let full_name = repo.full_name();
    Some(json!({
        "id": issue.id,
        "number": issue.number,
        "title": issue.title,
        "body": issue.body,
        "state": state(issue),
        "locked": false,
        "draft": pull.draft,
        "merged": pull.merged_at.is_some(),
        "merged_at": pull.merged_at,
        "merge_commit_sha": pull.merge_commit_sha,
        "merged_by": pull.merged_by.as_deref().map(|login| user(world, login)),
        "mergeable": issue.open.then_some(true),
        "user": user(world, &issue.author),
        "assignees": issue.assignees.iter().map(|a| user(world, a)).collect::<Vec<_>>(),
        "head": {
            "ref": pull.head_ref,
            "sha": pull.head_sha,
            "label": pull.head_label(),
            "repo": { "full_name": pull.head_repo },
        },
        "base": {
            "ref": pull.base_ref,
            "sha": pull.base_sha,
            "label": format!("{}:{}", repo.owner, pull.base_ref),
            "repo": { "full_name": full_name },
        },
        "created_at": issue.created_at,
        "updated_at": issue.updated_at,
        "closed_at": issue.closed_at,
        "html_url": format!("{}/{full_name}/pull/{}", world.base_url, issue.number),
        "url": format!("{}/repos/{full_name}/pulls/{}", world.base_url, issue.number),
    }))
}

/// Returns an issue event.
pub fn event(world: &World, event: &IssueEvent) -> Value {
    json!({
        "id": event.id,
        "event": event.event,
        "actor": user(world, &event.actor),
        "assignee": event.assignee.as_deref().map(|login| user(world, login)),
        "created_at": event.created_at,
    })
}

/// Returns an issue comment.
pub fn comment(world: &World, repo: &Repo, number: u64, comment: &Comment) -> Value {
    json!({
        "id": comment.id,
        "body": comment.body,
        "user": user(world, &comment.author),
        "created_at": comment.created_at,
        "updated_at": comment.updated_at,
        "html_url": format!(
            "{}/{}/issues/{number}#issuecomment-{}",
            world.base_url,
            repo.full_name(),
            comment.id
        ),
    })
}

fn state(issue: &Issue) -> &'static str {
    if issue.open {
        "open"
    } else {
        "closed"
    }
}
