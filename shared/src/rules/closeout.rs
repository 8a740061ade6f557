//! Terminal closeout: the `lane_closed` v2 reservation, reached by `release --terminal`
//! (entry A) and `record-event --type lane_closed` (entry B).
//!
//! The reservation event, the released claim and the batch's lane stamp are one commit,
//! so a closeout is never half-applied; the first closeout is authoritative, an identical
//! retry is idempotent and a different one is refused.

use serde_json::json;
use serde_json::Value;
use sha2::Digest;
use sha2::Sha256;

use super::audit;
use super::batch::is_closed;
use super::claim;
use super::deps::lane_name;
use super::deps::lane_targets;
use super::usage;
use super::Ctx;
use super::Plan;
use super::RuleError;
use crate::ids::paths;
use crate::ids::AgentId;
use crate::ids::BatchId;
use crate::ids::LaneName;
use crate::ids::RepoSlug;
use crate::ids::Target;
use crate::record::is_http_url;
use crate::record::str_field;
use crate::record::Record;
use crate::snapshot::Snapshot;
use crate::time;

/// The terminal states a lane can close with.
pub const TERMINALS: [&str; 3] = ["done", "abandoned", "superseded"];

/// Which command asked for the closeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// `release --terminal`: the claim is released too.
    Release,
    /// `record-event --type lane_closed`.
    RecordEvent,
}

/// A terminal closeout request.
#[derive(Debug, Clone)]
pub struct CloseoutRequest {
    /// Which command.
    pub entry: Entry,
    /// The closing agent.
    pub agent: AgentId,
    /// The repository.
    pub repo: RepoSlug,
    /// The target.
    pub target: Target,
    /// The batch (required for entry B; entry A takes the claim's).
    pub batch: Option<BatchId>,
    /// `--lane`.
    pub lane: Option<LaneName>,
    /// `--terminal`.
    pub terminal: String,
    /// `--pr-state`.
    pub pr_state: Option<String>,
    /// `--evidence-url`.
    pub evidence_url: Option<String>,
    /// `--workspace` (default `default`).
    pub workspace: Option<String>,
    /// `--branch`.
    pub branch: Option<String>,
    /// Metadata fields given (host, pr_url, synthetic, …).
    pub metadata: Record,
}

/// What a closeout reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Closed {
    /// Entry A wrote something: `released <repo>#<target> by <agent>`.
    Released,
    /// Entry B created the reservation: `recorded event <batch> <event_id>`.
    Recorded {
        /// The batch.
        batch: String,
        /// The deterministic event id.
        event_id: String,
    },
    /// Entry B repaired the batch stamp only.
    Reconciled,
    /// Nothing changed: an idempotent replay.
    AlreadyClosed,
}

