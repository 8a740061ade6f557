//! Claims: acquisition, renewal, takeover and release of one target.
//!
//! The decision reads the claim and, only when someone else holds it, the holder's
//! heartbeat, from the same snapshot the write is committed on: a holder that beats
//! between the check and the commit makes the commit fail and the decision re-run.

use chrono::Duration;

use super::event;
use super::liveness;
use super::liveness::Liveness;
use super::Ctx;
use super::Plan;
use super::RuleError;
use crate::ids::paths;
use crate::ids::AgentId;
use crate::ids::BatchId;
use crate::ids::RepoSlug;
use crate::ids::Target;
use crate::record::field as f;
use crate::record::field::copy_all;
use crate::record::Claim;
use crate::record::EventKind;
use crate::record::Record;
use crate::serde_name::WireName;
use crate::snapshot::ReadError;
use crate::snapshot::Snapshot;
use crate::time;

/// The claim fields a lifecycle event starts from.
const LIFECYCLE: [f::Field; 4] = [f::AGENT_ID, f::REPO, f::TARGET, f::BRANCH];

/// The default claim TTL: 4 hours.
pub const DEFAULT_TTL_SECONDS: i64 = 14_400;

/// A `claim` request.
#[derive(Debug, Clone)]
pub struct ClaimRequest {
    /// Who claims.
    pub agent: AgentId,
    /// The repository of the target.
    pub repo: RepoSlug,
    /// The issue or pull request.
    pub target: Target,
    /// `--batch-id`.
    pub batch: Option<BatchId>,
    /// `--branch`.
    pub branch: Option<String>,
    /// Seconds until the claim expires (positive).
    pub ttl_seconds: i64,
    /// Metadata fields given (present-only).
    pub metadata: Record,
}

/// How a claim was granted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimKind {
    /// Nobody held it (no record, released, or not active).
    New,
    /// The same agent on the same lane extended it.
    Renewed,
    /// The same agent renewed it, but nothing observable changed, so nothing was written.
    Unchanged,
    /// The same agent moved it to another batch or branch.
    LaneChange,
    /// Another agent's dead or expired claim was taken over.
    Takeover,
}

/// What a granted claim reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Claimed {
    /// How it was granted.
    pub kind: ClaimKind,
    /// The claim path.
    pub path: String,
    /// The claim as it now stands.
    pub record: Claim,
    /// The previous holder, on takeover.
    pub previous_holder: Option<String>,
}

/// The state of a holder's heartbeat as the claim rule sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HolderBeat {
    /// A heartbeat with a liveness.
    Seen(Liveness),
    /// No heartbeat record (or an unusable holder id).
    Missing,
    /// A heartbeat record that does not parse.
    Invalid,
}

impl HolderBeat {
    /// Returns the word for this state: a liveness, `missing` or `invalid`.
    pub fn label(self) -> &'static str {
        match self {
            HolderBeat::Seen(l) => l.wire_name(),
            HolderBeat::Missing => "missing",
            HolderBeat::Invalid => "invalid",
        }
    }
}

/// Reads the holder's heartbeat state from the snapshot.
pub fn holder_beat(
    snap: &impl Snapshot,
    holder: &str,
    now: time::Instant,
) -> Result<HolderBeat, RuleError> {
    let Ok(agent) = holder.parse::<AgentId>() else {
        return Ok(HolderBeat::Missing);
    };
    match snap.read(&paths::heartbeat(&agent)) {
        Ok(Some(hb)) => Ok(HolderBeat::Seen(liveness::of_record(&hb, now))),
        Ok(None) => Ok(HolderBeat::Missing),
        Err(ReadError::Malformed { .. }) => Ok(HolderBeat::Invalid),
        Err(e) => Err(e.into()),
    }
}

impl std::fmt::Display for HolderBeat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.label())
    }
}

