//! GitHub Actions: workflow runs (all, or one commit's with `head_sha`, which makes that
//! commit's CI from the plan if it has none), one run, its jobs (latest or per attempt), and a
//! job's logs, which redirect to the control API's log text as GitHub redirects to storage.

use axum::extract::Path;
use axum::extract::Query;
use axum::extract::State;
use axum::http::header;
use axum::http::StatusCode;
use axum::http::Uri;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::routing::get;
use axum::Json;
use axum::Router;
use serde_json::Value;

use super::paginate_counted;
use super::ListParams;
use crate::fake_github::error::ApiError;
use crate::fake_github::git;
use crate::fake_github::ops;
use crate::fake_github::request::number;
use crate::fake_github::shape;
use crate::fake_github::state::ci::JobLog;
use crate::fake_github::state::ci::WorkflowRun;
use crate::fake_github::state::Repo;
use crate::fake_github::state::Shared;

/// GitHub's answer for a job whose logs have expired.
pub const LOGS_GONE: &str = "Logs are no longer available";

/// Returns the Actions routes.
pub fn router() -> Router<Shared> {
    Router::new()
        .route("/repos/{owner}/{repo}/actions/runs", get(runs_index))
        .route(
            "/repos/{owner}/{repo}/actions/runs/{run_id}",
            get(runs_show),
        )
        .route(
            "/repos/{owner}/{repo}/actions/runs/{run_id}/jobs",
            get(jobs_index),
        )
        .route(
            "/repos/{owner}/{repo}/actions/runs/{run_id}/attempts/{attempt}/jobs",
            get(attempt_jobs_index),
        )
        .route(
            "/repos/{owner}/{repo}/actions/jobs/{job_id}/logs",
            get(logs_show),
        )
}

async fn runs_index(
    State(shared): State<Shared>,
    Path((owner, repo)): Path<(String, String)>,
    Query(params): Query<ListParams>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let only = match params.head_sha.as_deref() {
        // Only a full sha can name a commit here; anything else matches no run.
        Some(sha) if git::is_sha(sha) => Some(ops::ci::ensure(&shared, &owner, &repo, sha).await?),
        Some(_) => Some(None),
        None => None,
    };
    let world = shared.lock();
    let repo = world.repo(&owner, &repo)?;
    let mut runs = Vec::new();
    let mut hidden = 0;
    for (sha, ci) in &repo.ci {
        if only.as_ref().is_none_or(|o| o.as_ref() == Some(sha)) {
            runs.extend(&ci.runs);
            hidden += ci.hidden_runs;
        }
    }
    // Newest first, as GitHub lists them.
    runs.sort_by(|a, b| (&b.created_at, b.id).cmp(&(&a.created_at, a.id)));
    let items = runs
        .into_iter()
        .map(|r| shape::workflow_run(&world, repo, r))
        .collect();
    Ok(paginate_counted(
        "workflow_runs",
        items,
        hidden,
        &params,
        &uri,
        &world.base_url,
    ))
}

/// Returns a workflow run of the repository, or 404.
fn find_run<'a>(repo: &'a Repo, id: &str) -> Result<&'a WorkflowRun, ApiError> {
    let id = number(id)?;
    repo.ci
        .values()
        .find_map(|ci| ci.run(id))
        .ok_or(ApiError::NotFound)
}

async fn runs_show(
    State(shared): State<Shared>,
    Path((owner, repo, run_id)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let world = shared.lock();
    let repo = world.repo(&owner, &repo)?;
    let run = find_run(repo, &run_id)?;
    Ok(Json(shape::workflow_run(&world, repo, run)))
}

/// `filter=latest` (the default) lists the latest attempt's jobs, `filter=all` every attempt's.
async fn jobs_index(
    State(shared): State<Shared>,
    Path((owner, repo, run_id)): Path<(String, String, String)>,
    Query(params): Query<ListParams>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let all = match params.filter.as_deref().unwrap_or("latest") {
        "latest" => false,
        "all" => true,
        other => return Err(ApiError::Validation(format!("invalid filter {other:?}"))),
    };
    let world = shared.lock();
    let repo = world.repo(&owner, &repo)?;
    let run = find_run(repo, &run_id)?;
    let items = run
        .jobs
        .iter()
        .filter(|j| all || j.run_attempt == run.run_attempt)
        .map(|j| shape::job(&world, repo, run, j))
        .collect();
    Ok(paginate_counted(
        "jobs",
        items,
        0,
        &params,
        &uri,
        &world.base_url,
    ))
}

async fn attempt_jobs_index(
    State(shared): State<Shared>,
    Path((owner, repo, run_id, attempt)): Path<(String, String, String, String)>,
    Query(params): Query<ListParams>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let attempt = number(&attempt)?;
    let world = shared.lock();
    let repo = world.repo(&owner, &repo)?;
    let run = find_run(repo, &run_id)?;
    if attempt == 0 || attempt > run.run_attempt {
        return Err(ApiError::NotFound);
    }
    let items = run
        .jobs
        .iter()
        .filter(|j| j.run_attempt == attempt)
        .map(|j| shape::job(&world, repo, run, j))
        .collect();
    Ok(paginate_counted(
        "jobs",
        items,
        0,
        &params,
        &uri,
        &world.base_url,
    ))
}

/// `302 Found` to `/_control/logs/{job_id}`, or 410 when the logs have expired.
async fn logs_show(
    State(shared): State<Shared>,
    Path((owner, repo, job_id)): Path<(String, String, String)>,
) -> Result<Response, ApiError> {
    let id = number(&job_id)?;
    let world = shared.lock();
    let repo = world.repo(&owner, &repo)?;
    let (_, job) = repo
        .ci
        .values()
        .find_map(|ci| ci.job(id))
        .ok_or(ApiError::NotFound)?;
    match job.log {
        JobLog::Gone => Err(ApiError::Gone(LOGS_GONE.to_owned())),
        JobLog::Text(_) => {
            let location = format!("{}/_control/logs/{id}", world.base_url);
            Ok((StatusCode::FOUND, [(header::LOCATION, location)]).into_response())
        }
    }
}
