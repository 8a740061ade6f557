//! The dashboard's two writes as pure rules, decided inside the store transaction like
//! every CLI write: importing a batch plan (never over an existing one) and requesting a
//! batch stop (a `batch.stop_requested` event on a batch the state knows).
//!
//! The request bodies are read here too, so the server only moves JSON in and out; a
//! refusal is a typed error with the facts, which the server words for the dashboard.

use serde_json::Value;

use crate::dashboard::inputs::records::heartbeat_work;
use crate::dashboard::inputs::records::is_active;
use crate::dashboard::inputs::records::ClaimIn;
use crate::dashboard::inputs::records::HeartbeatIn;
use crate::dashboard::inputs::records::ManifestIn;
use crate::dashboard::model::ImportBody;
use crate::dashboard::model::Imported;
use crate::dashboard::model::Scalar;
use crate::dashboard::model::StopBody;
use crate::ids::paths;
use crate::ids::BatchId;
use crate::ids::IdError;
use crate::manifest;
use crate::manifest::PromptError;
use crate::record::Claim;
use crate::record::EventKind;
use crate::record::Heartbeat;
use crate::record::Record;
use crate::rules::event::new_event;
use crate::rules::Ctx;
use crate::rules::Plan;
use crate::rules::RuleError;
use crate::snapshot::ReadError;
use crate::snapshot::Snapshot;
use crate::time;

/// The reason recorded when a stop request gives none.
pub const DEFAULT_STOP_REASON: &str =
    "Stop requested from dashboard so this batch can be restarted.";

/// Why a batch plan was not imported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    /// The prompt or draft does not make a valid plan.
    #[error(transparent)]
    InvalidPlan(#[from] PromptError),
    /// The plan's batch id is not a usable id.
    #[error(transparent)]
    InvalidBatchId(IdError),
    /// A manifest already exists where the plan would go (an import never replaces one).
    #[error("a batch plan already exists at {path}")]
    Exists {
        /// The manifest's path.
        path: String,
    },
    /// The state cannot be read.
    #[error(transparent)]
    Unreadable(#[from] ReadError),
}

/// Imports a batch plan from an import request body (`{"launch_prompt": "…"}` or a
/// reviewed draft): the manifest is validated, stamped with `ctx`'s clock and machine, and
/// refused with a conflict when a manifest already exists at its path.
pub fn import(
    snap: &impl Snapshot,
    ctx: &Ctx,
    body: &ImportBody,
) -> Result<Plan<Imported>, ImportError> {
    let machine = ctx.identity.machine_id.clone().unwrap_or_default();
    let manifest = manifest::import_request(&body.to_value(), &time::format(ctx.now), &machine)?;
    let id = manifest
        .get("batch_id")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let batch: BatchId = id.parse().map_err(ImportError::InvalidBatchId)?;
    let path = paths::batch(&batch);
    if snap.read(&path)?.is_some() {
        return Err(ImportError::Exists { path });
    }
    let record = manifest.as_object().cloned().unwrap_or_default();
    let mut plan = Plan::nothing(
        "dashboard-import",
        Imported {
            batch_id: id.clone(),
            path: path.clone(),
            manifest,
        },
    );
    plan.state.push((path, record));
    plan.summary = format!("dashboard: import batch plan {id}");
    Ok(plan)
}

/// Why a batch stop was not requested.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StopError {
    /// The request names no batch.
    #[error("the request names no batch id")]
    MissingBatchId,
    /// The batch id uses characters other than letters, numbers, dot, underscore and hyphen.
    #[error(
        "batch id {id:?} uses characters other than letters, numbers, dot, underscore and hyphen"
    )]
    UnsafeBatchId {
        /// The batch id as given.
        id: String,
    },
    /// The batch id is not a usable id.
    #[error(transparent)]
    InvalidBatchId(IdError),
    /// Neither a manifest nor any live claim or heartbeat names the batch.
    #[error("batch {batch} is not in the coordination state")]
    UnknownBatch {
        /// The batch.
        batch: BatchId,
    },
    /// The state cannot be read.
    #[error(transparent)]
    Unreadable(#[from] ReadError),
    /// The stop event cannot be recorded.
    #[error(transparent)]
    Recording(RuleError),
}

