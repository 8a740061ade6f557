//! `POST /graphql`: the ready-for-review mutation and the pull request query.

use serde_json::json;
use serde_json::Value;

use super::*;

const READY: &str = "mutation($id: ID!) { markPullRequestReadyForReview(input: \
                     {pullRequestId: $id}) { pullRequest { id number isDraft } } }";
const PULL: &str = "query($owner: String!, $name: String!, $number: Int!) { \
                    repository(owner: $owner, name: $name) { pullRequest(number: $number) { \
                    id number isDraft state headRefOid merged mergedBy { login __typename } } } }";

fn graphql(gh: &FakeGitHub, query: &str, variables: Value) -> Value {
    let reply = post(
        gh,
        "/graphql",
        "tok-bot",
        json!({ "query": query, "variables": variables }),
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.json()
}

#[test]
fn marking_ready_takes_the_pull_request_out_of_draft_and_is_counted() {
    let s = setup();
    let work = clone(&s);
    let (n, _) = open_pull(&s, &work, "fix", "tok-bot", true);
    let pull = get(&s.gh, &format!("/repos/acme/app/pulls/{n}"), "tok-bot").json();
    assert_eq!(pull["draft"], true);
    let node = pull["node_id"].as_str().unwrap().to_owned();

    let answer = graphql(&s.gh, READY, json!({ "id": node }));
    assert_eq!(
        answer,
        json!({ "data": { "markPullRequestReadyForReview": { "pullRequest": {
            "id": node, "number": n, "isDraft": false,
        } } } })
    );
    let pull = get(&s.gh, &format!("/repos/acme/app/pulls/{n}"), "tok-bot").json();
    assert_eq!(pull["draft"], false);
    let events = get(
        &s.gh,
        &format!("/repos/acme/app/issues/{n}/events"),
        "tok-bot",
    )
    .json();
    assert_eq!(events[0]["event"], "ready_for_review");
    assert_eq!(events[0]["actor"]["login"], "coord[bot]");
    // The other spelling of the variable works too.
    let again = graphql(&s.gh, READY, json!({ "pullRequestId": node }));
    assert_eq!(
        again["data"]["markPullRequestReadyForReview"]["pullRequest"]["isDraft"],
        false
    );

    let unknown = graphql(&s.gh, READY, json!({ "id": "PR_nope" }));
    assert!(unknown["data"].is_null());
    assert_eq!(unknown["errors"][0]["type"], "NOT_FOUND");
    assert_eq!(
        unknown["errors"][0]["message"],
        "Could not resolve to a node with the global id of 'PR_nope'"
    );
    let stats = s.gh.stats();
    assert_eq!((stats.graphql_requests, stats.ready_mutations), (3, 3));
    let logged = s.gh.requests();
    let graphql_posts = logged
        .iter()
        .filter(|r| r.method == "POST" && r.path == "/graphql" && r.status == 200)
        .count();
    assert_eq!(graphql_posts, 3);
}

#[test]
fn the_pull_request_query_answers_state_head_and_merger() {
    let s = setup();
    let work = clone(&s);
    let (n, head) = open_pull(&s, &work, "fix", "tok-alice", false);
    let vars = json!({ "owner": "acme", "name": "app", "number": n });
    let open = graphql(&s.gh, PULL, vars.clone());
    let pull = &open["data"]["repository"]["pullRequest"];
    assert_eq!(pull["state"], "OPEN");
    assert_eq!(pull["headRefOid"], head.as_str());
    assert_eq!(
        (&pull["isDraft"], &pull["merged"]),
        (&json!(false), &json!(false))
    );
    assert!(pull["mergedBy"].is_null());
    assert!(pull["id"].as_str().unwrap().starts_with("PR_"));

    s.gh.merge_pull(REPO, n, Some("coord[bot]"));
    let merged = graphql(&s.gh, PULL, vars);
    let pull = &merged["data"]["repository"]["pullRequest"];
    assert_eq!(
        (&pull["state"], &pull["merged"]),
        (&json!("MERGED"), &json!(true))
    );
    assert_eq!(
        pull["mergedBy"],
        json!({ "login": "coord[bot]", "__typename": "Bot" })
    );

    let (closed, _) = open_pull(&s, &work, "other", "tok-alice", false);
    s.gh.close_pull(REPO, closed, "alice");
    let vars = json!({ "owner": "acme", "name": "app", "number": closed });
    let answer = graphql(&s.gh, PULL, vars);
    assert_eq!(
        answer["data"]["repository"]["pullRequest"]["state"],
        "CLOSED"
    );

    let missing = graphql(
        &s.gh,
        PULL,
        json!({ "owner": "acme", "name": "app", "number": 99 }),
    );
    assert!(missing["data"]["repository"]["pullRequest"].is_null());
    assert_eq!(missing["errors"][0]["type"], "NOT_FOUND");
    let no_repo = graphql(
        &s.gh,
        PULL,
        json!({ "owner": "acme", "name": "nope", "number": 1 }),
    );
    assert!(no_repo["data"]["repository"].is_null());

    let other = graphql(&s.gh, "query { viewer { login } }", Value::Null);
    assert_eq!(other["errors"][0]["message"], "unsupported query");
    let anonymous = send(
        "POST",
        &format!("{}/graphql", s.gh.url()),
        None,
        &[],
        &json!({ "query": PULL }),
    );
    assert_eq!(anonymous.status, 401);
    assert_eq!(s.gh.stats().graphql_requests, 6);
}
