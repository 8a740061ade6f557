//! A commit's checks and statuses: `…/commits/{ref}/check-runs` and `…/commits/{ref}/statuses`.
//! `{ref}` is a full sha or a branch name without `/`; asking about a commit for the first time
//! makes its CI from the repository's plan.

use axum::extract::Path;
use axum::extract::Query;
use axum::extract::State;
use axum::http::Uri;
use axum::response::Response;
use axum::routing::get;
use axum::Router;

use super::paginate;
use super::paginate_counted;
use super::ListParams;
use crate::fake_github::error::ApiError;
use crate::fake_github::ops;
use crate::fake_github::ops::reviews::no_commit;
use crate::fake_github::shape;
use crate::fake_github::state::Shared;

/// Returns the commit routes.
pub fn router() -> Router<Shared> {
    Router::new()
        .route(
            "/repos/{owner}/{repo}/commits/{reference}/check-runs",
            get(check_runs_index),
        )
        .route(
            "/repos/{owner}/{repo}/commits/{reference}/statuses",
            get(statuses_index),
        )
}

type RefPath = Path<(String, String, String)>;

async fn check_runs_index(
    State(shared): State<Shared>,
    Path((owner, repo, reference)): RefPath,
    Query(params): Query<ListParams>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let sha = ops::ci::ensure(&shared, &owner, &repo, &reference)
        .await?
        .ok_or_else(|| no_commit(&reference))?;
    let world = shared.lock();
    let repo = world.repo(&owner, &repo)?;
    let items = repo.ci.get(&sha).map_or_else(Vec::new, |ci| {
        ci.check_runs
            .iter()
            .map(|c| shape::check_run(&world, repo, c))
            .collect()
    });
    Ok(paginate_counted(
        "check_runs",
        items,
        0,
        &params,
        &uri,
        &world.base_url,
    ))
}

async fn statuses_index(
    State(shared): State<Shared>,
    Path((owner, repo, reference)): RefPath,
    Query(params): Query<ListParams>,
    uri: Uri,
) -> Result<Response, ApiError> {
    let sha = ops::ci::ensure(&shared, &owner, &repo, &reference)
        .await?
        .ok_or_else(|| no_commit(&reference))?;
    let world = shared.lock();
    let repo = world.repo(&owner, &repo)?;
    let mut statuses: Vec<_> = repo
        .ci
        .get(&sha)
        .map_or_else(Vec::new, |ci| ci.statuses.iter().collect());
    // Newest first, as GitHub lists them.
    statuses.sort_by(|a, b| (&b.created_at, b.id).cmp(&(&a.created_at, a.id)));
    let items = statuses
        .into_iter()
        .map(|s| shape::status(&world, repo, s))
        .collect();
    Ok(paginate(items, &params, &uri, &world.base_url))
}
