//! The lane timeline over a real server (`GET /api/lanes/timeline`): task checkpoints with
//! known lane runs and running lanes on three machines — one of them the machine a task was
//! taken over from, one run with its clocks apart, one lane of unknown outcome — read back as
//! bars packed onto rows per machine, and utilisation per machine and per vendor.

use agent_coord_tests::env::TestEnv;
use agent_coord_tests::server::Server;
use serde_json::json;
use serde_json::Value;

/// A lane run of `vendor` on `machine` (its transcript's) from `from` to `to` (`HH:MM` on the
/// test's day, whose clock is 12:00).
fn run(slot: &str, vendor: &str, from: &str, to: &str, verdict: &str, machine: &str) -> Value {
    json!({"slot": slot, "phase": "implement", "round": 1, "vendor": vendor,
        "model": format!("{vendor}-model"),
        "started_at": format!("2026-06-13T{from}:00Z"), "ended_at": format!("2026-06-13T{to}:00Z"),
        "duration_ms": 120_000, "verdict": verdict, "exit_code": 0, "cost_source": "unknown",
        "transcript": {"machine": machine, "path": "t.jsonl", "bytes": 1, "sha256": "sha256:00"}})
}

fn task(issue: u64, machine: &str, state: &str, phase: &str) -> Value {
    json!({
        "schema_version": 1, "task_id": format!("w1-acme-app-{issue}"), "worker": "w1",
        "machine": machine, "repo": "acme/app", "issue": issue, "title": format!("Issue {issue}"),
        "body": "", "state": state, "phase": phase,
        "assignment": {"event_id": 1, "actor": "octo", "created_at": "2026-06-13T06:00:00Z"},
        "pinned": {}, "branch": format!("agent/{issue}"), "base": "main", "rounds": 1,
        "created_at": "2026-06-13T06:00:00Z", "updated_at": "2026-06-13T11:30:00Z"
    })
}

fn pending(slots: &str, since: &str, machine: &str, vendors: Value) -> Value {
    json!({"slot": slots, "phase": "pr_gates_grok", "started_at": format!("2026-06-13T{since}:00Z"),
        "launch": {"machine": machine, "nonce": "n", "stems": ["a", "b"], "vendors": vendors}})
}

/// Three tasks (the clock is 12:00, the window 06:00–12:00):
/// - #7 on box-1: implementer 08:00–09:00 done (claude), inner review 09:00–09:15 approved
///   (codex), both Grok gates running since 11:00 (their start recorded the grok vendor);
/// - #8 on box-1: implementer 08:30–09:30 asked (claude) — two lanes at once on box-1;
/// - #9 on box-2, taken over from box-0: its first implementer ran on box-0 07:00–07:30
///   (incomplete, claude), a Codex logic gate 10:00–10:40 rejected, an inner review recorded
///   as ending before it started (11:00, 2 min measured; grok), and an implementer started at
///   11:30 whose outcome is unknown (the task is uncertain).
pub(crate) fn seed_lane_timeline(env: &TestEnv) {
    let mut seven = task(7, "box-1", "active", "pr_gates_grok");
    seven["lane_runs"] = json!([
        run(
            "grok:implementer",
            "claude",
            "08:00",
            "09:00",
            "done",
            "box-1"
        ),
        run(
            "grok:reviewer",
            "codex",
            "09:00",
            "09:15",
            "approved",
            "box-1"
        ),
    ]);
    seven["pending"] = pending(
        "grok:pr-reviewer-quality+grok:pr-reviewer-logic",
        "11:00",
        "box-1",
        json!(["grok", "grok"]),
    );
    let mut eight = task(8, "box-1", "waiting", "implement");
    eight["lane_runs"] = json!([run(
        "grok:implementer",
        "claude",
        "08:30",
        "09:30",
        "ask",
        "box-1"
    )]);
    let mut nine = task(9, "box-2", "uncertain", "implement");
    nine["previous_machines"] = json!(["box-0"]);
    nine["lane_runs"] = json!([
        run(
            "grok:implementer",
            "claude",
            "07:00",
            "07:30",
            "incomplete",
            "box-0"
        ),
        run(
            "codex:pr-reviewer-logic",
            "codex",
            "10:00",
            "10:40",
            "rejected",
            "box-2"
        ),
        run(
            "grok:reviewer",
            "grok",
            "11:00",
            "10:50",
            "approved",
            "box-2"
        ),
    ]);
    nine["pending"] = pending("grok:implementer", "11:30", "box-2", json!(["claude"]));
    let records: Vec<(String, String)> = [seven, eight, nine]
        .iter()
        .map(|t| {
            (
                format!("coordinator/tasks/acme/app/{}.json", t["issue"]),
                serde_json::to_string_pretty(t).unwrap(),
            )
        })
        .collect();
    let files: Vec<(&str, &str)> = records
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    env.put_state_files(&files);
}

