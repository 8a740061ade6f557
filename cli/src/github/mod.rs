//! The GitHub client (DESIGN §6 "GitHub"): one account's REST session over octocrab, used by
//! the coordinator (and later by the dashboard's enrichment).
//!
//! Three things octocrab does not do the way we need, and how this module does them:
//! - **No retries.** octocrab's retry policy re-sends a POST after a 5xx or a transport error,
//!   turning an unknown delivery into a duplicate comment or pull request. The client is built
//!   without it; the coordinator discovers an effect (by its marker) before it posts again.
//! - **Conditional requests.** A typed GET treats a 304 as a parse error, so GETs go through
//!   the raw request path with `If-None-Match` from an [`EtagCache`]; a 304 answers from the
//!   cache and costs no rate limit.
//! - **Pagination keeps the token.** octocrab attaches `Authorization` only to relative routes
//!   and api.github.com; a `Link: next` URL on any other host would go out anonymous. Every
//!   request here is made relative to the configured API URL, and a next link that points
//!   anywhere else is refused.
//!
//! Calls are blocking (a current-thread runtime per client): the coordinator is a sequential
//! script, and a tick is bounded by its lanes, not by GitHub.

mod bodies;
mod cache;
mod dashboard;
mod pulls;
mod types;

use std::time::Duration;

use http::header::HeaderMap;
use http::header::HeaderValue;
use http::header::ETAG;
use http::header::IF_NONE_MATCH;
use http::header::LINK;
use http::StatusCode;
use serde::Deserialize;
use serde_json::Value;

use self::bodies::CreatePull;
use self::bodies::GraphqlRequest;
use self::bodies::NewComment;
use self::types::CreatedComment;
use self::types::IssueCommentJson;
use self::types::IssueEventJson;

pub(crate) use self::bodies::ReviewEvent;
pub(crate) use self::cache::EtagCache;
pub(crate) use self::dashboard::RateLimit;
pub(crate) use self::types::Issue;
pub(crate) use self::types::NewPull;
pub(crate) use self::types::PullRequest;
pub(crate) use self::types::Repository;
pub(crate) use self::types::Review;
pub(crate) use self::types::User;

/// Pages requested per list call (GitHub's maximum).
const PER_PAGE: u32 = 100;
/// Pages followed before a list is called truncated (10,000 items).
const MAX_PAGES: usize = 100;
/// Connect and read timeouts: a GitHub call that hangs longer is a transport error.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// Why a GitHub call failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum GhError {
    /// The request may or may not have reached GitHub (connection refused, reset, timeout):
    /// for a mutation the delivery is unknown.
    #[error("GitHub unreachable at {api}: {detail}")]
    Transport { api: String, detail: String },
    /// GitHub answered with an error status.
    #[error("GitHub answered {status} for {what}: {message}")]
    Status {
        status: u16,
        what: String,
        message: String,
    },
    /// The answer did not have the expected shape (or pagination was truncated).
    #[error("unexpected answer from GitHub for {what}: {detail}")]
    Protocol { what: String, detail: String },
    /// The client could not be built (bad API URL, unusable token characters).
    #[error("cannot set up the GitHub client: {0}")]
    Setup(String),
}

impl GhError {
    /// Reports whether a mutation's delivery is unknown.
    pub(crate) fn unknown_delivery(&self) -> bool {
        matches!(self, GhError::Transport { .. })
            || matches!(self, GhError::Status { status, .. } if *status >= 500)
    }
}

/// One authenticated GitHub session.
pub(crate) struct GitHub {
    rt: tokio::runtime::Runtime,
    octo: octocrab::Octocrab,
    api: String,
    /// The API URL's path prefix (`/api/v3` on Enterprise), prepended to routes.
    prefix: String,
    cache: EtagCache,
    /// Requests sent (for the tick's report and the benchmark).
    pub(crate) requests: u64,
    /// Of those, answered 304 from the cache.
    pub(crate) not_modified: u64,
    /// The rate limit a refused request reported, until [`GitHub::take_rate_limit`].
    rate_limit: Option<RateLimit>,
}