/// Why a claim was not granted: another agent's active claim still holds the target.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClaimRefused {
    /// The holder's heartbeat is live.
    #[error("active claim for {repo}#{target} held by {holder}; heartbeat live")]
    HeldLive {
        /// The repository of the target.
        repo: RepoSlug,
        /// The target.
        target: Target,
        /// The agent holding the claim.
        holder: String,
    },
    /// The holder's heartbeat is stale (not yet dead).
    #[error("active claim for {repo}#{target} held by {holder}; heartbeat stale")]
    HeldStale {
        /// The repository of the target.
        repo: RepoSlug,
        /// The target.
        target: Target,
        /// The agent holding the claim.
        holder: String,
    },
    /// The holder has no usable heartbeat, and the claim's own expiry is still ahead.
    #[error(
        "active claim for {repo}#{target} held by {holder}; heartbeat {beat}; fallback claim expires at {expires_at}"
    )]
    HeldUntilExpiry {
        /// The repository of the target.
        repo: RepoSlug,
        /// The target.
        target: Target,
        /// The agent holding the claim.
        holder: String,
        /// What the holder's heartbeat is (missing or invalid).
        beat: HolderBeat,
        /// The claim's `expires_at`, as stored.
        expires_at: String,
    },
    /// The holder has no usable heartbeat and the claim's expiry does not read, so the
    /// claim stays held until its holder releases it.
    #[error(
        "active claim for {repo}#{target} held by {holder}; heartbeat {beat}; fallback claim expiry {expires_at} is unreadable, so the claim stays held until its holder releases it"
    )]
    ExpiryUnreadable {
        /// The repository of the target.
        repo: RepoSlug,
        /// The target.
        target: Target,
        /// The agent holding the claim.
        holder: String,
        /// What the holder's heartbeat is (missing or invalid).
        beat: HolderBeat,
        /// The claim's `expires_at`, as stored (JSON).
        expires_at: serde_json::Value,
    },
}

/// Decides whether another agent's active claim on `repo#target` may be taken over; `Err`
/// is the refusal.
pub fn takeover_allowed(
    claim: &Claim,
    repo: &RepoSlug,
    target: &Target,
    beat: HolderBeat,
    now: time::Instant,
) -> Result<(), RuleError> {
    let (repo, target) = (repo.clone(), target.clone());
    let holder = claim.agent_id().unwrap_or_default().to_owned();
    let decision = match beat {
        HolderBeat::Seen(Liveness::Live) => Err(ClaimRefused::HeldLive {
            repo,
            target,
            holder,
        }),
        HolderBeat::Seen(Liveness::Stale) => Err(ClaimRefused::HeldStale {
            repo,
            target,
            holder,
        }),
        HolderBeat::Seen(Liveness::Dead) => Ok(()),
        // Without a heartbeat verdict the claim's own expiry decides. An expiry that is
        // present but unreadable (a newer writer's format, a hand edit, a year past 9999)
        // keeps the claim held: reading it as expired would hand the target to anyone.
        _ => match f::EXPIRES_AT.present(claim) {
            None => Ok(()),
            Some(raw) => match raw.as_str().and_then(time::parse) {
                Some(t) if t > now => Err(ClaimRefused::HeldUntilExpiry {
                    repo,
                    target,
                    holder,
                    beat,
                    expires_at: raw.as_str().unwrap_or_default().to_owned(),
                }),
                Some(_) => Ok(()),
                None => Err(ClaimRefused::ExpiryUnreadable {
                    repo,
                    target,
                    holder,
                    beat,
                    expires_at: raw.clone(),
                }),
            },
        },
    };
    decision.map_err(RuleError::from)
}