/// A stop request as the dashboard sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StopRequest {
    /// The batch to stop.
    pub batch: BatchId,
    /// Why (the default reason when none was given).
    pub reason: String,
    /// The repository, when the request names one.
    pub repo: Option<String>,
}

impl StopRequest {
    /// Reads a request body: `batch_id` (or `batchId`), `reason` (or `message`), `repo`;
    /// values are trimmed and blanks count as absent.
    pub fn from_body(body: &StopBody) -> Result<StopRequest, StopError> {
        let text = |a: &Scalar, b: &Scalar| {
            a.or(b)
                .text()
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_owned)
        };
        let id = text(&body.batch_id, &body.batch_id_camel).ok_or(StopError::MissingBatchId)?;
        if !manifest::is_safe_batch_id(&id) {
            return Err(StopError::UnsafeBatchId { id });
        }
        let batch = id.parse().map_err(StopError::InvalidBatchId)?;
        Ok(StopRequest {
            batch,
            reason: text(&body.reason, &body.message)
                .unwrap_or_else(|| DEFAULT_STOP_REASON.to_owned()),
            repo: text(&body.repo, &Scalar::Absent),
        })
    }
}

/// Requests a stop of a batch the state knows — one with a manifest, or one inferred from
/// live claims and heartbeats naming it — by appending a `batch.stop_requested` event;
/// returns the event's `(path, record)`. The event's `repo` is the request's, else the
/// manifest's, else the one repository all the manifest's targets name, else the one
/// repository the inferred batch's claims and heartbeats name (reference §6, step 5).
pub fn stop(
    snap: &impl Snapshot,
    ctx: &Ctx,
    request: &StopRequest,
) -> Result<Plan<(String, Record)>, StopError> {
    let id = request.batch.to_string();
    let path = paths::batch(&request.batch);
    let repo = match snap.read(&path)? {
        Some(manifest) => manifest_repo(&ManifestIn::from_manifest(&path, &manifest.into())),
        None => match inferred_repos(snap, &id)? {
            Some(repos) => (repos.len() == 1)
                .then(|| repos.into_iter().next())
                .flatten(),
            None => {
                return Err(StopError::UnknownBatch {
                    batch: request.batch.clone(),
                })
            }
        },
    };
    let mut fields = Record::new();
    fields.insert("status".into(), Value::from("stop_requested"));
    if let Some(r) = request.repo.as_ref().or(repo.as_ref()) {
        fields.insert("repo".into(), Value::from(r.as_str()));
    }
    fields.insert("message".into(), Value::from(request.reason.as_str()));
    let (path, event) = new_event(
        snap,
        ctx,
        &request.batch,
        EventKind::BatchStopRequested.as_str(),
        fields,
    )
    .map_err(StopError::Recording)?;
    let mut plan = Plan::nothing("dashboard-stop", (path.clone(), event.clone()));
    plan.state.push((path, event));
    plan.summary = format!("dashboard: request stop of batch {id}");
    Ok(plan)
}

/// A manifest's repository, else the one repository every one of its targets names.
fn manifest_repo(m: &ManifestIn) -> Option<String> {
    if m.repo.is_some() {
        return m.repo.clone();
    }
    let repos: Option<std::collections::BTreeSet<&str>> =
        m.targets.iter().map(|t| t.repo.as_deref()).collect();
    match repos?.into_iter().collect::<Vec<_>>().as_slice() {
        [one] => Some((*one).to_owned()),
        _ => None,
    }
}

