//! The dashboard's GitHub enrichment, the I/O half: a background refresher on its own
//! interval (`--github-refresh`) that asks GitHub about the repositories the state mentions
//! and hands what it learned to the models as [`GithubFacts`] (a new generation, which the
//! model cache folds into the next build and the version announces). `/api/dashboard` never waits
//! for it: the model renders from git state at once and is enriched when GitHub answers.
//!
//! Cost: a handful of conditional list requests per repository (see `github/dashboard.rs`),
//! so an unchanged refresh is all 304s; a rate-limited answer stops the refresh and nothing is
//! asked until `retry-after` (or the reset) has passed. GitHub unreachable, unauthorised or
//! rate-limited is a source status in the model and in `/api/doctor`; the facts of the last
//! good refresh stay, and no message ever carries a token or GitHub's raw error body.

mod fetch;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use std::time::Instant as StdInstant;

use agent_coord_shared::dashboard::inputs::github_facts::GithubFacts;
use agent_coord_shared::dashboard::inputs::github_facts::RepoFacts;
use agent_coord_shared::dashboard::inputs::github_wanted::enrichment_repos;
use agent_coord_shared::dashboard::inputs::github_wanted::wanted;
use agent_coord_shared::dashboard::model::SourceState;
use agent_coord_shared::dashboard::model::SourceStatus;
use agent_coord_shared::time;
use serde::Serialize;

use self::fetch::Failure;
use self::fetch::Memory;
use crate::github::EtagCache;
use crate::github::GitHub;
use crate::serve::model::models::Models;

/// The default refresh interval, in seconds.
pub(crate) const DEFAULT_REFRESH_SECS: u64 = 60;

/// How the refresher runs.
#[derive(Debug, Clone)]
pub(crate) struct Options {
    /// Between refreshes; zero switches enrichment off.
    pub(crate) interval: Duration,
    /// The REST API root (`https://api.github.com`, an Enterprise `…/api/v3`, the fake).
    pub(crate) api_url: String,
}

/// What one refresh cost.
#[derive(Debug, Clone, Copy, Default)]
struct Cost {
    requests: u64,
    not_modified: u64,
    took: Duration,
}

/// The GitHub half of `/api/doctor`: how the refresher is set up and how it is doing
/// (never a token).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct GithubDoctor {
    /// The REST API root, without any `user:password@`.
    api_url: Option<String>,
    /// Where the token came from (`GH_TOKEN`, …), if one was found.
    token_source: Option<&'static str>,
    /// Seconds between refreshes.
    refresh_seconds: Option<u64>,
    /// GitHub's source status.
    pub(crate) status: SourceStatus,
    /// When the last refresh ended.
    checked_at: Option<String>,
    /// The repositories asked about.
    repositories: Vec<String>,
    /// What the last refresh cost.
    last_refresh: Option<RefreshCost>,
}

/// What one refresh cost, as `/api/doctor` shows it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct RefreshCost {
    requests: u64,
    not_modified: u64,
    took_ms: u128,
}

/// What the refresher last recorded.
#[derive(Debug, Default)]
struct Current {
    status: Option<SourceStatus>,
    checked_at: Option<String>,
    token_source: Option<&'static str>,
    options: Option<Options>,
    repos: Vec<String>,
    last: Option<Cost>,
}

/// How the enrichment is doing, for `/api/doctor` (the facts themselves go to the models).
#[derive(Debug, Default)]
pub(crate) struct Enrichment(Mutex<Current>);

impl Enrichment {
    /// Returns the GitHub half of `/api/doctor` (`None` if the refresher panicked while
    /// recording).
    pub(crate) fn doctor(&self) -> Option<GithubDoctor> {
        let c = self.0.lock().ok()?;
        Some(GithubDoctor {
            api_url: c.options.as_ref().map(|o| without_userinfo(&o.api_url)),
            token_source: c.token_source,
            refresh_seconds: c.options.as_ref().map(|o| o.interval.as_secs()),
            status: c
                .status
                .clone()
                .unwrap_or_else(|| source(SourceState::Pending, None, "")),
            checked_at: c.checked_at.clone(),
            repositories: c.repos.clone(),
            last_refresh: c.last.map(|l| RefreshCost {
                requests: l.requests,
                not_modified: l.not_modified,
                took_ms: l.took.as_millis(),
            }),
        })
    }

    /// Records the status a refresh (or the lack of one) came to.
    fn record(&self, status: SourceStatus) {
        self.set(|c| {
            c.checked_at = Some(time::format(chrono::Utc::now()));
            c.status = Some(status);
        });
    }

    fn set(&self, f: impl FnOnce(&mut Current)) {
        if let Ok(mut c) = self.0.lock() {
            f(&mut c);
        }
    }
}

/// A source status of GitHub.
fn source(status: SourceState, http: Option<u16>, message: &str) -> SourceStatus {
    SourceStatus {
        resource: "github".into(),
        status,
        http_status: http,
        message: message.to_owned(),
        retry_at: None,
    }
}

/// The API URL as shown: without any `user:password@`.
fn without_userinfo(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let host = authority.rsplit('@').next().unwrap_or(authority);
            format!("{scheme}://{host}{path}")
        }
        None => url.to_owned(),
    }
}

