//! Test support: a pinned clock, a builder of coordination records, and a plain model row,
//! shared by this crate's dashboard tests and the web crate's tests (feature `fixtures`).
//!
//! Not part of the API: it is compiled for tests and behind the `fixtures` feature only.

use serde_json::json;
use serde_json::Value;

use crate::dashboard::inputs::records::Inputs;
use crate::dashboard::model::DashboardModel;
use crate::dashboard::model::Row;
use crate::dashboard::model::RowState;
use crate::dashboard::model::Scheduling;
use crate::time;
use crate::time::Instant;

/// The pinned clock every fixture is relative to: `2026-11-29T12:00:00Z`.
pub fn now() -> Instant {
    time::parse("2026-11-29T12:00:00Z").expect("a valid fixed timestamp")
}

/// `minutes` before [`now`], as a record timestamp.
pub fn ago(minutes: i64) -> String {
    time::format(now() - chrono::Duration::minutes(minutes))
}

/// `minutes` after [`now`], as a record timestamp.
pub fn ahead(minutes: i64) -> String {
    time::format(now() + chrono::Duration::minutes(minutes))
}

/// Coordination records by path, as the state branch holds them.
#[derive(Debug, Clone, Default)]
pub struct Records(pub Vec<(String, Vec<u8>)>);

impl Records {
    /// No records.
    pub fn new() -> Self {
        Records::default()
    }

    /// Adds a record at `path`.
    pub fn put(&mut self, path: &str, v: Value) -> &mut Self {
        let bytes = serde_json::to_vec(&v).expect("a JSON value serialises");
        self.0.push((path.to_owned(), bytes));
        self
    }

    /// An active claim, claimed two hours ago and renewed an hour ago, from `box-1`.
    pub fn claim(
        &mut self,
        repo: &str,
        target: &str,
        agent: &str,
        batch: Option<&str>,
    ) -> &mut Self {
        let mut c = json!({"repo": repo, "target": target, "agent_id": agent, "status": "active",
                           "claimed_at": ago(120), "updated_at": ago(60), "machine_id": "box-1"});
        if let Some(b) = batch {
            c["batch_id"] = json!(b);
        }
        self.put(&format!("claims/{repo}/{target}.json"), c)
    }

    /// A heartbeat from `box-1` updated `age` minutes ago with a 10-minute ttl.
    pub fn beat(
        &mut self,
        agent: &str,
        repo: &str,
        target: &str,
        batch: Option<&str>,
        status: &str,
        age: i64,
    ) -> &mut Self {
        let mut h = json!({"agent_id": agent, "repo": repo, "target": target, "status": status,
                           "updated_at": ago(age), "expires_at": ahead(10 - age), "machine_id": "box-1"});
        if let Some(b) = batch {
            h["batch_id"] = json!(b);
        }
        self.put(&format!("heartbeats/{agent}.json"), h)
    }

    /// An event of `batch`, `age` minutes ago, with extra `fields`.
    pub fn event(
        &mut self,
        batch: &str,
        id: &str,
        kind: &str,
        fields: Value,
        age: i64,
    ) -> &mut Self {
        let mut e = json!({"event_id": id, "batch_id": batch, "type": kind, "at": ago(age)});
        if let (Value::Object(e), Value::Object(f)) = (&mut e, fields) {
            e.extend(f);
        }
        self.put(&format!("events/{batch}/{id}.json"), e)
    }

    /// A coordinator task checkpoint (see [`task`]) at its path.
    pub fn task(&mut self, v: Value) -> &mut Self {
        let path = format!(
            "coordinator/tasks/{}/{}.json",
            v["repo"].as_str().unwrap_or_default(),
            v["issue"]
        );
        self.put(&path, v)
    }

    /// The records, read as the dashboard reads them.
    pub fn inputs(&self) -> Inputs {
        Inputs::from_files(self.0.iter().map(|(p, b)| (p.as_str(), b.as_slice())))
    }

    /// The records and the model built from them at [`now`].
    pub fn model(&self) -> (Inputs, DashboardModel) {
        let inputs = self.inputs();
        let model = crate::dashboard::derive::build(&inputs, now(), "v1");
        (inputs, model)
    }
}

/// A coordinator task checkpoint of `repo#issue` in `state` and `phase`, updated `age`
/// minutes ago, with every required field and nothing else (no head, no evidence). Tests set
/// the rest with `v["head"] = json!(..)`.
pub fn task(repo: &str, issue: u64, state: &str, phase: &str, age: i64) -> Value {
    json!({
        "schema_version": 1, "task_id": format!("{}-{issue}", repo.replace('/', "-")),
        "worker": "w-coord", "repo": repo, "issue": issue, "title": format!("Issue {issue}"),
        "body": "", "state": state, "phase": phase,
        "assignment": {"event_id": 1, "actor": "octo", "created_at": ago(600)},
        "pinned": {}, "branch": format!("agent/{issue}"), "base": "main", "rounds": 1,
        "created_at": ago(600), "updated_at": ago(age)
    })
}

/// A plain row for `repo#target`: a running pull request in process, nothing else known.
/// Tests set what they need with struct update syntax (`Row { state, ..row(..) }`).
pub fn row(repo: &str, target: &str) -> Row {
    Row {
        id: format!("target:{repo}#{target}"),
        repo: repo.into(),
        target: target.into(),
        kind: "pull_request".into(),
        title: None,
        state: RowState::Running,
        scheduling: Scheduling::InProcess,
        liveness: None,
        agent: None,
        machine: None,
        host: None,
        thread: None,
        operator: None,
        branch: None,
        pr_url: None,
        batch_id: None,
        lane: None,
        status: None,
        blocked_on: Vec::new(),
        attention: None,
        last_activity: None,
        message: None,
        qa: None,
        warnings: Vec::new(),
        github: None,
    }
}
