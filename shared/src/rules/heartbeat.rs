//! Heartbeats: one record per agent, reused across lanes, with the reference's
//! preservation rules and the `phase.changed` lifecycle event.
//!
//! Heartbeats live on the writing machine's heartbeat ref, not on the state branch, so a
//! beat never adds a commit to the audit trail; only the `phase.changed` event does.

use super::event;
use super::vocab;
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
use crate::record::field::Field;
use crate::record::EventKind;
use crate::record::Heartbeat;
use crate::record::Record;
use crate::snapshot::Snapshot;
use crate::time;

/// The default heartbeat TTL: 15 minutes.
pub const DEFAULT_TTL_SECONDS: i64 = 900;

/// The lane identity a beat may change: a differing one is a lane change.
const LANE: [Field; 4] = [f::REPO, f::TARGET, f::BATCH_ID, f::BRANCH];

/// A `heartbeat` request.
#[derive(Debug, Clone)]
pub struct HeartbeatRequest {
    /// Whose heartbeat.
    pub agent: AgentId,
    /// `--repo`.
    pub repo: Option<RepoSlug>,
    /// `--target`.
    pub target: Option<Target>,
    /// `--batch-id`.
    pub batch: Option<BatchId>,
    /// `--branch`.
    pub branch: Option<String>,
    /// `--status` (defaults to `in_progress` on every beat, as in the reference).
    pub status: Option<String>,
    /// Seconds until the beat expires (positive).
    pub ttl_seconds: i64,
    /// Metadata fields given (present-only).
    pub metadata: Record,
}

/// What a heartbeat reports.
#[derive(Debug, Clone, PartialEq)]
pub struct Beat {
    /// The heartbeat record written.
    pub record: Heartbeat,
    /// Whether this beat switched lanes (and so dropped the old lane's metadata).
    pub lane_change: bool,
}

/// Decides a heartbeat write and, for an established same-lane phase change, `phase.changed`.
pub fn decide(
    snap: &impl Snapshot,
    req: &HeartbeatRequest,
    ctx: &Ctx,
) -> Result<Plan<Beat>, RuleError> {
    let prior: Heartbeat = snap
        .read_as(&paths::heartbeat(&req.agent))?
        .unwrap_or_default();
    let given = |key: Field| -> Option<String> {
        match key {
            f::REPO => req.repo.as_ref().map(ToString::to_string),
            f::TARGET => req.target.as_ref().map(ToString::to_string),
            f::BATCH_ID => req.batch.as_ref().map(ToString::to_string),
            f::BRANCH => req.branch.clone(),
            _ => None,
        }
    };
    // A supplied identity field that differs from (or is absent on) the prior record.
    let differs = |key: Field| given(key).is_some_and(|v| key.text(&prior) != Some(v.as_str()));
    // `--repo` without `--target` on a record that has a target moves off that target.
    let target_cleared = req.repo.is_some() && req.target.is_none() && f::TARGET.is_in(&prior);
    let lane_change = LANE.iter().any(|k| differs(*k)) || target_cleared;

    let mut record = Heartbeat::default();
    f::SCHEMA_VERSION.set(&mut record, 1);
    f::AGENT_ID.set(&mut record, req.agent.to_string());
    if lane_change {
        if !differs(f::REPO) {
            f::REPO.copy(&prior, &mut record);
        }
        if !differs(f::REPO) && !differs(f::TARGET) && !target_cleared {
            f::TARGET.copy(&prior, &mut record);
        }
    } else {
        f::REPO.copy(&prior, &mut record);
        f::TARGET.copy(&prior, &mut record);
        copy_all(&Heartbeat::CARRIED, &prior, &mut record);
        // Fields this client does not know about are kept too (lossless for newer writers).
        for (k, v) in prior.iter() {
            if !record.contains_key(k) && !is_written_here(k) {
                record.insert(k.clone(), v.clone());
            }
        }
    }
    for key in LANE {
        if let Some(v) = given(key) {
            key.set(&mut record, v);
        }
    }
    let raw = req.status.as_deref().unwrap_or("in_progress");
    let status = vocab::normalize(raw);
    let mut warnings = Vec::new();
    if status.unrecognized {
        warnings.push(vocab::unrecognized_warning(raw));
    }
    f::STATUS.set(&mut record, status.status);
    let now = time::format(ctx.now);
    f::UPDATED_AT.set(&mut record, now);
    let expires = time::offset_seconds(ctx.now, req.ttl_seconds).ok_or(super::TtlOutOfRange {
        record: "heartbeat",
        ttl_seconds: req.ttl_seconds,
    })?;
    f::EXPIRES_AT.set(&mut record, time::format(expires));
    record.extend(req.metadata.clone());
    ctx.identity.stamp(&mut record);
    match status.status_raw {
        Some(r) => f::STATUS_RAW.set(&mut record, r),
        None => {
            f::STATUS_RAW.take(&mut record);
        }
    }

    let mut plan = Plan {
        summary: format!("heartbeat {}", req.agent),
        state: Vec::new(),
        heartbeats: Vec::new(),
        removals: Vec::new(),
        heartbeat_removals: Vec::new(),
        op: "heartbeat",
        warnings,
        outcome: Beat {
            record: record.clone(),
            lane_change,
        },
    };
    if let Some(ev) = phase_changed(snap, req, ctx, &prior, &record, &mut plan.warnings) {
        plan.summary = format!("heartbeat {} (phase change)", req.agent);
        plan.state.push(ev);
    }
    plan.heartbeats
        .push((req.agent.clone(), record.into_record()));
    Ok(plan)
}

