//! Terminal closeout: the `lane_closed` v2 reservation, reached by `release --terminal`
//! (entry A) and `record-event --type lane_closed` (entry B).
//!
//! The reservation event, the released claim and the batch's lane stamp are one commit,
//! so a closeout is never half-applied; the first closeout is authoritative, an identical
//! retry is idempotent and a different one is refused.

use serde_json::Value;
use sha2::Digest;
use sha2::Sha256;

use super::audit;
use super::claim;
use super::deps::lane_name;
use super::deps::lane_targets;
use super::Ctx;
use super::Plan;
use super::RuleError;
use crate::ids::paths;
use crate::ids::AgentId;
use crate::ids::BatchId;
use crate::ids::IdError;
use crate::ids::LaneName;
use crate::ids::RepoSlug;
use crate::ids::Target;
use crate::record::field as f;
use crate::record::is_http_url;
use crate::record::Claim;
use crate::record::Lane;
use crate::record::LaneClosed;
use crate::record::Manifest;
use crate::record::Record;
use crate::record::LANE_CLOSED;
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

/// An option of a closeout that the contract checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CloseoutOption {
    /// The lane's workspace.
    Workspace,
    /// The host the work ran on.
    Host,
    /// The work's branch.
    Branch,
    /// The pull request's state.
    PrState,
    /// The pull request's URL.
    PrUrl,
    /// The URL of the evidence.
    EvidenceUrl,
}

impl CloseoutOption {
    /// Returns the record field the option fills (`workspace`, `pr_state`, …).
    pub fn field(self) -> f::Field {
        match self {
            CloseoutOption::Workspace => f::WORKSPACE,
            CloseoutOption::Host => f::HOST,
            CloseoutOption::Branch => f::BRANCH,
            CloseoutOption::PrState => f::PR_STATE,
            CloseoutOption::PrUrl => f::PR_URL,
            CloseoutOption::EvidenceUrl => f::EVIDENCE_URL,
        }
    }
}

impl std::fmt::Display for CloseoutOption {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        out.write_str(self.field().name())
    }
}

/// Why a terminal closeout was refused (nothing is written).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CloseoutError {
    /// The terminal state is not one of [`TERMINALS`].
    #[error("terminal {given:?} is not one of: done, abandoned, superseded")]
    UnknownTerminal {
        /// The terminal state given.
        given: String,
    },
    /// An option was given blank.
    #[error("{option} must not be empty for terminal closeout")]
    Blank {
        /// The option.
        option: CloseoutOption,
    },
    /// A URL option is not an HTTP(S) URL with a host.
    #[error("{option} must be an HTTP(S) URL with a host, not {value:?}")]
    NotAnHttpUrl {
        /// The option.
        option: CloseoutOption,
        /// The value given.
        value: String,
    },
    /// A terminal release of a claim that names no batch.
    #[error("terminal release requires a claim with batch_id")]
    ClaimWithoutBatch,
    /// The released claim's batch id is not a usable id.
    #[error(transparent)]
    ClaimBatchInvalid(IdError),
    /// A closeout recorded as an event without a batch.
    #[error("a terminal closeout event needs a batch id")]
    MissingBatch,
    /// The batch is not registered.
    #[error("batch {batch} not found for terminal closeout")]
    BatchNotFound {
        /// The batch.
        batch: BatchId,
    },
    /// The batch's repository is not the closeout's.
    #[error("terminal closeout repo does not match batch {batch}")]
    RepoMismatch {
        /// The batch.
        batch: BatchId,
    },
    /// No lane, or more than one, matches the closeout.
    #[error("terminal closeout does not match exactly one lane in batch {batch}")]
    NoSingleLane {
        /// The batch.
        batch: BatchId,
    },
    /// The lane named does not hold the closeout's target.
    #[error("terminal closeout target does not match lane {lane}")]
    TargetNotInLane {
        /// The lane.
        lane: String,
    },
    /// The agent is neither the lane's owner nor its admitted current claimant.
    #[error("terminal closeout agent {agent} does not match lane {lane}")]
    NotLaneAgent {
        /// The lane.
        lane: String,
        /// The closing agent.
        agent: AgentId,
    },
    /// The lane was already closed differently; the first closeout is authoritative.
    #[error("conflicting terminal closeout for lane {lane}; first closeout is authoritative")]
    Conflicting {
        /// The lane.
        lane: String,
    },
}

