//! One repository's refresh (the list requests, the items the lists did not hold, the CI of
//! the heads the fleet works on), what the refresher remembers between refreshes, how a
//! failure is classified, and where the token comes from.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use agent_coord_shared::dashboard::inputs::github_facts::ci_rollup;
use agent_coord_shared::dashboard::inputs::github_facts::GhItem;
use agent_coord_shared::dashboard::inputs::github_facts::RepoFacts;
use agent_coord_shared::dashboard::inputs::github_wanted::Wanted;
use agent_coord_shared::dashboard::model::GhState;
use agent_coord_shared::dashboard::model::SourceState;
use agent_coord_shared::dashboard::model::SourceStatus;
use agent_coord_shared::time;

use super::source;
use crate::github::GhError;
use crate::github::GitHub;
use crate::github::RateLimit;
use crate::process::token;
use crate::process::token::Token;

/// What the refresher remembers between refreshes.
#[derive(Debug, Default)]
pub(super) struct Memory {
    /// Items the lists did not hold, fetched one by one once (`None`: GitHub has none).
    fetched: BTreeMap<(String, u64), Option<GhItem>>,
    /// Pull requests seen open (their head branch and closing references outlive the list).
    seen_pulls: BTreeMap<(String, u64), GhItem>,
    /// The facts of the last good refresh of each repository.
    pub(super) last: BTreeMap<String, RepoFacts>,
}

/// Refreshes one repository: open pull requests and issues, recently closed pull requests,
/// issues closed since the fleet's oldest record, each mentioned item no list held (once),
/// and the CI rollup of the open heads the fleet works on.
pub(super) fn repo(
    gh: &mut GitHub,
    repo: &str,
    want: &Wanted,
    memory: &mut Memory,
) -> Result<RepoFacts, GhError> {
    let mut items: BTreeMap<u64, GhItem> = BTreeMap::new();
    if let Some(since) = want.since {
        for i in gh.closed_since(repo, &time::format(since))? {
            items.insert(i.number, i);
        }
    }
    // The pulls API's copy knows the head branch and the body; it wins over the issues API's.
    for p in gh.recent_closed_pulls(repo)? {
        items.insert(p.number, p);
    }
    for i in items
        .values_mut()
        .filter(|i| i.pull && i.head_branch.is_none())
    {
        if let Some(seen) = memory.seen_pulls.get(&(repo.to_owned(), i.number)) {
            i.head_branch.clone_from(&seen.head_branch);
            i.closes.clone_from(&seen.closes);
        }
    }
    for i in gh.open_issues(repo)? {
        items.insert(i.number, i);
    }
    for p in gh.open_pulls(repo)? {
        memory
            .seen_pulls
            .insert((repo.to_owned(), p.number), p.clone());
        items.insert(p.number, p);
    }
    for n in want.numbers.iter().chain(&want.pulls) {
        if items.contains_key(n) {
            continue;
        }
        let key = (repo.to_owned(), *n);
        let known = match memory.fetched.get(&key) {
            Some(known) => known.clone(),
            None => {
                let got = gh.item(repo, *n)?;
                memory.fetched.insert(key, got.clone());
                got
            }
        };
        if let Some(i) = known {
            items.insert(i.number, i);
        }
    }
    for p in items
        .values_mut()
        .filter(|p| p.pull && p.state == GhState::Open && want.works_on(p))
    {
        if let Some(sha) = p.head_sha.clone() {
            let states = gh.head_states(repo, &sha)?;
            p.ci = Some(ci_rollup(states.iter().map(String::as_str)));
        }
    }
    Ok(RepoFacts { items })
}

/// How a failed request ends a refresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Failure {
    /// Only this repository could not be read (404, an unexpected answer): the others go on.
    Repo,
    /// Rate-limited: stop, and wait.
    RateLimited(RateLimit),
    /// The token was refused (401, or 403 without a rate limit).
    Auth(Option<u16>),
    /// GitHub did not answer (connection, timeout, 5xx).
    Unreachable(Option<u16>),
}

