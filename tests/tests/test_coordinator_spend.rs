//! The coordinator with adapter-form lanes (`{"adapter": …}`) over fake vendor CLIs that
//! replay the vendors' documented event streams: every lane run is recorded in the task with
//! its vendor, tokens, cost (the vendor's own, else the configured price table's) and a
//! pointer to its redacted transcript; a usage limit pauses the vendor on the worker without
//! a GitHub blocker and the same lane runs after the reset; a reached budget asks a question
//! an authorized reply answers; totals appear in `coordinate --json` and `status --json`.

use agent_coord_tests::coord::Coord;
use agent_coord_tests::coord::HUMAN;
use agent_coord_tests::env::CommandOutput;
use serde_json::json;
use serde_json::Value;
use sha2::Digest;

/// A token shape the fake model prints in its transcript; it must never be kept.
const PLANTED: &str = "ghp_plantedTOKEN0123456789abcdefghijklmn";
/// Seconds from the test clock's start to the usage limit's reset.
const RESET_AFTER: i64 = 3600;

/// A fake Claude Code (`-p --output-format stream-json`): pops its mode from `claude.modes`
/// (`done` edits the feature file and answers with usage and the vendor's cost; `limit`
/// answers with a rejected rate limit that resets [`RESET_AFTER`] s after the test clock's
/// start) and logs each run to `claude.log`.
fn fake_claude(c: &Coord, reset_unix: i64) -> String {
    let d = c.dir.display();
    format!(
        r#"#!/bin/sh
cat > /dev/null
f='{d}/claude.modes'
mode=$(head -n 1 "$f" 2>/dev/null)
[ -s "$f" ] && sed -i '1d' "$f"
[ -n "$mode" ] || mode=done
echo "$mode" >> '{d}/claude.log'
printf '%s\n' '{{"type":"system","subtype":"init","session_id":"s-7","model":"claude-sonnet-4-5"}}'
case "$mode" in
limit)
printf '%s\n' '{{"type":"rate_limit_event","rate_limit_info":{{"status":"rejected","rateLimitType":"five_hour","resetsAt":{reset_unix}}},"session_id":"s-7"}}'
printf '%s\n' '{{"type":"assistant","message":{{"content":[{{"type":"text","text":"Claude AI usage limit reached|{reset_unix}"}}]}},"error":"rate_limit","session_id":"s-7"}}'
printf '%s\n' '{{"type":"result","subtype":"success","is_error":true,"num_turns":1,"result":"Claude AI usage limit reached|{reset_unix}","session_id":"s-7","total_cost_usd":0,"usage":{{"input_tokens":0,"output_tokens":0}}}}'
;;
*)
echo "change" >> "feature-$(basename "$PWD").txt"
printf '%s\n' '{{"type":"assistant","message":{{"content":[{{"type":"text","text":"still working, found {PLANTED} in the env"}}]}},"session_id":"s-7"}}'
printf '%s\n' '{{"type":"result","subtype":"success","is_error":false,"num_turns":3,"result":"STATUS: complete\nRESULT: done\nSUMMARY_EN: Adds the feature file.\nSUMMARY_DE: Fügt die Feature-Datei hinzu.\nDetails follow.","session_id":"s-7","total_cost_usd":0.12,"usage":{{"input_tokens":1000,"cache_creation_input_tokens":0,"cache_read_input_tokens":5000,"output_tokens":200}}}}'
;;
esac
"#
    )
}

/// A fake Codex (`exec --json`) reviewer that always approves, reporting usage but no cost
/// and no model (so the adapter names the configured one and the price table prices it).
const FAKE_CODEX: &str = r#"#!/bin/sh
cat > /dev/null
printf '%s\n' '{"type":"thread.started","thread_id":"t-1"}' '{"type":"turn.started"}'
printf '%s\n' '{"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"STATUS: complete\nRESULT: approved\nLooks right."}}'
printf '%s\n' '{"type":"turn.completed","usage":{"input_tokens":2000,"cached_input_tokens":1000,"output_tokens":100}}'
"#;

/// The configured price of gpt-5 in these tests and what one fake Codex run costs at it:
/// 1000 uncached input at $10/M + 1000 cached at $1/M + 100 output at $100/M.
const CODEX_RUN_USD: f64 = 0.01 + 0.001 + 0.01;

