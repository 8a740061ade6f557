//! The dashboard's GitHub enrichment of a generated fleet against the fake GitHub: how many
//! requests a cold refresh costs, and an unchanged one (every one a 304), next to the
//! predecessor's `gh` spawns for the same fleet.

use std::time::Duration;
use std::time::Instant;

use agent_coord_tests::fake_github::FakeGitHub;
use agent_coord_tests::fake_github::UserKind;
use agent_coord_tests::server::Server;
use serde_json::json;
use serde_json::Value;

use crate::cli::cli;
use crate::cli::fixture;

const TOKEN: &str = "ghp_benchEnrich0123456789";
/// The predecessor's `gh` processes per uncached refresh at the reference fleet size
/// (reference §7.5, §9: two lists per repository plus one issue and one branch lookup per
/// coordinated target, at most 24 at a time).
const PREDECESSOR_SPAWNS: usize = 620;

/// Serves a generated fleet of `scale` against a fake GitHub holding its issues (every
/// target an open issue; every tenth an open pull request on the work branch, every
/// fortieth merged) and prints the requests of a cold and of an unchanged refresh.
pub fn bench_enrich(scale: usize) {
    let (fx, records, _) = fixture(scale);
    let gh = FakeGitHub::start(&fx.dir.join("github"));
    gh.add_user("bench", UserKind::User, TOKEN);
    let setup = Instant::now();
    for r in 0..10 {
        let repo = format!("acme/repo{r}");
        gh.add_repo(&repo, "main");
        gh.ci_plan(&repo, &[], "success");
    }
    let (mut pulls, mut merged) = (0, 0);
    let repo_of = |n: usize| format!("acme/repo{}", (n / 4) % 10);
    for n in 0..400 * scale {
        let target = 1000 + n as u64;
        gh.open_issue_numbered(&repo_of(n), target, "bench", &format!("Issue {target}"));
    }
    // Pull requests after every issue, so their numbers follow the issues'.
    for n in 0..400 * scale {
        let (repo, target) = (repo_of(n), 1000 + n as u64);
        if n % 10 == 0 {
            let branch = format!("codex/{target}");
            gh.create_branch(&repo, &branch);
            let body = json!({"title": format!("Fix {target}"), "head": branch, "base": "main",
                "body": format!("Closes #{target}")});
            let pr: Value = ureq::post(&format!("{}/repos/{repo}/pulls", gh.url()))
                .set("Authorization", &format!("Bearer {TOKEN}"))
                .send_json(body)
                .expect("pull request opened")
                .into_json()
                .expect("json");
            pulls += 1;
            if n % 40 == 0 {
                gh.merge_pull(&repo, pr["number"].as_u64().expect("number"), Some("bench"));
                merged += 1;
            }
        }
    }
    let setup = setup.elapsed();
    let mut cmd = cli(
        &fx,
        &[
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--github-refresh",
            "3",
            "--github-api-url",
            gh.url(),
        ],
    );
    cmd.env("GH_TOKEN", TOKEN);
    let before = gh.stats();
    let server = Server::spawn(cmd);
    let cold = next_refresh(&server, None);
    let mid = gh.stats();
    let warm = next_refresh(&server, Some(&cold.checked_at));
    let after = gh.stats();
    let model: Value = serde_json::from_str(&server.get("/api/dashboard").1).expect("model");
    let done = model["rows"]
        .as_array()
        .map(|rows| {
            rows.iter()
                .filter(|r| r["github"]["terminal"].is_string())
                .count()
        })
        .unwrap_or(0);
    drop(server);
    println!(
        "\n## GitHub enrichment, scale {scale}: {records} records, 10 repositories, {} issues, \
         {pulls} pull requests ({merged} merged); fake set up in {:.1} s\n\
         | refresh | requests (counted by the fake) | of them 304 | took |\n\
         |---|---|---|---|\n\
         | cold | {} ({}) | {} | {} ms |\n\
         | unchanged | {} ({}) | {} | {} ms |\n\
         | predecessor (`gh` CLI), uncached | ~{PREDECESSOR_SPAWNS} process spawns | — | — |\n\
         rows GitHub completed: {done}",
        400 * scale,
        setup.as_secs_f64(),
        cold.requests,
        mid.requests - before.requests,
        cold.not_modified,
        cold.took_ms,
        warm.requests,
        after.requests - mid.requests,
        warm.not_modified,
        warm.took_ms,
    );
}

/// One refresh as `/api/doctor` reports it.
struct Refresh {
    checked_at: String,
    requests: u64,
    not_modified: u64,
    took_ms: u64,
}

/// Waits for a refresh that finished after `after` (any, without one) and returns it.
fn next_refresh(server: &Server, after: Option<&str>) -> Refresh {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let (_, body) = server.get("/api/doctor");
        let doctor: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        let g = &doctor["github"];
        let checked = g["checkedAt"].as_str().unwrap_or_default().to_owned();
        let fresh = !checked.is_empty()
            && g["lastRefresh"].is_object()
            && after.is_none_or(|a| checked.as_str() != a);
        if fresh {
            let n = |k: &str| g["lastRefresh"][k].as_u64().unwrap_or(0);
            return Refresh {
                checked_at: checked,
                requests: n("requests"),
                not_modified: n("notModified"),
                took_ms: n("tookMs"),
            };
        }
        assert!(Instant::now() < deadline, "no refresh: {body}");
        std::thread::sleep(Duration::from_millis(20));
    }
}
