//! `GET /user`, `GET /repos/{o}/{r}` and `GET /repos/{o}/{r}/branches/{branch}` (tip read live
//! from the bare repository, with its protection).

use axum::extract::Path;
use axum::extract::State;
use axum::routing::get;
use axum::Extension;
use axum::Json;
use axum::Router;
use serde_json::json;
use serde_json::Value;

use crate::fake_github::error::ApiError;
use crate::fake_github::git;
use crate::fake_github::request::Login;
use crate::fake_github::shape;
use crate::fake_github::state::Shared;

/// Returns the user and repository routes.
pub fn router() -> Router<Shared> {
    Router::new()
        .route("/user", get(user_show))
        .route("/repos/{owner}/{repo}", get(repos_show))
        .route(
            "/repos/{owner}/{repo}/branches/{*branch}",
            get(branches_show),
        )
}

async fn user_show(
    State(shared): State<Shared>,
    Extension(Login(login)): Extension<Login>,
) -> Json<Value> {
    Json(shape::user(&shared.lock(), &login))
}

async fn repos_show(
    State(shared): State<Shared>,
    Path((owner, repo)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    let world = shared.lock();
    let repo = world.repo(&owner, &repo)?;
    Ok(Json(shape::repo(&world, repo)))
}

async fn branches_show(
    State(shared): State<Shared>,
    Path((owner, repo, branch)): Path<(String, String, String)>,
) -> Result<Json<Value>, ApiError> {
    let (path, protected) = {
        let world = shared.lock();
        let repo = world.repo(&owner, &repo)?;
        (repo.path.clone(), repo.protected.contains(&branch))
    };
    let tips = git::branches(&path)
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let sha = tips.get(&branch).ok_or(ApiError::NotFound)?;
    Ok(Json(json!({
        "name": branch,
        "commit": { "sha": sha },
        "protected": protected,
    })))
}