impl Failure {
    /// Classifies an error, given the rate limit its answer reported.
    pub(super) fn of(e: &GhError, limit: Option<RateLimit>) -> Failure {
        if let Some(limit) = limit {
            return Failure::RateLimited(limit);
        }
        match e {
            GhError::Status {
                status: s @ (401 | 403),
                ..
            } => Failure::Auth(Some(*s)),
            GhError::Status { status, .. } if *status >= 500 => Failure::Unreachable(Some(*status)),
            GhError::Transport { .. } => Failure::Unreachable(None),
            GhError::Setup(_) => Failure::Auth(None),
            GhError::Status { .. } | GhError::Protocol { .. } => Failure::Repo,
        }
    }

    /// The source status it shows (our own words, never GitHub's body) and, for a rate
    /// limit, how long nothing is asked.
    pub(super) fn status(self, api: &str) -> (SourceStatus, Option<Duration>) {
        match self {
            Failure::RateLimited(limit) => {
                let now = chrono::Utc::now();
                let wait = limit.wait(now.timestamp());
                let retry = now + chrono::Duration::from_std(wait).unwrap_or_default();
                let mut s = source(
                    SourceState::RateLimited,
                    None,
                    "Nothing is asked of GitHub until the limit resets.",
                );
                s.retry_at = Some(time::format(retry));
                (s, Some(wait))
            }
            Failure::Auth(code) => (
                source(
                    SourceState::AuthError,
                    code,
                    "GitHub refused the token: check GH_TOKEN, GITHUB_TOKEN or gh auth status.",
                ),
                None,
            ),
            Failure::Unreachable(code) => (
                source(
                    SourceState::Unreachable,
                    code,
                    &format!("GitHub did not answer at {api}."),
                ),
                None,
            ),
            Failure::Repo => (source(SourceState::Ok, None, ""), None),
        }
    }
}

/// How long `gh auth token` may take.
const GH_TIMEOUT: Duration = Duration::from_secs(15);

/// The token and where it came from: `GH_TOKEN`, `GITHUB_TOKEN`, else `gh auth token`
/// (with the user's own gh configuration).
pub(super) fn token() -> Option<(Token, &'static str)> {
    for name in ["GH_TOKEN", "GITHUB_TOKEN"] {
        if let Some(t) = token::from_env(name) {
            return Some((t, name));
        }
    }
    let var = |n: &str| std::env::var(n).ok().filter(|v| !v.is_empty());
    let config = var("GH_CONFIG_DIR").map(PathBuf::from).or_else(|| {
        var("XDG_CONFIG_HOME")
            .map(|x| PathBuf::from(x).join("gh"))
            .or_else(|| var("HOME").map(|h| PathBuf::from(h).join(".config/gh")))
    })?;
    let argv = ["gh".to_owned(), "auth".to_owned(), "token".to_owned()];
    let t = token::from_argv(&argv, Some(config), GH_TIMEOUT).ok()?;
    Some((t, "gh auth token"))
}

#[cfg(test)]
mod tests {
    //! Failure classification: only our own words reach the status.
    use super::*;

    #[test]
    fn failures_are_classified_and_worded_without_githubs_body() {
        let status = |s: u16| GhError::Status {
            status: s,
            what: "/x".into(),
            message: "Bad credentials ghp_secret".into(),
        };
        assert_eq!(Failure::of(&status(401), None), Failure::Auth(Some(401)));
        assert_eq!(
            Failure::of(&status(502), None),
            Failure::Unreachable(Some(502))
        );
        assert_eq!(Failure::of(&status(404), None), Failure::Repo);
        let limit = RateLimit::of(429, None, Some("5"), None);
        assert!(matches!(
            Failure::of(&status(429), limit),
            Failure::RateLimited(_)
        ));
        let (s, wait) = Failure::of(&status(429), limit).status("http://h");
        assert_eq!(s.status, SourceState::RateLimited);
        assert_eq!(wait, Some(Duration::from_secs(5)));
        assert!(s.retry_at.is_some());
        let (s, _) = Failure::Auth(Some(401)).status("http://h");
        assert!(!s.message.contains("ghp_") && !s.message.contains("Bad credentials"));
        assert_eq!(s.http_status, Some(401));
    }
}
