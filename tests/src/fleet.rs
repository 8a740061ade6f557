//! A generated fleet in the predecessor's state-root layout, for imports in tests and
//! benchmarks. Scale 1 is about 100 batches, 400 claims, 400 heartbeats and 850 events.

use std::path::Path;

use serde_json::json;
use serde_json::Value;

/// How many records of each family a generated fleet has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Batch manifests.
    pub batches: usize,
    /// Claims.
    pub claims: usize,
    /// Heartbeats.
    pub heartbeats: usize,
    /// Events.
    pub events: usize,
}

impl Counts {
    /// Returns the total number of records.
    pub fn total(&self) -> usize {
        self.batches + self.claims + self.heartbeats + self.events
    }
}

fn put(root: &Path, path: &str, value: &Value) {
    let full = root.join(path);
    std::fs::create_dir_all(full.parent().expect("record has a folder")).expect("mkdir");
    let mut bytes = serde_json::to_vec_pretty(value).expect("json");
    bytes.push(b'\n');
    std::fs::write(full, bytes).expect("write record");
}

fn ts(base: i64, offset_secs: i64) -> String {
    let t = chrono::DateTime::from_timestamp(base + offset_secs, 0).expect("timestamp");
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// Writes a fleet of `scale` × the base counts under `root`, with times around `now_unix`.
pub fn generate(root: &Path, scale: usize, now_unix: i64) -> Counts {
    let batches = 100 * scale;
    let mut counts = Counts {
        batches,
        claims: 0,
        heartbeats: 0,
        events: 0,
    };
    for b in 0..batches {
        let batch_id = format!("batch-{b:05}");
        let repo = format!("acme/repo{}", b % 10);
        let lanes: Vec<Value> = (0..4)
            .map(|l| {
                let n = b * 4 + l;
                let deps = if l == 3 {
                    json!([format!("{batch_id}:lane-0")])
                } else {
                    json!([])
                };
                json!({"name": format!("lane-{l}"), "owner": format!("worker-{n:06}"),
                       "targets": [format!("{}", 1000 + n)], "depends_on": deps, "status": "queued",
                       "thread_handle": format!("thread-{n}"), "host": "codex", "operator": "ops"})
            })
            .collect();
        put(
            root,
            &format!("batches/{batch_id}.json"),
            &json!({
                "schema_version": 1, "batch_id": batch_id, "repo": repo, "objective": "Process selected ready pull requests.",
                "lanes": lanes, "registered_at": ts(now_unix, -86_400), "updated_at": ts(now_unix, -86_400),
                "launch_prompt": format!("Use $pr-batch to complete this batch.\n\nRepository: {repo}\nBatch id: {batch_id}\n"),
                "custom_field": {"kept": true}
            }),
        );
        for l in 0..4 {
            let n = b * 4 + l;
            let agent = format!("worker-{n:06}");
            let target = format!("{}", 1000 + n);
            let age = (n % 90) as i64 * 60;
            put(
                root,
                &format!("claims/{repo}/{target}.json"),
                &json!({
                    "schema_version": 1, "repo": repo, "target": target, "agent_id": agent, "batch_id": batch_id,
                    "branch": format!("codex/{target}"), "status": if n % 5 == 0 { "released" } else { "active" },
                    "claimed_at": ts(now_unix, -7200), "updated_at": ts(now_unix, -age), "expires_at": ts(now_unix, 14_400 - age),
                    "thread_handle": format!("thread-{n}"), "host": "codex", "machine_id": format!("box-{}", n % 8)
                }),
            );
            put(
                root,
                &format!("heartbeats/{agent}.json"),
                &json!({
                    "schema_version": 1, "agent_id": agent, "repo": repo, "target": target, "batch_id": batch_id,
                    "status": "in_progress", "updated_at": ts(now_unix, -age), "expires_at": ts(now_unix, 900 - age),
                    "phase": "implementing", "machine_id": format!("box-{}", n % 8)
                }),
            );
            counts.claims += 1;
            counts.heartbeats += 1;
        }
        // 8 or 9 events per batch: 850 per 100 batches.
        let events = if b % 2 == 0 { 8 } else { 9 };
        for e in 0..events {
            let lane = e % 4;
            let n = b * 4 + lane;
            let at = now_unix - 3600 + (e as i64) * 60;
            let event_id = format!(
                "{}-{:08x}",
                chrono::DateTime::from_timestamp(at, 0)
                    .expect("ts")
                    .format("%Y%m%dT%H%M%S.000000Z"),
                b * 16 + e
            );
            let kind = if e < 4 { "claim.acquired" } else { "phase" };
            put(
                root,
                &format!("events/{batch_id}/{event_id}.json"),
                &json!({
                    "schema_version": 1, "event_id": event_id, "batch_id": batch_id, "type": kind,
                    "lane": format!("lane-{lane}"), "agent_id": format!("worker-{n:06}"), "repo": repo,
                    "target": format!("{}", 1000 + n), "phase": "implementing", "message": "working", "at": ts(at, 0)
                }),
            );
            counts.events += 1;
        }
    }
    counts
}