impl GitHub {
    /// Builds a client for `api_url` authenticated with `token`.
    pub(crate) fn new(api_url: &str, token: &str, cache: EtagCache) -> Result<GitHub, GhError> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| GhError::Setup(format!("cannot start a runtime: {e}")))?;
        if token.is_empty() || !token.bytes().all(|b| b.is_ascii_graphic()) {
            // octocrab would panic on a token that is not a valid header value.
            return Err(GhError::Setup(
                "the token is empty or contains characters a token cannot have".into(),
            ));
        }
        let api = api_url.trim_end_matches('/').to_owned();
        let uri: http::Uri = api
            .parse()
            .map_err(|e| GhError::Setup(format!("api_url {api} is not a URL: {e}")))?;
        let prefix = uri.path().trim_end_matches('/').to_owned();
        let octo = {
            let _guard = rt.enter();
            octocrab::Octocrab::builder()
                .base_uri(api.as_str())
                .map_err(|e| GhError::Setup(format!("api_url {api}: {e}")))?
                .personal_token(token.to_owned())
                .set_connect_timeout(Some(CONNECT_TIMEOUT))
                .set_read_timeout(Some(READ_TIMEOUT))
                .build()
                .map_err(|e| GhError::Setup(e.to_string()))?
        };
        Ok(GitHub {
            rt,
            octo,
            api,
            prefix,
            cache,
            requests: 0,
            not_modified: 0,
            rate_limit: None,
        })
    }

    /// Returns the ETag cache (to persist it after the tick).
    pub(crate) fn cache(&self) -> &EtagCache {
        &self.cache
    }

    fn transport(&self, e: impl std::fmt::Display) -> GhError {
        GhError::Transport {
            api: self.api.clone(),
            detail: e.to_string(),
        }
    }

    /// Sends a GET for `route` (relative, with query), conditional on the cached ETag;
    /// returns the body and the next page's route, if any.
    fn get_page(&mut self, route: &str) -> Result<(Value, Option<String>), GhError> {
        let mut headers = HeaderMap::new();
        let cached = self.cache.get(route).cloned();
        if let Some(c) = &cached {
            if let Ok(v) = HeaderValue::from_str(&c.etag) {
                headers.insert(IF_NONE_MATCH, v);
            }
        }
        self.requests += 1;
        let uri = format!("{}{route}", self.prefix);
        let rt = &self.rt;
        let octo = &self.octo;
        let (status, etag, link, limit, body) = rt
            .block_on(async {
                let res = octo._get_with_headers(uri.as_str(), Some(headers)).await?;
                let status = res.status();
                let header = |name: &str| {
                    res.headers()
                        .get(name)
                        .and_then(|v: &HeaderValue| v.to_str().ok())
                        .map(str::to_owned)
                };
                let etag = header(ETAG.as_str());
                let link = header(LINK.as_str());
                let limit = RateLimit::of(
                    status.as_u16(),
                    header("x-ratelimit-remaining").as_deref(),
                    header("retry-after").as_deref(),
                    header("x-ratelimit-reset").as_deref(),
                );
                let body = octo.body_to_string(res).await?;
                Ok::<_, octocrab::Error>((status, etag, link, limit, body))
            })
            .map_err(|e| self.transport(e))?;
        self.rate_limit = limit.or(self.rate_limit.take());
        if status == StatusCode::NOT_MODIFIED {
            if let Some(c) = cached {
                self.not_modified += 1;
                return Ok((c.body, c.next));
            }
            return Err(GhError::Protocol {
                what: route.to_owned(),
                detail: "304 Not Modified for a request that was not conditional".into(),
            });
        }
        if !status.is_success() {
            return Err(status_error(status, route, &body));
        }
        let value: Value = serde_json::from_str(&body).map_err(|e| GhError::Protocol {
            what: route.to_owned(),
            detail: format!("not JSON: {e}"),
        })?;
        let next = match link.as_deref().and_then(next_link) {
            Some(url) => Some(self.relative(&url, route)?),
            None => None,
        };
        if let Some(etag) = etag {
            self.cache.put(route, etag, value.clone(), next.clone());
        }
        Ok((value, next))
    }

    /// Turns a `Link: next` URL into a route on the configured API, refusing other hosts
    /// (the token stays with the configured host, and never goes anywhere else).
    fn relative(&self, url: &str, route: &str) -> Result<String, GhError> {
        let base = format!("{}/", self.api);
        match url.strip_prefix(&self.api) {
            Some(rest) if rest.starts_with('/') || rest.starts_with('?') => Ok(rest.to_owned()),
            _ => Err(GhError::Protocol {
                what: route.to_owned(),
                detail: format!("the next page is not on {base}; refusing to follow it"),
            }),
        }
    }

    /// GETs a plain-text body (not cached), following one redirect the way GitHub serves
    /// job logs: a `302` to a signed download URL, which is fetched without our token when
    /// it is on another host (octocrab attaches the token only to the API host).
    pub(crate) fn text(&mut self, route: &str) -> Result<String, GhError> {
        let mut uri = format!("{}{route}", self.prefix);
        for _ in 0..2 {
            self.requests += 1;
            let octo = &self.octo;
            let (status, location, body) = self
                .rt
                .block_on(async {
                    let res = octo._get(uri.as_str()).await?;
                    let status = res.status();
                    let location = res
                        .headers()
                        .get(http::header::LOCATION)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned);
                    let body = octo.body_to_string(res).await?;
                    Ok::<_, octocrab::Error>((status, location, body))
                })
                .map_err(|e| self.transport(e))?;
            if status.is_redirection() {
                match location {
                    Some(next) => {
                        uri = next;
                        continue;
                    }
                    None => {
                        return Err(GhError::Protocol {
                            what: route.to_owned(),
                            detail: format!("{status} without a Location"),
                        })
                    }
                }
            }
            if !status.is_success() {
                return Err(status_error(status, route, &body));
            }
            return Ok(body);
        }
        Err(GhError::Protocol {
            what: route.to_owned(),
            detail: "redirected more than once".into(),
        })
    }

    /// GETs every page of an object-wrapped list (`{total_count, <items>: [...]}`) as the
    /// raw pages, for the caller to check against `total_count`.
    pub(crate) fn pages(&mut self, route: &str) -> Result<Vec<Value>, GhError> {
        let sep = if route.contains('?') { '&' } else { '?' };
        let mut next = Some(format!("{route}{sep}per_page={PER_PAGE}"));
        let mut pages = Vec::new();
        while let Some(page) = next.take() {
            if pages.len() >= MAX_PAGES {
                return Err(GhError::Protocol {
                    what: route.to_owned(),
                    detail: format!("more than {MAX_PAGES} pages; the list is truncated"),
                });
            }
            let (value, following) = self.get_page(&page)?;
            pages.push(value);
            next = following;
        }
        Ok(pages)
    }

    /// Sends a GraphQL request to the API's GraphQL endpoint (`/graphql`, or `/api/graphql`
    /// on Enterprise); GraphQL errors in a 200 answer are a [`GhError::Status`] 200.
    pub(crate) fn graphql(
        &mut self,
        query: &str,
        variables: impl serde::Serialize,
    ) -> Result<Value, GhError> {
        let uri = match self.prefix.strip_suffix("/v3") {
            Some(api) => format!("{api}/graphql"),
            None => format!("{}/graphql", self.prefix),
        };
        let body = GraphqlRequest { query, variables };
        let v = self.post_uri(&uri, "/graphql", &body)?;
        if let Some(errors) = v.get("errors").and_then(Value::as_array) {
            if !errors.is_empty() {
                let message = errors
                    .iter()
                    .filter_map(|e| e.get("message").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join("; ");
                return Err(GhError::Status {
                    status: 200,
                    what: "/graphql".into(),
                    message,
                });
            }
        }
        v.get("data").cloned().ok_or_else(|| shape("/graphql"))
    }

    /// GETs one JSON value.
    pub(crate) fn get(&mut self, route: &str) -> Result<Value, GhError> {
        Ok(self.get_page(route)?.0)
    }

    /// GETs every page of a list (`per_page=100`), following `Link: next` on the same host.
    pub(crate) fn list(&mut self, route: &str) -> Result<Vec<Value>, GhError> {
        let sep = if route.contains('?') { '&' } else { '?' };
        let mut next = Some(format!("{route}{sep}per_page={PER_PAGE}"));
        let mut items = Vec::new();
        let mut pages = 0;
        while let Some(page) = next.take() {
            pages += 1;
            if pages > MAX_PAGES {
                return Err(GhError::Protocol {
                    what: route.to_owned(),
                    detail: format!("more than {MAX_PAGES} pages; the list is truncated"),
                });
            }
            let (value, following) = self.get_page(&page)?;
            let Value::Array(mut batch) = value else {
                return Err(GhError::Protocol {
                    what: route.to_owned(),
                    detail: "expected a JSON array".into(),
                });
            };
            items.append(&mut batch);
            next = following;
        }
        Ok(items)
    }

    /// POSTs `body` to `route`; any failure to hear the answer is [`GhError::Transport`]
    /// (delivery unknown: discover before posting again).
    pub(crate) fn post(
        &mut self,
        route: &str,
        body: &impl serde::Serialize,
    ) -> Result<Value, GhError> {
        let uri = format!("{}{route}", self.prefix);
        self.post_uri(&uri, route, body)
    }

    /// POSTs `body` to the absolute path `uri` on the API host (`route` names it in errors).
    fn post_uri(
        &mut self,
        uri: &str,
        route: &str,
        body: &impl serde::Serialize,
    ) -> Result<Value, GhError> {
        self.requests += 1;
        let octo = &self.octo;
        let (status, text) = self
            .rt
            .block_on(async {
                let res = octo._post(uri, Some(body)).await?;
                let status = res.status();
                let text = octo.body_to_string(res).await?;
                Ok::<_, octocrab::Error>((status, text))
            })
            .map_err(|e| self.transport(e))?;
        if !status.is_success() {
            return Err(status_error(status, route, &text));
        }
        serde_json::from_str(&text).map_err(|e| GhError::Protocol {
            what: route.to_owned(),
            detail: format!("not JSON: {e}"),
        })
    }

    /// The authenticated user (`GET /user`).
    pub(crate) fn user(&mut self) -> Result<User, GhError> {
        let v = self.get("/user")?;
        parse(&v, "/user")
    }

    /// A repository (`GET /repos/{repo}`).
    pub(crate) fn repository(&mut self, repo: &str) -> Result<Repository, GhError> {
        let route = format!("/repos/{repo}");
        let v = self.get(&route)?;
        parse(&v, &route)
    }

    /// Open issues (not pull requests) assigned to `login`, oldest first, every page.
    pub(crate) fn assigned_issues(
        &mut self,
        repo: &str,
        login: &str,
    ) -> Result<Vec<Issue>, GhError> {
        let route = format!(
            "/repos/{repo}/issues?state=open&assignee={}&sort=created&direction=asc",
            encode(login)
        );
        let items = self.list(&route)?;
        let mut issues = Vec::new();
        for v in &items {
            if v.get("pull_request").is_some() {
                continue;
            }
            issues.push(parse(v, &route)?);
        }
        Ok(issues)
    }

    /// One issue (or pull request: the issues API answers for both).
    pub(crate) fn issue(&mut self, repo: &str, number: u64) -> Result<Issue, GhError> {
        let route = format!("/repos/{repo}/issues/{number}");
        let v = self.get(&route)?;
        parse(&v, &route)
    }

    /// An issue's events, every page.
    pub(crate) fn issue_events(
        &mut self,
        repo: &str,
        number: u64,
    ) -> Result<Vec<agent_coord_shared::coordinator::evidence::IssueEvent>, GhError> {
        let route = format!("/repos/{repo}/issues/{number}/events");
        let items = self.list(&route)?;
        items
            .iter()
            .map(|v| parse::<IssueEventJson>(v, &route).map(Into::into))
            .collect()
    }

    /// An issue's comments, every page.
    pub(crate) fn issue_comments(
        &mut self,
        repo: &str,
        number: u64,
    ) -> Result<Vec<agent_coord_shared::coordinator::reply::IssueComment>, GhError> {
        let route = format!("/repos/{repo}/issues/{number}/comments");
        let items = self.list(&route)?;
        items
            .iter()
            .map(|v| parse::<IssueCommentJson>(v, &route).map(Into::into))
            .collect()
    }

    /// Posts a comment on an issue or pull request; returns its id and URL.
    pub(crate) fn post_comment(
        &mut self,
        repo: &str,
        number: u64,
        body: &str,
    ) -> Result<(u64, String), GhError> {
        let route = format!("/repos/{repo}/issues/{number}/comments");
        let v = self.post(&route, &NewComment { body })?;
        let created: CreatedComment = parse(&v, &route)?;
        Ok((created.id, created.html_url))
    }

    /// Pull requests of `repo` whose head is `owner:branch`, in any state.
    pub(crate) fn pulls_for_head(
        &mut self,
        repo: &str,
        head: &str,
    ) -> Result<Vec<PullRequest>, GhError> {
        let route = format!("/repos/{repo}/pulls?state=all&head={}", encode(head));
        let items = self.list(&route)?;
        items.iter().map(|v| parse(v, &route)).collect()
    }

    /// Opens a draft pull request.
    pub(crate) fn create_draft(
        &mut self,
        repo: &str,
        new: &NewPull<'_>,
    ) -> Result<PullRequest, GhError> {
        let route = format!("/repos/{repo}/pulls");
        let body = CreatePull {
            pull: new,
            draft: true,
        };
        let v = self.post(&route, &body)?;
        parse(&v, &route)
    }
}

