//! The fake's in-memory world behind one mutex: users and their tokens, repositories with their
//! issues and pull requests (one number sequence, events and comments on each, reviews on pull
//! requests), each repository's CI per commit and its CI plan (typed in [`ci`]), the request
//! log, armed faults and the counters. Nothing here does I/O; git lives in `git.rs`.

pub mod ci;

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::MutexGuard;
use std::sync::PoisonError;

use serde::Deserialize;
use serde::Serialize;

pub use self::ci::Ci;
pub use self::ci::CiOutcome;
pub use self::ci::CiPlan;
pub use self::ci::CiSpec;
use super::error::ApiError;

/// Whether a GitHub account is a person or an app's bot; shown as `type` in every user object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum UserKind {
    /// A person (`"type": "User"`).
    User,
    /// An app's bot account (`"type": "Bot"`).
    Bot,
}

impl UserKind {
    /// Returns GitHub's spelling of the kind.
    pub fn as_str(self) -> &'static str {
        match self {
            UserKind::User => "User",
            UserKind::Bot => "Bot",
        }
    }
}

/// How an armed fault breaks the request it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FaultMode {
    /// Applies the request, then closes the connection without writing a response.
    DropAfterApply,
    /// Closes the connection without applying the request or writing a response.
    DropBeforeApply,
    /// Answers 500 without applying the request.
    Status500,
}

/// A one-shot fault armed for the next authenticated request that matches it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fault {
    /// HTTP method to match, case-insensitive (`"POST"`).
    pub method: String,
    /// Matches a request path that starts or ends with it (`"/comments"`, `"/repos/o/r/pulls"`).
    pub path: String,
    /// What happens to the matched request.
    pub mode: FaultMode,
}

impl Fault {
    /// Returns whether this fault applies to a request.
    pub fn matches(&self, method: &str, path: &str) -> bool {
        self.method.eq_ignore_ascii_case(method)
            && (path.starts_with(&self.path) || path.ends_with(&self.path))
    }
}

/// One request to the REST API (control requests are not logged).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestLog {
    /// HTTP method.
    pub method: String,
    /// Path without the query.
    pub path: String,
    /// Raw query string, if any.
    pub query: Option<String>,
    /// Status sent; 0 when a fault closed the connection without a response.
    pub status: u16,
    /// The token's user; `None` for a request without (valid) credentials.
    pub login: Option<String>,
    /// The fault that hit this request, if one did.
    pub fault: Option<FaultMode>,
}

/// Counters over the REST API (control requests are not counted).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    /// Every request, anonymous ones included.
    pub requests: u64,
    /// Requests answered 304 Not Modified.
    pub not_modified: u64,
    /// Calls of `PUT /repos/{o}/{r}/pulls/{n}/merge`.
    pub merge_calls: u64,
    /// Simulated `x-ratelimit-remaining` per login.
    pub rate_limit_remaining: BTreeMap<String, u64>,
    /// `POST …/pulls/{n}/reviews` calls by `event` (`APPROVE`, `COMMENT`, `REQUEST_CHANGES`;
    /// `PENDING` without one), refused ones included.
    #[serde(default)]
    pub review_posts: BTreeMap<String, u64>,
    /// Every `POST /graphql`.
    #[serde(default)]
    pub graphql_requests: u64,
    /// GraphQL requests running `markPullRequestReadyForReview`, unknown ids included.
    #[serde(default)]
    pub ready_mutations: u64,
}

/// A GitHub account.
#[derive(Clone, Debug)]
pub struct User {
    pub id: u64,
    pub kind: UserKind,
}

/// A repository backed by a real bare git repository.
#[derive(Clone, Debug)]
pub struct Repo {
    pub id: u64,
    pub owner: String,
    pub name: String,
    pub default_branch: String,
    /// The bare repository, `<root>/<owner>/<name>.git`.
    pub path: PathBuf,
    pub protected: BTreeSet<String>,
    /// Issues and pull requests by number.
    pub issues: BTreeMap<u64, Issue>,
    /// CI by commit sha, made from [`Repo::ci_plan`] when a sha is first asked about.
    pub ci: BTreeMap<String, Ci>,
    pub ci_plan: CiPlan,
}

