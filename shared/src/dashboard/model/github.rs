//! What GitHub adds to the model: a row's GitHub view (state, draft, author, assignees,
//! head branch, CI, the implementation pull request, a GitHub terminal) and the per-source
//! status behind the degraded-source banner (reference §4.6, §7.5).

use serde::Deserialize;
use serde::Serialize;

/// An issue's or pull request's state on GitHub.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GhState {
    /// Open.
    Open,
    /// Closed (a pull request: closed without merging).
    Closed,
    /// A merged pull request.
    Merged,
    /// GitHub could not say.
    Unknown,
}

/// A pull request's CI rollup (reference §7.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CiState {
    /// Some check failed.
    Failing,
    /// Some check is still running or queued.
    Pending,
    /// Every check passed (or was neutral or skipped).
    Passing,
    /// No checks, or nothing recognisable.
    Unknown,
}

/// A terminal state that GitHub decided (a declared one never shows here).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GhTerminal {
    /// The pull request (or the implementation pull request) merged.
    Done,
    /// The issue (or the pull request, unmerged) was closed.
    Closed,
}

/// A pull request linked to an issue (its implementation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LinkedPull {
    /// The pull request number.
    pub number: u64,
    /// Its state.
    pub state: GhState,
    /// Its page (http(s) only).
    pub url: Option<String>,
    /// Its CI rollup, when the fleet works on its head.
    pub ci: Option<CiState>,
}

/// What GitHub says about one row's item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GithubView {
    /// `issue` or `pull_request`.
    pub kind: String,
    /// Its state.
    pub state: GhState,
    /// Its title.
    pub title: Option<String>,
    /// Its page (http(s) only).
    pub url: Option<String>,
    /// A draft pull request.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub draft: bool,
    /// Who opened it.
    pub author: Option<String>,
    /// Who it is assigned to.
    pub assignees: Vec<String>,
    /// A pull request's head branch.
    pub head_branch: Option<String>,
    /// A pull request's CI rollup, when the fleet works on its head.
    pub ci: Option<CiState>,
    /// An issue's implementation pull request, found by URL, branch or closing reference.
    pub implementation_pr: Option<LinkedPull>,
    /// The terminal state GitHub decided for the row, if it decided one.
    pub terminal: Option<GhTerminal>,
    /// When GitHub's terminal happened (merge or close time).
    pub terminal_at: Option<String>,
}

/// How a source of the dashboard is doing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceState {
    /// Answering.
    Ok,
    /// Not asked yet (the first refresh is under way).
    Pending,
    /// Not used: no token, or switched off.
    Disabled,
    /// Could not be reached (connection refused, timeout, a 5xx).
    Unreachable,
    /// Refused the credentials (401, or 403 without a rate limit).
    AuthError,
    /// Rate-limited: nothing is asked until the limit resets.
    RateLimited,
}

impl SourceState {
    /// Reports whether the page shows the degraded-source banner for it.
    pub fn is_degraded(self) -> bool {
        matches!(
            self,
            SourceState::Unreachable | SourceState::AuthError | SourceState::RateLimited
        )
    }
}

/// One source's status (reference §4.6 `sourceStatus`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceStatus {
    /// The source (`github`).
    pub resource: String,
    /// Its state.
    pub status: SourceState,
    /// The HTTP status involved, when a single one was.
    pub http_status: Option<u16>,
    /// A sentence for the operator (never a token, never GitHub's raw error body).
    pub message: String,
    /// When a rate-limited source is asked again.
    pub retry_at: Option<String>,
}

impl SourceStatus {
    /// The banner's headline for a degraded source, `None` when it is not degraded.
    pub fn banner(&self) -> Option<String> {
        if !self.status.is_degraded() {
            return None;
        }
        let code = self
            .http_status
            .map(|c| format!(" ({c})"))
            .unwrap_or_default();
        let what = match self.status {
            SourceState::AuthError => "GitHub authentication failed",
            SourceState::RateLimited => "GitHub rate limit reached",
            _ => "GitHub unreachable",
        };
        Some(format!(
            "{what}{code} — showing coordination state without GitHub updates. {}",
            self.message
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_degraded_source_has_a_banner_and_it_names_the_status() {
        let status = |status, http_status| SourceStatus {
            resource: "github".into(),
            status,
            http_status,
            message: "Check the token.".into(),
            retry_at: None,
        };
        for quiet in [SourceState::Ok, SourceState::Pending, SourceState::Disabled] {
            assert_eq!(status(quiet, None).banner(), None, "{quiet:?}");
        }
        assert_eq!(
            status(SourceState::AuthError, Some(401)).banner().as_deref(),
            Some("GitHub authentication failed (401) — showing coordination state without GitHub updates. Check the token.")
        );
        let limited = status(SourceState::RateLimited, None).banner().unwrap();
        assert!(
            limited.starts_with("GitHub rate limit reached —"),
            "{limited}"
        );
        let down = status(SourceState::Unreachable, Some(502))
            .banner()
            .unwrap();
        assert!(down.starts_with("GitHub unreachable (502)"), "{down}");
        let wire = serde_json::to_value(status(SourceState::RateLimited, None)).unwrap();
        assert_eq!(wire["status"], "rate_limited");
        assert!(wire.get("httpStatus").is_some() && wire.get("retryAt").is_some());
    }
}
