//! A coordinator task page with many lane runs (issue 19's goal: 200 runs render in
//! ≤ 100 ms from the server): the item endpoint's response time for such a task, cold (the
//! first request derives the model) and warm, and the transcript route on one run's
//! transcript of a few thousand vendor events.

use std::time::Duration;
use std::time::Instant;

use agent_coord_tests::env::commit_state_files;
use agent_coord_tests::server::Server;
use serde_json::json;

use crate::cli::cli;
use crate::cli::median;
use crate::cli::ms;
use crate::cli::Fixture;
use crate::cli::NOW;

/// The goal for the item page of a task with 200 lane runs.
const GOAL: Duration = Duration::from_millis(100);

/// Events in the benchmarked transcript.
const EVENTS: usize = 3_000;

/// `runs` lane runs on one task: the item endpoint and one transcript, timed.
pub fn bench_lane_runs(runs: usize) {
    use std::io::Read;
    let fx = Fixture::empty();
    let root = fx.dir.join("work");
    let relative = ".coordinator-control/acme-app-1/implement-1.transcript.jsonl";
    let file = root.join(relative);
    std::fs::create_dir_all(file.parent().expect("a folder")).expect("workspace root");
    let mut transcript = String::from(
        "{\"agent_coord\":\"lane\",\"vendor\":\"codex\",\"role\":\"implementer\",\"argv\":[\"codex\",\"exec\",\"--json\"]}\n",
    );
    for i in 0..EVENTS {
        let event = match i % 3 {
            0 => {
                json!({"type": "item.completed", "item": {"id": format!("i{i}"), "type": "reasoning", "text": "Looking at the parser and its tests once more."}})
            }
            1 => {
                json!({"type": "item.completed", "item": {"id": format!("i{i}"), "type": "command_execution", "command": "bash -lc 'cargo test -p parser'", "aggregated_output": "test result: ok. 42 passed\n".repeat(8), "exit_code": 0, "status": "completed"}})
            }
            _ => {
                json!({"type": "item.completed", "item": {"id": format!("i{i}"), "type": "agent_message", "text": "The parser now handles the empty case."}})
            }
        };
        transcript.push_str(&event.to_string());
        transcript.push('\n');
    }
    std::fs::write(&file, &transcript).expect("transcript");
    let lane_runs: Vec<_> = (0..runs)
        .map(|i| {
            json!({"slot": "grok:implementer", "phase": "implement", "round": i / 2 + 1,
                "vendor": "codex", "model": "gpt-5-codex", "session_id": format!("s{i}"),
                "started_at": "2026-06-13T10:00:00Z", "ended_at": "2026-06-13T10:03:00Z",
                "verdict": if i % 2 == 0 { "done" } else { "rejected" }, "exit_code": 0,
                "input_tokens": 12_000, "output_tokens": 900, "cache_read_tokens": 40_000,
                "cache_write_tokens": 0, "cost_usd": 0.042, "cost_source": "computed",
                "transcript": {"machine": "bench-box", "path": relative,
                               "bytes": transcript.len(), "sha256": "sha256:00"}})
        })
        .collect();
    let task = json!({"schema_version": 1, "task_id": "acme-app-1", "worker": "w-bench",
        "repo": "acme/app", "issue": 1, "title": "bench", "body": "", "state": "active",
        "phase": "implement", "assignment": {"event_id": 1, "actor": "octo", "created_at": NOW},
        "pinned": {}, "branch": "agent/1", "base": "main", "rounds": runs / 2,
        "lane_runs": lane_runs, "created_at": NOW, "updated_at": NOW});
    let text = serde_json::to_string_pretty(&task).expect("json");
    commit_state_files(&fx.repo, &[("coordinator/tasks/acme/app/1.json", &text)]);
    let config = fx.dir.join("coordinator.json");
    std::fs::write(&config, config_json(&root).to_string()).expect("config");
    let config = config.to_string_lossy().into_owned();
    let server = Server::spawn(cli(
        &fx,
        &[
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--sync-every",
            "0",
            "--github-refresh",
            "0",
            "--coordinator-config",
            &config,
        ],
    ));
    let fetch = |path: &str| {
        let start = Instant::now();
        let resp = ureq::get(&format!("{}{path}", server.url))
            .call()
            .expect("the server answers");
        let mut body = Vec::new();
        resp.into_reader().read_to_end(&mut body).expect("body");
        (start.elapsed(), body.len())
    };
    let item = "/api/items/acme/app/1";
    let (cold, item_bytes) = fetch(item);
    let warm = median((0..30).map(|_| fetch(item).0).collect());
    let path = format!("{item}/lane-runs/{runs}/transcript");
    let (first, transcript_bytes) = fetch(&path);
    let again = median((0..10).map(|_| fetch(&path).0).collect());
    drop(server);
    let verdict = if warm <= GOAL { "meets" } else { "misses" };
    println!(
        "\n## a coordinator task page with {runs} lane runs\n\
         | GET {item} cold (derives the model) | {} ({:.1} kB) |\n\
         | warm, median of 30 | {} ({verdict} the {} goal) |\n\
         | GET …/lane-runs/{runs}/transcript, {EVENTS} events ({:.1} MB file) | first {}, median of 10 {} ({:.1} kB) |",
        ms(cold),
        item_bytes as f64 / 1e3,
        ms(warm),
        ms(GOAL),
        transcript.len() as f64 / 1e6,
        ms(first),
        ms(again),
        transcript_bytes as f64 / 1e3,
    );
}

/// A coordinator configuration whose worker `w-bench` works under `root`.
fn config_json(root: &std::path::Path) -> serde_json::Value {
    let lanes: serde_json::Map<String, serde_json::Value> = [
        "grok:implementer",
        "grok:reviewer",
        "grok:pr-reviewer-quality",
        "grok:pr-reviewer-logic",
        "codex:pr-reviewer-quality",
        "codex:pr-reviewer-logic",
    ]
    .iter()
    .map(|s| ((*s).to_owned(), json!(["/opt/lanes/run"])))
    .collect();
    json!({
        "api_url": "http://127.0.0.1:9",
        "workers": {"w-bench": {
            "review_session": "r1", "workspace_root": root,
            "repositories": {"acme/app": {"base": "main", "publication_repo": "acme/app",
                "check_argv": ["/bin/true"], "readiness_argv": ["/bin/true"]}},
            "reply_logins": ["Human"], "poll_seconds": 30, "lane_timeout": 1800, "check_timeout": 600}},
        "sessions": {
            "w-bench": {"github": {"login": "bot-worker", "token_env": "WORKER_GH_TOKEN"},
                "git": {"name": "Worker Bot", "email": "w@example.com", "signing_format": "ssh",
                        "signing_key": "/keys/worker", "allowed_signers": "/keys/allowed_signers"},
                "lanes": lanes},
            "r1": {"github": {"login": "bot-reviewer", "token_env": "REVIEW_GH_TOKEN"}}},
        "authorized_publication": {}
    })
}
