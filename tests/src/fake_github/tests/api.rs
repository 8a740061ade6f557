//! The read and comment routes: authentication, 404s, pagination, ETags and the rate limit,
//! comments, assignment and events.

use serde_json::json;
use serde_json::Value;

use super::*;

#[test]
fn requests_without_valid_credentials_are_refused_and_logged_as_anonymous() {
    let s = setup();
    let anonymous = send(
        "GET",
        &format!("{}/user", s.gh.url()),
        None,
        &[],
        &Value::Null,
    );
    assert_eq!(anonymous.status, 401);
    let bad = get(&s.gh, "/user", "nope");
    assert_eq!(
        (bad.status, bad.json()["message"].as_str()),
        (401, Some("Bad credentials"))
    );
    let token_form = send(
        "GET",
        &format!("{}/user", s.gh.url()),
        None,
        &[("Authorization", "token tok-bot")],
        &Value::Null,
    );
    let me = token_form.json();
    assert_eq!(
        (me["login"].as_str(), me["type"].as_str()),
        (Some("coord[bot]"), Some("Bot"))
    );
    assert!(me["id"].as_u64().is_some());

    let log = s.gh.requests();
    let summary: Vec<(u16, Option<&str>)> =
        log.iter().map(|r| (r.status, r.login.as_deref())).collect();
    assert_eq!(
        summary,
        [(401, None), (401, None), (200, Some("coord[bot]"))]
    );
    s.gh.reset_requests();
    assert!(s.gh.requests().is_empty());
}

#[test]
fn unknown_routes_repositories_and_issues_are_not_found() {
    let s = setup();
    for path in [
        "/nope",
        "/repos/acme/other",
        "/repos/acme/app/issues/9",
        "/repos/acme/app/issues/x",
    ] {
        let reply = get(&s.gh, path, "tok-alice");
        assert_eq!(
            (reply.status, reply.json()["message"].as_str()),
            (404, Some("Not Found")),
            "{path}"
        );
    }
    let repo = get(&s.gh, "/repos/acme/app", "tok-alice").json();
    assert_eq!(repo["full_name"], "acme/app");
    assert_eq!(repo["default_branch"], "main");
    assert_eq!(repo["owner"]["login"], "acme");
    assert_eq!(repo["private"], false);
}

#[test]
fn lists_paginate_with_absolute_link_headers() {
    let s = setup();
    for i in 1..=5 {
        s.gh.open_issue(REPO, "alice", &format!("issue {i}"), "");
    }
    let path = "/repos/acme/app/issues?state=all&sort=created&direction=asc&per_page=2";
    let first = get(&s.gh, path, "tok-alice");
    let numbers = |r: &Reply| -> Vec<u64> {
        r.json()
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["number"].as_u64().unwrap())
            .collect()
    };
    assert_eq!(numbers(&first), [1, 2]);
    let link = first.header("link").unwrap().to_owned();
    let base = s.gh.url();
    assert!(
        link.contains(&format!("<{base}{path}&page=2>; rel=\"next\"")),
        "{link}"
    );
    assert!(
        link.contains(&format!("<{base}{path}&page=3>; rel=\"last\"")),
        "{link}"
    );

    let next = link
        .split(", ")
        .find(|l| l.ends_with("rel=\"next\""))
        .unwrap();
    let next_url = next.trim_start_matches('<').split('>').next().unwrap();
    let second = send("GET", next_url, Some("tok-alice"), &[], &Value::Null);
    assert_eq!(numbers(&second), [3, 4]);
    let third = get(&s.gh, &format!("{path}&page=3"), "tok-alice");
    assert_eq!(numbers(&third), [5]);
    assert!(!third.header("link").unwrap().contains("rel=\"next\""));

    // Newest first by default; per_page is capped at 100 and one page has no Link.
    let all = get(&s.gh, "/repos/acme/app/issues?per_page=500", "tok-alice");
    assert_eq!(numbers(&all), [5, 4, 3, 2, 1]);
    assert_eq!(all.header("link"), None);
}

