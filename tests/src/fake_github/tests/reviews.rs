//! Pull request reviews: GitHub's rules for a new review, the commit it is on, pending reviews,
//! dismissal and the per-event counts.

use serde_json::json;

use super::*;

#[test]
fn authors_may_comment_on_but_not_approve_or_reject_their_own_pull_request() {
    let s = setup();
    let work = clone(&s);
    let (n, head) = open_pull(&s, &work, "fix", "tok-bot", false);
    let path = format!("/repos/acme/app/pulls/{n}/reviews");
    let own_approve = post(&s.gh, &path, "tok-bot", json!({ "event": "APPROVE" }));
    assert_eq!(
        error_message(&own_approve),
        "Can not approve your own pull request"
    );
    let own_reject = post(
        &s.gh,
        &path,
        "tok-bot",
        json!({ "event": "REQUEST_CHANGES", "body": "no" }),
    );
    assert_eq!(
        error_message(&own_reject),
        "Can not request changes on your own pull request"
    );
    let bare_comment = post(&s.gh, &path, "tok-bot", json!({ "event": "COMMENT" }));
    assert_eq!(bare_comment.status, 422);
    let own_comment = post(
        &s.gh,
        &path,
        "tok-bot",
        json!({ "event": "COMMENT", "body": "note" }),
    );
    assert_eq!(own_comment.status, 200, "{}", own_comment.body);
    assert_eq!(own_comment.json()["state"], "COMMENTED");

    let approved = post(&s.gh, &path, "tok-alice", json!({ "event": "APPROVE" }));
    assert_eq!(approved.status, 200, "{}", approved.body);
    let review = approved.json();
    let id = review["id"].as_u64().unwrap();
    assert_eq!(review["state"], "APPROVED");
    assert_eq!(review["commit_id"], head.as_str());
    assert_eq!(review["user"]["login"], "alice");
    assert_eq!(review["node_id"], format!("PRR_{id}"));
    assert_eq!(
        review["html_url"],
        format!("{}/acme/app/pull/{n}#pullrequestreview-{id}", s.gh.url())
    );
    assert_eq!(
        review["pull_request_url"],
        format!("{}/repos/acme/app/pulls/{n}", s.gh.url())
    );
    assert!(review["submitted_at"].is_string());
    assert_eq!(review["author_association"], "COLLABORATOR");
    let bare_reject = post(
        &s.gh,
        &path,
        "tok-alice",
        json!({ "event": "REQUEST_CHANGES", "body": " " }),
    );
    assert_eq!(bare_reject.status, 422);
    let rejected = post(
        &s.gh,
        &path,
        "tok-alice",
        json!({ "event": "REQUEST_CHANGES", "body": "fix the header" }),
    );
    assert_eq!(rejected.json()["state"], "CHANGES_REQUESTED");
    let bad_event = post(&s.gh, &path, "tok-alice", json!({ "event": "LGTM" }));
    assert_eq!(bad_event.status, 422);

    let pending = post(&s.gh, &path, "tok-alice", json!({ "body": "draft" })).json();
    assert_eq!(pending["state"], "PENDING");
    assert!(pending["submitted_at"].is_null());

    let states = |token: &str| -> Vec<String> {
        let listed = get(&s.gh, &path, token).json();
        let reviews = listed.as_array().unwrap();
        reviews
            .iter()
            .map(|r| r["state"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        states("tok-bot"),
        ["COMMENTED", "APPROVED", "CHANGES_REQUESTED"]
    );
    assert_eq!(
        states("tok-alice"),
        ["COMMENTED", "APPROVED", "CHANGES_REQUESTED", "PENDING"]
    );
    assert_eq!(s.gh.reviews(REPO, n).len(), 4);
    let paged = get(&s.gh, &format!("{path}?per_page=1&page=2"), "tok-bot");
    assert_eq!(paged.json()[0]["state"], "APPROVED");
    assert!(paged.header("link").unwrap().contains("rel=\"next\""));

    let posts = s.gh.stats().review_posts;
    let counts: Vec<(&str, u64)> = posts.iter().map(|(k, v)| (k.as_str(), *v)).collect();
    assert_eq!(
        counts,
        [
            ("APPROVE", 2),
            ("COMMENT", 2),
            ("PENDING", 1),
            ("REQUEST_CHANGES", 3)
        ]
    );
}

#[test]
fn a_review_is_on_a_commit_of_the_head_repository() {
    let s = setup();
    let work = clone(&s);
    let initial = git(&work, &["rev-parse", "HEAD"]);
    let (n, _) = open_pull(&s, &work, "fix", "tok-bot", false);
    let path = format!("/repos/acme/app/pulls/{n}/reviews");
    for bad in ["abc123", "0000000000000000000000000000000000000000"] {
        let reply = post(
            &s.gh,
            &path,
            "tok-alice",
            json!({ "event": "APPROVE", "commit_id": bad }),
        );
        assert_eq!(
            error_message(&reply),
            format!("No commit found for SHA: {bad}")
        );
    }
    let on_initial = post(
        &s.gh,
        &path,
        "tok-alice",
        json!({ "event": "APPROVE", "commit_id": initial }),
    );
    assert_eq!(on_initial.status, 200, "{}", on_initial.body);
    assert_eq!(on_initial.json()["commit_id"], initial.as_str());

    // Without a commit_id the review is on the head as it is now.
    let newer = push_commit(&work, "fix", "second.txt");
    let on_head = post(&s.gh, &path, "tok-alice", json!({ "event": "APPROVE" })).json();
    assert_eq!(on_head["commit_id"], newer.as_str());

    s.gh.close_pull(REPO, n, "alice");
    let closed = post(&s.gh, &path, "tok-alice", json!({ "event": "APPROVE" }));
    assert_eq!(error_message(&closed), "Pull request is closed");
    let issue = s.gh.open_issue(REPO, "alice", "plain issue", "");
    let not_a_pull = post(
        &s.gh,
        &format!("/repos/acme/app/pulls/{issue}/reviews"),
        "tok-alice",
        json!({ "event": "APPROVE" }),
    );
    assert_eq!(not_a_pull.status, 404);
}

#[test]
fn dismissing_an_approval_records_who_did_it() {
    let s = setup();
    let work = clone(&s);
    let (n, _) = open_pull(&s, &work, "fix", "tok-bot", false);
    let path = format!("/repos/acme/app/pulls/{n}/reviews");
    let approval = post(&s.gh, &path, "tok-alice", json!({ "event": "APPROVE" })).json();
    let comment = post(
        &s.gh,
        &path,
        "tok-alice",
        json!({ "event": "COMMENT", "body": "hm" }),
    )
    .json();
    let id = approval["id"].as_u64().unwrap();
    s.gh.dismiss_review(REPO, n, id, "alice");
    assert_eq!(s.gh.reviews(REPO, n)[0]["state"], "DISMISSED");
    assert_eq!(get(&s.gh, &path, "tok-bot").json()[0]["state"], "DISMISSED");
    // Dismissing again changes nothing; a comment cannot be dismissed; unknown ids are 404.
    s.gh.dismiss_review(REPO, n, id, "alice");
    let dismiss = |review: &serde_json::Value| {
        let path = format!("/_control/repos/acme/app/pulls/{n}/reviews/{review}/dismiss");
        control(
            &s.gh,
            "POST",
            &path,
            json!({ "actor": "alice", "message": "stale" }),
        )
    };
    assert_eq!(
        error_message(&dismiss(&comment["id"])),
        "Can not dismiss a commented pull request review"
    );
    assert_eq!(dismiss(&json!(999_999)).status, 404);

    let events = get(
        &s.gh,
        &format!("/repos/acme/app/issues/{n}/events"),
        "tok-bot",
    )
    .json();
    let dismissed: Vec<&str> = events
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "review_dismissed")
        .map(|e| e["actor"]["login"].as_str().unwrap())
        .collect();
    assert_eq!(dismissed, ["alice"]);
}
