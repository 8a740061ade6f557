//! The CI observer's rules (spec step 8): the exact head's check runs and commit statuses
//! (absent = `[]`) plus its paginated workflow-run inventory, read from GitHub's JSON pages
//! and classified once, for the CI phase and every Ready-side recheck alike.
//!
//! Only success is green. Pending or absent evidence waits (no model, no reply gate);
//! `action_required` is an external authorization blocker; failures name the runs and
//! attempts whose failed jobs' logs go to the implementer; a malformed or truncated answer is
//! a protocol fault, never "no CI".

use serde_json::Value;

/// A check run on the head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckRun {
    /// Its name.
    pub name: String,
    /// `queued`, `in_progress`, `completed`, ….
    pub status: String,
    /// Set once completed.
    pub conclusion: Option<String>,
}

/// A commit status (the newest per context counts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommitStatus {
    /// Its context.
    pub context: String,
    /// `success`, `failure`, `error` or `pending`.
    pub state: String,
}

/// A workflow run for the head (path + event + attempt identify it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkflowRun {
    /// The run id.
    pub id: u64,
    /// The workflow's name.
    pub name: String,
    /// The workflow file.
    pub path: String,
    /// What triggered it.
    pub event: String,
    /// `queued`, `in_progress`, `completed`, ….
    pub status: String,
    /// Set once completed.
    pub conclusion: Option<String>,
    /// The attempt this entry describes.
    pub attempt: u64,
}

impl WorkflowRun {
    /// `path (event) attempt N`, for messages.
    pub fn label(&self) -> String {
        format!("{} ({}) attempt {}", self.path, self.event, self.attempt)
    }
}

/// Everything observed about one head.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observation {
    /// Check runs.
    pub check_runs: Vec<CheckRun>,
    /// The newest status per context.
    pub statuses: Vec<CommitStatus>,
    /// The workflow-run inventory.
    pub runs: Vec<WorkflowRun>,
}

/// A malformed answer: a protocol fault (recoverable blocker, `resume_phase = ci`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("CI observation protocol fault in {what}: {detail}")]
pub struct CiProtocolError {
    /// Which list.
    pub what: &'static str,
    /// What was wrong.
    pub detail: String,
}

fn fault(what: &'static str, detail: impl Into<String>) -> CiProtocolError {
    CiProtocolError {
        what,
        detail: detail.into(),
    }
}

/// Reads the items of object-wrapped pages (`{total_count, <key>: [...]}`), checking that
/// every page has the list and that the items add up to `total_count` (else the inventory
/// is truncated).
fn wrapped<'a>(
    pages: &'a [Value],
    key: &'static str,
    what: &'static str,
) -> Result<Vec<&'a Value>, CiProtocolError> {
    let mut items = Vec::new();
    let mut total = None;
    for page in pages {
        let list = page
            .get(key)
            .and_then(Value::as_array)
            .ok_or_else(|| fault(what, format!("a page has no {key} list")))?;
        let count = page
            .get("total_count")
            .and_then(Value::as_u64)
            .ok_or_else(|| fault(what, "a page has no total_count"))?;
        if total.is_some_and(|t| t != count) {
            return Err(fault(what, "total_count changed between pages"));
        }
        total = Some(count);
        items.extend(list.iter());
    }
    let total = total.unwrap_or(0);
    if items.len() as u64 != total {
        return Err(fault(
            what,
            format!(
                "{} of {total} items arrived; the inventory is truncated",
                items.len()
            ),
        ));
    }
    Ok(items)
}

fn text(v: &Value, key: &str, what: &'static str) -> Result<String, CiProtocolError> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| fault(what, format!("an item has no {key}")))
}

fn conclusion(v: &Value, what: &'static str) -> Result<Option<String>, CiProtocolError> {
    match v.get("conclusion") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(fault(what, "conclusion is not a string")),
    }
}

fn same_head(v: &Value, head: &str, what: &'static str) -> Result<(), CiProtocolError> {
    let sha = text(v, "head_sha", what)?;
    if sha != head {
        return Err(fault(what, format!("an item is for {sha}, not {head}")));
    }
    Ok(())
}

