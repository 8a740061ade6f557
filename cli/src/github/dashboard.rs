//! What the dashboard's enrichment reads from GitHub, a handful of list requests per
//! repository (each conditional, so an unchanged refresh costs only 304s): open pull
//! requests, open issues, recently closed pull requests, issues closed since the fleet's
//! oldest record, one issue the lists did not hold, and a head's checks and statuses. Also
//! the rate limit a refused request reported, for the refresher's back-off.
//!
//! The answers are read through private wire types (as `types.rs` reads the
//! coordinator's): only an item's `number` is required, anything else missing or `null`
//! reads as absent.

use std::time::Duration;

use agent_coord_shared::dashboard::inputs::github_facts::closing_refs;
use agent_coord_shared::dashboard::inputs::github_facts::GhItem;
use agent_coord_shared::dashboard::model::GhState;
use agent_coord_shared::time;
use serde::Deserialize;
use serde::Deserializer;
use serde_json::Value;

use super::parse;
use super::types::nullable;
use super::types::Who;
use super::GhError;
use super::GitHub;

/// What a rate-limited answer said about when to ask again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RateLimit {
    /// `retry-after`, in seconds.
    pub(crate) retry_after: Option<Duration>,
    /// `x-ratelimit-reset`, as Unix seconds.
    pub(crate) reset: Option<i64>,
}

impl RateLimit {
    /// The rate limit of an answer: a 403 or 429 with no requests left or a `retry-after`.
    pub(crate) fn of(
        status: u16,
        remaining: Option<&str>,
        retry_after: Option<&str>,
        reset: Option<&str>,
    ) -> Option<RateLimit> {
        let retry_after = retry_after
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let exhausted = remaining.is_some_and(|r| r.trim() == "0");
        (matches!(status, 403 | 429) && (exhausted || retry_after.is_some())).then(|| RateLimit {
            retry_after,
            reset: reset.and_then(|v| v.trim().parse().ok()),
        })
    }

    /// How long to wait from `now_unix`: the `retry-after`, else until the reset, else a
    /// minute; never more than an hour.
    pub(crate) fn wait(&self, now_unix: i64) -> Duration {
        let until_reset = self
            .reset
            .map(|r| Duration::from_secs(u64::try_from(r - now_unix).unwrap_or(0) + 1));
        self.retry_after
            .or(until_reset)
            .unwrap_or(Duration::from_secs(60))
            .min(Duration::from_secs(3600))
    }
}

impl GitHub {
    /// Returns (and forgets) the rate limit the last refused request reported.
    pub(crate) fn take_rate_limit(&mut self) -> Option<RateLimit> {
        self.rate_limit.take()
    }

    /// Every open pull request of `repo`.
    pub(crate) fn open_pulls(&mut self, repo: &str) -> Result<Vec<GhItem>, GhError> {
        let route = format!("/repos/{repo}/pulls?state=open");
        items(self.list(&route)?, &route, repo)
    }

    /// The 100 pull requests of `repo` closed most recently (their head branches link them
    /// to the issues they implement).
    pub(crate) fn recent_closed_pulls(&mut self, repo: &str) -> Result<Vec<GhItem>, GhError> {
        let route =
            format!("/repos/{repo}/pulls?state=closed&sort=updated&direction=desc&per_page=100");
        let list: Vec<ItemJson> = parse(&self.get(&route)?, &route)?;
        Ok(list.into_iter().map(|i| i.into_item(repo)).collect())
    }

    /// Every open issue of `repo` (pull requests left out: the pulls list has them whole).
    pub(crate) fn open_issues(&mut self, repo: &str) -> Result<Vec<GhItem>, GhError> {
        let route = format!("/repos/{repo}/issues?state=open");
        let list = self.list(&route)?;
        let list = list
            .iter()
            .map(|v| parse::<ItemJson>(v, &route))
            .filter(|i| i.as_ref().map_or(true, |i| i.pull_request.is_none()))
            .map(|i| i.map(|i| i.into_item(repo)));
        list.collect()
    }

    /// Every issue and pull request of `repo` closed and updated since `since`.
    pub(crate) fn closed_since(&mut self, repo: &str, since: &str) -> Result<Vec<GhItem>, GhError> {
        let route = format!("/repos/{repo}/issues?state=closed&since={since}");
        items(self.list(&route)?, &route, repo)
    }