impl Repo {
    /// Returns `owner/name`.
    pub fn full_name(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }

    /// Returns the next free issue or pull request number.
    pub fn next_number(&self) -> u64 {
        self.issues.keys().next_back().map_or(1, |n| n + 1)
    }

    /// Returns an issue or pull request, or 404.
    pub fn issue(&self, number: u64) -> Result<&Issue, ApiError> {
        self.issues.get(&number).ok_or(ApiError::NotFound)
    }

    /// Returns an issue or pull request for changing, or 404.
    pub fn issue_mut(&mut self, number: u64) -> Result<&mut Issue, ApiError> {
        self.issues.get_mut(&number).ok_or(ApiError::NotFound)
    }

    /// Returns a pull request (404 for a plain issue, as the pulls API answers).
    pub fn pull(&self, number: u64) -> Result<(&Issue, &Pull), ApiError> {
        let issue = self.issue(number)?;
        let pull = issue.pull.as_ref().ok_or(ApiError::NotFound)?;
        Ok((issue, pull))
    }
}

/// An issue; a pull request is an issue with [`Issue::pull`] set.
#[derive(Clone, Debug)]
pub struct Issue {
    pub id: u64,
    pub number: u64,
    pub title: String,
    pub body: String,
    pub open: bool,
    pub author: String,
    pub assignees: Vec<String>,
    /// Label names, in the order they were set.
    pub labels: Vec<String>,
    pub created_at: String,
    pub updated_at: String,
    pub closed_at: Option<String>,
    pub events: Vec<IssueEvent>,
    pub comments: Vec<Comment>,
    pub pull: Option<Pull>,
}

/// One entry of an issue's event list (`assigned`, `unassigned`, `closed`, `merged`, …).
#[derive(Clone, Debug)]
pub struct IssueEvent {
    pub id: u64,
    pub event: String,
    /// `None` shows as `"actor": null` (a merge with nobody named).
    pub actor: Option<String>,
    pub assignee: Option<String>,
    /// The merge commit of a `merged` event.
    pub commit_id: Option<String>,
    pub created_at: String,
}

impl IssueEvent {
    /// Returns an event without an assignee or commit.
    pub fn new(id: u64, event: &str, actor: Option<&str>, at: &str) -> IssueEvent {
        IssueEvent {
            id,
            event: event.to_owned(),
            actor: actor.map(str::to_owned),
            assignee: None,
            commit_id: None,
            created_at: at.to_owned(),
        }
    }
}

/// An issue comment.
#[derive(Clone, Debug)]
pub struct Comment {
    pub id: u64,
    pub body: String,
    pub author: String,
    pub created_at: String,
    pub updated_at: String,
}

/// What makes an issue a pull request.
#[derive(Clone, Debug)]
pub struct Pull {
    /// `owner/name` of the repository holding the head branch.
    pub head_repo: String,
    pub head_ref: String,
    /// Last seen tip of the head branch (kept when the branch is deleted, as GitHub does).
    pub head_sha: String,
    pub base_ref: String,
    pub base_sha: String,
    pub draft: bool,
    pub merged_at: Option<String>,
    pub merged_by: Option<String>,
    pub merge_commit_sha: Option<String>,
    /// What `mergeable` shows while open (`None` = GitHub has not computed it yet).
    pub mergeable: Option<bool>,
    /// Who put it into the merge queue, while it is in the queue.
    pub queued_by: Option<String>,
    /// Oldest first.
    pub reviews: Vec<Review>,
}

impl Pull {
    /// Returns `owner:branch`, GitHub's head label.
    pub fn head_label(&self) -> String {
        let owner = self.head_repo.split('/').next().unwrap_or_default();
        format!("{owner}:{}", self.head_ref)
    }

    /// Returns whether the pull request was merged.
    pub fn merged(&self) -> bool {
        self.merged_at.is_some()
    }
}

/// Returns the GraphQL node id of the pull request whose (REST) id is `id`.
pub fn pull_node_id(id: u64) -> String {
    format!("PR_{id}")
}