/// Parses the pages of `GET …/commits/{head}/check-runs`.
pub fn check_runs(pages: &[Value], head: &str) -> Result<Vec<CheckRun>, CiProtocolError> {
    const WHAT: &str = "check runs";
    wrapped(pages, "check_runs", WHAT)?
        .into_iter()
        .map(|v| {
            same_head(v, head, WHAT)?;
            Ok(CheckRun {
                name: text(v, "name", WHAT)?,
                status: text(v, "status", WHAT)?,
                conclusion: conclusion(v, WHAT)?,
            })
        })
        .collect()
}

/// Parses `GET …/commits/{head}/statuses` (newest first) into the newest status per context.
pub fn statuses(items: &[Value]) -> Result<Vec<CommitStatus>, CiProtocolError> {
    const WHAT: &str = "commit statuses";
    let mut out: Vec<CommitStatus> = Vec::new();
    for v in items {
        let context = text(v, "context", WHAT)?;
        let state = text(v, "state", WHAT)?;
        if !out.iter().any(|s| s.context == context) {
            out.push(CommitStatus { context, state });
        }
    }
    Ok(out)
}

/// Parses the pages of `GET …/actions/runs?head_sha={head}`.
pub fn workflow_runs(pages: &[Value], head: &str) -> Result<Vec<WorkflowRun>, CiProtocolError> {
    const WHAT: &str = "workflow runs";
    wrapped(pages, "workflow_runs", WHAT)?
        .into_iter()
        .map(|v| {
            same_head(v, head, WHAT)?;
            Ok(WorkflowRun {
                id: v
                    .get("id")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| fault(WHAT, "a run has no id"))?,
                name: text(v, "name", WHAT).unwrap_or_default(),
                path: text(v, "path", WHAT)?,
                event: text(v, "event", WHAT)?,
                status: text(v, "status", WHAT)?,
                conclusion: conclusion(v, WHAT)?,
                attempt: v
                    .get("run_attempt")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| fault(WHAT, "a run has no run_attempt"))?,
            })
        })
        .collect()
}

/// A failed job of a failed run's attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FailedJob {
    /// The job id (its logs are fetched by it).
    pub id: u64,
    /// Its name.
    pub name: String,
}

/// Parses the pages of `GET …/actions/runs/{id}/attempts/{n}/jobs` into the failed jobs.
pub fn failed_jobs(pages: &[Value]) -> Result<Vec<FailedJob>, CiProtocolError> {
    const WHAT: &str = "workflow jobs";
    let mut out = Vec::new();
    for v in wrapped(pages, "jobs", WHAT)? {
        if matches!(
            conclusion(v, WHAT)?.as_deref(),
            Some("failure" | "timed_out")
        ) {
            out.push(FailedJob {
                id: v
                    .get("id")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| fault(WHAT, "a job has no id"))?,
                name: text(v, "name", WHAT)?,
            });
        }
    }
    Ok(out)
}

/// What the observation means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Everything reported success, and something reported.
    Green,
    /// Nothing yet, or still running: look again on the next tick.
    Pending {
        /// What is still running (empty: nothing reported yet).
        waiting: Vec<String>,
    },
    /// Failed: these runs' attempts have logs to fetch (empty when only a check or status
    /// failed, which has no logs to fetch).
    Failed {
        /// The failed runs.
        runs: Vec<WorkflowRun>,
        /// Every failed item, for messages.
        failed: Vec<String>,
    },
    /// A run waits for a human to authorize it: an external blocker, not the implementer's.
    ActionRequired {
        /// The runs.
        runs: Vec<String>,
    },
    /// Ended without success and without a failure to fix (cancelled, skipped, neutral, …):
    /// a human reruns or decides.
    NotGreen {
        /// The items and how they ended.
        items: Vec<String>,
    },
}

fn failure(c: &str) -> bool {
    matches!(c, "failure" | "timed_out" | "startup_failure")
}

