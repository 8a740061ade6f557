//! Control routes for CI: a repository's plan (which outcome each new commit gets), one commit's
//! CI set explicitly, and job log text, where the REST logs route redirects to.

use std::collections::BTreeMap;
use std::collections::VecDeque;

use axum::extract::Path;
use axum::extract::State;
use axum::http::header;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::routing::get;
use axum::routing::post;
use axum::Json;
use axum::Router;
use serde::Deserialize;
use serde_json::json;
use serde_json::Value;

use crate::fake_github::error::ApiError;
use crate::fake_github::error::ApiJson;
use crate::fake_github::git;
use crate::fake_github::ops;
use crate::fake_github::request::number;
use crate::fake_github::routes::LOGS_GONE;
use crate::fake_github::shape;
use crate::fake_github::state::ci::JobLog;
use crate::fake_github::state::CiOutcome;
use crate::fake_github::state::CiPlan;
use crate::fake_github::state::CiSpec;
use crate::fake_github::state::Shared;

/// Returns the CI control routes.
pub fn router() -> Router<Shared> {
    Router::new()
        .route(
            "/_control/repos/{owner}/{repo}/ci",
            get(plan_show).post(plan_update),
        )
        .route(
            "/_control/repos/{owner}/{repo}/commits/{sha}/ci",
            post(commit_ci_update),
        )
        .route("/_control/logs/{job_id}", get(logs_show))
}

/// `{outcomes?, default?}`: each a name (`"failure"`) or `{outcome, log}`.
#[derive(Debug, Deserialize)]
struct PlanBody {
    #[serde(default)]
    outcomes: VecDeque<CiSpec>,
    default: Option<CiSpec>,
}

async fn plan_update(
    State(shared): State<Shared>,
    Path((owner, repo)): Path<(String, String)>,
    ApiJson(body): ApiJson<PlanBody>,
) -> Result<StatusCode, ApiError> {
    let mut world = shared.lock();
    world.repo_mut(&owner, &repo)?.ci_plan = CiPlan {
        outcomes: body.outcomes,
        default: body.default.unwrap_or_else(|| CiSpec::of(CiOutcome::None)),
    };
    Ok(StatusCode::NO_CONTENT)
}

/// `{outcomes, default, commits: {sha: outcome}}`: what is left of the plan and what every
/// commit got.
async fn plan_show(
    State(shared): State<Shared>,
    Path((owner, repo)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let world = shared.lock();
    let repo = world.repo(&owner, &repo)?;
    let commits: BTreeMap<&String, CiOutcome> =
        repo.ci.iter().map(|(sha, ci)| (sha, ci.outcome)).collect();
    Ok(Json(json!({
        "outcomes": repo.ci_plan.outcomes,
        "default": repo.ci_plan.default,
        "commits": commits,
    })))
}

/// `{outcome, log?}` replaces one commit's CI; answers it as `{workflow_runs, check_runs,
/// statuses}`.
async fn commit_ci_update(
    State(shared): State<Shared>,
    Path((owner, repo, sha)): Path<(String, String, String)>,
    ApiJson(spec): ApiJson<CiSpec>,
) -> Result<Json<Value>, ApiError> {
    if !git::is_sha(&sha) {
        return Err(ApiError::Validation(format!(
            "bad sha {sha:?}: expected 40 lowercase hex digits"
        )));
    }
    let mut world = shared.lock();
    ops::ci::replace(&mut world, &owner, &repo, &sha, &spec)?;
    let repo = world.repo(&owner, &repo)?;
    let ci = repo.ci.get(&sha).ok_or(ApiError::NotFound)?;
    Ok(Json(json!({
        "workflow_runs": ci.runs.iter().map(|r| shape::workflow_run(&world, repo, r)).collect::<Vec<_>>(),
        "check_runs": ci.check_runs.iter().map(|c| shape::check_run(&world, repo, c)).collect::<Vec<_>>(),
        "statuses": ci.statuses.iter().map(|s| shape::status(&world, repo, s)).collect::<Vec<_>>(),
    })))
}

/// A job's log as `text/plain`; 410 when it has expired.
async fn logs_show(
    State(shared): State<Shared>,
    Path(job_id): Path<String>,
) -> Result<Response, ApiError> {
    let id = number(&job_id)?;
    let world = shared.lock();
    let (_, job) = world
        .repos
        .values()
        .flat_map(|r| r.ci.values())
        .find_map(|ci| ci.job(id))
        .ok_or(ApiError::NotFound)?;
    match &job.log {
        JobLog::Gone => Err(ApiError::Gone(LOGS_GONE.to_owned())),
        JobLog::Text(text) => Ok((
            [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
            text.clone(),
        )
            .into_response()),
    }
}