/// A pull request review.
#[derive(Clone, Debug)]
pub struct Review {
    pub id: u64,
    pub author: String,
    pub body: String,
    pub state: ReviewState,
    pub commit_id: String,
    /// `None` while pending.
    pub submitted_at: Option<String>,
}

/// The state of a review, as GitHub spells it in `state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReviewState {
    /// Started without an event; seen only by its author.
    Pending,
    /// `event: COMMENT`.
    Commented,
    /// `event: APPROVE`.
    Approved,
    /// `event: REQUEST_CHANGES`.
    ChangesRequested,
    /// An approval or change request somebody dismissed.
    Dismissed,
}

impl ReviewState {
    /// Returns GitHub's spelling (`APPROVED`, `CHANGES_REQUESTED`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewState::Pending => "PENDING",
            ReviewState::Commented => "COMMENTED",
            ReviewState::Approved => "APPROVED",
            ReviewState::ChangesRequested => "CHANGES_REQUESTED",
            ReviewState::Dismissed => "DISMISSED",
        }
    }
}

/// Everything the fake knows.
#[derive(Debug)]
pub struct World {
    /// Directory holding `<owner>/<name>.git`.
    pub root: PathBuf,
    /// `http://127.0.0.1:PORT`, for `Link` headers and `html_url`s.
    pub base_url: String,
    next_id: u64,
    pub users: BTreeMap<String, User>,
    /// Token → login.
    pub tokens: HashMap<String, String>,
    /// By `owner/name`.
    pub repos: BTreeMap<String, Repo>,
    pub requests: Vec<RequestLog>,
    pub faults: Vec<Fault>,
    pub stats: Stats,
    /// How every REST request is answered (the test's switch).
    pub answer: super::switch::Answer,
}

impl World {
    /// Returns an empty world serving from `base_url` with repositories under `root`.
    pub fn new(root: PathBuf, base_url: String) -> World {
        World {
            root,
            base_url,
            next_id: 1000,
            users: BTreeMap::new(),
            tokens: HashMap::new(),
            repos: BTreeMap::new(),
            requests: Vec::new(),
            faults: Vec::new(),
            stats: Stats::default(),
            answer: super::switch::Answer::default(),
        }
    }

    /// Returns a fresh id; ids increase across every kind of object.
    pub fn next_id(&mut self) -> u64 {
        self.next_id += 1;
        self.next_id
    }

    /// Returns a known user, or 422 naming the login.
    pub fn user(&self, login: &str) -> Result<&User, ApiError> {
        self.users
            .get(login)
            .ok_or_else(|| ApiError::Validation(format!("unknown user {login:?}")))
    }

    /// Returns a repository by owner and name, or 404.
    pub fn repo(&self, owner: &str, name: &str) -> Result<&Repo, ApiError> {
        self.repos
            .get(&format!("{owner}/{name}"))
            .ok_or(ApiError::NotFound)
    }

    /// Returns a repository for changing, or 404.
    pub fn repo_mut(&mut self, owner: &str, name: &str) -> Result<&mut Repo, ApiError> {
        self.repos
            .get_mut(&format!("{owner}/{name}"))
            .ok_or(ApiError::NotFound)
    }

    /// Removes and returns the first armed fault matching a request.
    pub fn take_fault(&mut self, method: &str, path: &str) -> Option<FaultMode> {
        let at = self.faults.iter().position(|f| f.matches(method, path))?;
        Some(self.faults.remove(at).mode)
    }
}

/// The world shared by every connection.
#[derive(Clone, Debug)]
pub struct Shared(Arc<Mutex<World>>);

impl Shared {
    /// Wraps a world.
    pub fn new(world: World) -> Shared {
        Shared(Arc::new(Mutex::new(world)))
    }

    /// Locks the world. A panicking handler cannot leave it half-changed in a way later requests
    /// care about, so a poisoned lock is taken over.
    pub fn lock(&self) -> MutexGuard<'_, World> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Returns the current UTC time as GitHub prints it (`2024-05-01T12:00:00Z`).
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Checks one segment of an `owner/name` (or a login): ASCII letters, digits, `-`, `_`, `.`,
/// not starting with `.`, so it is safe as a directory name.
pub fn valid_segment(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('.')
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}
