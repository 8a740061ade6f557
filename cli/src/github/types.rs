//! The few GitHub objects the coordinator reads, parsed leniently from REST JSON: a missing
//! optional field is `None`, a missing required one makes the whole object `None` (the
//! caller turns that into a protocol error naming the route).

use agent_coord_shared::coordinator::evidence::IssueEvent;
use agent_coord_shared::coordinator::reply::IssueComment;
use serde_json::Value;

fn s(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn login(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(|u| s(u, "login"))
}

fn user_type(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(|u| s(u, "type"))
}

/// A GitHub user or bot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct User {
    pub(crate) login: String,
    pub(crate) kind: String,
}

impl User {
    pub(crate) fn from_json(v: &Value) -> Option<User> {
        Some(User {
            login: s(v, "login")?,
            kind: s(v, "type").unwrap_or_default(),
        })
    }
}

/// A repository.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Repository {
    pub(crate) full_name: String,
    pub(crate) clone_url: String,
    pub(crate) default_branch: String,
}

impl Repository {
    pub(crate) fn from_json(v: &Value) -> Option<Repository> {
        Some(Repository {
            full_name: s(v, "full_name")?,
            clone_url: s(v, "clone_url")?,
            default_branch: s(v, "default_branch")?,
        })
    }
}

/// An issue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Issue {
    pub(crate) number: u64,
    pub(crate) title: String,
    pub(crate) body: String,
    pub(crate) state: String,
    pub(crate) assignees: Vec<String>,
}

impl Issue {
    pub(crate) fn from_json(v: &Value) -> Option<Issue> {
        Some(Issue {
            number: v.get("number")?.as_u64()?,
            title: s(v, "title")?,
            body: s(v, "body").unwrap_or_default(),
            state: s(v, "state")?,
            assignees: v
                .get("assignees")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(|u| s(u, "login")).collect())
                .unwrap_or_default(),
        })
    }
}

/// A pull request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PullRequest {
    pub(crate) number: u64,
    pub(crate) state: String,
    pub(crate) draft: bool,
    pub(crate) html_url: String,
    pub(crate) head_ref: String,
    pub(crate) head_sha: String,
    pub(crate) base_ref: String,
    pub(crate) author: String,
    /// GraphQL's id (for `markPullRequestReadyForReview`).
    pub(crate) node_id: String,
    /// `None` while GitHub is still computing it.
    pub(crate) mergeable: Option<bool>,
    pub(crate) merged: bool,
    pub(crate) merged_at: Option<String>,
    pub(crate) merged_by: Option<String>,
    pub(crate) merged_by_type: Option<String>,
    pub(crate) merge_commit_sha: Option<String>,
}

impl PullRequest {
    pub(crate) fn from_json(v: &Value) -> Option<PullRequest> {
        let head = v.get("head")?;
        let base = v.get("base")?;
        Some(PullRequest {
            number: v.get("number")?.as_u64()?,
            state: s(v, "state")?,
            draft: v.get("draft").and_then(Value::as_bool).unwrap_or(false),
            html_url: s(v, "html_url").unwrap_or_default(),
            head_ref: s(head, "ref")?,
            head_sha: s(head, "sha")?,
            base_ref: s(base, "ref")?,
            author: login(v, "user").unwrap_or_default(),
            node_id: s(v, "node_id").unwrap_or_default(),
            mergeable: v.get("mergeable").and_then(Value::as_bool),
            merged: v.get("merged").and_then(Value::as_bool).unwrap_or(false),
            merged_at: s(v, "merged_at"),
            merged_by: login(v, "merged_by"),
            merged_by_type: user_type(v, "merged_by"),
            merge_commit_sha: s(v, "merge_commit_sha"),
        })
    }
}

/// A pull request review.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Review {
    pub(crate) id: u64,
    pub(crate) login: String,
    /// `APPROVED`, `COMMENTED`, `CHANGES_REQUESTED`, `DISMISSED`, `PENDING`.
    pub(crate) state: String,
    pub(crate) commit_id: String,
    pub(crate) body: String,
    pub(crate) html_url: String,
}

impl Review {
    pub(crate) fn from_json(v: &Value) -> Option<Review> {
        Some(Review {
            id: v.get("id")?.as_u64()?,
            login: login(v, "user").unwrap_or_default(),
            state: s(v, "state")?,
            commit_id: s(v, "commit_id").unwrap_or_default(),
            body: s(v, "body").unwrap_or_default(),
            html_url: s(v, "html_url").unwrap_or_default(),
        })
    }
}

/// A new draft pull request.
#[derive(Debug, serde::Serialize)]
pub(crate) struct NewPull<'a> {
    pub(crate) title: &'a str,
    /// `branch` or `owner:branch`.
    pub(crate) head: &'a str,
    pub(crate) base: &'a str,
    pub(crate) body: &'a str,
}

pub(super) fn issue_event(v: &Value) -> Option<IssueEvent> {
    Some(IssueEvent {
        id: v.get("id")?.as_u64()?,
        event: s(v, "event")?,
        actor_login: login(v, "actor"),
        actor_type: user_type(v, "actor"),
        assignee_login: login(v, "assignee"),
        created_at: s(v, "created_at").unwrap_or_default(),
    })
}

pub(super) fn issue_comment(v: &Value) -> Option<IssueComment> {
    Some(IssueComment {
        id: v.get("id")?.as_u64()?,
        author: login(v, "user").unwrap_or_default(),
        author_type: user_type(v, "user").unwrap_or_default(),
        body: s(v, "body").unwrap_or_default(),
        created_at: s(v, "created_at").unwrap_or_default(),
    })
}

#[cfg(test)]
mod tests {
    //! Parsing captured REST shapes.
    use serde_json::json;

    use super::*;

    #[test]
    fn an_issue_event_reads_actor_type_and_assignee() {
        let e = issue_event(&json!({
            "id": 5, "event": "assigned", "created_at": "2026-01-01T00:00:00Z",
            "actor": {"login": "human", "type": "User"},
            "assignee": {"login": "bot", "type": "Bot"}
        }))
        .unwrap();
        assert_eq!(e.actor_type.as_deref(), Some("User"));
        assert_eq!(e.assignee_login.as_deref(), Some("bot"));
        assert_eq!(issue_event(&json!({"event": "assigned"})), None);
    }

    #[test]
    fn a_pull_request_needs_head_and_base() {
        let pr = PullRequest::from_json(&json!({
            "number": 3, "state": "open", "draft": true, "html_url": "u",
            "head": {"ref": "b", "sha": "abc"}, "base": {"ref": "main"},
            "user": {"login": "bot"}
        }))
        .unwrap();
        assert!(pr.draft);
        assert_eq!(pr.author, "bot");
        assert_eq!(
            PullRequest::from_json(&json!({"number": 3, "state": "open"})),
            None
        );
    }
}
