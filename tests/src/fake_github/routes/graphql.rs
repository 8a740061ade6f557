//! `POST /graphql`, just enough of it: the `markPullRequestReadyForReview` mutation (by node id)
//! and the `repository { pullRequest(number:) }` query. GraphQL answers 200 whatever happens;
//! what went wrong is in `errors`, as on GitHub. The query text is matched, not parsed.

use axum::body::Bytes;
use axum::extract::State;
use axum::routing::post;
use axum::Extension;
use axum::Json;
use axum::Router;
use serde::Deserialize;
use serde_json::json;
use serde_json::Value;

use crate::fake_github::error::ApiError;
use crate::fake_github::ops;
use crate::fake_github::request::Login;
use crate::fake_github::shape;
use crate::fake_github::state::now;
use crate::fake_github::state::pull_node_id;
use crate::fake_github::state::IssueEvent;
use crate::fake_github::state::Shared;

/// Returns the GraphQL route.
pub fn router() -> Router<Shared> {
    Router::new().route("/graphql", post(graphql_create))
}

/// A GraphQL request.
#[derive(Debug, Deserialize)]
struct Request {
    query: String,
    #[serde(default)]
    variables: Value,
}

async fn graphql_create(
    State(shared): State<Shared>,
    Extension(Login(login)): Extension<Login>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    // Counted before parsing, so that every request shows.
    shared.lock().stats.graphql_requests += 1;
    let request: Request =
        serde_json::from_slice(&body).map_err(|e| ApiError::BadJson(e.to_string()))?;
    if request.query.contains("markPullRequestReadyForReview") {
        return Ok(Json(mark_ready(&shared, &login, &request.variables)));
    }
    if request.query.contains("pullRequest(number") {
        return pull_request(&shared, &request.variables).await.map(Json);
    }
    Ok(Json(json!({
        "data": null,
        "errors": [{ "message": "unsupported query" }],
    })))
}

/// Takes a pull request out of draft by its node id (`variables.id` or
/// `variables.pullRequestId`), recording a `ready_for_review` event.
fn mark_ready(shared: &Shared, login: &str, variables: &Value) -> Value {
    let id = variables
        .get("id")
        .or_else(|| variables.get("pullRequestId"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut world = shared.lock();
    world.stats.ready_mutations += 1;
    let event_id = world.next_id();
    let found = world
        .repos
        .values_mut()
        .flat_map(|r| r.issues.values_mut())
        .find(|i| i.pull.is_some() && pull_node_id(i.id) == id);
    let Some(issue) = found else {
        return json!({
            "data": null,
            "errors": [{
                "type": "NOT_FOUND",
                "path": ["markPullRequestReadyForReview"],
                "message": format!("Could not resolve to a node with the global id of '{id}'"),
            }],
        });
    };
    if let Some(pull) = issue.pull.as_mut().filter(|p| p.draft) {
        pull.draft = false;
        let at = now();
        issue.events.push(IssueEvent::new(
            event_id,
            "ready_for_review",
            Some(login),
            &at,
        ));
        issue.updated_at = at;
    }
    json!({
        "data": { "markPullRequestReadyForReview": { "pullRequest": {
            "id": id,
            "number": issue.number,
            "isDraft": false,
        } } },
    })
}

/// Answers `repository(owner:, name:) { pullRequest(number:) }` from `variables.owner`,
/// `variables.name` and `variables.number`, with live tips.
async fn pull_request(shared: &Shared, variables: &Value) -> Result<Value, ApiError> {
    let text = |key: &str| variables.get(key).and_then(Value::as_str);
    let (Some(owner), Some(name), Some(number)) = (
        text("owner"),
        text("name"),
        variables.get("number").and_then(Value::as_u64),
    ) else {
        return Ok(json!({
            "data": null,
            "errors": [{ "message": "variables owner, name and number are required" }],
        }));
    };
    match ops::refresh_pulls(shared, owner, name).await {
        Err(ApiError::NotFound) => {
            return Ok(json!({
                "data": { "repository": null },
                "errors": [{
                    "type": "NOT_FOUND",
                    "path": ["repository"],
                    "message": format!(
                        "Could not resolve to a Repository with the name '{owner}/{name}'."
                    ),
                }],
            }));
        }
        other => other?,
    }
    let world = shared.lock();
    let repo = world.repo(owner, name)?;
    let Ok((issue, pull)) = repo.pull(number) else {
        return Ok(json!({
            "data": { "repository": { "pullRequest": null } },
            "errors": [{
                "type": "NOT_FOUND",
                "path": ["repository", "pullRequest"],
                "message": format!("Could not resolve to a PullRequest with the number of {number}."),
            }],
        }));
    };
    Ok(json!({
        "data": { "repository": { "pullRequest": shape::graphql_pull(&world, issue, pull) } },
    }))
}
