//! How coordinator tasks show in the coordination state, so the dashboard reads them like
//! any other work: the worker's batch manifest (one lane per task, each lane's issue with its
//! repository, and a saved launch prompt listing them), each task's heartbeat agent and status,
//! and when an idle tick may leave the worker's heartbeat alone.

use serde::Serialize;
use serde_json::Value;

use super::task::Task;
use super::task::TaskState;
use crate::record::field as f;
use crate::record::Record;
use crate::serde_name::WireName;
use crate::time;

/// An idle tick rewrites the worker's heartbeat only once it is this old (the fleet's own
/// five-minute cadence). The heartbeat TTL is at least ten minutes, so it stays live; any
/// save beats anyway.
pub const BEAT_REFRESH_SECONDS: i64 = 300;

/// The agent id a task beats as: `<worker>.<task-id>` (the owner of its lane).
pub fn task_agent(worker: &str, task: &Task) -> String {
    format!("{worker}.{}", task.task_id)
}

/// The status word of a task's lane.
pub fn lane_status(task: &Task) -> &'static str {
    match task.state {
        TaskState::Active => "in_progress",
        TaskState::Waiting | TaskState::Uncertain => "blocked",
        TaskState::Failed => "failed",
        TaskState::Done => "done",
        TaskState::Cancelled => "abandoned",
    }
}

/// The status of a task's heartbeat: its phase while it advances, else its lane status.
pub fn heartbeat_status(task: &Task) -> &'static str {
    match task.state {
        TaskState::Active => task.phase.wire_name(),
        _ => lane_status(task),
    }
}

/// A task's lane in the worker's manifest (field order is the stored key order).
#[derive(Serialize)]
struct Lane<'a> {
    name: &'a str,
    owner: String,
    repo: &'a str,
    target: String,
    branch: &'a str,
    status: &'static str,
    phase: &'static str,
    title: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pr: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pr_url: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    blocker: Option<&'a str>,
}

/// A task's issue among the manifest's targets.
#[derive(Serialize)]
struct ManifestTarget<'a> {
    target: String,
    repo: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    title: &'a str,
}

/// The worker's batch manifest.
#[derive(Serialize)]
struct Manifest<'a> {
    batch_id: &'a str,
    title: String,
    targets: Vec<ManifestTarget<'a>>,
    lanes: Vec<Lane<'a>>,
}

impl<'a> Lane<'a> {
    fn of(task: &'a Task, worker: &str) -> Lane<'a> {
        Lane {
            name: &task.task_id,
            owner: task_agent(worker, task),
            repo: &task.repo,
            target: task.issue.to_string(),
            branch: &task.branch,
            status: lane_status(task),
            phase: task.phase.wire_name(),
            title: &task.title,
            pr: task.pr,
            pr_url: task.pr_url.as_deref(),
            blocker: task.blocker.as_deref(),
        }
    }
}

/// Returns the value of a document whose keys are all strings.
fn document(doc: &impl Serialize) -> Value {
    serde_json::to_value(doc).expect("a manifest serialises: its keys are all strings")
}

/// The manifest lane of a task.
pub fn lane(task: &Task, worker: &str) -> Value {
    document(&Lane::of(task, worker))
}

/// The worker's batch manifest: a lane per task and, per lane, its issue with its repository,
/// so the dashboard joins each lane to its issue (a batch names targets by number: two
/// repositories' equal numbers share one entry).
pub fn manifest(worker: &str, batch_id: &str, tasks: &[&Task]) -> Value {
    document(&Manifest {
        batch_id,
        title: format!("Issue coordinator: {worker}"),
        targets: tasks
            .iter()
            .map(|t| ManifestTarget {
                target: t.issue.to_string(),
                repo: &t.repo,
                kind: "issue",
                title: &t.title,
            })
            .collect(),
        lanes: tasks.iter().map(|t| Lane::of(t, worker)).collect(),
    })
}

/// The batch's saved prompt: no model prompt launches it, so it says what does and lists its
/// issues the way a launch prompt does, and the dashboard's prompt checks agree with the plan.
pub fn launch_prompt(worker: &str, tasks: &[&Task]) -> String {
    let mut text = format!(
        "agent-coord coordinate --worker {worker}: the issue coordinator takes issues assigned to \
         the worker's GitHub login to draft pull requests; each lane is one issue.\n\nItems:\n"
    );
    for t in tasks {
        text.push_str(&format!(
            "- https://github.com/{}/issues/{}\n",
            t.repo, t.issue
        ));
    }
    text
}

/// Reports whether `next` would only move `prior`'s timestamps (same fields, same TTL) and
/// `prior` was written less than [`BEAT_REFRESH_SECONDS`] before `next`.
pub fn still_fresh(prior: &Record, next: &Record) -> bool {
    let at = |r: &Record, f: f::Field| f.text(r).and_then(time::parse);
    let (Some(then), Some(now)) = (at(prior, f::UPDATED_AT), at(next, f::UPDATED_AT)) else {
        return false;
    };
    let ttl = |r: &Record, updated| at(r, f::EXPIRES_AT).map(|e| e - updated);
    let age = now - then;
    let untimed = |r: &Record| {
        let mut r = r.clone();
        r.remove(f::UPDATED_AT.name());
        r.remove(f::EXPIRES_AT.name());
        r
    };
    age >= chrono::Duration::zero()
        && age < chrono::Duration::seconds(BEAT_REFRESH_SECONDS)
        && ttl(prior, then).is_some()
        && ttl(prior, then) == ttl(next, now)
        && untimed(prior) == untimed(next)
}

#[cfg(test)]
mod tests {
    //! The worker's manifest and prompt, task statuses, and when an idle tick may leave the
    //! worker's heartbeat as it is.
    use serde_json::json;

