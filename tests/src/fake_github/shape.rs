//! GitHub's JSON shapes for the fake's objects: users, repositories, issues (pull requests
//! included), events, comments, pull requests and their reviews, and CI (workflow runs, jobs,
//! check runs, commit statuses). One function per shape, so a field is spelled once whichever
//! route or control call shows it.

use serde_json::json;
use serde_json::Value;

use super::state::ci::CheckRun;
use super::state::ci::CommitStatus;
use super::state::ci::Job;
use super::state::ci::WorkflowRun;
use super::state::pull_node_id;
use super::state::Comment;
use super::state::Issue;
use super::state::IssueEvent;
use super::state::Pull;
use super::state::Repo;
use super::state::Review;
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
        "labels": issue.labels.iter().enumerate().map(|(i, name)| json!({
            "id": issue.id * 100 + i as u64,
            "name": name,
            "color": "ededed",
            "default": false,
            "description": Value::Null,
        })).collect::<Vec<Value>>(),
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
    // GitHub stops computing mergeability once a pull request is closed or merged.
    let mergeable = if issue.open && !pull.merged() {
        pull.mergeable
    } else {
        None
    };
    let mergeable_state = match mergeable {
        Some(true) => "clean",
        Some(false) => "dirty",
        None => "unknown",
    };
    Some(json!({
        "id": issue.id,
        "node_id": pull_node_id(issue.id),
        "number": issue.number,
        "title": issue.title,
        "body": issue.body,
        "state": state(issue),
        "locked": false,
        "draft": pull.draft,
        "merged": pull.merged(),
        "merged_at": pull.merged_at,
        "merge_commit_sha": pull.merge_commit_sha,
        "merged_by": pull.merged_by.as_deref().map(|login| user(world, login)),
        "mergeable": mergeable,
        "mergeable_state": mergeable_state,
        "user": user(world, &issue.author),
        "assignees": issue.assignees.iter().map(|a| user(world, a)).collect::<Vec<_>>(),
        "requested_reviewers": [],
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
        "actor": event.actor.as_deref().map(|login| user(world, login)),
        "assignee": event.assignee.as_deref().map(|login| user(world, login)),
        "commit_id": event.commit_id,
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

/// Returns a comment as the timeline lists it: the comment with `event: "commented"` and its
/// author as `actor` too.
pub fn timeline_comment(world: &World, repo: &Repo, number: u64, c: &Comment) -> Value {
    let mut entry = comment(world, repo, number, c);
    entry["event"] = json!("commented");
    entry["actor"] = user(world, &c.author);
    entry
}

/// Returns a pull request review.
pub fn review(world: &World, repo: &Repo, number: u64, review: &Review) -> Value {
    let full_name = repo.full_name();
    let association = if review.author == repo.owner {
        "OWNER"
    } else {
        "COLLABORATOR"
    };
    json!({
        "id": review.id,
        "node_id": format!("PRR_{}", review.id),
        "user": user(world, &review.author),
        "body": review.body,
        "state": review.state.as_str(),
        "html_url": format!(
            "{}/{full_name}/pull/{number}#pullrequestreview-{}",
            world.base_url, review.id
        ),
        "pull_request_url": format!("{}/repos/{full_name}/pulls/{number}", world.base_url),
        "commit_id": review.commit_id,
        "submitted_at": review.submitted_at,
        "author_association": association,
    })
}

/// Returns a pull request as GraphQL's `repository.pullRequest` shows it.
pub fn graphql_pull(world: &World, issue: &Issue, pull: &Pull) -> Value {
    let state = if pull.merged() {
        "MERGED"
    } else if issue.open {
        "OPEN"
    } else {
        "CLOSED"
    };
    let merged_by = pull.merged_by.as_deref().map(|login| {
        let kind = world.users.get(login).map_or("User", |u| u.kind.as_str());
        json!({ "login": login, "__typename": kind })
    });
    json!({
        "id": pull_node_id(issue.id),
        "number": issue.number,
        "isDraft": pull.draft,
        "state": state,
        "headRefOid": pull.head_sha,
        "merged": pull.merged(),
        "mergedBy": merged_by,
    })
}

/// Returns a workflow run.
pub fn workflow_run(world: &World, repo: &Repo, run: &WorkflowRun) -> Value {
    let full_name = repo.full_name();
    let api = format!(
        "{}/repos/{full_name}/actions/runs/{}",
        world.base_url, run.id
    );
    json!({
        "id": run.id,
        "name": run.name,
        "path": run.path,
        "event": run.event,
        "status": run.status,
        "conclusion": run.conclusion,
        "head_sha": run.head_sha,
        "run_attempt": run.run_attempt,
        "html_url": format!("{}/{full_name}/actions/runs/{}", world.base_url, run.id),
        "url": api,
        "jobs_url": format!("{api}/jobs"),
        "created_at": run.created_at,
        "updated_at": run.created_at,
    })
}

/// Returns a job of a workflow run.
pub fn job(world: &World, repo: &Repo, run: &WorkflowRun, job: &Job) -> Value {
    let full_name = repo.full_name();
    json!({
        "id": job.id,
        "run_id": run.id,
        "run_attempt": job.run_attempt,
        "name": job.name,
        "status": job.status,
        "conclusion": job.conclusion,
        "head_sha": run.head_sha,
        "started_at": job.started_at,
        "completed_at": job.completed_at,
        "html_url": job_html_url(world, &full_name, run.id, job.id),
        "url": format!("{}/repos/{full_name}/actions/jobs/{}", world.base_url, job.id),
    })
}

/// Returns a check run.
pub fn check_run(world: &World, repo: &Repo, check: &CheckRun) -> Value {
    let full_name = repo.full_name();
    let details = job_html_url(world, &full_name, check.run_id, check.job_id);
    json!({
        "id": check.id,
        "name": check.name,
        "head_sha": check.head_sha,
        "status": check.status,
        "conclusion": check.conclusion,
        "details_url": details,
        "html_url": details,
        "started_at": check.started_at,
        "completed_at": check.completed_at,
        "url": format!("{}/repos/{full_name}/check-runs/{}", world.base_url, check.id),
    })
}

/// Returns a commit status.
pub fn status(world: &World, repo: &Repo, status: &CommitStatus) -> Value {
    json!({
        "id": status.id,
        "context": status.context,
        "state": status.state,
        "description": status.description,
        "target_url": format!("{}/{}/statuses/{}", world.base_url, repo.full_name(), status.id),
        "created_at": status.created_at,
        "updated_at": status.created_at,
    })
}

fn job_html_url(world: &World, full_name: &str, run_id: u64, job_id: u64) -> String {
    format!(
        "{}/{full_name}/actions/runs/{run_id}/job/{job_id}",
        world.base_url
    )
}

fn state(issue: &Issue) -> &'static str {
    if issue.open {
        "open"
    } else {
        "closed"
    }
}
