//! The control API under `/_control/…` (JSON in and out, no authentication, not logged or
//! counted): the test, or a person with curl, plays GitHub's administrators and humans here.
//! Users, repositories, issues and the request log are here; pull requests (merging, reviews)
//! and CI in the submodules. The routes are listed in the module documentation of
//! `fake_github`.

mod ci;
mod pulls;

use axum::extract::Path;
use axum::extract::State;
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

use super::error::ApiError;
use super::error::ApiJson;
use super::git;
use super::ops;
use super::request::number;
use super::shape;
use super::state::valid_segment;
use super::state::Fault;
use super::state::Repo;
use super::state::Shared;
use super::state::User;
use super::state::UserKind;

/// Returns the control routes.
pub fn router() -> Router<Shared> {
    Router::new()
        .route("/_control/users", post(users_create))
        .route("/_control/repos", post(repos_create))
        .route(
            "/_control/repos/{owner}/{repo}/protected_branches",
            post(protected_branches_create),
        )
        .route("/_control/repos/{owner}/{repo}/issues", post(issues_create))
        .route(
            "/_control/repos/{owner}/{repo}/issues/{number}/assign",
            post(assign_create),
        )
        .route(
            "/_control/repos/{owner}/{repo}/issues/{number}/unassign",
            post(unassign_create),
        )
        .route(
            "/_control/repos/{owner}/{repo}/issues/{number}/labels",
            post(labels_create),
        )
        .route(
            "/_control/repos/{owner}/{repo}/issues/{number}/comments",
            get(comments_index).post(comments_create),
        )
        .route(
            "/_control/repos/{owner}/{repo}/issues/{number}/close",
            post(close_create),
        )
        .route(
            "/_control/requests",
            get(requests_index).delete(requests_destroy),
        )
        .route("/_control/faults", post(faults_create))
        .route("/_control/answer", post(answer_update))
        .route(
            "/_control/repos/{owner}/{repo}/branches",
            post(branches_create),
        )
        .route("/_control/stats", get(stats_show))
        .merge(pulls::router())
        .merge(ci::router())
        .fallback(|| async { ApiError::NotFound })
}

type RepoPath = Path<(String, String)>;
type IssuePath = Path<(String, String, String)>;

/// `{login, kind, token}`.
#[derive(Debug, Deserialize)]
struct NewUser {
    login: String,
    kind: UserKind,
    token: String,
}

async fn users_create(
    State(shared): State<Shared>,
    ApiJson(new): ApiJson<NewUser>,
) -> Result<Response, ApiError> {
    if new.login.is_empty() || new.login.contains('/') || new.token.is_empty() {
        return Err(ApiError::Validation(format!(
            "bad login {:?} or empty token",
            new.login
        )));
    }
    let mut world = shared.lock();
    let id = match world.users.get(&new.login) {
        Some(user) => user.id,
        None => world.next_id(),
    };
    let user = User { id, kind: new.kind };
    world.users.insert(new.login.clone(), user);
    world.tokens.insert(new.token, new.login.clone());
    let user = shape::user(&world, &new.login);
    Ok((StatusCode::CREATED, Json(user)).into_response())
}

/// `{full_name, default_branch}`.
#[derive(Debug, Deserialize)]
struct NewRepo {
    full_name: String,
    default_branch: String,
}

async fn repos_create(
    State(shared): State<Shared>,
    ApiJson(new): ApiJson<NewRepo>,
) -> Result<Response, ApiError> {
    let (owner, name) = new
        .full_name
        .split_once('/')
        .filter(|(o, n)| valid_segment(o) && valid_segment(n))
        .ok_or_else(|| ApiError::Validation(format!("bad full_name {:?}", new.full_name)))?;
    if !valid_branch(&new.default_branch) {
        return Err(ApiError::Validation(format!(
            "bad default_branch {:?}",
            new.default_branch
        )));
    }
    let path = shared.lock().root.join(owner).join(format!("{name}.git"));
    git::init_bare(&path, name, &new.default_branch)
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    let mut world = shared.lock();
    if !world.repos.contains_key(&new.full_name) {
        let id = world.next_id();
        let repo = Repo {
            id,
            owner: owner.to_owned(),
            name: name.to_owned(),
            default_branch: new.default_branch.clone(),
            path,
            protected: Default::default(),
            issues: Default::default(),
            ci: Default::default(),
            ci_plan: Default::default(),
        };
        world.repos.insert(new.full_name.clone(), repo);
    }
    let repo = world.repo(owner, name)?;
    let body = json!({ "path": repo.path, "repo": shape::repo(&world, repo) });
    Ok((StatusCode::CREATED, Json(body)).into_response())
}