fn write_exec(path: &std::path::Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A coordinator whose implementer is Claude Code and whose reviewers are Codex, through the
/// built-in adapter, with gpt-5 priced by the configuration.
fn adapter_coord(budget: Option<Value>) -> (Coord, Value) {
    let c = Coord::new(60);
    let start = chrono::DateTime::parse_from_rfc3339(agent_coord_tests::env::START).unwrap();
    let reset = start.timestamp() + RESET_AFTER;
    write_exec(&c.dir.join("claude"), &fake_claude(&c, reset));
    write_exec(&c.dir.join("codex"), FAKE_CODEX);
    let mut config = c.config_value(60);
    let lanes = &mut config["sessions"]["w1"]["lanes"];
    lanes["grok:implementer"] = json!({"adapter": "claude", "model": "claude-sonnet-4-5"});
    for slot in [
        "grok:reviewer",
        "grok:pr-reviewer-quality",
        "grok:pr-reviewer-logic",
        "codex:pr-reviewer-quality",
        "codex:pr-reviewer-logic",
    ] {
        lanes[slot] = json!({"adapter": "codex", "model": "gpt-5"});
    }
    config["prices"] =
        json!({"gpt-5": {"input": 10, "output": 100, "cache_read": 1, "cache_write": 0}});
    if let Some(budget) = budget {
        config["workers"]["w1"]["budget"] = budget;
    }
    c.write_config(&config);
    (c, config)
}

fn tick(c: &Coord, extra: &[&str]) -> CommandOutput {
    let mut args = vec!["--wait"];
    args.extend_from_slice(extra);
    let out = c
        .command(&args)
        .env("AGENT_COORD_CLAUDE_BIN", c.dir.join("claude"))
        .env("AGENT_COORD_CODEX_BIN", c.dir.join("codex"))
        .output()
        .unwrap();
    let out = CommandOutput::new(out, c.env.root());
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    out
}

fn runs(task: &Value) -> Vec<Value> {
    task["lane_runs"].as_array().cloned().unwrap_or_default()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

#[test]
fn adapter_lanes_record_every_run_with_usage_cost_and_a_redacted_transcript() {
    let (c, _) = adapter_coord(None);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    tick(&c, &[]);
    let task = c.task(issue);
    assert_eq!(task["phase"], "ci", "{task:#}");
    let runs = runs(&task);
    let slots: Vec<&str> = runs.iter().filter_map(|r| r["slot"].as_str()).collect();
    assert_eq!(
        slots[..2],
        ["grok:implementer", "grok:reviewer"],
        "{task:#}"
    );
    assert_eq!(
        runs.len(),
        6,
        "implementer, inner review, four gates: {task:#}"
    );
    // The implementer: Claude's own figures and cost.
    let implementer = &runs[0];
    assert_eq!(implementer["vendor"], "claude");
    assert_eq!(implementer["model"], "claude-sonnet-4-5");
    assert_eq!(implementer["session_id"], "s-7");
    assert_eq!(implementer["verdict"], "done");
    assert_eq!(implementer["exit_code"], 0);
    assert!(
        implementer["duration_ms"].as_u64().is_some(),
        "{implementer:#}"
    );
    assert_eq!(implementer["input_tokens"], 1000);
    assert_eq!(implementer["cache_read_tokens"], 5000);
    assert_eq!(implementer["output_tokens"], 200);
    assert_eq!(implementer["cost_source"], "vendor");
    assert!(close(implementer["cost_usd"].as_f64().unwrap(), 0.12));
    // Each reviewer: Codex reports no cost, so the configured price table prices it.
    for review in &runs[1..] {
        assert_eq!(review["vendor"], "codex", "{review:#}");
        assert_eq!(review["verdict"], "approved", "{review:#}");
        assert_eq!(review["cost_source"], "computed", "{review:#}");
        assert!(
            close(review["cost_usd"].as_f64().unwrap(), CODEX_RUN_USD),
            "{review:#}"
        );
    }
    // The transcript stays on this machine, under the workspace root, redacted; the
    // checkpoint holds only where it is, its size and digest.
    let pointer = &implementer["transcript"];
    let rel = pointer["path"].as_str().unwrap();
    assert!(rel.starts_with(".coordinator-control/"), "{pointer:#}");
    let file = c.dir.join("ws").join(rel);
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(pointer["bytes"], bytes.len() as u64);
    let digest: String = sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(pointer["sha256"], format!("sha256:{digest}"));
    assert!(!pointer["machine"].as_str().unwrap_or_default().is_empty());
    let text = String::from_utf8(bytes).unwrap();
    assert!(text.contains("still working"), "{text}");
    assert!(
        !text.contains(PLANTED),
        "the planted token was kept: {text}"
    );
    let state = task.to_string();
    assert!(
        !state.contains("still working"),
        "the ledger holds no transcript text"
    );
    assert!(!state.contains(PLANTED));

    // The totals, per task, worker, repository, batch and day.
    let out = tick(&c, &["--json"]);
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    let docs = doc.as_array().cloned().unwrap_or_else(|| vec![doc.clone()]);
    let costs = &docs[0]["costs"];
    let total = 0.12 + 5.0 * CODEX_RUN_USD;
    assert_eq!(costs["total"]["runs"], 6, "{doc:#}");
    assert!(close(costs["total"]["cost_usd"].as_f64().unwrap(), total));
    assert!(close(
        costs["workers"]["w1"]["cost_usd"].as_f64().unwrap(),
        total
    ));
    assert_eq!(costs["repositories"]["acme/widget"]["runs"], 6);
    assert_eq!(costs["batches"]["coordinator-w1"]["runs"], 6);
    let task_id = task["task_id"].as_str().unwrap();
    assert_eq!(costs["tasks"][task_id]["output_tokens"], 200 + 5 * 100);
    let day = &implementer["ended_at"].as_str().unwrap()[..10];
    assert_eq!(costs["days"][day]["runs"], 6);
    let text_out = tick(&c, &[]);
    assert!(
        text_out.stdout.contains("worker w1: lane spend: 6 runs"),
        "{}",
        text_out.stdout
    );

    let status = c.env.run(["status", "--json"]);
    let status: Value = serde_json::from_str(&status.stdout).unwrap();
    assert_eq!(status["costs"]["tasks"][task_id]["runs"], 6, "{status:#}");
    let batch = c
        .env
        .run(["status", "--json", "--batch-id", "coordinator-w1"]);
    let batch: Value = serde_json::from_str(&batch.stdout).unwrap();
    assert_eq!(batch["costs"]["total"]["runs"], 6);
    let other = c
        .env
        .run(["status", "--json", "--batch-id", "someone-else"]);
    let other: Value = serde_json::from_str(&other.stdout).unwrap();
    assert!(other.get("costs").is_none(), "{other:#}");
}

#[test]
fn a_usage_limit_pauses_the_vendor_without_a_blocker_and_the_same_lane_runs_after_the_reset() {
    let (c, _) = adapter_coord(None);
    std::fs::write(c.dir.join("claude.modes"), "limit\ndone\n").unwrap();
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let out = tick(&c, &[]);
    assert!(
        out.stdout
            .contains("claude usage limit reached: paused until"),
        "{}",
        out.stdout
    );
    let task = c.task(issue);
    assert_eq!(task["state"], "active", "a pause is no blocker: {task:#}");
    assert_eq!(task["phase"], "implement");
    assert_eq!(task["rounds"], 0, "the paused run is no round");
    assert!(
        task.get("pending").is_none(),
        "nothing is uncertain: {task:#}"
    );
    let start = chrono::DateTime::parse_from_rfc3339(agent_coord_tests::env::START).unwrap();
    let reset = (start + chrono::Duration::seconds(RESET_AFTER))
        .to_utc()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    assert_eq!(task["paused"], json!({"vendor": "claude", "until": reset}));
    assert_eq!(runs(&task)[0]["verdict"], "paused");
    let comments = c.comments(issue);
    assert_eq!(comments.len(), 1, "only the acceptance: {comments:?}");
    let pauses =
        std::fs::read_to_string(c.dir.join("ws/.coordinator-control/pauses.json")).unwrap();
    assert!(pauses.contains("claude"), "{pauses}");

    // Before the reset: no Claude lane starts, and the tick says why.
    c.env.at(RESET_AFTER / 2);
    let out = tick(&c, &["--json"]);
    assert!(
        out.stdout.contains(&format!(
            "waits for the claude usage limit to reset at {reset}"
        )),
        "{}",
        out.stdout
    );
    assert_eq!(c.recorded("claude.log").lines().count(), 1);
    assert_eq!(c.comments(issue).len(), 1);

    // After it: the same lane runs again, and the task goes on.
    c.env.at(RESET_AFTER + 60);
    tick(&c, &[]);
    assert_eq!(c.recorded("claude.log"), "limit\ndone\n");
    let task = c.task(issue);
    assert_eq!(task["phase"], "ci", "{task:#}");
    assert_eq!(task["rounds"], 1);
    assert!(task.get("paused").is_none(), "{task:#}");
    let verdicts: Vec<String> = runs(&task)
        .iter()
        .take(2)
        .filter_map(|r| r["verdict"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(verdicts, ["paused", "done"]);
    assert_eq!(c.comments(issue).len(), 1, "still no blocker");
}

#[test]
fn a_reached_budget_asks_a_question_and_an_authorized_reply_continues() {
    let (c, _) = adapter_coord(Some(json!({"max_cost_usd": 0.10})));
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    tick(&c, &[]);
    let task = c.task(issue);
    assert_eq!(task["state"], "waiting", "{task:#}");
    assert_eq!(task["resume_phase"], "inner_review");
    assert_eq!(
        runs(&task).len(),
        1,
        "the implementer ran, then the budget held"
    );
    let questions: Vec<String> = c
        .comments(issue)
        .into_iter()
        .map(|(_, body)| body)
        .filter(|b| b.contains("budget of"))
        .collect();
    assert_eq!(questions.len(), 1, "{questions:?}");
    assert!(
        questions[0].contains(
            "budget of $0.10 (spent $0.12) reached after 1 round (1 lane run); reply to continue"
        ),
        "{}",
        questions[0]
    );
    // Waiting on a human, the budget never fails the task nor starts a lane.
    tick(&c, &[]);
    assert_eq!(runs(&c.task(issue)).len(), 1);

    c.reply(issue, "Go on, the budget is fine.");
    tick(&c, &[]);
    let task = c.task(issue);
    assert_eq!(task["state"], "active", "{task:#}");
    assert_eq!(
        task["phase"], "ci",
        "the budget counts anew after the reply: {task:#}"
    );
    assert_eq!(runs(&task).len(), 6);
    let questions = c
        .comments(issue)
        .iter()
        .filter(|(_, b)| b.contains("budget of"))
        .count();
    assert_eq!(
        questions, 1,
        "no second budget question before the next $0.10"
    );
}
