//! How tasks become records: the manifest lane and launch prompt, the task's heartbeat
//! agent and status, the idle-beat freshness rule, and the checkpoint's JSON form.

use super::*;

/// `(repo, issue)` of each manifest lane.
pub(super) fn lanes_of(lanes: &[Value]) -> Vec<(String, String)> {
    lanes
        .iter()
        .map(|l| {
            (
                l["repo"].as_str().unwrap_or_default().to_owned(),
                l["target"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// The batch's saved prompt: what drives it, and its issues as launch-prompt items.
pub(super) fn launch_prompt(worker: &str, issues: &[(String, String)]) -> String {
    let mut text = format!(
        "agent-coord coordinate --worker {worker}: the issue coordinator takes issues assigned to \
         the worker's GitHub login to draft pull requests; each lane is one issue.\n\nItems:\n"
    );
    for (repo, issue) in issues {
        text.push_str(&format!("- https://github.com/{repo}/issues/{issue}\n"));
    }
    text
}

/// The agent id a task beats as: `<worker>.<task-id>`.
pub(super) fn task_agent(worker: &str, task: &Task) -> Result<AgentId, CommandError> {
    AgentId::from_str(&format!("{worker}.{}", task.task_id)).map_err(|e| parse_err("task agent", e))
}

/// The status word of a task's lane and heartbeat.
pub(super) fn lane_status(task: &Task) -> &'static str {
    use agent_coord_shared::coordinator::task::TaskState;
    match task.state {
        TaskState::Active => "in_progress",
        TaskState::Waiting | TaskState::Uncertain => "blocked",
        TaskState::Failed => "failed",
        TaskState::Done => "done",
    }
}

/// Reports whether `next` would only move `prior`'s timestamps (same fields, same TTL) and
/// `prior` was written less than [`BEAT_REFRESH_SECONDS`] before `next`.
pub(super) fn still_fresh(prior: &Record, next: &Record) -> bool {
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

/// The manifest lane of a task.
pub(super) fn lane(task: &Task, worker: &str) -> Value {
    let status = lane_status(task);
    let owner = format!("{worker}.{}", task.task_id);
    let mut lane = json!({
        "name": task.task_id,
        "owner": owner,
        "repo": task.repo,
        "target": task.issue.to_string(),
        "branch": task.branch,
        "status": status,
        "phase": task.phase.as_str(),
        "title": task.title,
    });
    if let Some(pr) = task.pr {
        lane["pr"] = json!(pr);
    }
    if let Some(url) = &task.pr_url {
        lane["pr_url"] = json!(url);
    }
    if let Some(b) = &task.blocker {
        lane["blocker"] = json!(b);
    }
    lane
}

pub(super) fn to_record(task: &Task) -> Record {
    match serde_json::to_value(task) {
        Ok(Value::Object(m)) => m,
        _ => Record::new(),
    }
}

pub(super) fn read_task(snap: &TipSnapshot<'_>, path: &str) -> Result<Option<Task>, CommandError> {
    match snap.read(path)? {
        Some(record) => serde_json::from_value(Value::Object(record))
            .map(Some)
            .map_err(|e| {
                CommandError::operational(format!("task record {path} is unreadable: {e}"))
            }),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    //! When an idle tick may leave the worker's heartbeat as it is.
    use serde_json::json;

    use super::*;

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