/// Classifies an observation. Precedence: an authorization wait, then failures, then other
/// non-success endings, then anything still running, then green.
pub fn classify(o: &Observation) -> Verdict {
    let mut action = Vec::new();
    let mut failed_runs = Vec::new();
    let mut failed = Vec::new();
    let mut other = Vec::new();
    let mut waiting = Vec::new();
    for r in &o.runs {
        match (r.status.as_str(), r.conclusion.as_deref()) {
            ("action_required", _) | (_, Some("action_required")) => action.push(r.label()),
            ("completed", Some("success")) => {}
            ("completed", Some(c)) if failure(c) => {
                failed.push(format!("{}: {c}", r.label()));
                failed_runs.push(r.clone());
            }
            ("completed", Some(c)) => other.push(format!("{}: {c}", r.label())),
            (s, _) => waiting.push(format!("{}: {s}", r.label())),
        }
    }
    for c in &o.check_runs {
        match (c.status.as_str(), c.conclusion.as_deref()) {
            (_, Some("action_required")) => action.push(format!("check {}", c.name)),
            ("completed", Some("success")) => {}
            ("completed", Some(k)) if failure(k) => failed.push(format!("check {}: {k}", c.name)),
            ("completed", Some(k)) => other.push(format!("check {}: {k}", c.name)),
            (s, _) => waiting.push(format!("check {}: {s}", c.name)),
        }
    }
    for s in &o.statuses {
        match s.state.as_str() {
            "success" => {}
            "failure" | "error" => failed.push(format!("status {}: {}", s.context, s.state)),
            "pending" => waiting.push(format!("status {}: pending", s.context)),
            other_state => other.push(format!("status {}: {other_state}", s.context)),
        }
    }
    if !action.is_empty() {
        Verdict::ActionRequired { runs: action }
    } else if !failed.is_empty() {
        Verdict::Failed {
            runs: failed_runs,
            failed,
        }
    } else if !other.is_empty() {
        Verdict::NotGreen { items: other }
    } else if !waiting.is_empty()
        || (o.runs.is_empty() && o.check_runs.is_empty() && o.statuses.is_empty())
    {
        Verdict::Pending { waiting }
    } else {
        Verdict::Green
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    const HEAD: &str = "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678";

    fn run(status: &str, conclusion: Option<&str>) -> WorkflowRun {
        WorkflowRun {
            id: 7,
            name: "CI".into(),
            path: ".github/workflows/ci.yml".into(),
            event: "pull_request".into(),
            status: status.into(),
            conclusion: conclusion.map(str::to_owned),
            attempt: 1,
        }
    }

    fn check(status: &str, conclusion: Option<&str>) -> CheckRun {
        CheckRun {
            name: "test".into(),
            status: status.into(),
            conclusion: conclusion.map(str::to_owned),
        }
    }

    #[test]
    fn only_all_success_is_green() {
        let o = Observation {
            check_runs: vec![check("completed", Some("success"))],
            statuses: vec![CommitStatus {
                context: "lint".into(),
                state: "success".into(),
            }],
            runs: vec![run("completed", Some("success"))],
        };
        assert_eq!(classify(&o), Verdict::Green);
        for c in ["neutral", "skipped", "cancelled", "stale"] {
            let mut o = o.clone();
            o.check_runs.push(check("completed", Some(c)));
            assert!(matches!(classify(&o), Verdict::NotGreen { .. }), "{c}");
        }
    }

    #[test]
    fn absent_evidence_is_pending_never_green() {
        assert_eq!(
            classify(&Observation::default()),
            Verdict::Pending { waiting: vec![] }
        );
        let o = Observation {
            runs: vec![run("in_progress", None)],
            check_runs: vec![check("completed", Some("success"))],
            ..Observation::default()
        };
        assert!(matches!(classify(&o), Verdict::Pending { waiting } if waiting.len() == 1));
        let o = Observation {
            statuses: vec![CommitStatus {
                context: "x".into(),
                state: "pending".into(),
            }],
            ..Observation::default()
        };
        assert!(matches!(classify(&o), Verdict::Pending { .. }));
    }

    #[test]
    fn action_required_in_the_inventory_alone_is_an_authorization_wait() {
        // No check runs and no statuses at all: the inventory still decides.
        let o = Observation {
            runs: vec![run("completed", Some("action_required"))],
            ..Observation::default()
        };
        assert!(
            matches!(classify(&o), Verdict::ActionRequired { runs } if runs[0].contains("ci.yml (pull_request) attempt 1"))
        );
    }

    #[test]
    fn failures_name_the_runs_to_fetch_logs_from() {
        let mut failed = run("completed", Some("failure"));
        failed.attempt = 2;
        let o = Observation {
            runs: vec![run("completed", Some("success")), failed.clone()],
            check_runs: vec![check("completed", Some("timed_out"))],
            ..Observation::default()
        };
        match classify(&o) {
            Verdict::Failed {
                runs,
                failed: items,
            } => {
                assert_eq!(runs, vec![failed]);
                assert_eq!(items.len(), 2);
            }
            v => panic!("{v:?}"),
        }
        // A failed status has no logs to fetch, but is still a failure.
        let o = Observation {
            statuses: vec![CommitStatus {
                context: "ext".into(),
                state: "error".into(),
            }],
            ..Observation::default()
        };
        assert!(matches!(classify(&o), Verdict::Failed { runs, .. } if runs.is_empty()));
    }

    #[test]
    fn pages_must_add_up_to_total_count() {
        let page = |n: u64, items: Vec<Value>| json!({"total_count": n, "workflow_runs": items});
        let item = json!({"id": 1, "name": "CI", "path": "ci.yml", "event": "push", "status": "completed", "conclusion": "success", "run_attempt": 1, "head_sha": HEAD});
        assert_eq!(
            workflow_runs(&[page(1, vec![item.clone()])], HEAD)
                .unwrap()
                .len(),
            1
        );
        let e = workflow_runs(&[page(2, vec![item.clone()])], HEAD).unwrap_err();
        assert!(e.detail.contains("truncated"), "{e}");
        assert!(workflow_runs(&[json!({"total_count": 0})], HEAD).is_err());
        assert!(workflow_runs(&[json!([])], HEAD).is_err());
        assert_eq!(workflow_runs(&[page(0, vec![])], HEAD).unwrap(), vec![]);
        let mut other = item.clone();
        other["head_sha"] = json!("b".repeat(40));
        assert!(workflow_runs(&[page(1, vec![other])], HEAD).is_err());
        let mut no_attempt = item;
        no_attempt.as_object_mut().unwrap().remove("run_attempt");
        assert!(workflow_runs(&[page(1, vec![no_attempt])], HEAD).is_err());
    }

    #[test]
    fn check_runs_and_statuses_parse_and_keep_the_newest_status_per_context() {
        let runs = check_runs(
            &[json!({"total_count": 1, "check_runs": [{"name": "t", "status": "completed", "conclusion": null, "head_sha": HEAD}]})],
            HEAD,
        )
        .unwrap();
        assert_eq!(runs[0].conclusion, None);
        assert!(check_runs(
            &[json!({"total_count": 1, "check_runs": [{"name": "t", "status": "completed", "conclusion": 3, "head_sha": HEAD}]})],
            HEAD
        )
        .is_err());
        let s = statuses(&[
            json!({"context": "lint", "state": "success"}),
            json!({"context": "lint", "state": "pending"}),
            json!({"context": "docs", "state": "failure"}),
        ])
        .unwrap();
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].state, "success");
        assert!(statuses(&[json!({"context": "x"})]).is_err());
    }

    #[test]
    fn failed_jobs_keeps_only_failures() {
        let jobs = failed_jobs(&[json!({"total_count": 2, "jobs": [
            {"id": 1, "name": "build", "conclusion": "success"},
            {"id": 2, "name": "test", "conclusion": "failure"}
        ]})])
        .unwrap();
        assert_eq!(
            jobs,
            vec![FailedJob {
                id: 2,
                name: "test".into()
            }]
        );
    }
}
