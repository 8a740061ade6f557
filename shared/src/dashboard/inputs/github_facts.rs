//! GitHub facts, as read: what the last refresh learned from GitHub (repositories, their
//! issues and pull requests with state, labels, assignees, branches and CI), and the parsers
//! that read GitHub's text (repository names, pull URLs, closing references, a CI rollup).
//! The rules that apply the facts to the model are the derive stage's
//! (`derive::github_rules`); what a refresher asks for is [`super::github_wanted`].
//!
//! Without facts ([`super::records::Inputs::github`] is `None`) the build is exactly the
//! git-only build.

use std::collections::BTreeMap;

use crate::dashboard::model::CiState;
use crate::dashboard::model::GhState;
use crate::dashboard::model::SourceStatus;
use crate::time::Instant;

/// Everything the last GitHub refresh learned, and how GitHub answered.
#[derive(Debug, Clone, PartialEq)]
pub struct GithubFacts {
    /// How GitHub answered the last refresh.
    pub status: SourceStatus,
    /// By `owner/repo`: only repositories GitHub answered for.
    pub repos: BTreeMap<String, RepoFacts>,
}

/// What GitHub said about one repository's issues and pull requests.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RepoFacts {
    /// By number: the open items, and every closed item the state mentions or links.
    pub items: BTreeMap<u64, GhItem>,
}

/// One issue or pull request.
#[derive(Debug, Clone, PartialEq)]
pub struct GhItem {
    /// Its number.
    pub number: u64,
    /// A pull request (else an issue).
    pub pull: bool,
    /// Its title.
    pub title: String,
    /// Its state.
    pub state: GhState,
    /// A draft pull request.
    pub draft: bool,
    /// Who opened it.
    pub author: Option<String>,
    /// Who it is assigned to.
    pub assignees: Vec<String>,
    /// A pull request's head branch.
    pub head_branch: Option<String>,
    /// A pull request's head commit.
    pub head_sha: Option<String>,
    /// Its page.
    pub url: Option<String>,
    /// When it was closed.
    pub closed_at: Option<Instant>,
    /// When a pull request merged.
    pub merged_at: Option<Instant>,
    /// The issues a pull request closes (`Closes #12` in its body).
    pub closes: Vec<u64>,
    /// A pull request's CI rollup, when the fleet works on its head.
    pub ci: Option<CiState>,
}

impl GhItem {
    /// An open issue numbered `number` with `title` and nothing else known.
    pub fn issue(number: u64, title: &str) -> GhItem {
        GhItem {
            number,
            pull: false,
            title: title.to_owned(),
            state: GhState::Open,
            draft: false,
            author: None,
            assignees: Vec::new(),
            head_branch: None,
            head_sha: None,
            url: None,
            closed_at: None,
            merged_at: None,
            closes: Vec::new(),
            ci: None,
        }
    }
}

/// Reports whether `s` is `owner/repo` (two plain segments, neither dot-only).
pub fn is_repo_name(s: &str) -> bool {
    let mut parts = s.split('/');
    let ok = |p: Option<&str>| {
        p.is_some_and(|p| {
            !p.is_empty()
                && !p.bytes().all(|b| b == b'.')
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        })
    };
    ok(parts.next()) && ok(parts.next()) && parts.next().is_none()
}

/// The pull request number of a `…/<owner>/<repo>/pull/<n>` URL of `repo` (any host, so
/// Enterprise and the fake count too), else `None`.
pub fn pull_number(url: &str, repo: &str) -> Option<u64> {
    let path = url.split(['?', '#']).next()?.trim_end_matches('/');
    let (head, n) = path.rsplit_once("/pull/")?;
    let n = n.parse().ok()?;
    let head = head.to_lowercase();
    head.ends_with(&format!("/{}", repo.to_lowercase()))
        .then_some(n)
}

/// The issues a pull request body closes: `close[sd]`, `fix(es|ed)` or `resolve[sd]`
/// followed by `#N` or `<repo>#N` (GitHub's closing keywords), in order, without repeats.
pub fn closing_refs(body: &str, repo: &str) -> Vec<u64> {
    const KEYWORDS: [&str; 9] = [
        "close", "closes", "closed", "fix", "fixes", "fixed", "resolve", "resolves", "resolved",
    ];
    let lower = body.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    let mut out = Vec::new();
    for pair in words.windows(2) {
        let keyword = pair[0].trim_end_matches(':');
        if !KEYWORDS.contains(&keyword) {
            continue;
        }
        let reference = pair[1].trim_end_matches(['.', ')', ';']);
        let number = match reference.split_once('#') {
            Some(("", n)) => n.parse().ok(),
            Some((r, n)) if r == repo.to_lowercase() => n.parse().ok(),
            _ => None,
        };
        if let Some(n) = number {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}

/// The CI rollup of a head's check-run conclusions/statuses and commit-status states
/// (reference §7.5): failing if any failed, else pending if any is running, passing only if
/// every one passed (or was neutral or skipped), unknown without any.
pub fn ci_rollup<'a>(states: impl IntoIterator<Item = &'a str>) -> CiState {
    const FAILING: [&str; 7] = [
        "FAILURE",
        "FAILED",
        "ERROR",
        "TIMED_OUT",
        "CANCELLED",
        "ACTION_REQUIRED",
        "STARTUP_FAILURE",
    ];
    const PENDING: [&str; 6] = [
        "QUEUED",
        "IN_PROGRESS",
        "PENDING",
        "EXPECTED",
        "WAITING",
        "REQUESTED",
    ];
    const PASSING: [&str; 3] = ["SUCCESS", "NEUTRAL", "SKIPPED"];
    let states: Vec<String> = states.into_iter().map(str::to_uppercase).collect();
    if states.is_empty() {
        CiState::Unknown
    } else if states.iter().any(|s| FAILING.contains(&s.as_str())) {
        CiState::Failing
    } else if states.iter().any(|s| PENDING.contains(&s.as_str())) {
        CiState::Pending
    } else if states.iter().all(|s| PASSING.contains(&s.as_str())) {
        CiState::Passing
    } else {
        CiState::Unknown
    }
}
