//! Pull requests against real pushed branches, the refused merge endpoint and protected
//! branches.

use std::process::Command;

use serde_json::json;

use super::*;

#[test]
fn pull_requests_need_real_branches_and_refuse_duplicates() {
    let s = setup();
    s.gh.open_issue(REPO, "alice", "The issue", "");
    let ask =
        json!({ "title": "Fix", "head": "fix-1", "base": "main", "body": "b", "draft": true });
    let missing = post(&s.gh, "/repos/acme/app/pulls", "tok-bot", ask.clone());
    assert_eq!(missing.status, 422);
    assert_eq!(missing.json()["message"], "Validation Failed");

    let work = clone(&s);
    let tip = push_commit(&work, "fix-1", "a.txt");
    let no_base = post(
        &s.gh,
        "/repos/acme/app/pulls",
        "tok-bot",
        json!({ "title": "x", "head": "fix-1", "base": "nope" }),
    );
    assert_eq!(no_base.status, 422);
    let created = post(&s.gh, "/repos/acme/app/pulls", "tok-bot", ask.clone());
    assert_eq!(created.status, 201, "{}", created.body);
    let pull = created.json();
    assert_eq!(pull["number"], 2, "pull requests share the issue numbers");
    assert_eq!(
        (pull["draft"].as_bool(), pull["merged"].as_bool()),
        (Some(true), Some(false))
    );
    assert_eq!(pull["head"]["sha"], tip.as_str());
    assert_eq!(pull["head"]["label"], "acme:fix-1");
    assert_eq!(pull["base"]["repo"]["full_name"], REPO);
    assert_eq!(pull["user"]["login"], "coord[bot]");

    let duplicate = post(
        &s.gh,
        "/repos/acme/app/pulls",
        "tok-bot",
        json!({ "title": "again", "head": "acme:fix-1", "base": "main" }),
    );
    assert_eq!(duplicate.status, 422);
    assert_eq!(
        duplicate.json()["errors"][0]["message"],
        "A pull request already exists for acme:fix-1."
    );

    let listed = get(
        &s.gh,
        "/repos/acme/app/pulls?head=acme:fix-1&base=main",
        "tok-bot",
    )
    .json();
    assert_eq!(listed.as_array().unwrap().len(), 1);
    let none = get(&s.gh, "/repos/acme/app/pulls?head=acme:other", "tok-bot").json();
    assert_eq!(none, json!([]));
    let issues = get(&s.gh, "/repos/acme/app/issues", "tok-bot").json();
    assert!(issues[0]["pull_request"].is_object() && issues[1].get("pull_request").is_none());
    assert_eq!(s.gh.pulls(REPO).len(), 1);
}

#[test]
fn head_sha_follows_pushes() {
    let s = setup();
    let work = clone(&s);
    push_commit(&work, "feature", "one.txt");
    let body = json!({ "title": "Feature", "head": "feature", "base": "main" });
    let n = post(&s.gh, "/repos/acme/app/pulls", "tok-bot", body).json()["number"]
        .as_u64()
        .unwrap();
    let second = push_commit(&work, "feature", "two.txt");
    let pull = get(&s.gh, &format!("/repos/acme/app/pulls/{n}"), "tok-bot").json();
    assert_eq!(pull["head"]["sha"], second.as_str());
    assert_eq!(s.gh.pulls(REPO)[0]["head"]["sha"], second.as_str());
}

#[test]
fn merging_is_counted_and_refused() {
    let s = setup();
    let url = format!("{}/repos/acme/app/pulls/1/merge", s.gh.url());
    let reply = send("PUT", &url, Some("tok-bot"), &[], &json!({}));
    assert_eq!(reply.status, 405);
    assert_eq!(s.gh.merge_calls(), 1);
}

#[test]
fn protected_branches_refuse_pushes_unless_allowed() {
    let s = setup();
    s.gh.protect_branch(REPO, "main");
    let work = clone(&s);
    std::fs::write(work.join("x.txt"), "x").unwrap();
    git(&work, &["add", "x.txt"]);
    git(&work, &["commit", "--quiet", "-m", "x"]);
    let refused = Command::new("git")
        .args(["push", "--quiet", "origin", "HEAD:refs/heads/main"])
        .current_dir(&work)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove(ALLOW_PROTECTED_ENV)
        .output()
        .unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("branch main is protected"));
    let allowed = Command::new("git")
        .args(["push", "--quiet", "origin", "HEAD:refs/heads/main"])
        .current_dir(&work)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env(ALLOW_PROTECTED_ENV, "1")
        .output()
        .unwrap();
    assert!(allowed.status.success());
    let branch = get(&s.gh, "/repos/acme/app/branches/main", "tok-bot").json();
    assert_eq!(branch["protected"], true);
    assert_eq!(
        branch["commit"]["sha"],
        git(&work, &["rev-parse", "HEAD"]).as_str()
    );
}