fn get(server: &Server, path: &str) -> Value {
    let (code, body) = server.get(path);
    assert_eq!(code, 200, "{path}: {body}");
    serde_json::from_str(&body).unwrap()
}

#[test]
fn the_lane_timeline_packs_each_machines_lanes_and_adds_up_their_utilisation() {
    let env = TestEnv::new();
    seed_lane_timeline(&env);
    let server = Server::start(&env, &["--sync-every", "0"]);

    let (code, body, timing) = server.get_timed("/api/lanes/timeline");
    assert_eq!(code, 200, "{body}");
    let t: Value = serde_json::from_str(&body).unwrap();
    assert!(
        timing
            .as_deref()
            .is_some_and(|t| t.starts_with("timeline;dur=")),
        "{timing:?}"
    );
    assert_eq!(
        (&t["from"], &t["to"], &t["hours"], &t["bucketSecs"]),
        (
            &json!("2026-06-13T06:00:00Z"),
            &json!("2026-06-13T12:00:00Z"),
            &json!(6),
            &json!(300)
        )
    );
    let machines: Vec<_> = t["machines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["machine"].as_str().unwrap().to_owned(),
                m["firstRow"].as_u64().unwrap(),
                m["rows"].as_u64().unwrap(),
                m["lanes"].as_u64().unwrap(),
                m["running"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        machines,
        [
            ("box-0".to_owned(), 0, 1, 1, 0),
            ("box-1".to_owned(), 1, 2, 5, 2),
            ("box-2".to_owned(), 3, 1, 3, 0),
        ]
    );
    let bars: Vec<_> = t["bars"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            (
                b["row"].as_u64().unwrap(),
                b["issue"].as_u64().unwrap(),
                b["role"].as_str().unwrap().to_owned(),
                b["outcome"].as_str().unwrap().to_owned(),
                b["takenOver"] == json!(true),
                b["clockSkew"] == json!(true),
            )
        })
        .collect();
    let bar = |row, issue, role: &str, outcome: &str, taken, skew| {
        (row, issue, role.to_owned(), outcome.to_owned(), taken, skew)
    };
    assert_eq!(
        bars,
        [
            bar(0, 9, "implementer", "incomplete", true, false),
            bar(1, 7, "implementer", "done", false, false),
            bar(1, 7, "inner reviewer", "approved", false, false),
            bar(1, 7, "grok logic", "running", false, false),
            bar(2, 8, "implementer", "ask", false, false),
            bar(2, 7, "grok quality", "running", false, false),
            bar(3, 9, "codex logic", "rejected", false, false),
            bar(3, 9, "inner reviewer", "approved", false, true),
            bar(3, 9, "implementer", "unknown", false, false),
        ]
    );
    let skewed = &t["bars"][7];
    assert_eq!(skewed["durationSecs"], json!(120));
    assert_eq!(skewed["endedAt"], json!("2026-06-13T11:02:00Z"));
    let unknown = &t["bars"][8];
    assert_eq!(unknown["endedAt"], Value::Null);
    assert_eq!(unknown["spanSecs"], json!(1800));

    let util = |list: &str| -> Vec<(Value, i64, f64)> {
        t[list]
            .as_array()
            .unwrap()
            .iter()
            .map(|u| {
                let busy: i64 = u["busySecs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|b| b.as_i64().unwrap())
                    .sum();
                (u["key"].clone(), busy, u["peak"].as_f64().unwrap())
            })
            .collect()
    };
    // box-1: 60 + 60 + 15 minutes of runs and two gates for 60; box-2: 40 + 2 (the lane of
    // unknown outcome counts nowhere).
    assert_eq!(
        util("byMachine"),
        [
            (json!("box-0"), 30 * 60, 1.0),
            (json!("box-1"), 255 * 60, 2.0),
            (json!("box-2"), 42 * 60, 1.0),
        ]
    );
    assert_eq!(
        util("byVendor"),
        [
            (json!("claude"), 150 * 60, 2.0),
            (json!("codex"), 55 * 60, 1.0),
            // The review's two minutes and the two running gates: 2.4 lanes from 11:00 to 11:05.
            (json!("grok"), 122 * 60, 2.4),
        ]
    );
    assert_eq!(t["byMachine"][1]["mean"], json!(255.0 * 60.0 / 21_600.0));

    // The last hour: the gates, the skewed review and the lane of unknown outcome.
    let hour = get(&server, "/api/lanes/timeline?hours=1");
    assert_eq!(hour["bars"].as_array().map(Vec::len), Some(4));
    assert_eq!(hour["bucketSecs"], json!(50));
    // A day: everything, on the same rows.
    let day = get(&server, "/api/lanes/timeline?hours=24");
    assert_eq!(day["bars"].as_array().map(Vec::len), Some(9));

    let (code, body) = server.get("/api/lanes/timeline?hours=200");
    assert_eq!(code, 400);
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"],
        json!("hours must be a whole number from 1 to 168, not \"200\"")
    );
}