/// Starts the refresher on its own thread (the client is blocking), handing what it learns
/// to `models` and recording how it does in `status`; with a zero interval only records
/// that enrichment is off.
pub(crate) fn spawn(models: Models, status: Arc<Enrichment>, opts: Options) {
    status.set(|c| c.options = Some(opts.clone()));
    if opts.interval.is_zero() {
        status.record(source(
            SourceState::Disabled,
            None,
            "GitHub enrichment is off (--github-refresh 0).",
        ));
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("github-enrich".into())
        .spawn(move || {
            let mut refresher = Refresher {
                models,
                status,
                opts,
                client: None,
                memory: Memory::default(),
            };
            loop {
                let wait = refresher.tick();
                std::thread::sleep(wait);
            }
        });
    if let Err(e) = spawned {
        tracing::warn!("cannot start the GitHub refresher: {e}");
    }
}

/// The refresher's own state between ticks.
struct Refresher {
    models: Models,
    status: Arc<Enrichment>,
    opts: Options,
    client: Option<GitHub>,
    memory: Memory,
}

impl Refresher {
    /// Runs one refresh; returns how long to wait before the next.
    fn tick(&mut self) -> Duration {
        let interval = self.opts.interval;
        if !self.ensure_client() {
            return interval;
        }
        let Some(mut gh) = self.client.take() else {
            return interval;
        };
        let wait = self.refresh(&mut gh);
        if !matches!(wait, Refreshed::TokenRefused) {
            self.client = Some(gh);
        }
        wait.after(interval)
    }

    /// Refreshes every repository with `gh`.
    fn refresh(&mut self, gh: &mut GitHub) -> Refreshed {
        let Ok(built) = self.models.current() else {
            return Refreshed::After(None);
        };
        // The one place that says which repositories are enriched.
        let repos = enrichment_repos(&built.inputs);
        let wanted = wanted(&built.inputs);
        drop(built);
        self.status.set(|c| c.repos = repos.clone());
        let (requests, not_modified, started) = (gh.requests, gh.not_modified, StdInstant::now());
        let mut read = BTreeMap::new();
        let mut unread = Vec::new();
        let mut fatal = None;
        for repo in &repos {
            let want = wanted.get(repo).cloned().unwrap_or_default();
            match fetch::repo(gh, repo, &want, &mut self.memory) {
                Ok(facts) => {
                    read.insert(repo.clone(), facts);
                }
                Err(e) => match Failure::of(&e, gh.take_rate_limit()) {
                    Failure::Repo => {
                        tracing::debug!("GitHub enrichment skipped {repo}: {e}");
                        unread.push(repo.clone());
                        if let Some(old) = self.memory.last.get(repo) {
                            read.insert(repo.clone(), old.clone());
                        }
                    }
                    other => {
                        tracing::warn!("GitHub enrichment stopped: {e}");
                        fatal = Some(other);
                        break;
                    }
                },
            }
        }
        let cost = Cost {
            requests: gh.requests - requests,
            not_modified: gh.not_modified - not_modified,
            took: started.elapsed(),
        };
        self.status.set(|c| c.last = Some(cost));
        let status = match fatal {
            Some(failure) => {
                let (status, wait) = failure.status(&without_userinfo(&self.opts.api_url));
                // The last good facts stay: a failed refresh never empties the dashboard.
                self.publish(status, Some(self.memory.last.clone()));
                return if matches!(failure, Failure::Auth(_)) {
                    // A token from `gh auth token` may have been renewed: ask again next time.
                    Refreshed::TokenRefused
                } else {
                    Refreshed::After(wait)
                };
            }
            None => {
                let mut message = format!(
                    "{} of {} repositories read.",
                    repos.len() - unread.len(),
                    repos.len()
                );
                if !unread.is_empty() {
                    message.push_str(&format!(" Not readable: {}.", unread.join(", ")));
                }
                source(SourceState::Ok, None, &message)
            }
        };
        self.memory.last = read.clone();
        self.publish(status, Some(read));
        Refreshed::After(None)
    }

    /// Records `status` and, with the facts of a refresh (`repos`), hands them to the
    /// models.
    fn publish(&self, status: SourceStatus, repos: Option<BTreeMap<String, RepoFacts>>) {
        self.status.record(status.clone());
        if let Some(repos) = repos {
            self.models.fold_github(GithubFacts { status, repos });
        }
    }

    /// Builds the client with a token once one is found; `false` (and the status says why)
    /// without one.
    fn ensure_client(&mut self) -> bool {
        if self.client.is_none() {
            let (token, from) = match fetch::token() {
                Some(found) => found,
                None => {
                    let off = source(
                        SourceState::Disabled,
                        None,
                        "No GitHub token: set GH_TOKEN or GITHUB_TOKEN, or sign in with gh auth login.",
                    );
                    self.status.set(|c| c.token_source = None);
                    self.publish(off, None);
                    return false;
                }
            };
            self.status.set(|c| c.token_source = Some(from));
            match GitHub::new(&self.opts.api_url, token.expose(), EtagCache::default()) {
                Ok(gh) => self.client = Some(gh),
                Err(e) => {
                    tracing::warn!("GitHub enrichment: {e}");
                    let bad = source(
                        SourceState::AuthError,
                        None,
                        "The GitHub client cannot be set up: check --github-api-url and the token.",
                    );
                    self.publish(bad, None);
                    return false;
                }
            }
        }
        true
    }
}

/// How a refresh ended.
enum Refreshed {
    /// Wait this long (a rate limit), else the interval.
    After(Option<Duration>),
    /// The token was refused: find it again before the next refresh.
    TokenRefused,
}

impl Refreshed {
    fn after(&self, interval: Duration) -> Duration {
        match self {
            Refreshed::After(wait) => wait.unwrap_or(interval),
            Refreshed::TokenRefused => interval,
        }
    }
}
