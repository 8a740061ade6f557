//! CI per commit through the check runs and statuses: what each outcome shows, pagination,
//! the plan popped once per new commit, refs, and ETags.

use serde_json::json;
use serde_json::Value;

use super::*;

/// Returns a made-up full sha; commits with CI set explicitly need not exist.
fn fake_sha(i: u64) -> String {
    format!("{i:040x}")
}

fn check_runs(gh: &FakeGitHub, reference: &str) -> Value {
    let reply = get(
        gh,
        &format!("/repos/acme/app/commits/{reference}/check-runs"),
        "tok-bot",
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.json()
}

fn statuses(gh: &FakeGitHub, reference: &str) -> Value {
    let reply = get(
        gh,
        &format!("/repos/acme/app/commits/{reference}/statuses"),
        "tok-bot",
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.json()
}

fn runs(gh: &FakeGitHub, sha: &str) -> Value {
    let reply = get(
        gh,
        &format!("/repos/acme/app/actions/runs?head_sha={sha}"),
        "tok-bot",
    );
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.json()
}

/// `(name, status, conclusion)` of each check run.
fn checks_summary(checks: &Value) -> Vec<(String, String, Value)> {
    checks["check_runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let name = c["name"].as_str().unwrap().to_owned();
            (
                name,
                c["status"].as_str().unwrap().to_owned(),
                c["conclusion"].clone(),
            )
        })
        .collect()
}

#[test]
fn each_outcome_shows_its_runs_checks_and_statuses() {
    let s = setup();
    let done =
        |name: &str, conclusion: &str| (name.to_owned(), "completed".to_owned(), json!(conclusion));
    let running = |name: &str| (name.to_owned(), "in_progress".to_owned(), Value::Null);
    // (outcome, run conclusion ("" while running), lint state ("" for none), runs total_count)
    let cases = [
        ("success", "success", "success", 1),
        ("failure", "failure", "success", 1),
        ("failure_logs_gone", "failure", "success", 1),
        ("failure_logs_empty", "failure", "success", 1),
        ("rerun_failure", "failure", "success", 1),
        ("action_required", "action_required", "", 1),
        ("pending", "", "pending", 1),
        ("cancelled", "cancelled", "success", 1),
        ("neutral", "neutral", "success", 1),
        ("skipped", "skipped", "success", 1),
        ("timed_out", "timed_out", "success", 1),
        ("truncated", "success", "success", 2),
    ];
    for (i, (outcome, conclusion, lint, total)) in (1..).zip(cases) {
        let sha = fake_sha(i);
        s.gh.set_ci(REPO, &sha, outcome);
        let listed = runs(&s.gh, &sha);
        assert_eq!(listed["total_count"], total, "{outcome}");
        assert_eq!(
            listed["workflow_runs"].as_array().unwrap().len(),
            1,
            "{outcome}"
        );
        let run = &listed["workflow_runs"][0];
        let (status, conclusion_json) = match conclusion {
            "" => ("in_progress", Value::Null),
            c => ("completed", json!(c)),
        };
        assert_eq!(run["status"], status, "{outcome}");
        assert_eq!(run["conclusion"], conclusion_json, "{outcome}");
        assert_eq!(run["head_sha"], sha.as_str());
        let attempt = if outcome == "rerun_failure" { 2 } else { 1 };
        assert_eq!(run["run_attempt"], attempt, "{outcome}");

        let checks = match outcome {
            "action_required" => vec![],
            "pending" => vec![running("build"), running("test")],
            _ => vec![done("build", "success"), done("test", conclusion)],
        };
        let got = check_runs(&s.gh, &sha);
        assert_eq!(checks_summary(&got), checks, "{outcome}");
        assert_eq!(got["total_count"], checks.len(), "{outcome}");
        let got_states: Vec<Value> = statuses(&s.gh, &sha)
            .as_array()
            .unwrap()
            .iter()
            .map(|st| st["state"].clone())
            .collect();
        let want_states: Vec<Value> = [lint]
            .iter()
            .filter(|l| !l.is_empty())
            .map(|l| json!(l))
            .collect();
        assert_eq!(got_states, want_states, "{outcome}");
    }
    let none = fake_sha(99);
    s.gh.set_ci(REPO, &none, "none");
    assert_eq!(
        runs(&s.gh, &none),
        json!({ "total_count": 0, "workflow_runs": [] })
    );
    assert_eq!(
        check_runs(&s.gh, &none),
        json!({ "total_count": 0, "check_runs": [] })
    );
    assert_eq!(statuses(&s.gh, &none), json!([]));

    // Without head_sha every run is listed, newest first; the truncated one counts one more.
    let all = get(
        &s.gh,
        "/repos/acme/app/actions/runs?per_page=100",
        "tok-bot",
    )
    .json();
    assert_eq!(all["workflow_runs"].as_array().unwrap().len(), 12);
    assert_eq!(all["total_count"], 13);
}

#[test]
fn shapes_carry_githubs_fields_and_lists_paginate() {
    let s = setup();
    let sha = fake_sha(7);
    s.gh.set_ci(REPO, &sha, "success");
    let path = format!("/repos/acme/app/commits/{sha}/check-runs?per_page=1");
    let first = get(&s.gh, &path, "tok-bot");
    let page = first.json();
    assert_eq!(page["total_count"], 2, "the total counts every page");
    assert_eq!(page["check_runs"].as_array().unwrap().len(), 1);
    let check = &page["check_runs"][0];
    assert_eq!(check["name"], "build");
    assert_eq!(check["head_sha"], sha.as_str());
    for field in ["id", "details_url", "started_at", "completed_at"] {
        assert!(!check[field].is_null(), "{field}: {check}");
    }
    assert!(check["details_url"]
        .as_str()
        .unwrap()
        .starts_with(&format!("{}/acme/app/actions/runs/", s.gh.url())));
    let link = first.header("link").unwrap();
    assert!(
        link.contains(&format!("<{}{path}&page=2>; rel=\"next\"", s.gh.url())),
        "{link}"
    );
    let second = get(&s.gh, &format!("{path}&page=2"), "tok-bot").json();
    assert_eq!(second["check_runs"][0]["name"], "test");
    assert_eq!(second["total_count"], 2);

    let status = &statuses(&s.gh, &sha)[0];
    assert_eq!(status["context"], "ci/lint");
    for field in ["id", "description", "target_url", "created_at"] {
        assert!(!status[field].is_null(), "{field}: {status}");
    }
    let run = &runs(&s.gh, &sha)["workflow_runs"][0];
    assert_eq!(
        (&run["name"], &run["path"], &run["event"]),
        (
            &json!("CI"),
            &json!(".github/workflows/ci.yml"),
            &json!("pull_request")
        )
    );
    let id = run["id"].as_u64().unwrap();
    assert_eq!(
        run["html_url"],
        format!("{}/acme/app/actions/runs/{id}", s.gh.url())
    );
    assert!(run["created_at"].is_string());
    let runs_page = get(
        &s.gh,
        &format!("/repos/acme/app/actions/runs?head_sha={sha}&per_page=1&page=2"),
        "tok-bot",
    )
    .json();
    assert_eq!(runs_page, json!({ "total_count": 1, "workflow_runs": [] }));
}

#[test]
fn each_new_commit_pops_the_next_planned_outcome_once() {
    let s = setup();
    let work = clone(&s);
    let initial = git(&work, &["rev-parse", "HEAD"]);
    let c1 = push_commit(&work, "one", "1.txt");
    let c2 = push_commit(&work, "two", "2.txt");
    let c3 = push_commit(&work, "three", "3.txt");
    s.gh.ci_plan(REPO, &["failure", "success"], "pending");

    // Whichever route asks first about a commit takes the next outcome.
    assert_eq!(statuses(&s.gh, &c2).as_array().unwrap().len(), 1);
    assert_eq!(
        runs(&s.gh, &c1)["workflow_runs"][0]["conclusion"],
        "success"
    );
    assert_eq!(checks_summary(&check_runs(&s.gh, &c3))[1].1, "in_progress");
    assert_eq!(
        runs(&s.gh, &c2)["workflow_runs"][0]["conclusion"],
        "failure"
    );
    // Asking again pops nothing; a branch names its tip.
    assert_eq!(
        runs(&s.gh, &c1)["workflow_runs"][0]["conclusion"],
        "success"
    );
    let main = check_runs(&s.gh, "main");
    assert_eq!(main["check_runs"][0]["head_sha"], initial.as_str());
    assert_eq!(main["check_runs"][0]["status"], "in_progress");
    let plan = control(&s.gh, "GET", "/_control/repos/acme/app/ci", Value::Null).json();
    let got: std::collections::BTreeMap<String, String> =
        serde_json::from_value(plan["commits"].clone()).unwrap();
    let want = [
        (&c1, "success"),
        (&c2, "failure"),
        (&c3, "pending"),
        (&initial, "pending"),
    ];
    let want = want.map(|(sha, outcome)| (sha.clone(), outcome.to_owned()));
    assert_eq!(got, want.into_iter().collect());
    assert_eq!(plan["outcomes"], json!([]));

    // A commit that is not in the repository gets nothing, and pops nothing.
    s.gh.ci_plan(REPO, &["success"], "none");
    let unknown = fake_sha(5);
    let reply = get(
        &s.gh,
        &format!("/repos/acme/app/commits/{unknown}/check-runs"),
        "tok-bot",
    );
    assert_eq!(
        error_message(&reply),
        format!("No commit found for SHA: {unknown}")
    );
    assert_eq!(runs(&s.gh, &unknown)["total_count"], 0);
    assert_eq!(runs(&s.gh, "not-a-sha")["total_count"], 0);
    let c4 = push_commit(&work, "four", "4.txt");
    assert_eq!(
        runs(&s.gh, &c4)["workflow_runs"][0]["conclusion"],
        "success"
    );
    let c5 = push_commit(&work, "five", "5.txt");
    assert_eq!(runs(&s.gh, &c5)["total_count"], 0, "the default, none");

    let bad = control(
        &s.gh,
        "POST",
        "/_control/repos/acme/app/ci",
        json!({ "outcomes": ["flaky"] }),
    );
    assert_eq!(bad.status, 400);
}

#[test]
fn replacing_a_commits_ci_keeps_its_ids_and_answers_200_then_304() {
    let s = setup();
    let sha = fake_sha(3);
    s.gh.set_ci(REPO, &sha, "pending");
    let path = format!("/repos/acme/app/commits/{sha}/check-runs");
    let first = get(&s.gh, &path, "tok-bot");
    let etag = first.header("etag").unwrap().to_owned();
    let url = format!("{}{path}", s.gh.url());
    let again = send(
        "GET",
        &url,
        Some("tok-bot"),
        &[("If-None-Match", &etag)],
        &Value::Null,
    );
    assert_eq!((again.status, again.body.as_str()), (304, ""));

    let run_before = runs(&s.gh, &sha)["workflow_runs"][0]["id"].clone();
    s.gh.set_ci(REPO, &sha, "success");
    let changed = send(
        "GET",
        &url,
        Some("tok-bot"),
        &[("If-None-Match", &etag)],
        &Value::Null,
    );
    assert_eq!(changed.status, 200);
    let ids = |v: &Value| -> Vec<Value> {
        v["check_runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].clone())
            .collect()
    };
    assert_eq!(ids(&changed.json()), ids(&first.json()));
    assert_eq!(changed.json()["check_runs"][1]["conclusion"], "success");
    let run_after = &runs(&s.gh, &sha)["workflow_runs"][0];
    assert_eq!(
        (&run_after["id"], &run_after["status"]),
        (&run_before, &json!("completed"))
    );
    assert_eq!(s.gh.stats().not_modified, 1);

    let bad_sha = control(
        &s.gh,
        "POST",
        "/_control/repos/acme/app/commits/abc/ci",
        json!({ "outcome": "success" }),
    );
    assert_eq!(bad_sha.status, 422);
}
