//! A stateful fake GitHub for the coordinator's end-to-end tests: an HTTP server on 127.0.0.1
//! that keeps users and tokens, issues with their assignment events and comments, and pull
//! requests backed by a real bare git repository per repository (`<root>/<owner>/<name>.git`,
//! served to git as `file://`), and can break a request on purpose.
//!
//! [`FakeGitHub`] runs it on its own thread for synchronous tests; the `fake-github` binary
//! (`fake-github --root DIR [--port N]`) runs it for a person with a shell.
//!
//! # REST API (GitHub's shapes)
//! Every route needs `Authorization: Bearer <token>` (or `token <token>`); a missing or unknown
//! token is 401 and is logged as anonymous. `GET /user`; `GET /repos/{o}/{r}`;
//! `GET /repos/{o}/{r}/branches/{branch}`; `GET /repos/{o}/{r}/issues` (`state`, `assignee`,
//! `since`, `sort`, `direction`; pull requests included with a `pull_request` key);
//! `GET /repos/{o}/{r}/issues/{n}`, `…/events`, `…/timeline` (the events and the comments as
//! `commented` entries, oldest first), `…/comments` (`since`); `POST …/comments`;
//! `GET|POST /repos/{o}/{r}/pulls` (`state`, `head=owner:branch`, `base`); `GET …/pulls/{n}`
//! (tips read live from the bare repository; `node_id` `PR_<id>`, `merged`, `merged_by`,
//! `mergeable` — `true` until set otherwise, `null` once closed — and `mergeable_state`
//! `clean`/`dirty`/`unknown` from it); `GET …/pulls/{n}/merge`; `PUT …/pulls/{n}/merge` is
//! counted and answered 405. Lists take `per_page` (default 30, at most 100) and `page` and
//! answer a `Link` header with absolute URLs. Every 200 GET has `ETag: W/"<sha256 of body>"`;
//! a matching `If-None-Match` gets an empty 304, which does not lower the simulated
//! `x-ratelimit-remaining` (every other authenticated request does). Unknown routes are 404.
//!
//! | Route | Body → answer |
//! |---|---|
//! | `GET  /repos/{o}/{r}/pulls/{n}/reviews` | → reviews, oldest first (a `PENDING` one only to its author) |
//! | `POST /repos/{o}/{r}/pulls/{n}/reviews` | `{commit_id?, body?, event?: APPROVE\|COMMENT\|REQUEST_CHANGES}` → 200 review |
//! | `GET  /repos/{o}/{r}/commits/{ref}/check-runs` | → `{total_count, check_runs}` |
//! | `GET  /repos/{o}/{r}/commits/{ref}/statuses` | → statuses, newest first |
//! | `GET  /repos/{o}/{r}/actions/runs` | `?head_sha=` → `{total_count, workflow_runs}`, newest first |
//! | `GET  /repos/{o}/{r}/actions/runs/{id}` | → workflow run |
//! | `GET  /repos/{o}/{r}/actions/runs/{id}/jobs` | `?filter=latest\|all` → `{total_count, jobs}` |
//! | `GET  /repos/{o}/{r}/actions/runs/{id}/attempts/{a}/jobs` | → `{total_count, jobs}` of attempt `a` |
//! | `GET  /repos/{o}/{r}/actions/jobs/{id}/logs` | → 302 `Location: {base}/_control/logs/{id}`; 410 when expired |
//! | `POST /graphql` | `{query, variables}` → 200 `{data}` or `{data, errors}` |
//!
//! A review: `APPROVE` → `APPROVED`, `COMMENT` → `COMMENTED`, `REQUEST_CHANGES` →
//! `CHANGES_REQUESTED`, no event → `PENDING`. Refused with 422: a closed pull request; the
//! author approving or requesting changes on their own pull request; `COMMENT` or
//! `REQUEST_CHANGES` without a body; a `commit_id` that is not a commit of the head repository
//! (`No commit found for SHA: …`). Every post is counted per event, refused ones included.
//!
//! CI is kept per commit. `{ref}` is a full sha or a branch name without `/`; a ref naming no
//! commit is 422 `No commit found for SHA: …` (and matches no run for `head_sha`). The first
//! time the check runs, the statuses or the runs with `head_sha` ask about a commit of the
//! repository (or of a fork one of its pull requests comes from) that has no CI, it gets the
//! next outcome of the repository's plan, else the plan's default (`none` unless set):
//! `success` (run `CI` of `.github/workflows/ci.yml` with jobs and check runs `build`, `test`;
//! status `ci/lint`), `failure` (`test` fails with a log), `failure_logs_gone` (its logs 410),
//! `failure_logs_empty` (its log is whitespace), `rerun_failure` (attempt 2 fails; attempt 1
//! failed with `attempt 1 log`), `action_required` (a run only), `pending` (in progress),
//! `cancelled`, `neutral`, `skipped`, `timed_out` (`test` and the run so concluded), `none`
//! (nothing), `truncated` (`success`, with the runs' `total_count` one too many). Replacing a
//! commit's CI keeps the ids of the runs, jobs, check runs and statuses it had.
//!
//! GraphQL matches the query text: `markPullRequestReadyForReview` takes the pull request whose
//! `node_id` is `variables.id` (or `variables.pullRequestId`) out of draft with a
//! `ready_for_review` event (`NOT_FOUND` error for an unknown id); `pullRequest(number` answers `repository.pullRequest {id, number,
//! isDraft, state, headRefOid, merged, mergedBy {login, __typename}}` for `variables.owner`,
//! `name`, `number`; anything else is the error `unsupported query`.
//!
//! Pushes to a branch marked protected are refused by the bare repository's `pre-receive`
//! hook, unless the pusher sets `FAKE_GITHUB_ALLOW_PROTECTED=1` (the test acting as an admin).
//!
//! # Control API (JSON, no authentication, not logged or counted)
//! | Route | Body → answer |
//! |---|---|
//! | `POST /_control/users` | `{login, kind: "User"\|"Bot", token}` → 201 user |
//! | `POST /_control/repos` | `{full_name, default_branch}` → 201 `{path, repo}` |
//! | `POST /_control/repos/{o}/{r}/protected_branches` | `{branch}` → 204 |
//! | `POST /_control/repos/{o}/{r}/issues` | `{author, title, body, number?}` → 201 issue (`number` when free, else the next) |
//! | `POST /_control/repos/{o}/{r}/issues/{n}/assign` | `{assignee, actor}` → 204 |
//! | `POST /_control/repos/{o}/{r}/issues/{n}/unassign` | `{assignee, actor}` → 204 |
//! | `GET  /_control/repos/{o}/{r}/issues/{n}/comments` | → every comment |
//! | `POST /_control/repos/{o}/{r}/issues/{n}/comments` | `{author, body}` → 201 comment |
//! | `POST /_control/repos/{o}/{r}/issues/{n}/close` | `{actor?}` → 204; closes a pull request unmerged too |
//! | `GET  /_control/repos/{o}/{r}/pulls` | → every pull request, any state |
//! | `POST /_control/repos/{o}/{r}/pulls/{n}/merge` | `{by: login\|null}` → 200 pull, merged into the base branch |
//! | `POST /_control/repos/{o}/{r}/pulls/{n}/merge_queue` | `{by: login}` → 200 pull, in the merge queue; event `added_to_merge_queue` by `by` |
//! | `POST /_control/repos/{o}/{r}/pulls/{n}/merge_queue/merge` | `{move_head?: bool}` → 200 pull, merged by the queue (below) |
//! | `POST /_control/repos/{o}/{r}/pulls/{n}/mergeable` | `{mergeable: true\|false\|null}` → 200 pull |
//! | `GET  /_control/repos/{o}/{r}/pulls/{n}/reviews` | → every review, pending ones included |
//! | `POST /_control/repos/{o}/{r}/pulls/{n}/reviews/{id}/dismiss` | `{actor, message}` → 200 review, `DISMISSED`; event `review_dismissed` |
//! | `POST /_control/repos/{o}/{r}/ci` | `{outcomes?: [outcome], default?: outcome}` → 204 |
//! | `GET  /_control/repos/{o}/{r}/ci` | → `{outcomes, default, commits: {sha: outcome}}` |
//! | `POST /_control/repos/{o}/{r}/commits/{sha}/ci` | `{outcome, log?}` → 200 `{workflow_runs, check_runs, statuses}` |
//! | `GET  /_control/logs/{job_id}` | → 200 `text/plain` log; 410 when expired |
//! | `GET  /_control/requests`, `DELETE …` | → request log `[{method, path, query, status, login, fault}]`; clear |
//! | `POST /_control/faults` | `{method, path, mode: "drop_after_apply"\|"drop_before_apply"\|"status_500"}` → 204 |
//! | `POST /_control/answer` | `{mode: "normal"\|"unauthorized"\|"rate_limited", retry_after?}` → 204; every REST request then gets 401, or 403 with the rate limit spent (see `switch.rs`) |
//! | `POST /_control/repos/{o}/{r}/branches` | `{branch}` → 201 `{sha}`: a new commit on the default branch's tip |
//! | `GET  /_control/stats` | → `{requests, not_modified, merge_calls, rate_limit_remaining: {login: n}, review_posts: {event: n}, graphql_requests, ready_mutations}` |
//!
//! An outcome is a name (`"failure"`) or `{outcome, log}`, `log` being the failing job's text.
//! Merging is a three-way merge (`git merge-tree`) committed as `Merge pull request #n` with
//! parents base tip and head, the base branch moved from its expected tip (protection does not
//! apply, as to GitHub's button); a conflict is 422 and sets `mergeable: false`. The pull
//! request is then closed with `merged_by` and `merged` and `closed` events whose actor is `by`.
//! The merge queue takes an open, non-draft pull request once (422 otherwise) and merges it as
//! its app account `github-merge-queue[bot]` (type `Bot`, created on first use): event
//! `removed_from_merge_queue` by the app, then the merge above with `by` the app, so the
//! enqueuer shows only on the timeline. `move_head` first pushes a commit to the head branch,
//! so the queue merges a head other than the approved one.
//!
//! A fault is one-shot: the next authenticated REST request whose method matches and whose
//! path starts or ends with `path` consumes it. `drop_after_apply` runs the request, then
//! closes the connection without writing a byte (an unknown delivery); `drop_before_apply`
//! closes without running it; `status_500` answers 500 without running it. The request log
//! shows a dropped request with status 0.

