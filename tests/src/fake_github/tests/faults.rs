//! Armed faults: a dropped connection after or before applying, and a 500.

use std::io::Read;
use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use serde_json::json;

use super::*;

/// Sends a raw HTTP/1.1 request and returns every byte the server wrote before closing.
fn raw_request(url: &str, method: &str, path: &str, token: &str, body: &str) -> Vec<u8> {
    let mut stream = TcpStream::connect(url.trim_start_matches("http://")).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let request = format!(
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut answer = Vec::new();
    match stream.read_to_end(&mut answer) {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        Err(e) => panic!("reading the answer: {e}"),
    }
    answer
}

#[test]
fn fault_drop_after_apply_creates_the_comment_but_sends_nothing() {
    let s = setup();
    let n = s.gh.open_issue(REPO, "alice", "Issue", "");
    let path = format!("/repos/acme/app/issues/{n}/comments");
    s.gh.fault(Fault {
        method: "POST".into(),
        path: "/comments".into(),
        mode: FaultMode::DropAfterApply,
    });
    let answer = raw_request(s.gh.url(), "POST", &path, "tok-bot", r#"{"body":"marker"}"#);
    assert!(
        answer.is_empty(),
        "got {:?}",
        String::from_utf8_lossy(&answer)
    );
    let comments = s.gh.issue_comments(REPO, n);
    assert_eq!(comments.len(), 1);
    assert_eq!(comments[0]["user"]["login"], "coord[bot]");

    // Through a client: a transport error, not a status; the next request goes through again.
    s.gh.fault(Fault {
        method: "POST".into(),
        path: "/comments".into(),
        mode: FaultMode::DropAfterApply,
    });
    let result = ureq::post(&format!("{}{path}", s.gh.url()))
        .set("Authorization", "Bearer tok-bot")
        .send_json(json!({ "body": "again" }));
    assert!(
        matches!(result, Err(ureq::Error::Transport(_))),
        "{result:?}"
    );
    assert_eq!(s.gh.issue_comments(REPO, n).len(), 2);
    assert_eq!(
        post(&s.gh, &path, "tok-bot", json!({ "body": "third" })).status,
        201
    );
    let log = s.gh.requests();
    let faults: Vec<(u16, Option<FaultMode>)> = log.iter().map(|r| (r.status, r.fault)).collect();
    assert_eq!(
        faults,
        [
            (0, Some(FaultMode::DropAfterApply)),
            (0, Some(FaultMode::DropAfterApply)),
            (201, None)
        ]
    );
}

#[test]
fn fault_drop_before_apply_and_500_change_nothing() {
    let s = setup();
    let n = s.gh.open_issue(REPO, "alice", "Issue", "");
    let path = format!("/repos/acme/app/issues/{n}/comments");
    s.gh.fault(Fault {
        method: "post".into(),
        path: "/repos/acme/app/issues".into(),
        mode: FaultMode::DropBeforeApply,
    });
    let answer = raw_request(s.gh.url(), "POST", &path, "tok-bot", r#"{"body":"lost"}"#);
    assert!(answer.is_empty());
    s.gh.fault(Fault {
        method: "POST".into(),
        path: "/comments".into(),
        mode: FaultMode::Status500,
    });
    assert_eq!(
        post(&s.gh, &path, "tok-bot", json!({ "body": "failed" })).status,
        500
    );
    assert!(s.gh.issue_comments(REPO, n).is_empty());
    // A fault only hits its method.
    s.gh.fault(Fault {
        method: "POST".into(),
        path: "/comments".into(),
        mode: FaultMode::Status500,
    });
    assert_eq!(get(&s.gh, &path, "tok-bot").status, 200);
}

#[test]
fn the_answer_switch_refuses_or_rate_limits_every_request_until_switched_back() {
    let s = setup();
    s.gh.set_answer(Answer::Unauthorized);
    let r = get(&s.gh, "/user", "tok-alice");
    assert_eq!(r.status, 401);
    assert_eq!(r.json()["message"], json!("Bad credentials"));
    s.gh.set_answer(Answer::RateLimited { retry_after: 7 });
    let r = get(&s.gh, "/repos/acme/app/issues", "tok-alice");
    assert_eq!(r.status, 403);
    assert_eq!(r.header("x-ratelimit-remaining"), Some("0"));
    assert_eq!(r.header("retry-after"), Some("7"));
    assert!(r.header("x-ratelimit-reset").is_some());
    s.gh.set_answer(Answer::Normal);
    assert_eq!(get(&s.gh, "/user", "tok-alice").status, 200);
    let log = s.gh.requests();
    let statuses: Vec<u16> = log.iter().map(|l| l.status).collect();
    assert_eq!(statuses, [401, 403, 200], "switched answers are logged");
}

#[test]
fn issues_take_a_free_number_and_branches_grow_from_the_default_branch() {
    let s = setup();
    assert_eq!(s.gh.open_issue_numbered(REPO, 40, "alice", "forty"), 40);
    assert_eq!(s.gh.open_issue_numbered(REPO, 40, "alice", "taken"), 41);
    let sha = s.gh.create_branch(REPO, "feature-x");
    let r = get(&s.gh, "/repos/acme/app/branches/feature-x", "tok-alice");
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["commit"]["sha"], json!(sha));
    let main = get(&s.gh, "/repos/acme/app/branches/main", "tok-alice").json();
    assert_ne!(
        main["commit"]["sha"],
        json!(sha),
        "the branch has its own commit"
    );
}