/// Returns whether a branch name is plain enough to pass to `git init` (letters, digits,
/// `-_./`, no `..`, not starting with `-` or `/`).
fn valid_branch(branch: &str) -> bool {
    !branch.is_empty()
        && !branch.starts_with(['-', '/', '.'])
        && !branch.ends_with(['/', '.'])
        && !branch.contains("..")
        && !branch.contains("//")
        && branch
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'/'))
}

/// `{branch}`.
#[derive(Debug, Deserialize)]
struct Protect {
    branch: String,
}

async fn protected_branches_create(
    State(shared): State<Shared>,
    Path((owner, repo)): RepoPath,
    ApiJson(protect): ApiJson<Protect>,
) -> Result<StatusCode, ApiError> {
    let mut world = shared.lock();
    let repo = world.repo_mut(&owner, &repo)?;
    repo.protected.insert(protect.branch);
    git::write_protected(&repo.path, &repo.protected)
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok(StatusCode::NO_CONTENT)
}

/// `{author, title, body, number?}`.
#[derive(Debug, Deserialize)]
struct NewIssue {
    author: String,
    title: String,
    #[serde(default)]
    body: String,
    number: Option<u64>,
}

async fn issues_create(
    State(shared): State<Shared>,
    Path((owner, repo)): RepoPath,
    ApiJson(new): ApiJson<NewIssue>,
) -> Result<Response, ApiError> {
    let mut world = shared.lock();
    let full_name = format!("{owner}/{repo}");
    let number = ops::open_issue_numbered(
        &mut world,
        &full_name,
        new.number,
        &new.author,
        &new.title,
        &new.body,
    )?;
    let repo = world.repo(&owner, &repo)?;
    let issue = shape::issue(&world, repo, repo.issue(number)?);
    Ok((StatusCode::CREATED, Json(issue)).into_response())
}

/// `{assignee, actor}`.
#[derive(Debug, Deserialize)]
struct Assignment {
    assignee: String,
    actor: String,
}

async fn assign_create(
    state: State<Shared>,
    path: IssuePath,
    body: ApiJson<Assignment>,
) -> Result<StatusCode, ApiError> {
    set_assignment(state, path, body, true)
}

async fn unassign_create(
    state: State<Shared>,
    path: IssuePath,
    body: ApiJson<Assignment>,
) -> Result<StatusCode, ApiError> {
    set_assignment(state, path, body, false)
}

/// Assigns (or unassigns) as the named actor, recording the issue event.
fn set_assignment(
    State(shared): State<Shared>,
    Path((owner, repo, n)): Path<(String, String, String)>,
    ApiJson(a): ApiJson<Assignment>,
    assigned: bool,
) -> Result<StatusCode, ApiError> {
    let full_name = format!("{owner}/{repo}");
    let mut world = shared.lock();
    ops::set_assignee(
        &mut world,
        &full_name,
        number(&n)?,
        &a.assignee,
        &a.actor,
        assigned,
    )?;
    Ok(StatusCode::NO_CONTENT)
}

/// `{labels: [name, …]}`: the issue's labels from now on.
#[derive(Debug, Deserialize)]
struct Labels {
    labels: Vec<String>,
}

