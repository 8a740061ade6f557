//! The dashboard's GitHub enrichment: the real `serve` against the fake GitHub. A merged pull
//! request shows done, a closed issue closed, an unassigned open issue ready for a batch; an
//! unchanged refresh costs only 304s (counted at the fake); a rate limit backs off (the fake
//! sees no request meanwhile) and shows; a refused token and an unreachable GitHub show while
//! the dashboard still renders from git; no response ever carries the token.

use std::time::Duration;
use std::time::Instant;

use agent_coord_tests::env::TestEnv;
use agent_coord_tests::fake_github::Answer;
use agent_coord_tests::fake_github::FakeGitHub;
use agent_coord_tests::fake_github::UserKind;
use agent_coord_tests::server::Server;
use serde_json::json;
use serde_json::Value;

const REPO: &str = "acme/app";
pub(crate) const TOKEN: &str = "ghp_enrichSecret0123456789abcdef";

/// A fake GitHub holding: #1 (the fleet's, its pull request #5 on `codex/1` merged), #2 (the
/// fleet's, closed), #3 (open, nobody's), #4 (open, assigned to alice), #6 (the fleet's, its
/// pull request #7 on `codex/6` open with passing CI).
pub(crate) fn github(dir: &std::path::Path) -> FakeGitHub {
    let gh = FakeGitHub::start(&dir.join("github"));
    gh.add_user("alice", UserKind::User, TOKEN);
    gh.add_repo(REPO, "main");
    gh.ci_plan(REPO, &[], "success");
    for (n, title) in [
        (1, "Ship it"),
        (2, "Old bug"),
        (3, "Nobody's"),
        (4, "Alice's"),
    ] {
        assert_eq!(gh.open_issue_numbered(REPO, n, "alice", title), n);
    }
    gh.assign(REPO, 4, "alice", "alice");
    gh.close_issue(REPO, 2);
    gh.create_branch(REPO, "codex/1");
    assert_eq!(open_pull(&gh, "codex/1", "Ship it for real"), 5);
    gh.merge_pull(REPO, 5, Some("alice"));
    assert_eq!(gh.open_issue_numbered(REPO, 6, "alice", "Next"), 6);
    gh.create_branch(REPO, "codex/6");
    assert_eq!(open_pull(&gh, "codex/6", "Next, implemented"), 7);
    gh
}

/// Opens a pull request from `head` onto `main` as alice; returns its number.
fn open_pull(gh: &FakeGitHub, head: &str, title: &str) -> u64 {
    let body = json!({"title": title, "head": head, "base": "main", "body": ""});
    let answer: Value = ureq::post(&format!("{}/repos/{REPO}/pulls", gh.url()))
        .set("Authorization", &format!("Bearer {TOKEN}"))
        .send_json(body)
        .expect("pull request opened")
        .into_json()
        .expect("json");
    answer["number"].as_u64().expect("number")
}

/// The coordination state: w1 on #1 (branch `codex/1`), w2 on #2, w6 on #6 (branch `codex/6`).
pub(crate) fn state(env: &TestEnv) {
    env.claim("w1", REPO, 1)
        .arg("--branch")
        .arg("codex/1")
        .run()
        .success();
    env.claim("w2", REPO, 2).run().success();
    env.claim("w6", REPO, 6)
        .arg("--branch")
        .arg("codex/6")
        .run()
        .success();
}

/// `serve` asking GitHub every second at `api`, with `token` (if any) in `GH_TOKEN`.
pub(crate) fn serve(env: &TestEnv, api: &str, token: Option<&str>) -> Server {
    let mut cmd = env.command([
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--github-refresh",
        "1",
        "--github-api-url",
        api,
    ]);
    if let Some(t) = token {
        cmd.env("GH_TOKEN", t);
    }
    Server::spawn(cmd)
}

pub(crate) fn model(server: &Server) -> Value {
    let (code, body) = server.get("/api/dashboard");
    assert_eq!(code, 200, "{body}");
    serde_json::from_str(&body).expect("model")
}

fn row<'m>(model: &'m Value, target: &str) -> Option<&'m Value> {
    model["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .find(|r| r["repo"] == json!(REPO) && r["target"] == json!(target))
}

