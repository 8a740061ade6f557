//! The Lanes page's timeline derived in process (`shared::dashboard::derive::lane_timeline`):
//! `tasks` coordinator task checkpoints of `runs` lane runs each, spread over six machines
//! and the last day, a third of them with two lanes running now; the 6-hour and the 7-day
//! window timed (median of 21), with how many bars each drew.

use std::sync::Arc;
use std::time::Instant;

use agent_coord_shared::dashboard::derive::lane_timeline::timeline;
use agent_coord_shared::dashboard::derive::lane_timeline::Window;
use agent_coord_shared::dashboard::inputs::tasks::parse_task;
use agent_coord_shared::dashboard::inputs::tasks::TaskIn;
use serde_json::json;

use crate::cli::median;
use crate::cli::ms;
use crate::cli::NOW_UNIX;

/// Times the timeline of `tasks` tasks with `runs` lane runs each.
pub fn bench_lane_timeline(tasks: usize, runs: usize) {
    let now =
        agent_coord_shared::time::from_unix_millis(NOW_UNIX * 1000).expect("the bench's clock");
    let at =
        |secs_ago: i64| agent_coord_shared::time::format(now - chrono::Duration::seconds(secs_ago));
    let checkpoints: Vec<Arc<TaskIn>> = (0..tasks)
        .map(|i| {
            let machine = format!("box-{}", i % 6);
            let lane_runs: Vec<_> = (0..runs)
                .map(|r| {
                    // Each task's runs, oldest first, over the last day, ten minutes each.
                    let start = 86_400 - (r as i64 * 86_400 / runs.max(1) as i64) - (i as i64 % 600);
                    let vendor = ["claude", "codex", "grok"][r % 3];
                    json!({"slot": "grok:implementer", "phase": "implement", "round": 1,
                        "vendor": vendor, "started_at": at(start),
                        "ended_at": at(start - 600), "duration_ms": 600_000, "verdict": "done",
                        "exit_code": 0, "cost_source": "unknown",
                        "transcript": {"machine": machine, "path": "t.jsonl", "bytes": 1, "sha256": "sha256:00"}})
                })
                .collect();
            let mut task = json!({
                "schema_version": 1, "task_id": format!("w1-acme-app-{i}"), "worker": "w1",
                "machine": machine, "repo": "acme/app", "issue": i, "title": "T", "body": "",
                "state": "active", "phase": "pr_gates_grok",
                "assignment": {"event_id": 1, "actor": "octo", "created_at": at(90_000)},
                "pinned": {}, "branch": "b", "base": "main", "rounds": 1,
                "created_at": at(90_000), "updated_at": at(60), "lane_runs": lane_runs
            });
            if i % 3 == 0 {
                task["pending"] = json!({"slot": "grok:pr-reviewer-quality+grok:pr-reviewer-logic",
                    "phase": "pr_gates_grok", "started_at": at(300),
                    "launch": {"machine": machine, "nonce": "n", "stems": ["a", "b"]}});
            }
            let path = format!("coordinator/tasks/acme/app/{i}.json");
            Arc::new(parse_task(&path, &serde_json::to_vec(&task).expect("json")).expect("a task"))
        })
        .collect();
    println!("lane timeline, in process: {tasks} tasks × {runs} lane runs");
    for hours in [6, 168] {
        let window = Window::ending(now, hours).expect("a window");
        let mut took = Vec::new();
        let mut bars = 0;
        for _ in 0..21 {
            let start = Instant::now();
            let t = timeline(&checkpoints, &window);
            took.push(start.elapsed());
            bars = t.bars.len();
        }
        println!(
            "  {hours:>3} h window: {:>9} median of 21 ({bars} bars)",
            ms(median(took))
        );
    }
}