mod ci;
mod control;
mod error;
mod git;
mod ops;
mod request;
mod routes;
mod server;
mod shape;
mod state;
mod switch;
#[cfg(test)]
mod tests;

use std::path::Path;
use std::path::PathBuf;

use serde_json::json;
use serde_json::Value;

pub use self::git::ALLOW_PROTECTED_ENV;
pub use self::server::bind;
pub use self::server::Listening;
pub use self::state::Fault;
pub use self::state::FaultMode;
pub use self::state::RequestLog;
pub use self::state::Stats;
pub use self::state::UserKind;
pub use self::switch::Answer;

/// A fake GitHub serving on 127.0.0.1 from its own thread; stopped on drop.
pub struct FakeGitHub {
    url: String,
    root: PathBuf,
    agent: ureq::Agent,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl FakeGitHub {
    /// Starts a fake GitHub on a free port, keeping its bare repositories under `root`.
    pub fn start(root: &Path) -> FakeGitHub {
        let (url_tx, url_rx) = std::sync::mpsc::channel();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let root_dir = root.to_path_buf();
        let thread = std::thread::Builder::new()
            .name("fake-github".to_owned())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("tokio runtime for the fake GitHub");
                runtime.block_on(async move {
                    let listening = bind(&root_dir, 0).await.expect("bind 127.0.0.1:0");
                    let _ = url_tx.send(listening.url().to_owned());
                    tokio::select! {
                        () = listening.serve() => {}
                        _ = stopped => {}
                    }
                });
            })
            .expect("spawn the fake GitHub thread");
        let url = url_rx.recv().expect("the fake GitHub reports its URL");
        FakeGitHub {
            url,
            root: root.to_path_buf(),
            agent: ureq::AgentBuilder::new().build(),
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Returns the API base URL, `http://127.0.0.1:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Returns the directory holding the bare repositories.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Adds (or updates) a user whose API token is `token`.
    pub fn add_user(&self, login: &str, kind: UserKind, token: &str) {
        self.control(
            "POST",
            "/_control/users",
            json!({ "login": login, "kind": kind, "token": token }),
        );
    }

    /// Creates `owner/name` backed by a bare repository whose `default_branch` holds one commit
    /// (`README.md`); returns the repository's path.
    pub fn add_repo(&self, full_name: &str, default_branch: &str) -> PathBuf {
        let answer = self.control(
            "POST",
            "/_control/repos",
            json!({ "full_name": full_name, "default_branch": default_branch }),
        );
        PathBuf::from(answer["path"].as_str().expect("path in the answer"))
    }

    /// Marks a branch protected: the bare repository refuses pushes to it.
    pub fn protect_branch(&self, full_name: &str, branch: &str) {
        let path = format!("/_control/repos/{full_name}/protected_branches");
        self.control("POST", &path, json!({ "branch": branch }));
    }

    /// Opens an issue by `author` and returns its number.
    pub fn open_issue(&self, repo: &str, author: &str, title: &str, body: &str) -> u64 {
        let path = format!("/_control/repos/{repo}/issues");
        let answer = self.control(
            "POST",
            &path,
            json!({ "author": author, "title": title, "body": body }),
        );
        answer["number"].as_u64().expect("number in the answer")
    }

    /// Opens an issue numbered `number` (when free; else the next number) and returns its
    /// number.
    pub fn open_issue_numbered(&self, repo: &str, number: u64, author: &str, title: &str) -> u64 {
        let path = format!("/_control/repos/{repo}/issues");
        let body = json!({ "author": author, "title": title, "body": "", "number": number });
        self.control("POST", &path, body)["number"]
            .as_u64()
            .expect("number in the answer")
    }

    /// Creates `branch` as a new commit on the default branch and returns the commit.
    pub fn create_branch(&self, repo: &str, branch: &str) -> String {
        let path = format!("/_control/repos/{repo}/branches");
        let answer = self.control("POST", &path, json!({ "branch": branch }));
        answer["sha"]
            .as_str()
            .expect("sha in the answer")
            .to_owned()
    }

    /// Switches how every REST request is answered (see [`Answer`]).
    pub fn set_answer(&self, answer: Answer) {
        let body = serde_json::to_value(answer).expect("an answer serialises");
        self.control("POST", "/_control/answer", body);
    }

    /// Assigns `assignee`, recording an `assigned` event whose actor is `actor`.
    pub fn assign(&self, repo: &str, number: u64, assignee: &str, actor: &str) {
        let path = format!("/_control/repos/{repo}/issues/{number}/assign");
        self.control(
            "POST",
            &path,
            json!({ "assignee": assignee, "actor": actor }),
        );
    }

    /// Removes `assignee`, recording an `unassigned` event whose actor is `actor`.
    pub fn unassign(&self, repo: &str, number: u64, assignee: &str, actor: &str) {
        let path = format!("/_control/repos/{repo}/issues/{number}/unassign");
        self.control(
            "POST",
            &path,
            json!({ "assignee": assignee, "actor": actor }),
        );
    }

    /// Sets the issue's labels (replacing any).
    pub fn label(&self, repo: &str, number: u64, labels: &[&str]) {
        let path = format!("/_control/repos/{repo}/issues/{number}/labels");
        self.control("POST", &path, json!({ "labels": labels }));
    }

    /// Comments as `author` and returns the comment's id.
    pub fn comment(&self, repo: &str, number: u64, author: &str, body: &str) -> u64 {
        let path = format!("/_control/repos/{repo}/issues/{number}/comments");
        let answer = self.control("POST", &path, json!({ "author": author, "body": body }));
        answer["id"].as_u64().expect("id in the answer")
    }

    /// Closes an issue, or a pull request without merging it.
    pub fn close_issue(&self, repo: &str, number: u64) {
        let path = format!("/_control/repos/{repo}/issues/{number}/close");
        self.control("POST", &path, json!({}));
    }

    /// Returns every comment on an issue or pull request, oldest first.
    pub fn issue_comments(&self, repo: &str, number: u64) -> Vec<Value> {
        let path = format!("/_control/repos/{repo}/issues/{number}/comments");
        list(self.control("GET", &path, Value::Null))
    }

    /// Returns every pull request of a repository, any state, with live tips.
    pub fn pulls(&self, repo: &str) -> Vec<Value> {
        list(self.control("GET", &format!("/_control/repos/{repo}/pulls"), Value::Null))
    }

    /// Merges a pull request as a person pressing the merge button: a merge commit on the base
    /// branch, then closed as merged by `by` (nobody named when `None`). Returns the pull request.
    pub fn merge_pull(&self, repo: &str, number: u64, by: Option<&str>) -> Value {
        let path = format!("/_control/repos/{repo}/pulls/{number}/merge");
        self.control("POST", &path, json!({ "by": by }))
    }

    /// Puts a pull request into the merge queue as `by` (a person or a bot). Returns the pull
    /// request.
    pub fn enqueue_pull(&self, repo: &str, number: u64, by: &str) -> Value {
        let path = format!("/_control/repos/{repo}/pulls/{number}/merge_queue");
        self.control("POST", &path, json!({ "by": by }))
    }

    /// Has the merge queue merge a queued pull request as `github-merge-queue[bot]`; with
    /// `move_head`, a new commit lands on its head branch first. Returns the pull request.
    pub fn merge_queued_pull(&self, repo: &str, number: u64, move_head: bool) -> Value {
        let path = format!("/_control/repos/{repo}/pulls/{number}/merge_queue/merge");
        self.control("POST", &path, json!({ "move_head": move_head }))
    }

    /// Closes a pull request without merging it, recording a `closed` event by `actor`.
    pub fn close_pull(&self, repo: &str, number: u64, actor: &str) {
        let path = format!("/_control/repos/{repo}/issues/{number}/close");
        self.control("POST", &path, json!({ "actor": actor }));
    }

    /// Sets what `mergeable` shows while the pull request is open (`None`: not computed yet).
    pub fn set_mergeable(&self, repo: &str, number: u64, mergeable: Option<bool>) {
        let path = format!("/_control/repos/{repo}/pulls/{number}/mergeable");
        self.control("POST", &path, json!({ "mergeable": mergeable }));
    }

    /// Returns every review of a pull request, oldest first, pending ones included.
    pub fn reviews(&self, repo: &str, number: u64) -> Vec<Value> {
        let path = format!("/_control/repos/{repo}/pulls/{number}/reviews");
        list(self.control("GET", &path, Value::Null))
    }

    /// Dismisses an approval or change request as `actor`.
    pub fn dismiss_review(&self, repo: &str, number: u64, review_id: u64, actor: &str) {
        let path = format!("/_control/repos/{repo}/pulls/{number}/reviews/{review_id}/dismiss");
        let body = json!({ "actor": actor, "message": "dismissed by the test" });
        self.control("POST", &path, body);
    }

    /// Sets the CI plan of a repository: each commit first asked about gets the next of
    /// `outcomes` (`"success"`, `"failure"`, …), then `default`.
    pub fn ci_plan(&self, repo: &str, outcomes: &[&str], default: &str) {
        let path = format!("/_control/repos/{repo}/ci");
        self.control(
            "POST",
            &path,
            json!({ "outcomes": outcomes, "default": default }),
        );
    }

    /// Replaces one commit's CI with `outcome` (ids of what it had are kept).
    pub fn set_ci(&self, repo: &str, sha: &str, outcome: &str) {
        let path = format!("/_control/repos/{repo}/commits/{sha}/ci");
        self.control("POST", &path, json!({ "outcome": outcome }));
    }

    /// Replaces one commit's CI with `outcome` whose failing job logs `log`.
    pub fn set_ci_with_log(&self, repo: &str, sha: &str, outcome: &str, log: &str) {
        let path = format!("/_control/repos/{repo}/commits/{sha}/ci");
        self.control("POST", &path, json!({ "outcome": outcome, "log": log }));
    }

    /// Returns the REST request log, oldest first.
    pub fn requests(&self) -> Vec<RequestLog> {
        let answer = self.control("GET", "/_control/requests", Value::Null);
        serde_json::from_value(answer).expect("request log")
    }

    /// Clears the request log.
    pub fn reset_requests(&self) {
        self.control("DELETE", "/_control/requests", Value::Null);
    }

    /// Arms a one-shot fault for the next matching request.
    pub fn fault(&self, fault: Fault) {
        let body = serde_json::to_value(fault).expect("a fault serialises");
        self.control("POST", "/_control/faults", body);
    }

    /// Returns the request counters and rate-limit state.
    pub fn stats(&self) -> Stats {
        serde_json::from_value(self.control("GET", "/_control/stats", Value::Null)).expect("stats")
    }

    /// Returns how many times anybody called the merge endpoint.
    pub fn merge_calls(&self) -> usize {
        usize::try_from(self.stats().merge_calls).expect("a small count")
    }

    /// Calls the control API and returns its JSON answer (`null` for 204); panics with the
    /// fake's message on any failure, since a test cannot go on without its setup.
    fn control(&self, method: &str, path: &str, body: Value) -> Value {
        let request = self.agent.request(method, &format!("{}{path}", self.url));
        let result = if body.is_null() {
            request.call()
        } else {
            request.send_json(body)
        };
        match result {
            Ok(response) if response.status() == 204 => Value::Null,
            Ok(response) => response.into_json().expect("JSON from the control API"),
            Err(ureq::Error::Status(code, response)) => panic!(
                "fake GitHub: {method} {path}: {code} {}",
                response.into_string().unwrap_or_default()
            ),
            Err(e) => panic!("fake GitHub: {method} {path}: {e}"),
        }
    }
}

impl Drop for FakeGitHub {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Unwraps a JSON array answer.
fn list(value: Value) -> Vec<Value> {
    match value {
        Value::Array(items) => items,
        other => panic!("fake GitHub: expected a list, got {other}"),
    }
}