/// Polls the model until `done` holds (or 30 s pass, and the test fails saying `what`).
pub(crate) fn wait_for(server: &Server, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let m = model(server);
        if done(&m) {
            return m;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}: {m}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub(crate) fn github_status(m: &Value) -> &str {
    m["sourceStatus"][0]["status"].as_str().unwrap_or_default()
}

/// Every route's body, none of which may hold the token.
fn assert_no_token(server: &Server) {
    for path in [
        "/",
        "/api/health",
        "/api/dashboard",
        "/api/doctor",
        "/api/items/acme/app/1",
        "/api/items/acme/app/3",
        "/api/batches/none",
    ] {
        let (_, body) = server.get(path);
        assert!(!body.contains(TOKEN), "{path} leaks the token");
        assert!(
            !body.contains("Bad credentials"),
            "{path} echoes GitHub's body"
        );
    }
}

#[test]
fn github_enriches_the_dashboard_and_an_unchanged_refresh_is_all_304() {
    let env = TestEnv::new();
    let gh = github(env.root());
    state(&env);
    let server = serve(&env, gh.url(), Some(TOKEN));
    let m = wait_for(&server, "the merged pull request", |m| {
        row(m, "1").is_some_and(|r| r["state"] == json!("done"))
    });
    let one = row(&m, "1").unwrap();
    assert_eq!(one["github"]["terminal"], json!("done"));
    assert_eq!(one["github"]["implementationPr"]["number"], json!(5));
    assert_eq!(one["github"]["implementationPr"]["state"], json!("merged"));
    assert_eq!(one["title"], json!("Ship it"));
    let two = row(&m, "2").unwrap();
    assert_eq!(two["state"], json!("done"));
    assert_eq!(two["github"]["terminal"], json!("closed"));
    let three = row(&m, "3").expect("an unassigned open issue is a row");
    assert_eq!(three["scheduling"], json!("ready_for_batch"));
    assert_eq!(three["state"], json!("ready"));
    assert!(row(&m, "4").is_none(), "assigned to somebody: not ready");
    assert!(row(&m, "5").is_none(), "the merged pull request is #1's");
    assert!(row(&m, "7").is_none(), "the open pull request is #6's");
    let six = row(&m, "6").unwrap();
    assert_ne!(
        six["state"],
        json!("done"),
        "its pull request is still open"
    );
    assert_eq!(six["github"]["implementationPr"]["ci"], json!("passing"));
    assert_eq!(github_status(&m), "ok");

    // Every refresh from now on finds nothing new: each request is answered 304.
    let before = gh.stats();
    std::thread::sleep(Duration::from_millis(3500));
    let after = gh.stats();
    let requests = after.requests - before.requests;
    let not_modified = after.not_modified - before.not_modified;
    assert!(requests >= 5, "at least one refresh ran: {requests}");
    assert_eq!(not_modified, requests, "an unchanged refresh is all 304s");
    assert_eq!(
        model(&server)["version"],
        m["version"],
        "no new facts, no new version"
    );

    let (code, doctor) = server.get("/api/doctor");
    assert_eq!(code, 200);
    let doctor: Value = serde_json::from_str(&doctor).unwrap();
    assert_eq!(doctor["github"]["tokenSource"], json!("GH_TOKEN"));
    assert_eq!(doctor["github"]["repositories"], json!([REPO]));
    assert_eq!(doctor["github"]["status"]["status"], json!("ok"));
    assert_no_token(&server);
}

#[test]
fn a_rate_limit_backs_off_and_shows() {
    let env = TestEnv::new();
    let gh = github(env.root());
    state(&env);
    let server = serve(&env, gh.url(), Some(TOKEN));
    wait_for(&server, "the first refresh", |m| github_status(m) == "ok");
    gh.set_answer(Answer::RateLimited { retry_after: 5 });
    let m = wait_for(&server, "the rate limit", |m| {
        github_status(m) == "rate_limited"
    });
    assert!(m["sourceStatus"][0]["retryAt"].is_string());
    // What GitHub said before stays: never an empty dashboard.
    assert_eq!(row(&m, "1").unwrap()["state"], json!("done"));
    let before = gh.stats().requests;
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(
        gh.stats().requests,
        before,
        "nothing is asked during the back-off"
    );
    gh.set_answer(Answer::Normal);
    wait_for(&server, "the refresh after the back-off", |m| {
        github_status(m) == "ok"
    });
    assert_no_token(&server);
}

#[test]
fn a_refused_token_and_an_unreachable_github_show_while_git_state_renders() {
    let env = TestEnv::new();
    let gh = github(env.root());
    state(&env);
    let wrong = "ghp_notTheRightOne0123456789";
    let server = serve(&env, gh.url(), Some(wrong));
    let m = wait_for(&server, "the refused token", |m| {
        github_status(m) == "auth_error"
    });
    assert_eq!(m["sourceStatus"][0]["httpStatus"], json!(401));
    // The rows come from git alone: the claim on #1 is not done.
    assert_eq!(row(&m, "1").unwrap()["state"], json!("dead"));
    assert!(row(&m, "3").is_none());
    for path in ["/api/dashboard", "/api/doctor", "/"] {
        assert!(
            !server.get(path).1.contains(wrong),
            "{path} leaks the token"
        );
    }
    assert_no_token(&server);
    drop(server);

    // Switched to 401 for everybody while serving: the status follows.
    let server = serve(&env, gh.url(), Some(TOKEN));
    wait_for(&server, "the first refresh", |m| github_status(m) == "ok");
    gh.set_answer(Answer::Unauthorized);
    let m = wait_for(&server, "the 401", |m| github_status(m) == "auth_error");
    assert_eq!(row(&m, "2").unwrap()["state"], json!("done"), "facts stay");
    gh.set_answer(Answer::Normal);
    drop(server);

    // Nothing listens at the API URL.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", closed.local_addr().unwrap());
    drop(closed);
    let server = serve(&env, &url, Some(TOKEN));
    let m = wait_for(&server, "unreachable", |m| {
        github_status(m) == "unreachable"
    });
    assert_eq!(m["counts"]["rows"], json!(3), "the git state still renders");
    let (_, doctor) = server.get("/api/doctor");
    assert!(doctor.contains("\"unreachable\""), "{doctor}");
    assert_no_token(&server);
    drop(server);

    // No token at all: enrichment is off and the model is the git-only one.
    let server = serve(&env, gh.url(), None);
    std::thread::sleep(Duration::from_millis(1500));
    let m = model(&server);
    assert!(m.get("sourceStatus").is_none(), "{m}");
    let (_, doctor) = server.get("/api/doctor");
    let doctor: Value = serde_json::from_str(&doctor).unwrap();
    assert_eq!(doctor["github"]["status"]["status"], json!("disabled"));
}