/// Returns the deterministic reservation id of a lane: `lane_closed-<sha256(lane)[..16]>`.
pub fn event_id(lane: &str) -> String {
    let digest = Sha256::digest(lane.as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    format!("lane_closed-{hex}")
}

/// Validates the closeout contract of the options (exit 1 on failure, nothing written).
pub fn validate_options(req: &CloseoutRequest) -> Result<(), CloseoutError> {
    use CloseoutOption as O;
    if !TERMINALS.contains(&req.terminal.as_str()) {
        return Err(CloseoutError::UnknownTerminal {
            given: req.terminal.clone(),
        });
    }
    if req.workspace.as_deref().is_some_and(str::is_empty) {
        return Err(CloseoutError::Blank {
            option: O::Workspace,
        });
    }
    let host = f::HOST.text(&req.metadata);
    for (option, value) in [
        (O::Host, host),
        (O::Branch, req.branch.as_deref()),
        (O::PrState, req.pr_state.as_deref()),
    ] {
        if value.is_some_and(|v| v.trim().is_empty()) {
            return Err(CloseoutError::Blank { option });
        }
    }
    let pr_url = f::PR_URL.text(&req.metadata);
    for (option, value) in [
        (O::PrUrl, pr_url),
        (O::EvidenceUrl, req.evidence_url.as_deref()),
    ] {
        if let Some(value) = value.filter(|v| !is_http_url(v)) {
            return Err(CloseoutError::NotAnHttpUrl {
                option,
                value: value.to_owned(),
            });
        }
    }
    Ok(())
}

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
            let batch = held
                .batch_id()
                .filter(|b| !b.is_empty())
                .ok_or(CloseoutError::ClaimWithoutBatch)?;
            let batch: BatchId = batch.parse().map_err(CloseoutError::ClaimBatchInvalid)?;
            let released =
                claim::stamp_released(&held, &req.agent, req.branch.as_deref(), &req.metadata, ctx);
            (Some((held, released)), batch)
        }
        Entry::RecordEvent => (None, req.batch.clone().ok_or(CloseoutError::MissingBatch)?),
    };

    let batch_path = paths::batch(&batch);
    let manifest: Manifest =
        snap.read_as(&batch_path)?
            .ok_or_else(|| CloseoutError::BatchNotFound {
                batch: batch.clone(),
            })?;
    if let Some(repo) = f::REPO.get(&manifest) {
        if repo.as_str() != Some(req.repo.to_string().as_str()) {
            return Err(CloseoutError::RepoMismatch { batch }.into());
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
    let pick = |key: f::Field| -> Option<Value> {
        key.get(&req.metadata)
            .cloned()
            .or_else(|| key.get(&source).cloned())
    };
    let event_id = event_id(&lane_name);
    let event_path = paths::event(&batch, &event_id);
    let machine = ctx
        .identity
        .machine_id
        .clone()
        .or_else(|| pick(f::HOST).and_then(|h| h.as_str().map(str::to_owned)))
        .unwrap_or_else(|| "UNKNOWN".to_owned());
    let mut event = LaneClosed::default();
    f::SCHEMA_VERSION.set(&mut event, LaneClosed::SCHEMA);
    f::EVENT_ID.set(&mut event, event_id);
    f::BATCH_ID.set(&mut event, batch.as_str());
    f::TYPE.set(&mut event, LANE_CLOSED);
    f::LANE.set(&mut event, lane_name.as_str());
    f::AGENT_ID.set(&mut event, req.agent.as_str());
    f::REPO.set(&mut event, req.repo.to_string());
    f::TARGET.set(&mut event, req.target.as_str());
    let branch = req
        .branch
        .clone()
        .map(Value::String)
        .or_else(|| f::BRANCH.get(&source).cloned());
    for (key, value) in [
        (f::BRANCH, branch),
        (f::HOST, pick(f::HOST)),
        (f::PR_URL, pick(f::PR_URL)),
    ] {
        if let Some(v) = value {
            key.set(&mut event, v);
        }
    }
    f::TERMINAL.set(&mut event, req.terminal.as_str());
    for (key, value) in [
        (f::PR_STATE, &req.pr_state),
        (f::EVIDENCE_URL, &req.evidence_url),
    ] {
        if let Some(v) = value {
            key.set(&mut event, v.as_str());
        }
    }
    f::WORKSPACE.set(&mut event, req.workspace.as_deref().unwrap_or("default"));
    let mut closer = Record::new();
    f::AGENT_ID.set(&mut closer, req.agent.as_str());
    f::MACHINE.set(&mut closer, machine);
    f::CLOSED_BY.set(&mut event, closer);
    f::AT.set(&mut event, time::format(ctx.now));
    for key in [f::SYNTHETIC, f::SYNTHETIC_KIND] {
        if let Some(v) = pick(key) {
            key.set(&mut event, v);
        }
    }
    ctx.identity.stamp(&mut event);

    let mut plan = Plan::nothing("lane-closed", Closed::AlreadyClosed);
    plan.summary = format!(
        "close lane {lane_name} of {batch} ({}) by {}",
        req.terminal, req.agent
    );
    let authoritative = match snap.read_as::<LaneClosed>(&event_path)? {
        Some(first) if LaneClosed::semantics(&first) != LaneClosed::semantics(&event) => {
            return Err(conflicting(&lane_name).into())
        }
        Some(first) => first,
        None => {
            plan.state.push((event_path, event.clone().into_record()));
            event
        }
    };
    let created = !plan.state.is_empty();

    // Entry A: the claim carries the authoritative closeout.
    let mut claim_changed = false;
    if let Some((held, mut released)) = released {
        for key in Claim::TERMINAL {
            match key.get(&authoritative) {
                Some(v) => key.set(&mut released, v.clone()),
                None => {
                    key.take(&mut released);
                }
            }
        }
        let already = held.status() == Some("released")
            && Claim::TERMINAL
                .iter()
                .all(|k| k.get(&held) == k.get(&released));
        if !already {
            plan.state.push((claim_path, released.into_record()));
            claim_changed = true;
        }
    }

    // Stamp the batch.
    let batch_changed = stamp_batch(&manifest, &lane_name, &authoritative, ctx)?
        .map(|stamped| plan.state.push((batch_path, stamped.into_record())))
        .is_some();

    plan.outcome = match req.entry {
        Entry::Release if created || claim_changed || batch_changed => Closed::Released,
        Entry::RecordEvent if created => Closed::Recorded {
            batch: batch.to_string(),
            event_id: f::EVENT_ID
                .text(&authoritative)
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
fn conflicting(lane_name: &str) -> CloseoutError {
    CloseoutError::Conflicting {
        lane: lane_name.to_owned(),
    }
}

/// Finds the one lane this closeout is for.
fn resolve_lane(
    manifest: &Manifest,
    req: &CloseoutRequest,
    batch: &BatchId,
) -> Result<Record, CloseoutError> {
    let lanes: Vec<&Record> = f::LANES
        .get(manifest)
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
        return Err(CloseoutError::NoSingleLane {
            batch: batch.clone(),
        });
    };
    if !lane_targets(lane).iter().any(|t| t == target) {
        return Err(CloseoutError::TargetNotInLane {
            lane: lane_name(lane).into_owned(),
        });
    }
    Ok((**lane).clone())
}

/// Checks that the agent may close the lane: its static owner, or the current claimant
/// admitted by a valid lifecycle lineage.
fn authorize(
    snap: &impl Snapshot,
    manifest: &Manifest,
    lane: &Record,
    lane_name: &str,
    req: &CloseoutRequest,
    batch: &BatchId,
) -> Result<(), RuleError> {
    let me = req.agent.as_str();
    let owner = f::OWNER.text(lane).or_else(|| f::AGENT_ID.text(lane));
    if owner.is_some_and(|o| o == me && o != "UNKNOWN") {
        return Ok(());
    }
    let claimant = snap
        .read_as::<Claim>(&paths::claim(&req.repo, &req.target))?
        .is_some_and(|c| {
            f::REPO.text(&c) == Some(req.repo.to_string().as_str())
                && f::TARGET.text(&c) == Some(req.target.as_str())
                && c.batch_id() == Some(batch.as_str())
                && c.agent_id() == Some(me)
        });
    if claimant {
        let events = snap.list(&paths::events_dir(batch))?;
        if audit::lineage_authorized(manifest, lane_name, &events)
            .is_some_and(|set| set.contains(me))
        {
            return Ok(());
        }
    }
    Err(CloseoutError::NotLaneAgent {
        lane: lane_name.to_owned(),
        agent: req.agent.clone(),
    }
    .into())
}

/// Returns the manifest with the lane stamped terminal, or `None` if it already was.
fn stamp_batch(
    manifest: &Manifest,
    lane_name: &str,
    event: &LaneClosed,
    ctx: &Ctx,
) -> Result<Option<Manifest>, CloseoutError> {
    let mut stamped = manifest.clone();
    let Some(Value::Array(lanes)) = stamped.get_mut(f::LANES.name()) else {
        return Ok(None);
    };
    let Some(lane) = lanes
        .iter_mut()
        .filter_map(Value::as_object_mut)
        .find(|l| super::deps::lane_name(l) == lane_name)
    else {
        return Ok(None);
    };
    if Lane::is_closed(lane) {
        // The lane's stamp stands for its own closeout (even when the reservation event is
        // gone, e.g. compacted): a closeout that differs in any conflict field is refused.
        if LaneClosed::semantics(lane) != LaneClosed::semantics(event) {
            return Err(conflicting(lane_name));
        }
        return Ok(None);
    }
    let terminal = f::TERMINAL.get(event).cloned().unwrap_or(Value::Null);
    f::STATUS.set(lane, terminal.clone());
    f::TERMINAL.set(lane, terminal);
    for (key, value) in [
        (f::CLOSED_AT, f::AT.get(event)),
        (f::CLOSED_BY, f::CLOSED_BY.get(event)),
        (f::WORKSPACE, f::WORKSPACE.get(event)),
    ] {
        if let Some(v) = value {
            lane.entry(key.name()).or_insert_with(|| v.clone());
        }
    }
    for key in [f::PR_URL, f::PR_STATE, f::EVIDENCE_URL] {
        key.copy(event, lane);
    }
    let now = time::format(ctx.now);
    let all_closed = lanes
        .iter()
        .filter_map(Value::as_object)
        .all(Lane::is_closed)
        && lanes.iter().all(Value::is_object);
    if all_closed {
        f::STATUS.set(&mut stamped, "completed");
        stamped
            .entry(f::COMPLETED_AT.name())
            .or_insert_with(|| Value::from(now.as_str()));
    }
    f::UPDATED_AT.set(&mut stamped, now);
    Ok(Some(stamped))
}

#[cfg(test)]
mod tests;