    use super::*;
    use crate::coordinator::task::Admitted;
    use crate::coordinator::task::Assignment;
    use crate::coordinator::task::Phase;

    fn task(repo: &str, issue: u64) -> Task {
        Task::admitted(
            Admitted {
                task_id: format!("t{issue}"),
                worker: "w1".into(),
                repo: repo.into(),
                issue,
                title: format!("Issue {issue}"),
                body: String::new(),
                assignment: Assignment {
                    event_id: 1,
                    actor: "alice".into(),
                    created_at: "2026-01-01T00:00:00Z".into(),
                },
                pinned: Value::Null,
                branch: format!("agent-coord/t{issue}"),
                base: "main".into(),
            },
            "2026-01-01T00:00:00Z",
        )
    }

    #[test]
    fn the_saved_prompt_names_exactly_the_manifest_targets() {
        let (a, b) = (task("acme/api", 3), task("acme/web", 9));
        let tasks = [&a, &b];
        let manifest = manifest("w1", "coordinator-w1", &tasks);
        let draft = crate::manifest::parse_launch_prompt(&launch_prompt("w1", &tasks), None)
            .expect("the prompt parses");
        let from_prompt: Vec<(Option<String>, String, String)> = draft
            .targets
            .iter()
            .map(|t| (t.repo.clone(), t.kind.clone(), t.target.clone()))
            .collect();
        let from_plan: Vec<(Option<String>, String, String)> = manifest["targets"]
            .as_array()
            .expect("targets")
            .iter()
            .map(|t| {
                (
                    t["repo"].as_str().map(str::to_owned),
                    t["type"].as_str().unwrap_or_default().to_owned(),
                    t["target"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        assert_eq!(from_prompt, from_plan);
        assert_eq!(manifest["lanes"][1]["owner"], "w1.t9");
        assert_eq!(manifest["lanes"][1]["repo"], "acme/web");
    }

    #[test]
    fn a_waiting_task_is_blocked_and_an_active_one_reports_its_phase() {
        let mut t = task("acme/api", 3);
        t.phase = Phase::Implement;
        assert_eq!(heartbeat_status(&t), "implement");
        assert_eq!(lane_status(&t), "in_progress");
        t.wait_for_reply(Phase::Implement, "which file?", "a1", 7);
        assert_eq!(heartbeat_status(&t), "blocked");
        assert_eq!(lane(&t, "w1")["blocker"], "which file?");
        t.fail("no access");
        assert_eq!(heartbeat_status(&t), "failed");
    }

    /// A worker heartbeat written `at` seconds after noon with `ttl` seconds to live.
    fn beat(at: i64, ttl: i64, status: &str) -> Record {
        let noon = time::parse("2026-06-13T12:00:00Z").expect("a time");
        let t = |secs| time::format(noon + chrono::Duration::seconds(secs));
        let value = json!({
            "schema_version": 1,
            "agent_id": "w1",
            "batch_id": "coordinator-w1",
            "status": status,
            "updated_at": t(at),
            "expires_at": t(at + ttl),
        });
        value.as_object().expect("an object").clone()
    }

    #[test]
    fn a_beat_is_fresh_only_when_young_unchanged_and_on_the_same_ttl() {
        let prior = beat(0, 1200, "in_progress");
        for (at, ttl, status, fresh) in [
            (0, 1200, "in_progress", true),
            (299, 1200, "in_progress", true),
            // Five minutes old: refresh.
            (300, 1200, "in_progress", false),
            // The clock went back: refresh.
            (-1, 1200, "in_progress", false),
            // Another TTL (the configuration changed): refresh.
            (60, 1800, "in_progress", false),
            // Another field: refresh.
            (60, 1200, "blocked", false),
        ] {
            let next = beat(at, ttl, status);
            assert_eq!(still_fresh(&prior, &next), fresh, "{at} {ttl} {status}");
        }
        let mut untimed = prior.clone();
        untimed.remove("updated_at");
        assert!(!still_fresh(&untimed, &prior));
    }
}
