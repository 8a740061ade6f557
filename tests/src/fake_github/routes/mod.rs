//! The GitHub REST routes the fake serves, one file per resource, and what they share: the list
//! query parameters and GitHub-style pagination with an absolute `Link` header.

mod actions;
mod commits;
mod graphql;
mod issues;
mod pulls;
mod repos;
mod reviews;

use axum::http::header;
use axum::http::HeaderValue;
use axum::http::Uri;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::Json;
use axum::Router;
use serde::Deserialize;
use serde_json::Value;

pub use self::actions::LOGS_GONE;
use super::error::ApiError;
use super::state::Shared;

/// GitHub's default page size.
const DEFAULT_PER_PAGE: usize = 30;
/// GitHub's largest page size.
const MAX_PER_PAGE: usize = 100;

/// Returns every REST route; anything else is 404.
pub fn router() -> Router<Shared> {
    Router::new()
        .merge(repos::router())
        .merge(issues::router())
        .merge(pulls::router())
        .merge(reviews::router())
        .merge(commits::router())
        .merge(actions::router())
        .merge(graphql::router())
        .fallback(|| async { ApiError::NotFound })
}

/// The query parameters of the list routes. Everything is text so that a malformed value gets
/// the route's own answer rather than an extractor's.
#[derive(Debug, Default, Deserialize)]
pub struct ListParams {
    pub state: Option<String>,
    pub assignee: Option<String>,
    pub since: Option<String>,
    pub sort: Option<String>,
    pub direction: Option<String>,
    pub head: Option<String>,
    pub base: Option<String>,
    pub head_sha: Option<String>,
    pub filter: Option<String>,
    pub per_page: Option<String>,
    pub page: Option<String>,
}

impl ListParams {
    /// Returns whether an open/closed item passes `state` (default `open`), or 422.
    pub fn state_allows(&self, open: bool) -> Result<bool, ApiError> {
        match self.state.as_deref().unwrap_or("open") {
            "open" => Ok(open),
            "closed" => Ok(!open),
            "all" => Ok(true),
            other => Err(ApiError::Validation(format!("invalid state {other:?}"))),
        }
    }

    /// Returns whether something last updated `at` passes `since` (RFC 3339), or 422.
    pub fn since_allows(&self, at: &str) -> Result<bool, ApiError> {
        let Some(since) = self.since.as_deref() else {
            return Ok(true);
        };
        let parse = |t: &str| {
            chrono::DateTime::parse_from_rfc3339(t)
                .map_err(|_| ApiError::Validation(format!("invalid timestamp {t:?}")))
        };
        Ok(parse(at)? >= parse(since)?)
    }

    /// Returns whether `direction` asks for ascending order (`default_asc` when absent).
    pub fn ascending(&self, default_asc: bool) -> bool {
        match self.direction.as_deref() {
            Some("asc") => true,
            Some("desc") => false,
            _ => default_asc,
        }
    }
}

/// Answers one page of `items` with a `Link` header pointing at the next, last, first and
/// previous pages on `base_url`, keeping the request's other query parameters.
pub fn paginate(items: Vec<Value>, params: &ListParams, uri: &Uri, base_url: &str) -> Response {
    paginate_into(items, params, uri, base_url, Value::Array)
}

/// Answers one page of `items` as [`paginate`] does, as `{total_count, <key>: [page]}` (the
/// shape of the checks and actions lists); `total_count` counts every item plus `hidden`.
pub fn paginate_counted(
    key: &str,
    items: Vec<Value>,
    hidden: u64,
    params: &ListParams,
    uri: &Uri,
    base_url: &str,
) -> Response {
    let total = u64::try_from(items.len()).unwrap_or(u64::MAX) + hidden;
    paginate_into(items, params, uri, base_url, |page| {
        let mut body = serde_json::Map::new();
        body.insert("total_count".to_owned(), Value::from(total));
        body.insert(key.to_owned(), Value::Array(page));
        Value::Object(body)
    })
}

/// Answers one page of `items`, made into the body by `wrap`, with its `Link` header.
fn paginate_into(
    items: Vec<Value>,
    params: &ListParams,
    uri: &Uri,
    base_url: &str,
    wrap: impl FnOnce(Vec<Value>) -> Value,
) -> Response {
    let per_page = params
        .per_page
        .as_deref()
        .and_then(|p| p.parse::<usize>().ok())
        .filter(|&p| p > 0)
        .unwrap_or(DEFAULT_PER_PAGE)
        .min(MAX_PER_PAGE);
    let page = params
        .page
        .as_deref()
        .and_then(|p| p.parse::<usize>().ok())
        .filter(|&p| p > 0)
        .unwrap_or(1);
    let last = items.len().div_ceil(per_page).max(1);
    let shown: Vec<Value> = items
        .into_iter()
        .skip((page - 1).saturating_mul(per_page))
        .take(per_page)
        .collect();
    let mut response = Json(wrap(shown)).into_response();
    let link = link_header(uri, base_url, page, last);
    if let Some(value) = link.and_then(|l| HeaderValue::from_str(&l).ok()) {
        response.headers_mut().insert(header::LINK, value);
    }
    response
}

/// Returns GitHub's `Link` value for `page` of `last`, or `None` when there is one page.
fn link_header(uri: &Uri, base_url: &str, page: usize, last: usize) -> Option<String> {
    if last <= 1 {
        return None;
    }
    // Keep the other parameters as the client encoded them; only `page` changes.
    let others: Vec<&str> = uri
        .query()
        .unwrap_or_default()
        .split('&')
        .filter(|p| !p.is_empty() && !p.starts_with("page="))
        .collect();
    let url_for = |n: usize| {
        let mut query = others.clone();
        let page = format!("page={n}");
        query.push(&page);
        format!("<{base_url}{}?{}>", uri.path(), query.join("&"))
    };
    let mut links = Vec::new();
    if page < last {
        links.push(format!("{}; rel=\"next\"", url_for(page + 1)));
        links.push(format!("{}; rel=\"last\"", url_for(last)));
    }
    if page > 1 {
        links.push(format!("{}; rel=\"first\"", url_for(1)));
        links.push(format!("{}; rel=\"prev\"", url_for((page - 1).min(last))));
    }
    Some(links.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_keeps_other_parameters_and_replaces_page() {
        let uri: Uri = "/repos/o/r/issues?state=all&page=2&per_page=2"
            .parse()
            .unwrap();
        let link = link_header(&uri, "http://127.0.0.1:9", 2, 3).unwrap();
        assert_eq!(
            link,
            "<http://127.0.0.1:9/repos/o/r/issues?state=all&per_page=2&page=3>; rel=\"next\", \
             <http://127.0.0.1:9/repos/o/r/issues?state=all&per_page=2&page=3>; rel=\"last\", \
             <http://127.0.0.1:9/repos/o/r/issues?state=all&per_page=2&page=1>; rel=\"first\", \
             <http://127.0.0.1:9/repos/o/r/issues?state=all&per_page=2&page=1>; rel=\"prev\""
        );
        assert_eq!(link_header(&uri, "http://h", 1, 1), None);
    }
}