#[test]
fn etags_answer_304_without_costing_rate_limit() {
    let s = setup();
    s.gh.open_issue(REPO, "alice", "one", "");
    let path = "/repos/acme/app/issues";
    let first = get(&s.gh, path, "tok-bot");
    assert_eq!(first.status, 200);
    let etag = first.header("etag").unwrap().to_owned();
    assert!(etag.starts_with("W/\""), "{etag}");
    let remaining: u64 = first
        .header("x-ratelimit-remaining")
        .unwrap()
        .parse()
        .unwrap();

    let url = format!("{}{path}", s.gh.url());
    let again = send(
        "GET",
        &url,
        Some("tok-bot"),
        &[("If-None-Match", &etag)],
        &Value::Null,
    );
    assert_eq!((again.status, again.body.as_str()), (304, ""));
    assert_eq!(again.header("etag"), Some(etag.as_str()));
    assert_eq!(
        again.header("x-ratelimit-remaining"),
        Some(remaining.to_string().as_str())
    );

    s.gh.comment(REPO, 1, "alice", "changes the issue");
    let changed = send(
        "GET",
        &url,
        Some("tok-bot"),
        &[("If-None-Match", &etag)],
        &Value::Null,
    );
    assert_eq!(changed.status, 200);
    assert_ne!(changed.header("etag"), Some(etag.as_str()));
    assert_eq!(
        changed.header("x-ratelimit-remaining"),
        Some((remaining - 1).to_string().as_str())
    );
    let stats = s.gh.stats();
    assert_eq!((stats.requests, stats.not_modified), (3, 1));
    assert_eq!(stats.rate_limit_remaining["coord[bot]"], remaining - 1);
}

#[test]
fn comments_are_created_as_the_token_user_and_listed() {
    let s = setup();
    let n = s.gh.open_issue(REPO, "alice", "Do it", "please");
    s.gh.comment(REPO, n, "alice", "first");
    let path = format!("/repos/acme/app/issues/{n}/comments");
    let created = post(&s.gh, &path, "tok-bot", json!({ "body": "on it" }));
    assert_eq!(created.status, 201);
    let comment = created.json();
    assert_eq!(comment["user"]["login"], "coord[bot]");
    assert_eq!(comment["user"]["type"], "Bot");
    assert!(comment["html_url"]
        .as_str()
        .unwrap()
        .contains("#issuecomment-"));

    let listed = get(&s.gh, &path, "tok-alice").json();
    let bodies: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["body"].as_str().unwrap())
        .collect();
    assert_eq!(bodies, ["first", "on it"]);
    assert_eq!(s.gh.issue_comments(REPO, n).len(), 2);
    let later = get(
        &s.gh,
        &format!("{path}?since=2999-01-01T00:00:00Z"),
        "tok-alice",
    )
    .json();
    assert_eq!(later, json!([]));
    let empty = post(&s.gh, &path, "tok-bot", json!({}));
    assert_eq!(empty.status, 422);
}

#[test]
fn assignment_shows_in_filters_and_events_with_the_actor_type() {
    let s = setup();
    let n = s.gh.open_issue(REPO, "alice", "Assigned", "");
    s.gh.open_issue(REPO, "alice", "Not assigned", "");
    s.gh.assign(REPO, n, "coord[bot]", "alice");
    let mine = get(
        &s.gh,
        "/repos/acme/app/issues?assignee=coord%5Bbot%5D",
        "tok-bot",
    )
    .json();
    assert_eq!(mine.as_array().unwrap().len(), 1);
    assert_eq!(mine[0]["assignee"]["login"], "coord[bot]");
    assert_eq!(mine[0]["assignees"][0]["type"], "Bot");

    s.gh.unassign(REPO, n, "coord[bot]", "coord[bot]");
    s.gh.close_issue(REPO, n);
    let events = get(
        &s.gh,
        &format!("/repos/acme/app/issues/{n}/events"),
        "tok-bot",
    )
    .json();
    let seen: Vec<(&str, &str, &str)> = events
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["event"].as_str().unwrap(),
                e["actor"]["login"].as_str().unwrap(),
                e["actor"]["type"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("assigned", "alice", "User"),
            ("unassigned", "coord[bot]", "Bot"),
            ("closed", "alice", "User")
        ]
    );
    let issue = get(&s.gh, &format!("/repos/acme/app/issues/{n}"), "tok-bot").json();
    assert_eq!(
        (issue["state"].as_str(), issue["assignee"].is_null()),
        (Some("closed"), true)
    );
}
