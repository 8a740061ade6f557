//! People merging and closing pull requests through the control API, and mergeability.

use serde_json::json;
use serde_json::Value;

use super::*;

/// Returns `(event, actor login or null, commit_id)` of each event of an issue.
fn events(gh: &FakeGitHub, number: u64) -> Vec<(String, Value, Value)> {
    let path = format!("/repos/acme/app/issues/{number}/events");
    let events = get(gh, &path, "tok-bot").json();
    events
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let event = e["event"].as_str().unwrap().to_owned();
            (event, e["actor"]["login"].clone(), e["commit_id"].clone())
        })
        .collect()
}

fn pull(gh: &FakeGitHub, number: u64) -> Value {
    get(gh, &format!("/repos/acme/app/pulls/{number}"), "tok-bot").json()
}

#[test]
fn merging_commits_a_real_merge_onto_a_base_that_moved_on() {
    let s = setup();
    let work = clone(&s);
    let (n, head) = open_pull(&s, &work, "feature", "tok-bot", false);
    // Someone else lands a change on main first; the merge must keep it.
    git(&work, &["checkout", "--quiet", "--detach", "origin/main"]);
    let main_before = push_commit(&work, "main", "other.txt");

    let merged = s.gh.merge_pull(REPO, n, Some("alice"));
    assert_eq!(
        (&merged["state"], &merged["merged"]),
        (&json!("closed"), &json!(true))
    );
    assert_eq!(merged["merged_by"]["login"], "alice");
    assert_eq!(merged["merged_by"]["type"], "User");
    assert!(merged["merged_at"].is_string() && merged["closed_at"].is_string());
    assert_eq!(
        (&merged["mergeable"], &merged["mergeable_state"]),
        (&Value::Null, &json!("unknown"))
    );
    let sha = merged["merge_commit_sha"].as_str().unwrap().to_owned();

    git(&work, &["fetch", "--quiet", "origin"]);
    assert_eq!(git(&work, &["rev-parse", "origin/main"]), sha);
    assert_eq!(git(&work, &["rev-parse", "origin/main^1"]), main_before);
    assert_eq!(git(&work, &["rev-parse", "origin/main^2"]), head);
    assert_eq!(
        git(&work, &["log", "-1", "--format=%s", "origin/main"]),
        format!("Merge pull request #{n}")
    );
    let files = git(&work, &["ls-tree", "--name-only", "origin/main"]);
    assert_eq!(files, "README.md\nfeature.txt\nother.txt");
    let branch = get(&s.gh, "/repos/acme/app/branches/main", "tok-bot").json();
    assert_eq!(branch["commit"]["sha"], sha.as_str());

    assert_eq!(
        events(&s.gh, n),
        [
            ("merged".to_owned(), json!("alice"), json!(sha)),
            ("closed".to_owned(), json!("alice"), Value::Null),
        ]
    );
    let url = format!("{}/repos/acme/app/pulls/{n}/merge", s.gh.url());
    assert_eq!(
        send("GET", &url, Some("tok-bot"), &[], &Value::Null).status,
        204
    );
    let again = control(
        &s.gh,
        "POST",
        &format!("/_control/repos/acme/app/pulls/{n}/merge"),
        json!({ "by": "alice" }),
    );
    assert_eq!(error_message(&again), "Pull Request is already merged");
    let issue = get(&s.gh, &format!("/repos/acme/app/issues/{n}"), "tok-bot").json();
    assert_eq!(issue["pull_request"]["merged_at"], merged["merged_at"]);
    assert_eq!(
        s.gh.merge_calls(),
        0,
        "the control API is not the REST merge"
    );
}

#[test]
fn merged_by_shows_a_bot_as_a_bot_and_nobody_as_null() {
    let s = setup();
    let work = clone(&s);
    let (by_bot, _) = open_pull(&s, &work, "one", "tok-alice", false);
    let (by_nobody, _) = open_pull(&s, &work, "two", "tok-alice", false);
    let merged = s.gh.merge_pull(REPO, by_bot, Some("coord[bot]"));
    assert_eq!(merged["merged_by"]["login"], "coord[bot]");
    assert_eq!(merged["merged_by"]["type"], "Bot");
    let anonymous = s.gh.merge_pull(REPO, by_nobody, None);
    assert!(anonymous["merged_by"].is_null());
    assert_eq!(anonymous["merged"], true);
    let actors: Vec<Value> = events(&s.gh, by_nobody).into_iter().map(|e| e.1).collect();
    assert_eq!(actors, [Value::Null, Value::Null]);
    assert_eq!(pull(&s.gh, by_bot)["merged_by"]["type"], "Bot");
    let unknown = control(
        &s.gh,
        "POST",
        &format!("/_control/repos/acme/app/pulls/{by_bot}/merge"),
        json!({ "by": "mallory" }),
    );
    assert_eq!(unknown.status, 422);
}