/// Reads an object GitHub answered `route` with; a missing required field is a
/// protocol error naming the route.
fn parse<'a, T: Deserialize<'a>>(v: &'a Value, route: &str) -> Result<T, GhError> {
    T::deserialize(v).map_err(|_| shape(route))
}

fn shape(route: &str) -> GhError {
    GhError::Protocol {
        what: route.to_owned(),
        detail: "a required field is missing".into(),
    }
}

fn status_error(status: StatusCode, route: &str, body: &str) -> GhError {
    let message = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            let main = v.get("message")?.as_str()?.to_owned();
            let extra: Vec<String> = v
                .get("errors")
                .and_then(Value::as_array)
                .map(|errs| {
                    errs.iter()
                        .filter_map(|e| e.get("message").and_then(Value::as_str))
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            Some(if extra.is_empty() {
                main
            } else {
                format!("{main} ({})", extra.join("; "))
            })
        })
        .unwrap_or_else(|| status.canonical_reason().unwrap_or("error").to_owned());
    GhError::Status {
        status: status.as_u16(),
        what: route.split('?').next().unwrap_or(route).to_owned(),
        message,
    }
}

/// Returns the `rel="next"` URL of a `Link` header.
fn next_link(link: &str) -> Option<String> {
    link.split(',').find_map(|part| {
        let (url, params) = part.split_once(';')?;
        let is_next = params
            .split(';')
            .any(|p| p.trim().replace(' ', "") == "rel=\"next\"");
        is_next.then(|| {
            url.trim()
                .trim_start_matches('<')
                .trim_end_matches('>')
                .to_owned()
        })
    })
}

