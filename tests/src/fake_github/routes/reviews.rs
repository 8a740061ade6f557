//! Pull request reviews: listing them (oldest first; a pending review only to its author) and
//! submitting one under GitHub's rules, counted per event.

use axum::extract::Path;
use axum::extract::Query;
use axum::extract::State;
use axum::http::Uri;
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
use crate::fake_github::ops::reviews::NewReview;
use crate::fake_github::ops::reviews::ReviewEvent;
use crate::fake_github::request::number;
use crate::fake_github::request::Login;
use crate::fake_github::shape;
use crate::fake_github::state::ReviewState;
use crate::fake_github::state::Shared;

/// Returns the review routes.
pub fn router() -> Router<Shared> {
    Router::new().route(
        "/repos/{owner}/{repo}/pulls/{number}/reviews",
        get(reviews_index).post(reviews_create),
    )
}

async fn reviews_index(
    State(shared): State<Shared>,
    Extension(Login(login)): Extension<Login>,
    Path((owner, repo, n)): Path<(String, String, String)>,
    Query(params): Query<ListParams>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let world = shared.lock();
    let repo = world.repo(&owner, &repo)?;
    let number = number(&n)?;
    let (_, pull) = repo.pull(number)?;
    let items = pull
        .reviews
        .iter()
        .filter(|r| r.state != ReviewState::Pending || r.author == login)
        .map(|r| shape::review(&world, repo, number, r))
        .collect();
    Ok(paginate(items, &params, &uri, &world.base_url))
}

/// The body of `POST …/reviews`.
#[derive(Debug, Deserialize)]
struct NewReviewBody {
    commit_id: Option<String>,
    body: Option<String>,
    event: Option<String>,
}

async fn reviews_create(
    State(shared): State<Shared>,
    Extension(Login(login)): Extension<Login>,
    Path((owner, repo, n)): Path<(String, String, String)>,
    ApiJson(new): ApiJson<NewReviewBody>,
) -> Result<Json<Value>, ApiError> {
    let number = number(&n)?;
    let full_name = format!("{owner}/{repo}");
    let event = new.event.as_deref().map(ReviewEvent::parse).transpose()?;
    {
        // Counted before the rules, so a refused approval shows too.
        let key = event.map_or("PENDING", ReviewEvent::as_str);
        let mut world = shared.lock();
        *world.stats.review_posts.entry(key.to_owned()).or_default() += 1;
    }
    ops::refresh_pulls(&shared, &owner, &repo).await?;
    let new = NewReview {
        author: login,
        body: new.body.unwrap_or_default(),
        event,
        commit_id: new.commit_id,
    };
    let (commit_id, check_in) = ops::reviews::check(&shared.lock(), &full_name, number, &new)?;
    if let Some(path) = check_in {
        let exists = git::commit_exists(&path, &commit_id)
            .await
            .map_err(|e| ApiError::Internal(e.to_string()))?;
        if !exists {
            return Err(ops::reviews::no_commit(&commit_id));
        }
    }
    let mut world = shared.lock();
    let review = ops::reviews::create(&mut world, &full_name, number, new, commit_id)?;
    Ok(Json(review))
}