async fn labels_create(
    State(shared): State<Shared>,
    Path((owner, repo, n)): IssuePath,
    ApiJson(l): ApiJson<Labels>,
) -> Result<StatusCode, ApiError> {
    let mut world = shared.lock();
    ops::set_labels(
        &mut world,
        &format!("{owner}/{repo}"),
        number(&n)?,
        &l.labels,
    )?;
    Ok(StatusCode::NO_CONTENT)
}

async fn comments_index(
    State(shared): State<Shared>,
    Path((owner, repo, n)): IssuePath,
) -> Result<Json<Vec<Value>>, ApiError> {
    let world = shared.lock();
    let repo = world.repo(&owner, &repo)?;
    let number = number(&n)?;
    let comments = repo
        .issue(number)?
        .comments
        .iter()
        .map(|c| shape::comment(&world, repo, number, c))
        .collect();
    Ok(Json(comments))
}

/// `{author, body}`.
#[derive(Debug, Deserialize)]
struct NewComment {
    author: String,
    body: String,
}

async fn comments_create(
    State(shared): State<Shared>,
    Path((owner, repo, n)): IssuePath,
    ApiJson(new): ApiJson<NewComment>,
) -> Result<Response, ApiError> {
    let full_name = format!("{owner}/{repo}");
    let mut world = shared.lock();
    let comment = ops::comment(&mut world, &full_name, number(&n)?, &new.author, &new.body)?;
    Ok((StatusCode::CREATED, Json(comment)).into_response())
}

/// `{actor?}`; without an actor the issue's author closes it.
#[derive(Debug, Default, Deserialize)]
struct Close {
    actor: Option<String>,
}

async fn close_create(
    State(shared): State<Shared>,
    Path((owner, repo, n)): IssuePath,
    ApiJson(close): ApiJson<Close>,
) -> Result<StatusCode, ApiError> {
    let full_name = format!("{owner}/{repo}");
    let mut world = shared.lock();
    ops::close(&mut world, &full_name, number(&n)?, close.actor.as_deref())?;
    Ok(StatusCode::NO_CONTENT)
}

async fn requests_index(State(shared): State<Shared>) -> Json<Value> {
    Json(json!(shared.lock().requests))
}

async fn requests_destroy(State(shared): State<Shared>) -> StatusCode {
    shared.lock().requests.clear();
    StatusCode::NO_CONTENT
}

async fn faults_create(State(shared): State<Shared>, ApiJson(fault): ApiJson<Fault>) -> StatusCode {
    shared.lock().faults.push(fault);
    StatusCode::NO_CONTENT
}

async fn answer_update(
    State(shared): State<Shared>,
    ApiJson(answer): ApiJson<super::switch::Answer>,
) -> StatusCode {
    shared.lock().answer = answer;
    StatusCode::NO_CONTENT
}

/// `{branch}`.
#[derive(Debug, Deserialize)]
struct NewBranch {
    branch: String,
}

async fn branches_create(
    State(shared): State<Shared>,
    Path((owner, repo)): RepoPath,
    ApiJson(new): ApiJson<NewBranch>,
) -> Result<Response, ApiError> {
    if !valid_branch(&new.branch) {
        return Err(ApiError::Validation(format!("bad branch {:?}", new.branch)));
    }
    let (path, base) = {
        let world = shared.lock();
        let repo = world.repo(&owner, &repo)?;
        (repo.path.clone(), repo.default_branch.clone())
    };
    let sha = git::branch_from(&path, &base, &new.branch)
        .await
        .map_err(|e| ApiError::Internal(e.to_string()))?;
    Ok((StatusCode::CREATED, Json(json!({ "sha": sha }))).into_response())
}

async fn stats_show(State(shared): State<Shared>) -> Json<Value> {
    Json(json!(shared.lock().stats))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn branch_names_that_could_be_options_or_escape_are_refused() {
        for ok in ["main", "release/1.0", "feature_x-2"] {
            assert!(valid_branch(ok), "{ok}");
        }
        for bad in ["", "-x", "/x", "x/", "a..b", "a b", "a//b", ".x", "x."] {
            assert!(!valid_branch(bad), "{bad}");
        }
    }
}
