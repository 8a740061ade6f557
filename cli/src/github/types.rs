//! The few GitHub objects the coordinator reads, as serde types over GitHub's REST JSON: a
//! missing (or `null`) optional field is its default, a missing required one fails the
//! whole object (the caller turns that into a protocol error naming the route). Nested
//! objects (`head`, `user`, …) are read through private wire types and flattened into the
//! fields the coordinator uses.

use agent_coord_shared::coordinator::evidence::IssueEvent;
use agent_coord_shared::coordinator::merge_queue::TimelineEvent;
use agent_coord_shared::coordinator::reply::IssueComment;
use serde::Deserialize;
use serde::Deserializer;

/// Reads a field GitHub may send as `null` as its type's default.
pub(super) fn nullable<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Option::unwrap_or_default)
}

/// A user as GitHub nests one (`user`, `actor`, `assignee`, `merged_by`).
#[derive(Debug, Default, Deserialize)]
pub(super) struct Who {
    pub(super) login: Option<String>,
    #[serde(rename = "type")]
    kind: Option<String>,
}

/// A GitHub user or bot (`GET /user`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct User {
    pub(crate) login: String,
    #[serde(rename = "type", default, deserialize_with = "nullable")]
    pub(crate) kind: String,
}

/// A repository.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct Repository {
    pub(crate) full_name: String,
    pub(crate) clone_url: String,
    pub(crate) default_branch: String,
}

/// An issue.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "IssueJson")]
pub(crate) struct Issue {
    pub(crate) number: u64,
    pub(crate) title: String,
    pub(crate) body: String,
    pub(crate) state: String,
    pub(crate) assignees: Vec<String>,
    /// The names of its labels (what `priority_labels` ranks).
    pub(crate) labels: Vec<String>,
    /// It is a pull request (the issues API lists both).
    pub(crate) pull_request: bool,
}

#[derive(Deserialize)]
struct IssueJson {
    number: u64,
    title: String,
    #[serde(default, deserialize_with = "nullable")]
    body: String,
    state: String,
    #[serde(default, deserialize_with = "nullable")]
    assignees: Vec<Who>,
    #[serde(default, deserialize_with = "nullable")]
    labels: Vec<Label>,
    #[serde(default)]
    pull_request: Option<serde_json::Value>,
}

/// A label as an issue nests it: GitHub's schema allows a bare name or an object
/// (`{"name": …, "color": …, …}`, what the REST API sends).
#[derive(Deserialize)]
#[serde(untagged)]
enum Label {
    Name(String),
    Object { name: Option<String> },
}

impl Label {
    fn name(self) -> Option<String> {
        match self {
            Label::Name(name) => Some(name),
            Label::Object { name } => name,
        }
    }
}

impl From<IssueJson> for Issue {
    fn from(j: IssueJson) -> Self {
        Issue {
            number: j.number,
            title: j.title,
            body: j.body,
            state: j.state,
            assignees: j.assignees.into_iter().filter_map(|u| u.login).collect(),
            labels: j.labels.into_iter().filter_map(Label::name).collect(),
            pull_request: j.pull_request.is_some_and(|v| !v.is_null()),
        }
    }
}

/// A pull request.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "PullJson")]
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

#[derive(Deserialize)]
struct PullJson {
    number: u64,
    state: String,
    #[serde(default, deserialize_with = "nullable")]
    draft: bool,
    #[serde(default, deserialize_with = "nullable")]
    html_url: String,
    head: Head,
    base: Base,
    #[serde(default, deserialize_with = "nullable")]
    user: Who,
    #[serde(default, deserialize_with = "nullable")]
    node_id: String,
    mergeable: Option<bool>,
    #[serde(default, deserialize_with = "nullable")]
    merged: bool,
    merged_at: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    merged_by: Who,
    merge_commit_sha: Option<String>,
}

/// A pull request's head.
#[derive(Deserialize)]
struct Head {
    #[serde(rename = "ref")]
    name: String,
    sha: String,
}

/// A pull request's base.
#[derive(Deserialize)]
struct Base {
    #[serde(rename = "ref")]
    name: String,
}

impl From<PullJson> for PullRequest {
    fn from(j: PullJson) -> Self {
        PullRequest {
            number: j.number,
            state: j.state,
            draft: j.draft,
            html_url: j.html_url,
            head_ref: j.head.name,
            head_sha: j.head.sha,
            base_ref: j.base.name,
            author: j.user.login.unwrap_or_default(),
            node_id: j.node_id,
            mergeable: j.mergeable,
            merged: j.merged,
            merged_at: j.merged_at,
            merged_by: j.merged_by.login,
            merged_by_type: j.merged_by.kind,
            merge_commit_sha: j.merge_commit_sha,
        }
    }
}

/// A pull request review.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "ReviewJson")]
pub(crate) struct Review {
    pub(crate) id: u64,
    pub(crate) login: String,
    /// `APPROVED`, `COMMENTED`, `CHANGES_REQUESTED`, `DISMISSED`, `PENDING`.
    pub(crate) state: String,
    pub(crate) commit_id: String,
    pub(crate) body: String,
    pub(crate) html_url: String,
}

#[derive(Deserialize)]
struct ReviewJson {
    id: u64,
    #[serde(default, deserialize_with = "nullable")]
    user: Who,
    state: String,
    #[serde(default, deserialize_with = "nullable")]
    commit_id: String,
    #[serde(default, deserialize_with = "nullable")]
    body: String,
    #[serde(default, deserialize_with = "nullable")]
    html_url: String,
}

