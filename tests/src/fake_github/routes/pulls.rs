//! The pulls API: listing, opening (checked against the real branches), one pull request with
//! its tips read live, and the merge endpoint, which is counted and refused.

use axum::extract::Path;
use axum::extract::Query;
use axum::extract::State;
use axum::http::StatusCode;
use axum::http::Uri;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::routing::get;
use axum::Extension;
use axum::Json;
use axum::Router;
use serde::Deserialize;
use serde_json::Value;

use super::paginate;
use super::ListParams;
use crate::fake_github::error::ApiError;
use crate::fake_github::error::ApiJson;
use crate::fake_github::git;
use crate::fake_github::ops;
use crate::fake_github::request::number;
use crate::fake_github::request::Login;
use crate::fake_github::shape;
use crate::fake_github::state::Shared;

/// Returns the pull request routes.
pub fn router() -> Router<Shared> {
    Router::new()
        .route(
            "/repos/{owner}/{repo}/pulls",
            get(pulls_index).post(pulls_create),
        )
        .route("/repos/{owner}/{repo}/pulls/{number}", get(pulls_show))
        .route(
            "/repos/{owner}/{repo}/pulls/{number}/merge",
            get(merge_show).put(merge_update),
        )
}

async fn pulls_index(
    State(shared): State<Shared>,
    Path((owner, repo)): Path<(String, String)>,
    Query(params): Query<ListParams>,
    uri: Uri,
) -> Result<Response, ApiError> {
    ops::refresh_pulls(&shared, &owner, &repo).await?;
    let world = shared.lock();
    let repo = world.repo(&owner, &repo)?;
    let mut items = Vec::new();
    for issue in repo.issues.values() {
        let Some(pull) = &issue.pull else { continue };
        if params.state_allows(issue.open)?
            && params
                .head
                .as_deref()
                .is_none_or(|h| pull.head_label() == h)
            && params.base.as_deref().is_none_or(|b| pull.base_ref == b)
        {
            items.extend(shape::pull(&world, repo, issue));
        }
    }
    // GitHub lists newest first unless asked otherwise.
    if !params.ascending(false) {
        items.reverse();
    }
    Ok(paginate(items, &params, &uri, &world.base_url))
}

async fn pulls_show(
    State(shared): State<Shared>,
    Path((owner, repo, n)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let number = number(&n)?;
    ops::refresh_pulls(&shared, &owner, &repo).await?;
    let world = shared.lock();
    let repo = world.repo(&owner, &repo)?;
    shape::pull(&world, repo, repo.issue(number)?)
        .map(Json)
        .ok_or(ApiError::NotFound)
}

/// The body of `POST /repos/{o}/{r}/pulls`.
#[derive(Debug, Deserialize)]
struct NewPullBody {
    title: Option<String>,
    head: Option<String>,
    base: Option<String>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default)]
    draft: bool,
}

async fn pulls_create(
    State(shared): State<Shared>,
    Extension(Login(login)): Extension<Login>,
    Path((owner, repo)): Path<(String, String)>,
    ApiJson(new): ApiJson<NewPullBody>,
) -> Result<Response, ApiError> {
    let full_name = format!("{owner}/{repo}");
    let missing = |field: &str| ApiError::Validation(format!("{field} is missing"));
    let title = new
        .title
        .filter(|t| !t.is_empty())
        .ok_or_else(|| missing("title"))?;
    let head = new
        .head
        .filter(|h| !h.is_empty())
        .ok_or_else(|| missing("head"))?;
    let base = new
        .base
        .filter(|b| !b.is_empty())
        .ok_or_else(|| missing("base"))?;
    let (head_repo, head_path, head_ref, base_path) = {
        let world = shared.lock();
        let (head_repo, head_path, head_ref) = ops::resolve_head(&world, &full_name, &head)?;
        let base_path = world.repo(&owner, &repo)?.path.clone();
        (head_repo, head_path, head_ref, base_path)
    };
    let internal = |e: git::GitError| ApiError::Internal(e.to_string());
    let head_tips = git::branches(&head_path).await.map_err(internal)?;
    let base_tips = git::branches(&base_path).await.map_err(internal)?;
    let new = ops::NewPull {
        title,
        body: new.body.unwrap_or_default(),
        author: login,
        head_repo,
        head_ref,
        base_ref: base,
        draft: new.draft,
    };
    let mut world = shared.lock();
    let pull = ops::open_pull(&mut world, &full_name, new, &head_tips, &base_tips)?;
    Ok((StatusCode::CREATED, Json(pull)).into_response())
}

/// `GET …/merge`: 204 when merged, else 404, as on GitHub.
async fn merge_show(
    State(shared): State<Shared>,
    Path((owner, repo, n)): Path<(String, String, String)>,
) -> Result<StatusCode, ApiError> {
    let world = shared.lock();
    let issue = world.repo(&owner, &repo)?.issue(number(&n)?)?;
    match &issue.pull {
        Some(pull) if pull.merged_at.is_some() => Ok(StatusCode::NO_CONTENT),
        _ => Err(ApiError::NotFound),
    }
}

/// `PUT …/merge`: counted (the coordinator must never call it) and refused.
async fn merge_update(State(shared): State<Shared>) -> ApiError {
    shared.lock().stats.merge_calls += 1;
    ApiError::MethodNotAllowed("fake-github: merging through the API is not allowed".to_owned())
}