/// The repositories named by the claims (not released) and heartbeats (with a repository
/// and a target) that name `batch`, as the dashboard infers a batch with no manifest;
/// `None` when nothing names it.
fn inferred_repos(
    snap: &impl Snapshot,
    batch: &str,
) -> Result<Option<std::collections::BTreeSet<String>>, ReadError> {
    let mut named = false;
    let mut repos = std::collections::BTreeSet::new();
    snap.for_each("claims", &mut |path, record| {
        let c = ClaimIn::from_claim(&path, &Claim::from(record));
        if is_active(&c) && c.batch_id.as_deref() == Some(batch) {
            named = true;
            repos.insert(c.repo);
        }
    })?;
    snap.for_each("heartbeats", &mut |path, record| {
        let h = HeartbeatIn::from_heartbeat(&path, &Heartbeat::from(record));
        if let Some((b, r, _)) = heartbeat_work(&h) {
            if b == batch {
                named = true;
                repos.insert(r.to_owned());
            }
        }
    })?;
    Ok(named.then_some(repos))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::record::Identity;
    use crate::snapshot::MemorySnapshot;

    const PROMPT: &str = "Repository: acme/app\nBatch id: b-import\nBatch objective: Import me.\nItems:\n- PR #7: https://github.com/acme/app/pull/7\nSuggested lanes:\n- one (owner: w1): PR #7\n";

    fn ctx() -> Ctx {
        Ctx {
            now: time::parse("2026-11-29T12:00:00Z").unwrap(),
            nonce: 7,
            identity: Identity {
                machine_id: Some("box-1".into()),
                ..Default::default()
            },
        }
    }

    fn stop_of(body: Value) -> Result<StopRequest, StopError> {
        StopRequest::from_body(&serde_json::from_value(body).unwrap())
    }

    fn import_of(body: Value) -> ImportBody {
        serde_json::from_value(body).unwrap()
    }

    #[test]
    fn import_writes_the_manifest_once() {
        let mut snap = MemorySnapshot::default();
        let plan = import(&snap, &ctx(), &import_of(json!({"launch_prompt": PROMPT}))).unwrap();
        assert_eq!(plan.outcome.path, "batches/b-import.json");
        assert_eq!(plan.summary, "dashboard: import batch plan b-import");
        assert_eq!(plan.op, "dashboard-import");
        assert_eq!(
            plan.outcome.manifest["created_by_machine"],
            json!("dashboard:box-1")
        );
        let (path, record) = &plan.state[0];
        snap.put(path, &Value::Object(record.clone()));
        assert_eq!(
            import(&snap, &ctx(), &import_of(json!({"launch_prompt": PROMPT}))).unwrap_err(),
            ImportError::Exists {
                path: "batches/b-import.json".into()
            }
        );
    }

    #[test]
    fn import_reports_validation_errors_as_usage() {
        let err = import(
            &MemorySnapshot::default(),
            &ctx(),
            &import_of(
                json!({"launch_prompt": "Items:\n- PR #1: https://github.com/a/b/pull/2\n"}),
            ),
        )
        .unwrap_err();
        assert!(
            matches!(&err, ImportError::InvalidPlan(PromptError::ReferenceContradictsUrl { number, .. }) if number == "1"),
            "{err:?}"
        );
    }

    #[test]
    fn stop_requests_are_read_from_the_body() {
        let r = stop_of(json!({"batchId": " b1 ", "message": "hold", "repo": "a/b"})).unwrap();
        assert_eq!(
            (r.batch.to_string(), r.reason.as_str(), r.repo.as_deref()),
            ("b1".to_owned(), "hold", Some("a/b"))
        );
        assert_eq!(
            stop_of(json!({"batch_id": "b1"})).unwrap().reason,
            DEFAULT_STOP_REASON
        );
        for (body, refused) in [
            (json!({}), StopError::MissingBatchId),
            (json!({"batch_id": "  "}), StopError::MissingBatchId),
            (
                json!({"batch_id": "../x"}),
                StopError::UnsafeBatchId { id: "../x".into() },
            ),
        ] {
            assert_eq!(stop_of(body).unwrap_err(), refused);
        }
    }

    #[test]
    fn stop_needs_a_known_batch() {
        let mut snap = MemorySnapshot::default();
        let request = stop_of(json!({"batch_id": "ghost"})).unwrap();
        assert_eq!(
            stop(&snap, &ctx(), &request).unwrap_err(),
            StopError::UnknownBatch {
                batch: "ghost".parse().unwrap()
            }
        );
        // A released claim does not make a batch known.
        snap.put(
            "claims/acme/app/7.json",
            &json!({"repo": "acme/app", "target": "7", "agent_id": "w1", "status": "released", "batch_id": "ghost"}),
        );
        assert!(matches!(
            stop(&snap, &ctx(), &request),
            Err(StopError::UnknownBatch { .. })
        ));
    }

    #[test]
    fn stop_of_a_manifest_batch_takes_its_repo() {
        let mut snap = MemorySnapshot::default();
        snap.put(
            "batches/b1.json",
            &json!({"batch_id": "b1", "repo": "acme/app"}),
        );
        let plan = stop(
            &snap,
            &ctx(),
            &stop_of(json!({"batch_id": "b1", "reason": "hold"})).unwrap(),
        )
        .unwrap();
        let (path, event) = &plan.outcome;
        assert!(path.starts_with("events/b1/"), "{path}");
        assert_eq!(plan.state, vec![(path.clone(), event.clone())]);
        assert_eq!(plan.summary, "dashboard: request stop of batch b1");
        assert_eq!(event["type"], json!("batch.stop_requested"));
        assert_eq!(event["status"], json!("stop_requested"));
        assert_eq!(event["repo"], json!("acme/app"));
        assert_eq!(event["message"], json!("hold"));
        assert_eq!(event["machine_id"], json!("box-1"));
        // The request's repo wins.
        let plan = stop(
            &snap,
            &ctx(),
            &stop_of(json!({"batch_id": "b1", "repo": "x/y"})).unwrap(),
        )
        .unwrap();
        assert_eq!(plan.outcome.1["repo"], json!("x/y"));
    }

    #[test]
    fn regression_stop_of_a_repoless_manifest_takes_its_targets_repo() {
        let mut snap = MemorySnapshot::default();
        snap.put(
            "batches/b3.json",
            &json!({"batch_id": "b3", "targets": [
                {"type": "issue", "target": "1", "repo": "acme/app"},
                {"type": "pull_request", "target": "2", "repo": "acme/app"}]}),
        );
        let request = stop_of(json!({"batch_id": "b3"})).unwrap();
        let plan = stop(&snap, &ctx(), &request).unwrap();
        assert_eq!(plan.outcome.1["repo"], json!("acme/app"));
        // Targets in two repositories, or one whose repository is unknown: none is recorded.
        for targets in [
            json!([{"target": "1", "repo": "acme/app"}, {"target": "2", "repo": "acme/web"}]),
            json!([{"target": "1", "repo": "acme/app"}, {"target": "2"}]),
            json!([]),
        ] {
            snap.put(
                "batches/b3.json",
                &json!({"batch_id": "b3", "targets": targets}),
            );
            let plan = stop(&snap, &ctx(), &request).unwrap();
            assert!(plan.outcome.1.get("repo").is_none(), "{targets}");
        }
    }

    #[test]
    fn stop_of_an_inferred_batch_takes_the_one_repo_its_work_names() {
        let mut snap = MemorySnapshot::default();
        snap.put(
            "claims/acme/app/7.json",
            &json!({"repo": "acme/app", "target": "7", "agent_id": "w1", "status": "active", "batch_id": "b2"}),
        );
        let request = stop_of(json!({"batch_id": "b2"})).unwrap();
        let plan = stop(&snap, &ctx(), &request).unwrap();
        assert_eq!(plan.outcome.1["repo"], json!("acme/app"));
        // Two repositories: none is recorded.
        snap.put(
            "heartbeats/w2.json",
            &json!({"agent_id": "w2", "repo": "acme/web", "target": "8", "batch_id": "b2"}),
        );
        let plan = stop(&snap, &ctx(), &request).unwrap();
        assert!(plan.outcome.1.get("repo").is_none());
    }
}
