//! A coordinator task's lane runs on a real server: the item page lists them with their
//! spend and the vendor pause, a run's transcript on this machine is served rendered (a
//! planted GitHub token comes back redacted), another machine's is a 409 naming it, a path
//! out of the workspace root is refused, and the overview carries the fleet's spend; then
//! the same in a real Chromium.

use agent_coord_tests::env::TestEnv;
use agent_coord_tests::server::Server;
use serde_json::json;
use serde_json::Value;

use crate::test_browser::run_script_on;

/// The transcript of run 1, on this machine (`box-1`).
pub(crate) const TRANSCRIPT: &str =
    ".coordinator-control/w-coord-acme-app-7/implement-1-claude-implementer.transcript.jsonl";

/// A GitHub token planted in the transcript: it must never be served.
pub(crate) fn planted_token() -> String {
    format!("ghp_{}", "Zq9xW2vB7n".repeat(4))
}

fn run(n: u32, machine: &str, path: &str, cost: Option<f64>) -> Value {
    json!({"slot": if n % 2 == 1 { "grok:implementer" } else { "grok:reviewer" },
        "phase": "implement", "round": 1, "vendor": "claude", "model": "claude-sonnet-4-5",
        "started_at": format!("2026-06-1{n}T10:00:00Z"), "ended_at": format!("2026-06-1{n}T10:02:05Z"),
        "verdict": if n % 2 == 1 { "done" } else { "approved" }, "exit_code": 0,
        "input_tokens": 2000 * n, "output_tokens": 300, "cache_read_tokens": 0, "cache_write_tokens": 0,
        "cost_usd": cost, "cost_source": if cost.is_some() { "vendor" } else { "unknown" },
        "transcript": {"machine": machine, "path": path, "bytes": 100, "sha256": "sha256:00"}})
}

/// Seeds `acme/app#7` with three lane runs (this machine's transcript, another machine's,
/// a path out of the root), a paused vendor, the transcript file under the workspace root,
/// a file beside the root, and the coordinator configuration; returns the configuration's
/// path.
pub(crate) fn seed_lane_runs(env: &TestEnv) -> String {
    let root = env.root().join("work");
    let file = root.join(TRANSCRIPT);
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    let token = planted_token();
    let lines = [
        json!({"agent_coord": "lane", "vendor": "claude", "role": "implementer",
               "argv": ["claude", "-p", "--output-format", "stream-json", "--verbose"]}),
        json!({"type": "system", "subtype": "init", "session_id": "s1", "model": "claude-sonnet-4-5"}),
        json!({"type": "assistant", "message": {"content": [
            {"type": "text", "text": format!("Using the token {token} to read the parser.")},
            {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "src/parse.rs"}}]}}),
        json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "fn parse() {}"}]}}),
        json!({"type": "result", "subtype": "success", "is_error": false, "result": "STATUS: complete"}),
        json!({"agent_coord": "usage", "vendor": "claude", "model": "claude-sonnet-4-5",
               "duration_ms": 125000, "input_tokens": 1000, "output_tokens": 50,
               "cache_read_tokens": 0, "cache_write_tokens": 0, "cost_usd": 0.25,
               "cost_source": "vendor", "turns": 2}),
    ];
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(&file, text).unwrap();
    std::fs::write(
        env.root().join("outside.jsonl"),
        r#"{"type":"result","result":"text beyond the workspace root"}"#,
    )
    .unwrap();
    let config = json!({
        "api_url": "http://127.0.0.1:9",
        "workers": {"w-coord": {
            "review_session": "r1", "workspace_root": root,
            "repositories": {"acme/app": {"base": "main", "publication_repo": "acme/app",
                "check_argv": ["/bin/true"], "readiness_argv": ["/bin/true"]}},
            "reply_logins": ["Human"], "poll_seconds": 30, "lane_timeout": 1800, "check_timeout": 600}},
        "sessions": {
            "w-coord": {"github": {"login": "bot-worker", "token_env": "WORKER_GH_TOKEN"},
                "git": {"name": "Worker Bot", "email": "w@example.com", "signing_format": "ssh",
                        "signing_key": "/keys/worker", "allowed_signers": "/keys/allowed_signers"},
                "lanes": {
                    "grok:implementer": ["/opt/lanes/run"], "grok:reviewer": ["/opt/lanes/run"],
                    "grok:pr-reviewer-quality": ["/opt/lanes/run"], "grok:pr-reviewer-logic": ["/opt/lanes/run"],
                    "codex:pr-reviewer-quality": ["/opt/lanes/run"], "codex:pr-reviewer-logic": ["/opt/lanes/run"]}},
            "r1": {"github": {"login": "bot-reviewer", "token_env": "REVIEW_GH_TOKEN"}}},
        "authorized_publication": {}
    });
    let config_path = env.root().join("coordinator.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    let task = json!({
        "schema_version": 1, "task_id": "w-coord-acme-app-7", "worker": "w-coord", "repo": "acme/app",
        "issue": 7, "title": "Fix the parser", "body": "", "state": "active", "phase": "inner_review",
        "assignment": {"event_id": 7, "actor": "octo", "created_at": "2026-06-13T10:00:00Z"},
        "pinned": {}, "branch": "agent/7", "base": "main", "rounds": 1,
        "lane_runs": [
            run(1, "box-1", TRANSCRIPT, Some(0.25)),
            run(2, "box-2", TRANSCRIPT, None),
            run(3, "box-1", "../outside.jsonl", Some(0.5)),
        ],
        "paused": {"vendor": "claude", "until": "2026-06-13T15:00:00Z"},
        "created_at": "2026-06-13T10:00:00Z", "updated_at": "2026-06-13T11:00:00Z"
    });
    env.put_state_files(&[(
        "coordinator/tasks/acme/app/7.json",
        &serde_json::to_string_pretty(&task).unwrap(),
    )]);
    config_path.to_string_lossy().into_owned()
}