/// Percent-encodes a query value (logins and `owner:branch` need only a few escapes).
fn encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    //! The Link header parser and query encoding, on captured header shapes.
    use super::*;

    #[test]
    fn next_link_finds_rel_next_among_others() {
        let link = r#"<https://api.github.com/repositories/1/issues?page=2>; rel="next", <https://api.github.com/repositories/1/issues?page=5>; rel="last""#;
        assert_eq!(
            next_link(link).as_deref(),
            Some("https://api.github.com/repositories/1/issues?page=2")
        );
        let last_only =
            r#"<https://x/issues?page=1>; rel="prev", <https://x/issues?page=1>; rel="first""#;
        assert_eq!(next_link(last_only), None);
        assert_eq!(next_link(""), None);
    }

    #[test]
    fn encode_escapes_what_a_query_value_cannot_hold() {
        assert_eq!(encode("octo-cat"), "octo-cat");
        assert_eq!(encode("owner:agent-coord/x"), "owner%3Aagent-coord%2Fx");
        assert_eq!(encode("a b&c"), "a%20b%26c");
    }

    #[test]
    fn status_errors_carry_githubs_message_and_validation_details() {
        let e = status_error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "/repos/o/r/pulls?x=1",
            r#"{"message":"Validation Failed","errors":[{"message":"A pull request already exists for o:b."}]}"#,
        );
        assert_eq!(
            e.to_string(),
            "GitHub answered 422 for /repos/o/r/pulls: Validation Failed (A pull request already exists for o:b.)"
        );
        assert!(!e.unknown_delivery());
        let e = status_error(StatusCode::BAD_GATEWAY, "/x", "<html>");
        assert!(e.unknown_delivery());
    }
}