impl From<ReviewJson> for Review {
    fn from(j: ReviewJson) -> Self {
        Review {
            id: j.id,
            login: j.user.login.unwrap_or_default(),
            state: j.state,
            commit_id: j.commit_id,
            body: j.body,
            html_url: j.html_url,
        }
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

/// An issue event as GitHub lists it; read into the coordinator's [`IssueEvent`].
#[derive(Deserialize)]
pub(super) struct IssueEventJson {
    id: u64,
    event: String,
    #[serde(default, deserialize_with = "nullable")]
    actor: Who,
    #[serde(default, deserialize_with = "nullable")]
    assignee: Who,
    #[serde(default, deserialize_with = "nullable")]
    created_at: String,
}

impl From<IssueEventJson> for IssueEvent {
    fn from(j: IssueEventJson) -> Self {
        IssueEvent {
            id: j.id,
            event: j.event,
            actor_login: j.actor.login,
            actor_type: j.actor.kind,
            assignee_login: j.assignee.login,
            created_at: j.created_at,
        }
    }
}

/// A timeline entry as GitHub lists it; read into the coordinator's [`TimelineEvent`]. Entries
/// differ in shape (a commit has no `actor`, a comment a `user`), so every field but `event`
/// may be missing.
#[derive(Deserialize)]
pub(super) struct TimelineEventJson {
    #[serde(default, deserialize_with = "nullable")]
    event: String,
    #[serde(default, deserialize_with = "nullable")]
    actor: Who,
}

impl From<TimelineEventJson> for TimelineEvent {
    fn from(j: TimelineEventJson) -> Self {
        TimelineEvent {
            event: j.event,
            actor_login: j.actor.login,
            actor_type: j.actor.kind,
        }
    }
}

/// An issue comment as GitHub lists it; read into the coordinator's [`IssueComment`].
#[derive(Deserialize)]
pub(super) struct IssueCommentJson {
    id: u64,
    #[serde(default, deserialize_with = "nullable")]
    user: Who,
    #[serde(default, deserialize_with = "nullable")]
    body: String,
    #[serde(default, deserialize_with = "nullable")]
    created_at: String,
}

impl From<IssueCommentJson> for IssueComment {
    fn from(j: IssueCommentJson) -> Self {
        IssueComment {
            id: j.id,
            author: j.user.login.unwrap_or_default(),
            author_type: j.user.kind.unwrap_or_default(),
            body: j.body,
            created_at: j.created_at,
        }
    }
}

/// What GitHub answers a new comment with.
#[derive(Deserialize)]
pub(super) struct CreatedComment {
    pub(super) id: u64,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) html_url: String,
}

#[cfg(test)]
mod tests {
    //! Parsing captured REST shapes.
    use serde_json::json;
    use serde_json::Value;

    use super::*;

    #[test]
    fn an_issue_event_reads_actor_type_and_assignee() {
        let parse = |v: Value| IssueEventJson::deserialize(&v).ok().map(IssueEvent::from);
        let e = parse(json!({
            "id": 5, "event": "assigned", "created_at": "2026-01-01T00:00:00Z",
            "actor": {"login": "human", "type": "User"},
            "assignee": {"login": "bot", "type": "Bot"}
        }))
        .unwrap();
        assert_eq!(e.actor_type.as_deref(), Some("User"));
        assert_eq!(e.assignee_login.as_deref(), Some("bot"));
        assert_eq!(parse(json!({"event": "assigned"})), None);
    }

    #[test]
    fn timeline_entries_of_every_shape_read_their_event_and_actor() {
        let parse = |v: Value| {
            TimelineEventJson::deserialize(&v)
                .ok()
                .map(TimelineEvent::from)
        };
        let queued = parse(json!({
            "id": 32553266059_u64, "event": "added_to_merge_queue",
            "created_at": "2026-10-05T23:26:11Z", "commit_id": null,
            "actor": {"login": "alice", "type": "User"}
        }))
        .unwrap();
        assert_eq!(queued.event, "added_to_merge_queue");
        assert_eq!(queued.actor_login.as_deref(), Some("alice"));
        assert_eq!(queued.actor_type.as_deref(), Some("User"));
        // A commit has no actor; a comment names its `user` (not read here).
        let commit =
            parse(json!({"event": "committed", "sha": "abc", "author": {"name": "x"}})).unwrap();
        assert_eq!((commit.actor_login, commit.actor_type), (None, None));
        let comment =
            parse(json!({"event": "commented", "actor": null, "user": {"login": "b"}})).unwrap();
        assert_eq!(comment.event, "commented");
        assert_eq!(comment.actor_login, None);
        assert_eq!(parse(json!("not an object")), None);
    }

    #[test]
    fn an_issue_reads_its_label_names_as_objects_or_bare_names() {
        let parse = |v: Value| IssueJson::deserialize(&v).ok().map(Issue::from);
        let issue = parse(json!({
            "number": 7, "title": "t", "body": null, "state": "open",
            "labels": [
                {"id": 1, "name": "urgent", "color": "ff0000", "default": false},
                "bug",
                {"id": 2, "name": null}
            ]
        }))
        .unwrap();
        assert_eq!(issue.labels, ["urgent", "bug"]);
        let bare = parse(json!({"number": 8, "title": "t", "state": "open", "labels": null}));
        assert_eq!(bare.map(|i| i.labels), Some(Vec::new()));
    }

    #[test]
    fn a_pull_request_needs_head_and_base() {
        let parse = |v: Value| PullRequest::deserialize(&v).ok();
        let pr = parse(json!({
            "number": 3, "state": "open", "draft": true, "html_url": "u",
            "head": {"ref": "b", "sha": "abc"}, "base": {"ref": "main"},
            "user": {"login": "bot"}
        }))
        .unwrap();
        assert!(pr.draft);
        assert_eq!(pr.author, "bot");
        assert_eq!(parse(json!({"number": 3, "state": "open"})), None);
    }
}
