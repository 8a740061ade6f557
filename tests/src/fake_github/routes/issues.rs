//! The issues API: listing (pull requests included, as on GitHub), one issue, its events, its
//! timeline (events and comments, oldest first), and its comments (list and create).

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
use crate::fake_github::ops;
use crate::fake_github::request::number;
use crate::fake_github::request::Login;
use crate::fake_github::shape;
use crate::fake_github::state::Issue;
use crate::fake_github::state::Shared;

/// Returns the issue routes.
pub fn router() -> Router<Shared> {
    Router::new()
        .route("/repos/{owner}/{repo}/issues", get(issues_index))
        .route("/repos/{owner}/{repo}/issues/{number}", get(issues_show))
        .route(
            "/repos/{owner}/{repo}/issues/{number}/events",
            get(events_index),
        )
        .route(
            "/repos/{owner}/{repo}/issues/{number}/timeline",
            get(timeline_index),
        )
        .route(
            "/repos/{owner}/{repo}/issues/{number}/comments",
            get(comments_index).post(comments_create),
        )
}

async fn issues_index(
    State(shared): State<Shared>,
    Path((owner, repo)): Path<(String, String)>,
    Query(params): Query<ListParams>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let world = shared.lock();
    let repo = world.repo(&owner, &repo)?;
    let mut issues = Vec::new();
    for issue in repo.issues.values() {
        if params.state_allows(issue.open)?
            && assignee_allows(params.assignee.as_deref(), issue)
            && params.since_allows(&issue.updated_at)?
        {
            issues.push(issue);
        }
    }
    match params.sort.as_deref().unwrap_or("created") {
        "created" => {
            issues.sort_by(|a, b| (&a.created_at, a.number).cmp(&(&b.created_at, b.number)))
        }
        "updated" => {
            issues.sort_by(|a, b| (&a.updated_at, a.number).cmp(&(&b.updated_at, b.number)))
        }
        "comments" => issues.sort_by_key(|i| (i.comments.len(), i.number)),
        other => return Err(ApiError::Validation(format!("invalid sort {other:?}"))),
    }
    if !params.ascending(false) {
        issues.reverse();
    }
    let items = issues
        .into_iter()
        .map(|i| shape::issue(&world, repo, i))
        .collect();
    Ok(paginate(items, &params, &uri, &world.base_url))
}

/// Applies the `assignee` filter: a login, `none` or `*`.
fn assignee_allows(filter: Option<&str>, issue: &Issue) -> bool {
    match filter {
        None => true,
        Some("none") => issue.assignees.is_empty(),
        Some("*") => !issue.assignees.is_empty(),
        Some(login) => issue.assignees.iter().any(|a| a == login),
    }
}

async fn issues_show(
    State(shared): State<Shared>,
    Path((owner, repo, n)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let world = shared.lock();
    let repo = world.repo(&owner, &repo)?;
    let issue = repo.issue(number(&n)?)?;
    Ok(Json(shape::issue(&world, repo, issue)))
}

async fn events_index(
    State(shared): State<Shared>,
    Path((owner, repo, n)): Path<(String, String, String)>,
    Query(params): Query<ListParams>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let world = shared.lock();
    let issue = world.repo(&owner, &repo)?.issue(number(&n)?)?;
    let items = issue
        .events
        .iter()
        .map(|e| shape::event(&world, e))
        .collect();
    Ok(paginate(items, &params, &uri, &world.base_url))
}

/// The timeline: the events and the comments (as `commented` entries), oldest first, ties in
/// the order they happened (ids grow across every kind of object).
async fn timeline_index(
    State(shared): State<Shared>,
    Path((owner, repo, n)): Path<(String, String, String)>,
    Query(params): Query<ListParams>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let world = shared.lock();
    let repo = world.repo(&owner, &repo)?;
    let number = number(&n)?;
    let issue = repo.issue(number)?;
    let mut entries: Vec<(&str, u64, Value)> = issue
        .events
        .iter()
        .map(|e| (e.created_at.as_str(), e.id, shape::event(&world, e)))
        .collect();
    for c in &issue.comments {
        let entry = shape::timeline_comment(&world, repo, number, c);
        entries.push((c.created_at.as_str(), c.id, entry));
    }
    entries.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    let items = entries.into_iter().map(|e| e.2).collect();
    Ok(paginate(items, &params, &uri, &world.base_url))
}

async fn comments_index(
    State(shared): State<Shared>,
    Path((owner, repo, n)): Path<(String, String, String)>,
    Query(params): Query<ListParams>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let world = shared.lock();
    let repo = world.repo(&owner, &repo)?;
    let number = number(&n)?;
    let mut items = Vec::new();
    for c in &repo.issue(number)?.comments {
        if params.since_allows(&c.updated_at)? {
            items.push(shape::comment(&world, repo, number, c));
        }
    }
    Ok(paginate(items, &params, &uri, &world.base_url))
}

/// The body of `POST …/comments`.
#[derive(Debug, Deserialize)]
struct NewComment {
    body: Option<String>,
}

async fn comments_create(
    State(shared): State<Shared>,
    Extension(Login(login)): Extension<Login>,
    Path((owner, repo, n)): Path<(String, String, String)>,
    ApiJson(new): ApiJson<NewComment>,
) -> Result<Response, ApiError> {
    let Some(body) = new.body.filter(|b| !b.is_empty()) else {
        return Err(ApiError::Validation("body is missing".to_owned()));
    };
    let mut world = shared.lock();
    let comment = ops::comment(
        &mut world,
        &format!("{owner}/{repo}"),
        number(&n)?,
        &login,
        &body,
    )?;
    Ok((StatusCode::CREATED, Json(comment)).into_response())
}
