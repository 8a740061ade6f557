//! Control routes for pull requests: every pull request, a person merging one with the merge
//! button, a person or a bot putting one into the merge queue and the queue merging it,
//! GitHub deciding mergeability, every review, and dismissing a review. Closing a pull request
//! unmerged is the issues close route.

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
            "/_control/repos/{owner}/{repo}/pulls/{number}/merge_queue",
            post(merge_queue_create),
        )
        .route(
            "/_control/repos/{owner}/{repo}/pulls/{number}/merge_queue/merge",
            post(queue_merge_create),
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

/// `{by}`: the login that puts the pull request into the merge queue.
#[derive(Debug, Deserialize)]
struct EnqueueBody {
    by: String,
}

async fn merge_queue_create(
    State(shared): State<Shared>,
    Path((owner, repo, n)): PullPath,
    ApiJson(body): ApiJson<EnqueueBody>,
) -> Result<Json<Value>, ApiError> {
    let mut world = shared.lock();
    ops::queue::enqueue(&mut world, &owner, &repo, number(&n)?, &body.by).map(Json)
}

/// `{move_head?}`: `true` pushes a new commit to the head branch before the queue merges.
#[derive(Debug, Default, Deserialize)]
struct QueueMergeBody {
    #[serde(default)]
    move_head: bool,
}

async fn queue_merge_create(
    State(shared): State<Shared>,
    Path((owner, repo, n)): PullPath,
    ApiJson(body): ApiJson<QueueMergeBody>,
) -> Result<Json<Value>, ApiError> {
    let number = number(&n)?;
    ops::queue::merge_queued(&shared, &owner, &repo, number, body.move_head)
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