/// Fields this rule writes itself (never copied blindly from the prior record).
fn is_written_here(key: &str) -> bool {
    [
        f::SCHEMA_VERSION,
        f::AGENT_ID,
        f::STATUS,
        f::UPDATED_AT,
        f::EXPIRES_AT,
        f::TARGET,
        f::REPO,
    ]
    .iter()
    .chain(&Heartbeat::CARRIED)
    .any(|f| f.name() == key)
}

/// Builds `phase.changed` when a same-lane beat moves an established phase to a new one.
fn phase_changed(
    snap: &impl Snapshot,
    req: &HeartbeatRequest,
    ctx: &Ctx,
    prior: &Heartbeat,
    next: &Heartbeat,
    warnings: &mut Vec<String>,
) -> Option<(String, Record)> {
    let new_phase = f::PHASE.text(&req.metadata)?;
    let old_phase = f::PHASE.nonempty(prior).filter(|p| *p != new_phase)?;
    let switched = [
        (f::BATCH_ID, req.batch.as_ref().map(ToString::to_string)),
        (f::REPO, req.repo.as_ref().map(ToString::to_string)),
        (f::TARGET, req.target.as_ref().map(ToString::to_string)),
    ]
    .into_iter()
    .any(|(k, v)| v.is_some_and(|v| k.text(prior) != Some(v.as_str())));
    if switched {
        return None;
    }
    let batch = req
        .batch
        .as_ref()
        .map(ToString::to_string)
        .or_else(|| prior.batch_id().map(str::to_owned))?;
    let mut fields = Record::new();
    f::AGENT_ID.set(&mut fields, req.agent.to_string());
    for key in [f::REPO, f::TARGET, f::BRANCH] {
        if let Some(v) = key.get(next).or_else(|| key.get(prior)) {
            key.set(&mut fields, v.clone());
        }
    }
    f::PREVIOUS_PHASE.set(&mut fields, old_phase);
    f::MESSAGE.set(&mut fields, format!("phase {old_phase} -> {new_phase}"));
    for key in f::METADATA {
        if let Some(v) = key.get(&req.metadata).or_else(|| key.get(prior)) {
            key.set(&mut fields, v.clone());
        }
    }
    match event::lifecycle(snap, ctx, EventKind::PhaseChanged, Some(&batch), fields) {
        Ok(ev) => ev,
        Err(w) => {
            warnings.push(w.to_string());
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::record::Identity;
    use crate::snapshot::MemorySnapshot;

    fn ctx() -> Ctx {
        Ctx {
            now: time::parse("2026-06-13T12:00:00Z").unwrap(),
            nonce: 7,
            identity: Identity::default(),
        }
    }

    fn req() -> HeartbeatRequest {
        HeartbeatRequest {
            agent: "w1".parse().unwrap(),
            repo: None,
            target: None,
            batch: None,
            branch: None,
            status: None,
            ttl_seconds: DEFAULT_TTL_SECONDS,
            metadata: Record::new(),
        }
    }

    fn prior() -> MemorySnapshot {
        let mut snap = MemorySnapshot::default();
        snap.put(
            "heartbeats/w1.json",
            &json!({"schema_version": 1, "agent_id": "w1", "repo": "acme/app", "target": "7",
                    "batch_id": "b1", "status": "blocked", "updated_at": "2026-06-13T11:55:00Z",
                    "expires_at": "2026-06-13T12:10:00Z", "phase": "implementing",
                    "thread_handle": "t1", "machine_id": "m1", "status_raw": "Blocked"}),
        );
        snap
    }

    #[test]
    fn regression_huge_heartbeat_ttl_panics() {
        for ttl in [i64::MAX, 300_000_000_000] {
            let r = HeartbeatRequest {
                ttl_seconds: ttl,
                ..req()
            };
            assert_eq!(
                decide(&prior(), &r, &ctx()).unwrap_err(),
                RuleError::TtlOutOfRange(super::super::TtlOutOfRange {
                    record: "heartbeat",
                    ttl_seconds: ttl,
                }),
                "ttl {ttl} was accepted"
            );
        }
    }

    #[test]
    fn plain_tick_preserves_lane_and_resets_status() {
        let plan = decide(&prior(), &req(), &ctx()).unwrap();
        let r = &plan.heartbeats[0].1;
        assert!(!plan.outcome.lane_change);
        assert_eq!(r["status"], json!("in_progress"));
        assert_eq!(
            r.get("status_raw"),
            None,
            "the current write decides status_raw"
        );
        for key in [
            "repo",
            "target",
            "batch_id",
            "phase",
            "thread_handle",
            "machine_id",
        ] {
            assert_eq!(
                r.get(key),
                prior()
                    .read("heartbeats/w1.json")
                    .unwrap()
                    .unwrap()
                    .get(key),
                "{key}"
            );
        }
        assert_eq!(r["expires_at"], json!("2026-06-13T12:15:00Z"));
        assert!(plan.state.is_empty());
    }

    #[test]
    fn lane_change_drops_metadata() {
        // (what is supplied, lane change?, repo kept?, target kept?)
        type Setup = fn(&mut HeartbeatRequest);
        let cases: [(&str, Setup, bool, bool, bool); 6] = [
            (
                "same batch",
                |r| r.batch = Some("b1".parse().unwrap()),
                false,
                true,
                true,
            ),
            (
                "other batch",
                |r| r.batch = Some("b2".parse().unwrap()),
                true,
                true,
                true,
            ),
            (
                "new branch",
                |r| r.branch = Some("x".into()),
                true,
                true,
                true,
            ),
            (
                "other target",
                |r| r.target = Some("8".parse().unwrap()),
                true,
                true,
                false,
            ),
            (
                "other repo",
                |r| r.repo = Some("acme/web".parse().unwrap()),
                true,
                false,
                false,
            ),
            (
                "same repo without target",
                |r| r.repo = Some("acme/app".parse().unwrap()),
                true,
                true,
                false,
            ),
        ];
        for (name, setup, change, repo_kept, target_kept) in cases {
            let mut r = req();
            setup(&mut r);
            let plan = decide(&prior(), &r, &ctx()).unwrap();
            let rec = &plan.heartbeats[0].1;
            assert_eq!(plan.outcome.lane_change, change, "{name}");
            assert_eq!(rec.get("phase").is_some(), !change, "{name}");
            assert_eq!(rec.get("thread_handle").is_some(), !change, "{name}");
            assert_eq!(
                rec.get("repo") == Some(&json!("acme/app")),
                repo_kept,
                "{name}"
            );
            assert_eq!(
                rec.get("target") == Some(&json!("7")),
                target_kept,
                "{name}"
            );
        }
    }

    #[test]
    fn phase_changed_emission() {
        let with_phase = |p: &str| {
            let mut r = req();
            r.metadata.insert("phase".into(), json!(p));
            r
        };
        // An established phase moving on emits, with previous_phase.
        let plan = decide(&prior(), &with_phase("validating"), &ctx()).unwrap();
        assert_eq!(plan.state.len(), 1);
        let ev = &plan.state[0].1;
        assert_eq!(ev["type"], json!("phase.changed"));
        assert_eq!(ev["previous_phase"], json!("implementing"));
        assert_eq!(ev["phase"], json!("validating"));
        assert_eq!(ev["message"], json!("phase implementing -> validating"));
        assert_eq!(ev["batch_id"], json!("b1"));
        assert_eq!(ev["thread_handle"], json!("t1"));
        // A repeated phase, a first phase, and a lane switch emit nothing.
        assert!(decide(&prior(), &with_phase("implementing"), &ctx())
            .unwrap()
            .state
            .is_empty());
        assert!(decide(&MemorySnapshot::default(), &with_phase("x"), &ctx())
            .unwrap()
            .state
            .is_empty());
        let mut r = with_phase("validating");
        r.target = Some("9".parse().unwrap());
        assert!(decide(&prior(), &r, &ctx()).unwrap().state.is_empty());
    }

    #[test]
    fn unrecognised_status_is_kept_with_a_warning() {
        let mut r = req();
        r.status = Some("token_limit_pause".into());
        let plan = decide(&prior(), &r, &ctx()).unwrap();
        let rec = &plan.heartbeats[0].1;
        assert_eq!(rec["status"], json!("token_limit_pause"));
        assert_eq!(rec["status_raw"], json!("token_limit_pause"));
        assert!(plan.warnings[0]
            .starts_with("warning: status \"token_limit_pause\" is not in the canonical"));
    }
}