#[test]
fn closing_a_pull_request_leaves_it_unmerged() {
    let s = setup();
    let work = clone(&s);
    let (n, _) = open_pull(&s, &work, "fix", "tok-bot", false);
    let tip = git(&work, &["ls-remote", "origin", "refs/heads/main"]);
    s.gh.close_pull(REPO, n, "alice");
    let closed = pull(&s.gh, n);
    assert_eq!(
        (&closed["state"], &closed["merged"], &closed["merged_at"]),
        (&json!("closed"), &json!(false), &Value::Null)
    );
    assert!(closed["merged_by"].is_null() && closed["merge_commit_sha"].is_null());
    assert!(closed["mergeable"].is_null());
    assert_eq!(
        events(&s.gh, n),
        [("closed".to_owned(), json!("alice"), Value::Null)]
    );
    let url = format!("{}/repos/acme/app/pulls/{n}/merge", s.gh.url());
    assert_eq!(
        send("GET", &url, Some("tok-bot"), &[], &Value::Null).status,
        404
    );
    let merge = control(
        &s.gh,
        "POST",
        &format!("/_control/repos/acme/app/pulls/{n}/merge"),
        json!({ "by": null }),
    );
    assert_eq!(error_message(&merge), "Pull Request is closed");
    assert_eq!(git(&work, &["ls-remote", "origin", "refs/heads/main"]), tip);
    let listed = get(&s.gh, "/repos/acme/app/pulls?state=closed", "tok-bot").json();
    assert_eq!(listed[0]["number"], n);
}

#[test]
fn mergeable_is_set_by_the_test_and_a_conflict_sets_it_false() {
    let s = setup();
    let work = clone(&s);
    let (n, _) = open_pull(&s, &work, "fix", "tok-bot", false);
    let fresh = pull(&s.gh, n);
    assert_eq!(fresh["node_id"], format!("PR_{}", fresh["id"]));
    assert_eq!(fresh["requested_reviewers"], json!([]));
    let state = |p: &Value| (p["mergeable"].clone(), p["mergeable_state"].clone());
    assert_eq!(state(&fresh), (json!(true), json!("clean")));
    s.gh.set_mergeable(REPO, n, Some(false));
    assert_eq!(state(&pull(&s.gh, n)), (json!(false), json!("dirty")));
    let refused = control(
        &s.gh,
        "POST",
        &format!("/_control/repos/acme/app/pulls/{n}/merge"),
        json!({ "by": "alice" }),
    );
    assert_eq!(error_message(&refused), "Pull Request is not mergeable");
    s.gh.set_mergeable(REPO, n, None);
    assert_eq!(state(&pull(&s.gh, n)), (Value::Null, json!("unknown")));
    s.gh.set_mergeable(REPO, n, Some(true));
    assert_eq!(state(&s.gh.pulls(REPO)[0]), (json!(true), json!("clean")));

    // Both sides change README.md: the merge button refuses and GitHub marks it dirty.
    std::fs::write(work.join("README.md"), "from the branch\n").unwrap();
    git(&work, &["commit", "--quiet", "-am", "branch readme"]);
    git(&work, &["push", "--quiet", "origin", "HEAD:refs/heads/fix"]);
    git(&work, &["checkout", "--quiet", "--detach", "origin/main"]);
    std::fs::write(work.join("README.md"), "from main\n").unwrap();
    git(&work, &["commit", "--quiet", "-am", "main readme"]);
    git(
        &work,
        &["push", "--quiet", "origin", "HEAD:refs/heads/main"],
    );
    let conflict = control(
        &s.gh,
        "POST",
        &format!("/_control/repos/acme/app/pulls/{n}/merge"),
        json!({ "by": "alice" }),
    );
    assert_eq!(
        error_message(&conflict),
        "Pull Request is not mergeable: head and base conflict"
    );
    assert_eq!(state(&pull(&s.gh, n)), (json!(false), json!("dirty")));
    assert_eq!(pull(&s.gh, n)["state"], "open");
}

#[test]
fn a_pull_request_from_a_fork_is_reviewed_checked_and_merged() {
    let s = setup();
    s.gh.add_repo("alice/app", "main");
    let fork = get(&s.gh, "/repos/alice/app", "tok-alice").json();
    let url = fork["clone_url"].as_str().unwrap();
    git(s.dir.path(), &["clone", "--quiet", url, "fork"]);
    let work = s.dir.path().join("fork");
    let head = push_commit(&work, "feat", "feat.txt");
    let body = json!({ "title": "From a fork", "head": "alice:feat", "base": "main" });
    let created = post(&s.gh, "/repos/acme/app/pulls", "tok-alice", body);
    assert_eq!(created.status, 201, "{}", created.body);
    let n = created.json()["number"].as_u64().unwrap();

    let review = post(
        &s.gh,
        &format!("/repos/acme/app/pulls/{n}/reviews"),
        "tok-bot",
        json!({ "event": "APPROVE", "commit_id": head }),
    );
    assert_eq!(review.status, 200, "{}", review.body);
    s.gh.ci_plan(REPO, &["success"], "none");
    let checks = get(
        &s.gh,
        &format!("/repos/acme/app/commits/{head}/check-runs"),
        "tok-bot",
    )
    .json();
    assert_eq!(checks["total_count"], 2);

    let merged = s.gh.merge_pull(REPO, n, Some("alice"));
    let sha = merged["merge_commit_sha"].as_str().unwrap();
    let branch = get(&s.gh, "/repos/acme/app/branches/main", "tok-bot").json();
    assert_eq!(branch["commit"]["sha"], sha);
    let base = s.gh.root().join("acme/app.git");
    let parent = git(&base, &["rev-parse", &format!("{sha}^2")]);
    assert_eq!(parent, head);
    let pull_ref = git(&base, &["rev-parse", &format!("refs/pull/{n}/head")]);
    assert_eq!(pull_ref, head);
}