/// Decides a claim: refuse, renew, take over or grant, plus the `claim.acquired` event.
pub fn decide(
    snap: &impl Snapshot,
    req: &ClaimRequest,
    ctx: &Ctx,
) -> Result<Plan<Claimed>, RuleError> {
    let path = paths::claim(&req.repo, &req.target);
    let label = format!("{}#{}", req.repo, req.target);
    let existing: Option<Claim> = snap.read_as(&path)?;
    let me = req.agent.as_str();

    let mut previous_holder = None;
    let active_other = existing
        .as_ref()
        .filter(|c| c.is_active() && c.agent_id() != Some(me));
    if let Some(claim) = active_other {
        let holder = claim.agent_id().unwrap_or_default();
        let beat = holder_beat(snap, holder, ctx.now)?;
        takeover_allowed(claim, &req.repo, &req.target, beat, ctx.now)?;
        previous_holder = Some(holder.to_owned());
    }

    // Same lane unless a batch or branch is given that differs from a stored one; adding
    // one the claim lacked is still a renewal.
    let same_lane = |stored: Option<&str>, given: Option<&str>| {
        given.is_none_or(|g| stored.is_none_or(|stored| stored == g))
    };
    let mine = existing
        .as_ref()
        .filter(|c| c.is_active() && c.agent_id() == Some(me));
    let renewal = mine.filter(|c| {
        same_lane(c.batch_id(), req.batch.as_ref().map(BatchId::as_str))
            && same_lane(c.branch(), req.branch.as_deref())
    });
    let kind = match (&previous_holder, renewal, mine) {
        (Some(_), _, _) => ClaimKind::Takeover,
        (None, Some(_), _) => ClaimKind::Renewed,
        (None, None, Some(_)) => ClaimKind::LaneChange,
        (None, None, None) => ClaimKind::New,
    };

    let now = time::format(ctx.now);
    let mut record = Claim::default();
    f::SCHEMA_VERSION.set(&mut record, 1);
    f::REPO.set(&mut record, req.repo.to_string());
    f::TARGET.set(&mut record, req.target.to_string());
    f::AGENT_ID.set(&mut record, me);
    if let Some(prior) = renewal {
        // A renewal keeps the lane's batch, branch, metadata, claimed_at and unknown fields.
        for (k, v) in prior.iter() {
            record.entry(k.clone()).or_insert_with(|| v.clone());
        }
    }
    if let Some(b) = &req.batch {
        f::BATCH_ID.set(&mut record, b.to_string());
    }
    if let Some(b) = &req.branch {
        f::BRANCH.set(&mut record, b.as_str());
    }
    f::STATUS.set(&mut record, "active");
    if renewal.is_none() {
        f::CLAIMED_AT.set(&mut record, now.as_str());
    }
    f::UPDATED_AT.set(&mut record, now);
    let expires = time::offset_seconds(ctx.now, req.ttl_seconds).ok_or(super::TtlOutOfRange {
        record: "claim",
        ttl_seconds: req.ttl_seconds,
    })?;
    f::EXPIRES_AT.set(&mut record, time::format(expires));
    record.extend(req.metadata.clone());
    ctx.identity.stamp(&mut record);

    if let Some(prior) = renewal {
        if renewal_is_noop(prior, &record, req.ttl_seconds, ctx.now) {
            return Ok(Plan::nothing(
                "claim",
                Claimed {
                    kind: ClaimKind::Unchanged,
                    path,
                    record: prior.clone(),
                    previous_holder,
                },
            ));
        }
    }

    let mut plan = Plan {
        summary: format!("claim {label} by {me}"),
        state: Vec::new(),
        heartbeats: Vec::new(),
        removals: Vec::new(),
        heartbeat_removals: Vec::new(),
        op: "claim",
        warnings: Vec::new(),
        outcome: Claimed {
            kind,
            path: path.clone(),
            record: record.clone(),
            previous_holder,
        },
    };
    if kind != ClaimKind::Renewed || fencing_changed(renewal, &record) {
        let mut fields = Record::new();
        copy_all(&LIFECYCLE, &record, &mut fields);
        copy_all(&f::METADATA, &record, &mut fields);
        match event::lifecycle(
            snap,
            ctx,
            EventKind::ClaimAcquired,
            record.batch_id(),
            fields,
        ) {
            Ok(Some(ev)) => plan.state.push(ev),
            Ok(None) => {}
            Err(w) => plan.warnings.push(w.to_string()),
        }
    }
    plan.state.insert(0, (path, record.into_record()));
    Ok(plan)
}

/// Reports whether a same-lane renewal changes nothing observable.
///
/// Liveness comes from heartbeats, so a renewal that only pushes `expires_at` further out
/// is written only once half of the claim's TTL has passed; this keeps a renewing agent
/// from adding a commit per renewal while the fallback expiry stays meaningful.
fn renewal_is_noop(prior: &Claim, next: &Claim, ttl_seconds: i64, now: time::Instant) -> bool {
    let strip = |r: &Claim| {
        let mut r = r.clone();
        f::UPDATED_AT.take(&mut r);
        f::EXPIRES_AT.take(&mut r);
        r
    };
    let remaining = prior.expires_at().and_then(time::parse).map(|t| t - now);
    strip(prior) == strip(next)
        && remaining.is_some_and(|r| r >= Duration::seconds(ttl_seconds / 2))
}

/// Reports whether a renewal changed or added `generation`/`instance_id` (re-emits `claim.acquired`).
fn fencing_changed(prior: Option<&Claim>, next: &Claim) -> bool {
    prior.is_some_and(|p| {
        Claim::FENCING
            .iter()
            .any(|k| k.get(next).is_some() && k.get(p) != k.get(next))
    })
}

/// A non-terminal `release` request.
#[derive(Debug, Clone)]
pub struct ReleaseRequest {
    /// Who releases.
    pub agent: AgentId,
    /// The repository of the target.
    pub repo: RepoSlug,
    /// The issue or pull request.
    pub target: Target,
    /// `--branch` (overrides the stored branch).
    pub branch: Option<String>,
    /// `--handoff-to`.
    pub handoff_to: Option<String>,
    /// `--handoff-note`.
    pub handoff_note: Option<String>,
    /// Metadata fields given (present-only).
    pub metadata: Record,
}

