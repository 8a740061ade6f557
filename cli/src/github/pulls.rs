//! What Coordinator II reads and writes on a pull request: the pull request itself
//! (mergeability, merge actor), its timeline (who put it into the merge queue), its reviews, the head's CI (check runs, statuses, the
//! workflow-run inventory, failed jobs and their plain-text logs) and the GraphQL Ready
//! mutation.

use agent_coord_shared::coordinator::merge_queue::TimelineEvent;
use serde_json::Value;

use super::bodies::NewReview;
use super::bodies::NodeVariables;
use super::bodies::ReviewEvent;
use super::parse;
use super::shape;
use super::types::TimelineEventJson;
use super::GhError;
use super::GitHub;
use super::PullRequest;
use super::Review;

impl GitHub {
    /// One pull request.
    pub(crate) fn pull(&mut self, repo: &str, number: u64) -> Result<PullRequest, GhError> {
        let route = format!("/repos/{repo}/pulls/{number}");
        let v = self.get(&route)?;
        parse(&v, &route)
    }

    /// A pull request's timeline, every page, oldest first (conditional per page, like every
    /// list): asked for only when the merge queue merged it, to see who put it there.
    pub(crate) fn timeline(
        &mut self,
        repo: &str,
        number: u64,
    ) -> Result<Vec<TimelineEvent>, GhError> {
        let route = format!("/repos/{repo}/issues/{number}/timeline");
        self.list(&route)?
            .iter()
            .map(|v| parse::<TimelineEventJson>(v, &route).map(Into::into))
            .collect()
    }

    /// Every review of a pull request, oldest first.
    pub(crate) fn reviews(&mut self, repo: &str, number: u64) -> Result<Vec<Review>, GhError> {
        let route = format!("/repos/{repo}/pulls/{number}/reviews");
        self.list(&route)?
            .iter()
            .map(|v| parse(v, &route))
            .collect()
    }

    /// Submits a review bound to `commit_id` (`APPROVE` or `COMMENT`; the coordinator never
    /// requests changes).
    pub(crate) fn post_review(
        &mut self,
        repo: &str,
        number: u64,
        commit_id: &str,
        event: ReviewEvent,
        body: &str,
    ) -> Result<Review, GhError> {
        let route = format!("/repos/{repo}/pulls/{number}/reviews");
        let review = NewReview {
            commit_id,
            event,
            body,
        };
        let v = self.post(&route, &review)?;
        parse(&v, &route)
    }

    /// The pages of the head's check runs.
    pub(crate) fn check_run_pages(&mut self, repo: &str, sha: &str) -> Result<Vec<Value>, GhError> {
        self.pages(&format!("/repos/{repo}/commits/{sha}/check-runs"))
    }

    /// The head's commit statuses, newest first.
    pub(crate) fn statuses(&mut self, repo: &str, sha: &str) -> Result<Vec<Value>, GhError> {
        self.list(&format!("/repos/{repo}/commits/{sha}/statuses"))
    }

    /// The pages of the head's workflow-run inventory.
    pub(crate) fn workflow_run_pages(
        &mut self,
        repo: &str,
        sha: &str,
    ) -> Result<Vec<Value>, GhError> {
        self.pages(&format!("/repos/{repo}/actions/runs?head_sha={sha}"))
    }

    /// The pages of one attempt's jobs.
    pub(crate) fn job_pages(
        &mut self,
        repo: &str,
        run: u64,
        attempt: u64,
    ) -> Result<Vec<Value>, GhError> {
        self.pages(&format!(
            "/repos/{repo}/actions/runs/{run}/attempts/{attempt}/jobs"
        ))
    }

    /// A job's plain-text log (never the ZIP archive of a whole run).
    pub(crate) fn job_log(&mut self, repo: &str, job: u64) -> Result<String, GhError> {
        self.text(&format!("/repos/{repo}/actions/jobs/{job}/logs"))
    }

    /// Marks a draft pull request ready for review; returns `isDraft` as GitHub answers it.
    pub(crate) fn mark_ready(&mut self, node_id: &str) -> Result<bool, GhError> {
        let data = self.graphql(
            "mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) { pullRequest { number isDraft } } }",
            NodeVariables { id: node_id },
        )?;
        data.pointer("/markPullRequestReadyForReview/pullRequest/isDraft")
            .and_then(Value::as_bool)
            .ok_or_else(|| shape("/graphql markPullRequestReadyForReview"))
    }
}
