//! GitHub enrichment, the pure half: the facts a refresher learned from GitHub, what the
//! refresher should ask for (which repositories, which items, branches and pull requests the
//! coordination state mentions), and the rules that apply the facts when the model is built
//! (reference §1.2–§1.3, §7.5): a merged pull request is done, a closed issue closed; a
//! declared terminal outranks GitHub; newer active telemetry outranks an older GitHub
//! completion; an unknown state guesses nothing; a branch alone is never terminal; an issue's
//! implementation pull request is found by URL, branch or closing reference; an open item
//! assigned to nobody and held by no claim is ready for a batch.
//!
//! Without facts ([`super::input::Inputs::github`] is `None`) the build is exactly the
//! git-only build.

mod rules;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::collections::BTreeSet;

pub use self::rules::*;
use super::input::Inputs;
use super::input::Meta;
use super::model::CiState;
use super::model::GhState;
use super::model::SourceStatus;
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

/// Returns the repositories to enrich: for now every repository the coordination state
/// mentions (claims, heartbeats, manifests and their targets, events), sorted.
pub fn enrichment_repos(inputs: &Inputs) -> Vec<String> {
    wanted(inputs).into_keys().collect()
}

/// What the state mentions in one repository: the numbers of its items, the branches agents
/// work on, the pull requests their URLs name, and the oldest record time (closed items
/// updated before it cannot have been closed by the fleet).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Wanted {
    /// Item numbers (claims, heartbeats, lane targets, events).
    pub numbers: BTreeSet<u64>,
    /// Work branches.
    pub branches: BTreeSet<String>,
    /// Pull requests named by a `pr_url`.
    pub pulls: BTreeSet<u64>,
    /// The oldest record time.
    pub since: Option<Instant>,
}

impl Wanted {
    fn note(&mut self, target: Option<&str>, meta: &Meta, repo: &str, at: Option<Instant>) {
        if let Some(n) = target.and_then(|t| t.trim().parse::<u64>().ok()) {
            self.numbers.insert(n);
        }
        if let Some(b) = &meta.branch {
            self.branches.insert(b.clone());
        }
        if let Some(n) = meta.pr_url.as_deref().and_then(|u| pull_number(u, repo)) {
            self.pulls.insert(n);
        }
        if let Some(t) = at {
            self.since = Some(self.since.map_or(t, |s| s.min(t)));
        }
    }

    /// Reports whether the fleet works on `pr` (named, on a known branch, or closing an
    /// item the state mentions): its open row is the issue's, and its CI is worth asking.
    pub fn works_on(&self, pr: &GhItem) -> bool {
        self.numbers.contains(&pr.number)
            || self.pulls.contains(&pr.number)
            || pr
                .head_branch
                .as_ref()
                .is_some_and(|b| self.branches.contains(b))
            || pr.closes.iter().any(|n| self.numbers.contains(n))
    }
}

/// Returns what the state mentions, by repository (only `owner/repo` names).
pub fn wanted(inputs: &Inputs) -> BTreeMap<String, Wanted> {
    let mut out: BTreeMap<String, Wanted> = BTreeMap::new();
    let mut note = |repo: &str, target: Option<&str>, meta: &Meta, at: Option<Instant>| {
        if is_repo_name(repo) {
            out.entry(repo.to_owned())
                .or_default()
                .note(target, meta, repo, at);
        }
    };
    for c in &inputs.claims {
        note(&c.repo, Some(&c.target), &c.meta, c.updated_at);
    }
    for h in &inputs.heartbeats {
        if let Some(r) = &h.repo {
            note(r, h.target.as_deref(), &h.meta, h.updated_at);
        }
    }
    for m in &inputs.manifests {
        for t in &m.targets {
            if let Some(r) = t.repo.as_ref().or(m.repo.as_ref()) {
                note(r, Some(&t.target), &Meta::default(), m.updated_at);
            }
        }
        if let Some(r) = &m.repo {
            for l in &m.lanes {
                note(r, None, &l.meta, m.updated_at);
                for t in &l.targets {
                    note(r, Some(t), &Meta::default(), None);
                }
            }
        }
    }
    for e in &inputs.events {
        if let Some(r) = &e.repo {
            note(r, e.target.as_deref(), &e.meta, e.at);
        }
    }
    out
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
