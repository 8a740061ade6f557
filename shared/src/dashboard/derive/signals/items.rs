//! Health signals about work items: H1 (heartbeat without a machine id), H2 (active claim
//! without a heartbeat), H3 (started but nobody processing it).

use rustc_hash::FxHashSet as HashSet;

use super::context::item;
use super::context::Cx;
use super::context::Subject;
use crate::dashboard::derive::machine_groups::MachineOf;
use crate::dashboard::derive::sources;
use crate::dashboard::inputs::records::ClaimIn;
use crate::dashboard::model::HealthCategory;
use crate::dashboard::model::HealthItem;
use crate::dashboard::model::RowState;
use crate::dashboard::model::Scheduling;
use crate::dashboard::model::Severity;
use crate::dashboard::model::Signal;

/// H1: a heartbeat whose agent reports no machine anywhere, on work that is not done.
pub(super) fn h1_missing_machine(cx: &Cx<'_>) -> Vec<HealthItem> {
    cx.inputs
        .heartbeats
        .iter()
        .filter_map(|h| {
            let item_ok = match (&h.repo, &h.target) {
                (Some(r), Some(t)) if cx.pass.item(r, t) => cx.operational(r, t),
                _ if !cx.pass.all() => return None,
                _ => true,
            };
            (cx.machines.get(&h.agent) == Some(&MachineOf::Missing) && item_ok).then(|| {
                item(
                    Signal::H1,
                    "Heartbeat missing machine id",
                    Severity::Warning,
                    HealthCategory::Machine,
                    format!(
                        "{} does not report machine_id, so machine ownership cannot be shown reliably.",
                        h.agent
                    ),
                    Subject {
                        agent: Some(&h.agent),
                        ..Subject::default()
                    },
                )
            })
        })
        .collect()
}

/// H2: an active claim with no heartbeat from its holder on that work.
pub(super) fn h2_claim_without_heartbeat(cx: &Cx<'_>) -> Vec<HealthItem> {
    let claims: Vec<&ClaimIn> = sources::active_claims(cx.inputs)
        .into_iter()
        .filter(|c| c.status == "active" && cx.pass.item(&c.repo, &c.target))
        .collect();
    if claims.is_empty() {
        return Vec::new();
    }
    let beats: HashSet<(&str, &str, &str)> = cx
        .inputs
        .heartbeats
        .iter()
        .filter_map(|h| Some((h.agent.as_str(), h.repo.as_deref()?, h.target.as_deref()?)))
        .filter(|(_, r, t)| cx.pass.item(r, t))
        .collect();
    claims
        .into_iter()
        .filter(|c| {
            cx.operational(&c.repo, &c.target)
                && !beats.contains(&(c.agent.as_str(), c.repo.as_str(), c.target.as_str()))
        })
        .map(|c| {
            item(
                Signal::H2,
                "Active claim has no matching heartbeat",
                Severity::Warning,
                HealthCategory::Heartbeat,
                format!(
                    "{} holds {}#{}, but no heartbeat currently points at that work.",
                    c.agent, c.repo, c.target
                ),
                Subject {
                    agent: Some(&c.agent),
                    repo: Some(&c.repo),
                    target: Some(&c.target),
                    ..Subject::default()
                },
            )
        })
        .collect()
}

/// H3: work with coordination state, not done or ready, that no live or stale holder is
/// processing (lane rows without a known repository are left out).
pub(super) fn h3_started_not_processing(cx: &Cx<'_>) -> Vec<HealthItem> {
    cx.rows
        .iter()
        .filter(|r| {
            r.scheduling == Scheduling::StartedNotProcessing
                && cx.pass.item(&r.repo, &r.target)
                && !matches!(
                    r.state,
                    RowState::Done | RowState::Archived | RowState::Ready
                )
                && !r.target.is_empty()
                && r.repo != "UNKNOWN"
        })
        .map(|r| {
            item(
                Signal::H3,
                "Work started but not currently processing",
                Severity::Warning,
                if r.batch_id.is_some() {
                    HealthCategory::Batch
                } else {
                    HealthCategory::Heartbeat
                },
                format!(
                    "{}#{} has coordination state but no live/stale holder.",
                    r.repo, r.target
                ),
                Subject {
                    repo: Some(&r.repo),
                    target: Some(&r.target),
                    batch: r.batch_id.as_deref(),
                    ..Subject::default()
                },
            )
        })
        .collect()
}
