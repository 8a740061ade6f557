//! Workflow runs' jobs per attempt and job logs: the 302 to the log text, expired (410) and
//! empty logs, and a rerun's two attempts.

use serde_json::json;
use serde_json::Value;

use super::*;
use crate::fake_github::ci::DEFAULT_FAILURE_LOG;
use crate::fake_github::ci::FIRST_ATTEMPT_LOG;

const SHA: &str = "00000000000000000000000000000000000000aa";

/// Returns the id of the only workflow run of [`SHA`].
fn run_id(gh: &FakeGitHub) -> u64 {
    let path = format!("/repos/acme/app/actions/runs?head_sha={SHA}");
    let runs = get(gh, &path, "tok-bot").json();
    runs["workflow_runs"][0]["id"].as_u64().unwrap()
}

/// Returns the jobs of one attempt of the run of [`SHA`].
fn jobs(gh: &FakeGitHub, attempt: u64) -> Value {
    let path = format!(
        "/repos/acme/app/actions/runs/{}/attempts/{attempt}/jobs",
        run_id(gh)
    );
    let reply = get(gh, &path, "tok-bot");
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.json()
}

/// Returns the id of job `test` of one attempt.
fn test_job(gh: &FakeGitHub, attempt: u64) -> u64 {
    let jobs = jobs(gh, attempt);
    let job = jobs["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["name"] == "test")
        .unwrap()
        .clone();
    job["id"].as_u64().unwrap()
}

/// Requests a job's logs without following the redirect.
fn logs(gh: &FakeGitHub, job: u64) -> Reply {
    let url = format!("{}/repos/acme/app/actions/jobs/{job}/logs", gh.url());
    let agent = ureq::AgentBuilder::new().redirects(0).build();
    let response = match agent
        .get(&url)
        .set("Authorization", "Bearer tok-bot")
        .call()
    {
        Ok(response) | Err(ureq::Error::Status(_, response)) => response,
        Err(e) => panic!("{url}: {e}"),
    };
    let headers = response
        .headers_names()
        .into_iter()
        .map(|n| {
            let v = response.header(&n).unwrap_or_default().to_owned();
            (n, v)
        })
        .collect();
    Reply {
        status: response.status(),
        headers,
        body: response.into_string().unwrap(),
    }
}

/// Follows a job's logs redirect and returns the text.
fn log_text(gh: &FakeGitHub, job: u64) -> String {
    let redirect = logs(gh, job);
    assert_eq!(redirect.status, 302, "{}", redirect.body);
    let location = redirect.header("location").unwrap().to_owned();
    assert_eq!(location, format!("{}/_control/logs/{job}", gh.url()));
    let text = send("GET", &location, None, &[], &Value::Null);
    assert_eq!(text.status, 200);
    assert!(text
        .header("content-type")
        .unwrap()
        .starts_with("text/plain"));
    text.body
}

#[test]
fn job_logs_redirect_to_their_text() {
    let s = setup();
    s.gh.set_ci(REPO, SHA, "failure");
    let listed = jobs(&s.gh, 1);
    assert_eq!(listed["total_count"], 2);
    let job = &listed["jobs"][1];
    assert_eq!(
        (&job["name"], &job["status"], &job["conclusion"]),
        (&json!("test"), &json!("completed"), &json!("failure"))
    );
    assert_eq!(job["run_id"], run_id(&s.gh));
    assert_eq!(
        (&job["run_attempt"], &job["head_sha"]),
        (&json!(1), &json!(SHA))
    );
    let id = test_job(&s.gh, 1);
    assert_eq!(log_text(&s.gh, id), DEFAULT_FAILURE_LOG);
    // A client that follows redirects gets the text too.
    let followed = get(
        &s.gh,
        &format!("/repos/acme/app/actions/jobs/{id}/logs"),
        "tok-bot",
    );
    assert_eq!(
        (followed.status, followed.body.as_str()),
        (200, DEFAULT_FAILURE_LOG)
    );

    s.gh.set_ci_with_log(REPO, SHA, "failure", "error[E0308]: mismatched types\n");
    assert_eq!(test_job(&s.gh, 1), id, "replacing keeps the job");
    assert_eq!(log_text(&s.gh, id), "error[E0308]: mismatched types\n");
    s.gh.set_ci(REPO, SHA, "failure_logs_empty");
    assert!(log_text(&s.gh, id).trim().is_empty());

    let unknown = logs(&s.gh, 1);
    assert_eq!(unknown.status, 404);
    let log = s.gh.requests();
    let redirect = log
        .iter()
        .find(|r| r.path.ends_with("/logs") && r.status == 302)
        .unwrap();
    assert_eq!(redirect.login.as_deref(), Some("coord[bot]"));
}

#[test]
fn expired_logs_are_gone() {
    let s = setup();
    s.gh.set_ci(REPO, SHA, "failure_logs_gone");
    let id = test_job(&s.gh, 1);
    let gone = logs(&s.gh, id);
    assert_eq!(gone.status, 410);
    assert_eq!(
        gone.json(),
        json!({ "message": "Logs are no longer available" })
    );
    let control_log = control(&s.gh, "GET", &format!("/_control/logs/{id}"), Value::Null);
    assert_eq!(control_log.status, 410);
}

#[test]
fn a_rerun_has_both_attempts_jobs_and_logs() {
    let s = setup();
    s.gh.set_ci(REPO, SHA, "rerun_failure");
    let run = run_id(&s.gh);
    let first = test_job(&s.gh, 1);
    let second = test_job(&s.gh, 2);
    assert_ne!(first, second);
    assert_eq!(log_text(&s.gh, first), FIRST_ATTEMPT_LOG);
    assert_eq!(log_text(&s.gh, second), DEFAULT_FAILURE_LOG);
    let attempt_one = jobs(&s.gh, 1);
    let conclusions: Vec<&Value> = attempt_one["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| &j["conclusion"])
        .collect();
    assert_eq!(conclusions, [&json!("success"), &json!("failure")]);
    for missing in [0, 3] {
        let path = format!("/repos/acme/app/actions/runs/{run}/attempts/{missing}/jobs");
        assert_eq!(get(&s.gh, &path, "tok-bot").status, 404, "{missing}");
    }
    let latest = get(
        &s.gh,
        &format!("/repos/acme/app/actions/runs/{run}/jobs"),
        "tok-bot",
    );
    assert_eq!(latest.json()["total_count"], 2);
    let all = get(
        &s.gh,
        &format!("/repos/acme/app/actions/runs/{run}/jobs?filter=all"),
        "tok-bot",
    );
    assert_eq!(all.json()["total_count"], 4);
    let check = get(
        &s.gh,
        &format!("/repos/acme/app/commits/{SHA}/check-runs"),
        "tok-bot",
    )
    .json();
    assert!(check["check_runs"][1]["details_url"]
        .as_str()
        .unwrap()
        .ends_with(&format!("/job/{second}")));
    let shown = get(
        &s.gh,
        &format!("/repos/acme/app/actions/runs/{run}"),
        "tok-bot",
    )
    .json();
    assert_eq!(
        (&shown["id"], &shown["run_attempt"]),
        (&json!(run), &json!(2))
    );
}