/// Returns the deterministic reservation id of a lane: `lane_closed-<sha256(lane)[..16]>`.
pub fn event_id(lane: &str) -> String {
    let digest = Sha256::digest(lane.as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("lane_closed-{hex}")
}

/// Validates the closeout contract of the options (exit 1 on failure, nothing written).
pub fn validate_options(req: &CloseoutRequest) -> Result<(), RuleError> {
    if !TERMINALS.contains(&req.terminal.as_str()) {
        return Err(usage(
            "--terminal must be one of: done, abandoned, superseded",
        ));
    }
    if req.workspace.as_deref().is_some_and(str::is_empty) {
        return Err(usage("--workspace must not be empty for terminal closeout"));
    }
    let host = req.metadata.get("host").and_then(Value::as_str);
    for (flag, value) in [
        ("--host", host),
        ("--branch", req.branch.as_deref()),
        ("--pr-state", req.pr_state.as_deref()),
    ] {
        if value.is_some_and(|v| v.trim().is_empty()) {
            return Err(usage(format!(
                "{flag} must not be empty for terminal closeout"
            )));
        }
    }
    let pr_url = req.metadata.get("pr_url").and_then(Value::as_str);
    for (flag, value) in [
        ("--pr-url", pr_url),
        ("--evidence-url", req.evidence_url.as_deref()),
    ] {
        if value.is_some_and(|v| !is_http_url(v)) {
            return Err(usage(format!("{flag} must be an HTTP(S) URL with a host")));
        }
    }
    Ok(())
}

/// The fields whose difference makes two closeouts conflict.
fn semantics(r: &Record) -> [Value; 6] {
    let get = |k: &str| r.get(k).cloned().unwrap_or(Value::Null);
    let workspace = r
        .get("workspace")
        .cloned()
        .unwrap_or_else(|| json!("default"));
    let closer = r
        .get("closed_by")
        .and_then(|c| c.get("agent_id"))
        .cloned()
        .unwrap_or(Value::Null);
    [
        get("terminal"),
        workspace,
        closer,
        get("pr_url"),
        get("pr_state"),
        get("evidence_url"),
    ]
}

const CLAIM_TERMINAL_FIELDS: [&str; 6] = [
    "terminal",
    "workspace",
    "closed_by",
    "pr_url",
    "pr_state",
    "evidence_url",
];

/// Decides a terminal closeout.
pub fn decide(
    snap: &impl Snapshot,
    req: &CloseoutRequest,
    ctx: &Ctx,
) -> Result<Plan<Closed>, RuleError> {
    validate_options(req)?;
    let label = format!("{}#{}", req.repo, req.target);
    let claim_path = paths::claim(&req.repo, &req.target);

    // Entry A works from the released claim; entry B from the options.
    let (released, batch) = match req.entry {
        Entry::Release => {
            let (_, held) = claim::claim_for_release(snap, &req.agent, &req.repo, &req.target)?;
            let batch = str_field(&held, "batch_id")
                .filter(|b| !b.is_empty())
                .ok_or_else(|| usage("terminal release requires a claim with batch_id"))?;
            let batch: BatchId = batch
                .parse()
                .map_err(|e: crate::ids::IdError| usage(e.to_string()))?;
            let released =
                claim::stamp_released(&held, &req.agent, req.branch.as_deref(), &req.metadata, ctx);
            (Some((held, released)), batch)
        }
        Entry::RecordEvent => (
            None,
            req.batch
                .clone()
                .ok_or_else(|| usage("missing required --batch-id"))?,
        ),
    };

    let batch_path = paths::batch(&batch);
    let manifest = snap
        .read(&batch_path)?
        .ok_or_else(|| usage(format!("batch {batch} not found for terminal closeout")))?;
    if let Some(repo) = manifest.get("repo") {
        if repo.as_str() != Some(req.repo.to_string().as_str()) {
            return Err(usage(format!(
                "terminal closeout repo does not match batch {batch}"
            )));
        }
    }
    let lane = resolve_lane(&manifest, req, &batch)?;
    let lane_name = lane_name(&lane).into_owned();
    authorize(snap, &manifest, &lane, &lane_name, req, &batch)?;

    // Reserve.
    let source = released
        .as_ref()
        .map(|(_, r)| r.clone())
        .unwrap_or_default();
    let pick = |key: &str| -> Option<Value> {
        req.metadata
            .get(key)
            .cloned()
            .or_else(|| source.get(key).cloned())
    };
    let event_id = event_id(&lane_name);
    let event_path = paths::event(&batch, &event_id);
    let machine = ctx
        .identity
        .machine_id
        .clone()
        .or_else(|| pick("host").and_then(|h| h.as_str().map(str::to_owned)))
        .unwrap_or_else(|| "UNKNOWN".to_owned());
    let mut event = Record::new();
    event.insert("schema_version".into(), json!(2));
    event.insert("event_id".into(), json!(event_id));
    event.insert("batch_id".into(), json!(batch.as_str()));
    event.insert("type".into(), json!("lane_closed"));
    event.insert("lane".into(), json!(lane_name));
    event.insert("agent_id".into(), json!(req.agent.as_str()));
    event.insert("repo".into(), json!(req.repo.to_string()));
    event.insert("target".into(), json!(req.target.as_str()));
    let branch = req
        .branch
        .clone()
        .map(Value::String)
        .or_else(|| source.get("branch").cloned());
    for (key, value) in [
        ("branch", branch),
        ("host", pick("host")),
        ("pr_url", pick("pr_url")),
    ] {
        if let Some(v) = value {
            event.insert(key.into(), v);
        }
    }
    event.insert("terminal".into(), json!(req.terminal));
    for (key, value) in [
        ("pr_state", &req.pr_state),
        ("evidence_url", &req.evidence_url),
    ] {
        if let Some(v) = value {
            event.insert(key.into(), json!(v));
        }
    }
    event.insert(
        "workspace".into(),
        json!(req.workspace.as_deref().unwrap_or("default")),
    );
    event.insert(
        "closed_by".into(),
        json!({"agent_id": req.agent.as_str(), "machine": machine}),
    );
    event.insert("at".into(), json!(time::format(ctx.now)));
    for key in ["synthetic", "synthetic_kind"] {
        if let Some(v) = pick(key) {
            event.insert(key.into(), v);
        }
    }
    ctx.identity.stamp(&mut event);

    let mut plan = Plan::nothing("lane-closed", Closed::AlreadyClosed);
    plan.summary = format!(
        "close lane {lane_name} of {batch} ({}) by {}",
        req.terminal, req.agent
    );
    let authoritative = match snap.read(&event_path)? {
        Some(first) if semantics(&first) != semantics(&event) => {
            return Err(conflicting(&lane_name))
        }
        Some(first) => first,
        None => {
            plan.state.push((event_path, event.clone()));
            event
        }
    };
    let created = !plan.state.is_empty();

    // Entry A: the claim carries the authoritative closeout.
    let mut claim_changed = false;
    if let Some((held, mut released)) = released {
        for key in CLAIM_TERMINAL_FIELDS {
            match authoritative.get(key) {
                Some(v) => released.insert(key.into(), v.clone()),
                None => released.remove(key),
            };
        }
        let already = str_field(&held, "status") == Some("released")
            && CLAIM_TERMINAL_FIELDS
                .iter()
                .all(|k| held.get(*k) == released.get(*k));
        if !already {
            plan.state.push((claim_path, released));
            claim_changed = true;
        }
    }

    // Stamp the batch.
    let batch_changed = stamp_batch(&manifest, &lane_name, &authoritative, ctx)?
        .map(|stamped| plan.state.push((batch_path, stamped)))
        .is_some();

    plan.outcome = match req.entry {
        Entry::Release if created || claim_changed || batch_changed => Closed::Released,
        Entry::RecordEvent if created => Closed::Recorded {
            batch: batch.to_string(),
            event_id: str_field(&authoritative, "event_id")
                .unwrap_or_default()
                .to_owned(),
        },
        Entry::RecordEvent if batch_changed => Closed::Reconciled,
        _ => Closed::AlreadyClosed,
    };
    if plan.outcome == Closed::AlreadyClosed {
        plan.summary = format!("lane already closed for {label}");
    }
    Ok(plan)
}

/// Returns the refusal of a closeout that differs from the lane's first one.
fn conflicting(lane_name: &str) -> RuleError {
    usage(format!(
        "conflicting terminal closeout for lane {lane_name}; first closeout is authoritative"
    ))
}

/// Finds the one lane this closeout is for.
fn resolve_lane(
    manifest: &Record,
    req: &CloseoutRequest,
    batch: &BatchId,
) -> Result<Record, RuleError> {
    let lanes: Vec<&Record> = manifest
        .get("lanes")
        .and_then(Value::as_array)
        .map(|l| l.iter().filter_map(Value::as_object).collect())
        .unwrap_or_default();
    let target = req.target.as_str();
    let matching: Vec<&&Record> = lanes
        .iter()
        .filter(|l| match &req.lane {
            Some(name) => lane_name(l) == name.as_str(),
            None => lane_targets(l).iter().any(|t| t == target),
        })
        .collect();
    let [lane] = matching.as_slice() else {
        return Err(usage(format!(
            "terminal closeout does not match exactly one lane in batch {batch}"
        )));
    };
    if !lane_targets(lane).iter().any(|t| t == target) {
        return Err(usage(format!(
            "terminal closeout target does not match lane {}",
            lane_name(lane)
        )));
    }
    Ok((**lane).clone())
}

/// Checks that the agent may close the lane: its static owner, or the current claimant
/// admitted by a valid lifecycle lineage.
fn authorize(
    snap: &impl Snapshot,
    manifest: &Record,
    lane: &Record,
    lane_name: &str,
    req: &CloseoutRequest,
    batch: &BatchId,
) -> Result<(), RuleError> {
    let me = req.agent.as_str();
    let owner = str_field(lane, "owner").or_else(|| str_field(lane, "agent_id"));
    if owner.is_some_and(|o| o == me && o != "UNKNOWN") {
        return Ok(());
    }
    let claimant = snap
        .read(&paths::claim(&req.repo, &req.target))?
        .is_some_and(|c| {
            str_field(&c, "repo") == Some(req.repo.to_string().as_str())
                && str_field(&c, "target") == Some(req.target.as_str())
                && str_field(&c, "batch_id") == Some(batch.as_str())
                && str_field(&c, "agent_id") == Some(me)
        });
    if claimant {
        let events = snap.list(&paths::events_dir(batch))?;
        if audit::lineage_authorized(manifest, lane_name, &events)
            .is_some_and(|set| set.contains(me))
        {
            return Ok(());
        }
    }
    Err(usage(format!(
        "terminal closeout agent does not match lane {lane_name}"
    )))
}

/// Returns the manifest with the lane stamped terminal, or `None` if it already was.
fn stamp_batch(
    manifest: &Record,
    lane_name: &str,
    event: &Record,
    ctx: &Ctx,
) -> Result<Option<Record>, RuleError> {
    let mut stamped = manifest.clone();
    let Some(Value::Array(lanes)) = stamped.get_mut("lanes") else {
        return Ok(None);
    };
    let Some(lane) = lanes
        .iter_mut()
        .filter_map(Value::as_object_mut)
        .find(|l| super::deps::lane_name(l) == lane_name)
    else {
        return Ok(None);
    };
    if is_closed(lane) {
        // The lane's stamp stands for its own closeout (even when the reservation event is
        // gone, e.g. compacted): a closeout that differs in any conflict field is refused.
        if semantics(lane) != semantics(event) {
            return Err(conflicting(lane_name));
        }
        return Ok(None);
    }
    let terminal = event.get("terminal").cloned().unwrap_or(Value::Null);
    lane.insert("status".into(), terminal.clone());
    lane.insert("terminal".into(), terminal);
    for (key, value) in [
        ("closed_at", event.get("at")),
        ("closed_by", event.get("closed_by")),
        ("workspace", event.get("workspace")),
    ] {
        if let Some(v) = value {
            lane.entry(key).or_insert_with(|| v.clone());
        }
    }
    for key in ["pr_url", "pr_state", "evidence_url"] {
        if let Some(v) = event.get(key) {
            lane.insert(key.into(), v.clone());
        }
    }
    let now = json!(time::format(ctx.now));
    let all_closed = lanes.iter().filter_map(Value::as_object).all(is_closed)
        && lanes.iter().all(Value::is_object);
    if all_closed {
        stamped.insert("status".into(), json!("completed"));
        stamped.entry("completed_at").or_insert_with(|| now.clone());
    }
    stamped.insert("updated_at".into(), now);
    Ok(Some(stamped))
}

#[cfg(test)]
mod tests;