/// What a release reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Released {
    /// The claim path.
    pub path: String,
    /// The released claim.
    pub record: Claim,
}

/// Why a release was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReleaseRefused {
    /// There is no claim on the target.
    #[error("no claim exists for {repo}#{target}")]
    NoClaim {
        /// The repository of the target.
        repo: RepoSlug,
        /// The target.
        target: Target,
    },
    /// The claim belongs to another agent.
    #[error("claim belongs to {holder}; {agent} cannot release it")]
    HeldByOther {
        /// The agent holding the claim.
        holder: String,
        /// The agent that asked to release it.
        agent: AgentId,
    },
}

/// Reads the claim at `repo#target` and checks that `agent` may release it.
pub fn claim_for_release(
    snap: &impl Snapshot,
    agent: &AgentId,
    repo: &RepoSlug,
    target: &Target,
) -> Result<(String, Claim), RuleError> {
    let path = paths::claim(repo, target);
    let Some(claim) = snap.read_as::<Claim>(&path)? else {
        return Err(ReleaseRefused::NoClaim {
            repo: repo.clone(),
            target: target.clone(),
        }
        .into());
    };
    match claim.agent_id().filter(|h| !h.is_empty()) {
        Some(holder) if holder != agent.as_str() => Err(ReleaseRefused::HeldByOther {
            holder: holder.to_owned(),
            agent: agent.clone(),
        }
        .into()),
        _ => Ok((path, claim)),
    }
}

/// Stamps `claim` as released by `agent` at `now` (shared by plain and terminal release).
pub fn stamp_released(
    claim: &Claim,
    agent: &AgentId,
    branch: Option<&str>,
    metadata: &Record,
    ctx: &Ctx,
) -> Claim {
    let now = time::format(ctx.now);
    let mut record = claim.clone();
    let holder = claim
        .agent_id()
        .filter(|h| !h.is_empty())
        .unwrap_or(agent.as_str())
        .to_owned();
    f::AGENT_ID.set(&mut record, holder);
    f::STATUS.set(&mut record, "released");
    f::RELEASED_BY.set(&mut record, agent.to_string());
    f::RELEASED_AT.set(&mut record, now.as_str());
    f::UPDATED_AT.set(&mut record, now.as_str());
    f::EXPIRES_AT.set(&mut record, now);
    for key in Claim::HANDOFF {
        key.take(&mut record);
    }
    if let Some(b) = branch {
        f::BRANCH.set(&mut record, b);
    }
    record.extend(metadata.clone());
    ctx.identity.stamp(&mut record);
    record
}

/// Decides a plain or handoff release, plus the `claim.released` event.
pub fn release(
    snap: &impl Snapshot,
    req: &ReleaseRequest,
    ctx: &Ctx,
) -> Result<Plan<Released>, RuleError> {
    let (path, claim) = claim_for_release(snap, &req.agent, &req.repo, &req.target)?;
    let mut record = stamp_released(
        &claim,
        &req.agent,
        req.branch.as_deref(),
        &req.metadata,
        ctx,
    );
    let handoff = req.handoff_to.is_some() || req.handoff_note.is_some();
    if handoff {
        f::RELEASE_MODE.set(&mut record, "handoff");
        for (key, value) in [
            (f::HANDOFF_TO, &req.handoff_to),
            (f::HANDOFF_NOTE, &req.handoff_note),
        ] {
            if let Some(v) = value {
                key.set(&mut record, v.as_str());
            }
        }
    }

    let mut fields = Record::new();
    copy_all(&LIFECYCLE, &record, &mut fields);
    f::STATUS.set(&mut fields, "released");
    if let Some(note) = &req.handoff_note {
        f::MESSAGE.set(&mut fields, note.as_str());
    }
    copy_all(&f::METADATA, &record, &mut fields);
    copy_all(&Claim::HANDOFF, &record, &mut fields);
    let mut plan = Plan {
        summary: format!("release {}#{} by {}", req.repo, req.target, req.agent),
        state: vec![(path.clone(), record.clone().into_record())],
        heartbeats: Vec::new(),
        removals: Vec::new(),
        heartbeat_removals: Vec::new(),
        op: "release",
        warnings: Vec::new(),
        outcome: Released {
            path,
            record: record.clone(),
        },
    };
    match event::lifecycle(
        snap,
        ctx,
        EventKind::ClaimReleased,
        record.batch_id(),
        fields,
    ) {
        Ok(Some(ev)) => plan.state.push(ev),
        Ok(None) => {}
        Err(w) => plan.warnings.push(w.to_string()),
    }
    Ok(plan)
}

#[cfg(test)]
mod tests;
