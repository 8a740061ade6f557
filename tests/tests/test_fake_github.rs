//! The `fake-github` binary as a person runs it: it prints its URL, takes setup through the
//! control API and answers the REST API. The fake itself is tested in `src/fake_github/tests.rs`.

use std::io::BufRead;
use std::io::BufReader;
use std::process::Command;
use std::process::Stdio;

use serde_json::json;
use serde_json::Value;

/// Kills the child on drop, so a failed assertion does not leave a server behind.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn fake_github_binary_serves_the_control_and_rest_apis() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Running(
        Command::new(env!("CARGO_BIN_EXE_fake-github"))
            .args(["--root", dir.path().to_str().unwrap(), "--port", "0"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(child.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = line.trim();
    assert!(url.starts_with("http://127.0.0.1:"), "{line:?}");

    ureq::post(&format!("{url}/_control/users"))
        .send_json(json!({ "login": "alice", "kind": "User", "token": "t-1" }))
        .unwrap();
    let repo: Value = ureq::post(&format!("{url}/_control/repos"))
        .send_json(json!({ "full_name": "acme/app", "default_branch": "main" }))
        .unwrap()
        .into_json()
        .unwrap();
    assert!(repo["path"].as_str().unwrap().ends_with("acme/app.git"));

    let me: Value = ureq::get(&format!("{url}/user"))
        .set("Authorization", "Bearer t-1")
        .call()
        .unwrap()
        .into_json()
        .unwrap();
    assert_eq!(me["login"], "alice");
    assert_eq!(me["type"], "User");
    match ureq::get(&format!("{url}/user")).call() {
        Err(ureq::Error::Status(401, _)) => {}
        other => panic!("expected 401, got {other:?}"),
    }
}
