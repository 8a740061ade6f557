//! Tests of the fake GitHub through a real server on 127.0.0.1, with `ureq` as the client and
//! real `git` pushing to the bare repositories.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::*;

mod actions;
mod api;
mod checks;
mod faults;
mod graphql;
mod merge;
mod pulls;
mod queue;
mod reviews;

const REPO: &str = "acme/app";

/// A running fake with `alice` (a person), `coord[bot]` and `acme/app` on `main`; the
/// directory outlives the server because fields drop in order.
struct Setup {
    gh: FakeGitHub,
    dir: tempfile::TempDir,
}

fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let gh = FakeGitHub::start(&dir.path().join("github"));
    gh.add_user("alice", UserKind::User, "tok-alice");
    gh.add_user("coord[bot]", UserKind::Bot, "tok-bot");
    gh.add_repo(REPO, "main");
    Setup { gh, dir }
}

/// What came back from one request.
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.body))
    }
}

/// Sends `method url` with a token (if any), extra headers and a JSON body (unless null).
fn send(
    method: &str,
    url: &str,
    token: Option<&str>,
    extra: &[(&str, &str)],
    body: &Value,
) -> Reply {
    let mut request = ureq::request(method, url);
    if let Some(token) = token {
        request = request.set("Authorization", &format!("Bearer {token}"));
    }
    for (name, value) in extra {
        request = request.set(name, value);
    }
    let result = if body.is_null() {
        request.call()
    } else {
        request.send_json(body.clone())
    };
    let response = match result {
        Ok(response) | Err(ureq::Error::Status(_, response)) => response,
        Err(e) => panic!("{method} {url}: {e}"),
    };
    let headers = response
        .headers_names()
        .into_iter()
        .map(|n| {
            let v = response.header(&n).unwrap_or_default().to_owned();
            (n, v)
        })
        .collect();
    let status = response.status();
    Reply {
        status,
        headers,
        body: response.into_string().unwrap(),
    }
}

fn get(gh: &FakeGitHub, path: &str, token: &str) -> Reply {
    send(
        "GET",
        &format!("{}{path}", gh.url()),
        Some(token),
        &[],
        &Value::Null,
    )
}

fn post(gh: &FakeGitHub, path: &str, token: &str, body: Value) -> Reply {
    send(
        "POST",
        &format!("{}{path}", gh.url()),
        Some(token),
        &[],
        &body,
    )
}

/// Runs git in `dir` with an isolated configuration and a fixed identity.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Test")
        .env("GIT_AUTHOR_EMAIL", "test@example.invalid")
        .env("GIT_COMMITTER_NAME", "Test")
        .env("GIT_COMMITTER_EMAIL", "test@example.invalid")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// Clones `acme/app` through its `clone_url` into `<dir>/work`.
fn clone(s: &Setup) -> std::path::PathBuf {
    let repo = get(&s.gh, "/repos/acme/app", "tok-alice").json();
    let url = repo["clone_url"].as_str().unwrap();
    assert!(url.starts_with("file:///"), "{url}");
    git(s.dir.path(), &["clone", "--quiet", url, "work"]);
    s.dir.path().join("work")
}

/// Commits a file change in `work` and pushes it to `branch`; returns the new tip.
fn push_commit(work: &Path, branch: &str, file: &str) -> String {
    std::fs::write(work.join(file), file).unwrap();
    git(work, &["add", file]);
    git(work, &["commit", "--quiet", "-m", file]);
    git(
        work,
        &[
            "push",
            "--quiet",
            "origin",
            &format!("HEAD:refs/heads/{branch}"),
        ],
    );
    git(work, &["rev-parse", "HEAD"])
}

/// Pushes a commit adding `<branch>.txt` to `branch` and opens a pull request from it into
/// `main` as the token's user; returns its number and head sha.
fn open_pull(s: &Setup, work: &Path, branch: &str, token: &str, draft: bool) -> (u64, String) {
    let head = push_commit(work, branch, &format!("{branch}.txt"));
    let body =
        serde_json::json!({ "title": branch, "head": branch, "base": "main", "draft": draft });
    let created = post(&s.gh, "/repos/acme/app/pulls", token, body);
    assert_eq!(created.status, 201, "{}", created.body);
    (created.json()["number"].as_u64().unwrap(), head)
}

/// Calls the control API without panicking on an error status.
fn control(gh: &FakeGitHub, method: &str, path: &str, body: Value) -> Reply {
    send(method, &format!("{}{path}", gh.url()), None, &[], &body)
}

/// Returns the first error message of a 422 answer.
fn error_message(reply: &Reply) -> String {
    assert_eq!(reply.status, 422, "{}", reply.body);
    let body = reply.json();
    body["errors"][0]["message"].as_str().unwrap().to_owned()
}
