//! `GET /api/dashboard?view=…`: what the page downloads is one page of the fleet, searched,
//! filtered and paged on the server, never the whole model; without `view` the whole model
//! is unchanged.

use agent_coord_tests::env::commit_state_files;
use agent_coord_tests::env::TestEnv;
use agent_coord_tests::server::Server;
use serde_json::json;
use serde_json::Value;

/// 250 claims on acme/app (targets 1–250) in five batches, the first 50 with a live
/// heartbeat, written in one commit.
fn fleet(env: &TestEnv) {
    env.claim("w0", "acme/app", "1").run().success();
    let mut files: Vec<(String, String)> = Vec::new();
    for i in 1..=250 {
        let claim = json!({"repo": "acme/app", "target": i.to_string(), "agent_id": format!("w{i}"),
            "status": "active", "claimed_at": "2026-06-13T11:00:00Z", "updated_at": "2026-06-13T11:30:00Z",
            "machine_id": "box-1", "batch_id": format!("b{}", i % 5)});
        files.push((format!("claims/acme/app/{i}.json"), claim.to_string()));
    }
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    commit_state_files(&env.repo, &refs);
    for i in 1..=50 {
        env.beat(&format!("w{i}"))
            .on("acme/app", i)
            .batch(&format!("b{}", i % 5))
            .status("implementing")
            .run()
            .success();
    }
}

fn get(server: &Server, path: &str) -> Value {
    let (code, body) = server.get(path);
    assert_eq!(code, 200, "{path}: {body}");
    serde_json::from_str(&body).expect("JSON")
}

#[test]
fn views_send_one_page_searched_and_paged_on_the_server() {
    let env = TestEnv::new();
    fleet(&env);
    let server = Server::start(&env, &["--sync-every", "0"]);
    let whole = get(&server, "/api/dashboard");
    assert!(whole.get("slice").is_none(), "the whole model is unchanged");
    assert_eq!(whole["rows"].as_array().map(Vec::len), Some(250));

    let page = get(&server, "/api/dashboard?view=operator&page=3");
    assert_eq!(page["rows"].as_array().map(Vec::len), Some(50));
    assert_eq!(page["slice"]["page"], 3);
    assert_eq!(page["slice"]["pages"], 3);
    assert_eq!(page["slice"]["first"], 200);
    assert_eq!(page["rows"][0]["id"], whole["rows"][200]["id"]);
    assert_eq!(
        page["counts"], whole["counts"],
        "headline counts are the fleet's"
    );
    assert_eq!(page["batches"], json!([]));

    let found = get(&server, "/api/dashboard?view=operator&q=%23123");
    assert_eq!(found["rows"].as_array().map(Vec::len), Some(1));
    assert_eq!(found["rows"][0]["target"], "123");
    assert_eq!(found["slice"]["matched"], 1);
    assert_eq!(found["slice"]["rowsTotal"], 250);

    let running = get(&server, "/api/dashboard?view=operator&state=running");
    let rows = running["rows"].as_array().expect("rows");
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r["state"] == "running"), "{running}");

    let batches = get(&server, "/api/dashboard?view=batches&tier=all");
    assert_eq!(batches["batches"].as_array().map(Vec::len), Some(5));
    assert_eq!(batches["rows"], json!([]));
    let tiers = batches["slice"]["batchesByTier"].as_array().expect("tiers");
    assert!(
        tiers.iter().any(|t| t[0] == "all" && t[1] == 5),
        "{tiers:?}"
    );

    let overview = get(&server, "/api/dashboard?view=overview");
    let small = serde_json::to_vec(&overview).expect("json").len();
    let big = serde_json::to_vec(&whole).expect("json").len();
    assert!(small * 4 < big, "overview {small} bytes of {big}");
    assert!(overview["attention"].as_array().map_or(0, Vec::len) <= 10);

    let (code, body) = server.get("/api/dashboard?view=everything");
    assert_eq!(code, 400, "{body}");
    assert!(body.contains("Unknown view"), "{body}");
}

#[test]
fn a_batch_page_carries_seven_days_of_events_unless_asked_for_all() {
    let env = TestEnv::new();
    env.claim("w1", "acme/app", "1").batch("b1").run().success();
    // Three notes from ten to twelve days ago, and one today.
    for (n, days) in [(1, 12), (2, 11), (3, 10)] {
        env.at(-days * 86_400);
        env.event("b1", "note")
            .agent("w1")
            .message(format!("old note {n}"))
            .run()
            .success();
    }
    env.at(0);
    env.event("b1", "note")
        .agent("w1")
        .message("today's note")
        .run()
        .success();
    let server = Server::start(&env, &["--sync-every", "0"]);
    let windowed = get(&server, "/api/batches/b1");
    let messages = |d: &Value| -> Vec<String> {
        d["events"]
            .as_array()
            .expect("events")
            .iter()
            .filter_map(|e| e["message"].as_str().map(str::to_owned))
            .collect()
    };
    let shown = messages(&windowed);
    assert!(shown.contains(&"today's note".to_owned()), "{shown:?}");
    assert!(!shown.contains(&"old note 1".to_owned()), "{shown:?}");
    // Today's note is the newest evidence of the same scope, so all three old notes go.
    assert_eq!(windowed["omittedEvents"], 3, "{windowed}");
    assert!(
        windowed["historyNotice"]
            .as_str()
            .is_some_and(|n| n.contains("omitted 3 batch history event(s) older than 7 day(s)")),
        "{windowed}"
    );
    let full = get(&server, "/api/batches/b1?history=full");
    let all = messages(&full);
    for n in 1..=3 {
        assert!(all.contains(&format!("old note {n}")), "{all:?}");
    }
    assert_eq!(full["omittedEvents"], 0);
    assert!(full.get("historyNotice").is_none());
}