    /// One issue or pull request (through the issues API), `None` when GitHub has none
    /// (never was, deleted, or moved away): one such number never stops a refresh.
    pub(crate) fn item(&mut self, repo: &str, number: u64) -> Result<Option<GhItem>, GhError> {
        let route = format!("/repos/{repo}/issues/{number}");
        match self.get(&route) {
            Ok(v) => Ok(item(&v, repo)),
            Err(GhError::Status {
                status: 301 | 404 | 410,
                ..
            }) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The states of a head's check runs (conclusion, else status) and commit statuses.
    pub(crate) fn head_states(&mut self, repo: &str, sha: &str) -> Result<Vec<String>, GhError> {
        let route = format!("/repos/{repo}/commits/{sha}/check-runs?per_page=100");
        let checks: CheckRuns = parse(&self.get(&route)?, &route)?;
        let route = format!("/repos/{repo}/commits/{sha}/statuses?per_page=100");
        let statuses: Vec<CommitStatus> = parse(&self.get(&route)?, &route)?;
        let mut states: Vec<String> = checks
            .check_runs
            .into_iter()
            .filter_map(|c| c.conclusion.or(c.status))
            .collect();
        // Statuses come newest first; only the newest per context counts.
        let mut contexts = std::collections::BTreeSet::new();
        for st in statuses {
            if contexts.insert(st.context.unwrap_or_default()) {
                states.extend(st.state);
            }
        }
        Ok(states)
    }
}

fn items(list: Vec<Value>, route: &str, repo: &str) -> Result<Vec<GhItem>, GhError> {
    list.iter()
        .map(|v| parse::<ItemJson>(v, route).map(|i| i.into_item(repo)))
        .collect()
}

/// Reads an issue or pull request from the issues or the pulls API.
fn item(v: &Value, repo: &str) -> Option<GhItem> {
    ItemJson::deserialize(v).ok().map(|i| i.into_item(repo))
}

/// Reads a field whose presence is the fact, `null` included: present is `Some` (its
/// contents defaulted when `null`), absent is `None` (with `#[serde(default)]`).
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Default + Deserialize<'de>,
{
    nullable(d).map(Some)
}

/// An issue or pull request as the issues or the pulls API lists it.
#[derive(Deserialize)]
struct ItemJson {
    number: u64,
    #[serde(default, deserialize_with = "nullable")]
    title: String,
    state: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    draft: bool,
    #[serde(default, deserialize_with = "nullable")]
    user: Who,
    #[serde(default, deserialize_with = "nullable")]
    assignees: Vec<Who>,
    /// The pulls API's head: a pull request read from the pulls API.
    #[serde(default, deserialize_with = "present")]
    head: Option<HeadJson>,
    /// The issues API's mark of a pull request.
    #[serde(default, deserialize_with = "present")]
    pull_request: Option<IssuePullJson>,
    html_url: Option<String>,
    closed_at: Option<String>,
    merged_at: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    body: String,
}

/// A pull request's head, as the pulls API nests it.
#[derive(Default, Deserialize)]
struct HeadJson {
    #[serde(rename = "ref")]
    name: Option<String>,
    sha: Option<String>,
}

/// The `pull_request` object the issues API puts on a pull request.
#[derive(Default, Deserialize)]
struct IssuePullJson {
    merged_at: Option<String>,
}

impl ItemJson {
    /// Returns the item of `repo` (the pulls API's body names the issues it closes).
    fn into_item(self, repo: &str) -> GhItem {
        let at = |t: Option<String>| t.as_deref().and_then(time::parse);
        let pull = self.head.is_some() || self.pull_request.is_some();
        let merged_at = at(self.merged_at).or_else(|| at(self.pull_request?.merged_at));
        let state = match self.state.as_deref() {
            Some("open") => GhState::Open,
            Some("closed") if merged_at.is_some() => GhState::Merged,
            Some("closed") => GhState::Closed,
            _ => GhState::Unknown,
        };
        let (head_branch, head_sha, closes) = match self.head {
            Some(head) => (head.name, head.sha, closing_refs(&self.body, repo)),
            None => (None, None, Vec::new()),
        };
        GhItem {
            number: self.number,
            pull,
            title: self.title,
            state,
            draft: self.draft,
            author: self.user.login,
            assignees: self.assignees.into_iter().filter_map(|u| u.login).collect(),
            head_branch,
            head_sha,
            url: self.html_url,
            closed_at: at(self.closed_at),
            merged_at,
            closes,
            ci: None,
        }
    }
}

/// A head's check runs, as `check-runs` answers.
#[derive(Deserialize)]
struct CheckRuns {
    #[serde(default, deserialize_with = "nullable")]
    check_runs: Vec<CheckRun>,
}

/// One check run: its conclusion once it has one, else its status.
#[derive(Deserialize)]
struct CheckRun {
    conclusion: Option<String>,
    status: Option<String>,
}

/// One commit status.
#[derive(Deserialize)]
struct CommitStatus {
    context: Option<String>,
    state: Option<String>,
}

#[cfg(test)]
mod tests {
    //! The rate-limit reading and the item parser, on captured answer shapes.
    use serde_json::json;

    use super::*;

    #[test]
    fn rate_limits_are_403_or_429_with_nothing_left_or_a_retry_after() {
        let limit = RateLimit::of(403, Some("0"), None, Some("1000")).unwrap();
        assert_eq!(limit.wait(990), Duration::from_secs(11));
        let limit = RateLimit::of(429, None, Some("7"), None).unwrap();
        assert_eq!(limit.wait(0), Duration::from_secs(7));
        assert_eq!(RateLimit::of(403, Some("12"), None, None), None);
        assert_eq!(RateLimit::of(401, Some("0"), None, None), None);
        let far = RateLimit::of(403, Some("0"), None, Some("99999")).unwrap();
        assert_eq!(far.wait(0), Duration::from_secs(3600));
    }

    #[test]
    fn items_read_from_either_api() {
        let from_pulls = json!({"number": 5, "title": "Fix", "state": "closed",
            "merged_at": "2026-01-01T00:00:00Z", "draft": true, "user": {"login": "ann"},
            "assignees": [{"login": "bob"}], "head": {"ref": "codex/4", "sha": "abc"},
            "body": "Closes #4", "html_url": "https://github.com/a/b/pull/5"});
        let p = item(&from_pulls, "a/b").unwrap();
        assert_eq!(p.state, GhState::Merged);
        assert!(p.pull && p.draft);
        assert_eq!(p.closes, [4]);
        assert_eq!(p.head_branch.as_deref(), Some("codex/4"));
        assert_eq!(p.assignees, ["bob"]);
        let from_issues = json!({"number": 6, "title": "PR", "state": "closed",
            "pull_request": {"merged_at": null}, "closed_at": "2026-01-01T00:00:00Z"});
        let i = item(&from_issues, "a/b").unwrap();
        assert!(i.pull);
        assert_eq!(i.state, GhState::Closed);
        let odd = json!({"number": 7, "state": "weird"});
        assert_eq!(item(&odd, "a/b").unwrap().state, GhState::Unknown);
        assert!(item(&json!({"title": "no number"}), "a/b").is_none());
    }
}
