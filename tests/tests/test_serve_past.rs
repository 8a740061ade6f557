//! The dashboard's past: `?at=<commit|RFC 3339 time>` on `/api/dashboard`, a batch's and an
//! item's page answer what a server showed at that moment (marked as the past), and the
//! commits routes list what touched a batch or an item (the time slider's stops). The
//! browser side (banner, read-only, links keeping the moment, the slider) is
//! `test_browser_past`.

use agent_coord_tests::env::TestEnv;
use agent_coord_tests::server::Server;
use serde_json::Value;

use crate::test_time_travel::scripted_day;
use crate::test_time_travel::time_at;

pub(crate) fn get(server: &Server, path: &str) -> Value {
    let (code, body) = server.get(path);
    assert_eq!(code, 200, "{path}: {body}");
    serde_json::from_str(&body).expect("JSON")
}

/// What a page showed, without what names the refs it came from: the version hashes the
/// refs' ids, and the past reads heartbeats from the history's own commits.
fn comparable(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        o.remove("version");
        o.remove("past");
    }
    v
}

/// The pages a checkpoint records.
const PAGES: [&str; 4] = [
    "/api/dashboard",
    "/api/dashboard?view=operator",
    "/api/batches/b1?history=full",
    "/api/items/acme/app/7",
];

/// At each moment of a scripted day a server started then recorded every page; a server
/// started at the day's end answers the same pages `?at=` each moment, marked as the past.
#[test]
fn every_page_at_a_past_moment_equals_what_the_server_showed_then() {
    let env = TestEnv::new();
    let mut seen: Vec<(i64, String, Vec<Value>)> = Vec::new();
    scripted_day(&env, &mut |env, secs| {
        env.at(secs);
        let server = Server::start(env, &["--sync-every", "0"]);
        let pages = PAGES.iter().map(|p| get(&server, p)).collect();
        seen.push((secs, env.state_tip().unwrap(), pages));
    });
    env.at(23 * 3600);
    let server = Server::start(&env, &["--sync-every", "0"]);
    let now = get(&server, "/api/dashboard");
    assert!(now.get("past").is_none(), "the present is not marked");
    for (secs, tip, pages) in &seen {
        let when = time_at(*secs);
        for (page, then) in PAGES.iter().zip(pages) {
            let sep = if page.contains('?') { '&' } else { '?' };
            let past = get(&server, &format!("{page}{sep}at={when}"));
            if page.starts_with("/api/dashboard") {
                assert_eq!(past["past"]["commit"], tip.as_str(), "{page} at {when}");
                assert_eq!(past["past"]["at"], when.as_str(), "{page} at {when}");
            }
            assert_eq!(
                comparable(past),
                comparable(then.clone()),
                "{page} at {when}"
            );
        }
        // A commit reads the state of that commit.
        let by_commit = get(&server, &format!("/api/dashboard?at={tip}"));
        assert_eq!(by_commit["past"]["commit"], tip.as_str());
    }
    // The moments really differ: a is live in the morning, dead by the afternoon.
    assert_ne!(
        comparable(seen[0].2[0].clone()),
        comparable(seen[2].2[0].clone())
    );
    // Asking for the past left the present as it was.
    assert_eq!(
        comparable(get(&server, "/api/dashboard")),
        comparable(now.clone())
    );
}

#[test]
fn a_moment_the_state_cannot_show_is_a_clear_400() {
    let env = TestEnv::new();
    env.at(3600);
    env.claim("a", "acme/app", "7").run().success();
    let server = Server::start(&env, &["--sync-every", "0"]);
    let (code, body) = server.get(&format!("/api/dashboard?at={}", time_at(0)));
    assert_eq!(code, 400, "{body}");
    assert!(body.contains("no commit at or before that time"), "{body}");
    let (code, body) = server.get("/api/items/acme/app/7?at=no-such-commit");
    assert_eq!(code, 400, "{body}");
    assert!(
        body.contains("neither an RFC 3339 time nor a commit"),
        "{body}"
    );
}

/// The slider's stops: the commits that changed the batch's manifest or events, or the
/// item's claim, newest first, and nothing else.
#[test]
fn the_commits_routes_list_what_touched_a_batch_or_an_item() {
    let env = TestEnv::new();
    scripted_day(&env, &mut |_, _| {});
    env.at(23 * 3600);
    let server = Server::start(&env, &["--sync-every", "0"]);
    let subjects = |path: &str| -> Vec<String> {
        let touches = get(&server, path);
        assert_eq!(touches["truncated"], false, "{touches}");
        touches["commits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["subject"].as_str().unwrap().to_owned())
            .collect()
    };
    let item = subjects("/api/items/acme/app/7/commits");
    assert_eq!(item.len(), 2, "the claim and the release of #7: {item:?}");
    assert!(item[0].contains("release"), "newest first: {item:?}");
    assert!(item[1].contains("claim"), "{item:?}");
    let batch = subjects("/api/batches/b1/commits");
    // The manifest, the claims' lifecycle events, the note and the release's event.
    assert!(batch.len() >= 3, "{batch:?}");
    assert!(
        batch.iter().all(|s| !s.contains("acme/other")),
        "a claim outside the batch did not touch it: {batch:?}"
    );
    let other = subjects("/api/items/acme/other/3/commits");
    assert_eq!(other.len(), 1, "{other:?}");
    // Each stop opens the page as of that commit.
    let touches = get(&server, "/api/items/acme/app/7/commits");
    let claim_commit = touches["commits"][1]["commit"].as_str().unwrap().to_owned();
    let then = get(&server, &format!("/api/items/acme/app/7?at={claim_commit}"));
    assert_eq!(then["holder"], "a", "{then}");
    let (code, body) = server.get("/api/batches/..%2Fx/commits");
    assert_eq!(code, 400, "{body}");
}
