//! Control routes for pull requests: every pull request, a person merging one with the merge
//! button, GitHub deciding mergeability, every review, and dismissing a review. Closing a pull
//! request unmerged is the issues close route.

use axum::extract::Path;
use axum::extract::State;
use axum::routing::get;
use axum::routing::post;
use axum::Json;
use axum::Router;
use serde::Deserialize;
use serde_json::Value;

use crate::fake_github::error::ApiError;
use crate::fake_github::error::ApiJson;
use crate::fake_github::ops;
use crate::fake_github::request::number;
use crate::fake_github::shape;
use crate::fake_github::state::Shared;

/// Returns the pull request control routes.
pub fn router() -> Router<Shared> {
    Router::new()
        .route("/_control/repos/{owner}/{repo}/pulls", get(pulls_index))
        .route(
            "/_control/repos/{owner}/{repo}/pulls/{number}/merge",
            post(merge_create),
        )
        .route(
            "/_control/repos/{owner}/{repo}/pulls/{number}/mergeable",
            post(mergeable_update),
        )
        .route(
            "/_control/repos/{owner}/{repo}/pulls/{number}/reviews",
            get(reviews_index),
        )
        .route(
            "/_control/repos/{owner}/{repo}/pulls/{number}/reviews/{review_id}/dismiss",
            post(dismissal_create),
        )
}

type PullPath = Path<(String, String, String)>;

async fn pulls_index(
    State(shared): State<Shared>,
    Path((owner, repo)): Path<(String, String)>,
) -> Result<Json<Vec<Value>>, ApiError> {
    ops::refresh_pulls(&shared, &owner, &repo).await?;
    let world = shared.lock();
    let repo = world.repo(&owner, &repo)?;
    let pulls = repo
        .issues
        .values()
        .filter_map(|i| shape::pull(&world, repo, i))
        .collect();
    Ok(Json(pulls))
}

/// `{by}`: the login shown as `merged_by` and as the events' actor; `null` (or absent) for
/// nobody.
#[derive(Debug, Deserialize)]
struct MergeBody {
    by: Option<String>,
}

async fn merge_create(
    State(shared): State<Shared>,
    Path((owner, repo, n)): PullPath,
    ApiJson(body): ApiJson<MergeBody>,
) -> Result<Json<Value>, ApiError> {
    let number = number(&n)?;
    ops::merge::merge(&shared, &owner, &repo, number, body.by.as_deref())
        .await
        .map(Json)
}

/// `{mergeable: true | false | null}`; absent is `null`.
#[derive(Debug, Deserialize)]
struct MergeableBody {
    mergeable: Option<bool>,
}

async fn mergeable_update(
    State(shared): State<Shared>,
    Path((owner, repo, n)): PullPath,
    ApiJson(body): ApiJson<MergeableBody>,
) -> Result<Json<Value>, ApiError> {
    let full_name = format!("{owner}/{repo}");
    let mut world = shared.lock();
    ops::merge::set_mergeable(&mut world, &full_name, number(&n)?, body.mergeable).map(Json)
}

async fn reviews_index(
    State(shared): State<Shared>,
    Path((owner, repo, n)): PullPath,
) -> Result<Json<Vec<Value>>, ApiError> {
    let world = shared.lock();
    let repo = world.repo(&owner, &repo)?;
    let number = number(&n)?;
    let (_, pull) = repo.pull(number)?;
    let reviews = pull
        .reviews
        .iter()
        .map(|r| shape::review(&world, repo, number, r))
        .collect();
    Ok(Json(reviews))
}

/// `{actor, message}`.
#[derive(Debug, Deserialize)]
struct Dismissal {
    actor: String,
    /// Required, as on GitHub; the fake does not show it anywhere.
    message: String,
}

async fn dismissal_create(
    State(shared): State<Shared>,
    Path((owner, repo, n, review_id)): Path<(String, String, String, String)>,
    ApiJson(dismissal): ApiJson<Dismissal>,
) -> Result<Json<Value>, ApiError> {
    if dismissal.message.trim().is_empty() {
        return Err(ApiError::Validation("message is missing".to_owned()));
    }
    let full_name = format!("{owner}/{repo}");
    let mut world = shared.lock();
    ops::reviews::dismiss(
        &mut world,
        &full_name,
        number(&n)?,
        number(&review_id)?,
        &dismissal.actor,
    )
    .map(Json)
}