#[test]
fn lane_runs_and_their_transcripts_are_served_from_this_machine_only() {
    let env = TestEnv::new();
    let config = seed_lane_runs(&env);
    let server = Server::start(&env, &["--coordinator-config", &config]);

    let (code, body) = server.get("/api/items/acme/app/7");
    assert_eq!(code, 200, "{body}");
    let item: Value = serde_json::from_str(&body).unwrap();
    let panel = &item["coordinator"];
    let runs = panel["laneRuns"].as_array().unwrap();
    assert_eq!(runs.len(), 3);
    assert_eq!(runs[0]["n"], json!(1));
    assert_eq!(runs[0]["durationSecs"], json!(125));
    assert_eq!(runs[0]["costUsd"], json!(0.25));
    assert_eq!(runs[1]["transcriptMachine"], json!("box-2"));
    assert_eq!(panel["spend"]["runs"], json!(3));
    assert_eq!(panel["spend"]["costUsd"], json!(0.75));
    assert_eq!(panel["spend"]["unpricedRuns"], json!(1));
    assert_eq!(panel["paused"]["vendor"], json!("claude"));

    let url = |n: u32| format!("/api/items/acme/app/7/lane-runs/{n}/transcript");
    let (code, body) = server.get(&url(1));
    assert_eq!(code, 200, "{body}");
    assert!(
        !body.contains(&planted_token()),
        "the planted token is served: {body}"
    );
    let t: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(t["machine"], json!("box-1"));
    assert_eq!(t["transcript"]["vendor"], json!("claude"));
    let entries = t["transcript"]["entries"].as_array().unwrap();
    let kinds: Vec<&str> = entries
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "note",
            "note",
            "message",
            "tool_call",
            "tool_result",
            "message",
            "usage"
        ]
    );
    assert_eq!(
        entries[2]["text"],
        json!("Using the token [redacted] to read the parser.")
    );
    assert_eq!(entries[3]["tool"], json!("Read"));

    let (code, body) = server.get(&url(2));
    assert_eq!(code, 409, "{body}");
    let v: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["heldBy"], json!("box-2"));

    let (code, body) = server.get(&url(3));
    assert_eq!(code, 403, "{body}");
    assert!(!body.contains("beyond the workspace root"), "{body}");
    assert_eq!(server.get(&url(4)).0, 404);

    let (code, body) = server.get("/api/dashboard?view=overview");
    assert_eq!(code, 200);
    let model: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(model["spend"]["total"]["runs"], json!(3));
    assert_eq!(
        model["spend"]["batches"][0]["key"],
        json!("coordinator-w-coord")
    );
    assert_eq!(model["spend"]["workers"][0]["key"], json!("w-coord"));
    let days: Vec<&str> = model["spend"]["days"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["key"].as_str().unwrap())
        .collect();
    assert_eq!(days, ["2026-06-11", "2026-06-12", "2026-06-13"]);
}

#[test]
fn lane_runs_and_a_transcript_show_in_a_real_browser() {
    let env = TestEnv::new();
    let config = seed_lane_runs(&env);
    let server = Server::start(&env, &["--coordinator-config", &config]);
    run_script_on(
        &server,
        "lane_runs.mjs",
        "lane_runs.png",
        &[&planted_token()],
    );
}
