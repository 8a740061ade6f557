//! The batch page and the item page's custody timeline (reference §1.11).

use super::build::event_view;
use super::derive;
use super::input::EventIn;
use super::input::Inputs;
use super::model::BatchDetail;
use super::model::DashboardModel;
use super::model::ItemDetail;
use super::model::RowState;
use super::model::TimelineEntry;
use super::model::TimelineKind;
use super::text;
use crate::rules::liveness::Liveness;
use crate::time;
use crate::time::Instant;

/// The batch page: the batch, its events newest first, its rows and health items.
pub fn batch_detail(inputs: &Inputs, model: &DashboardModel, id: &str) -> Option<BatchDetail> {
    let batch = model.batches.iter().find(|b| b.id == id)?.clone();
    let mut events: Vec<&EventIn> = inputs
        .events
        .iter()
        .map(AsRef::as_ref)
        .filter(|e| e.batch_id.as_deref() == Some(id))
        .collect();
    events.sort_by(|a, b| b.at.cmp(&a.at).then_with(|| b.path.cmp(&a.path)));
    Some(BatchDetail {
        events: events.into_iter().map(event_view).collect(),
        rows: model
            .rows
            .iter()
            .filter(|r| r.batch_id.as_deref() == Some(id))
            .cloned()
            .collect(),
        health: model
            .health
            .iter()
            .filter(|h| h.batch_id.as_deref() == Some(id))
            .cloned()
            .collect(),
        version: model.version.clone(),
        batch,
    })
}

fn is_phase(kind: &str) -> bool {
    let k = kind.to_lowercase();
    k == "phase"
        || k.starts_with("phase.")
        || ["plan", "implement", "verify", "push", "review"]
            .iter()
            .any(|p| k.starts_with(p))
}

fn is_release(e: &EventIn) -> bool {
    let k = e.kind.to_lowercase();
    k == "claim.released"
        || k == "release"
        || k == "released"
        || (text::terminal(&k).is_some() && !k.starts_with("claim.acquired"))
}

fn entry(
    kind: TimelineKind,
    label: String,
    e: Option<&EventIn>,
    at: Option<Instant>,
) -> TimelineEntry {
    TimelineEntry {
        kind,
        label,
        at: at.map(time::format),
        agent: e.and_then(|e| e.agent.clone()),
        previous_agent: None,
        machine: e.and_then(|e| e.meta.machine.clone()),
        batch_id: e.and_then(|e| e.batch_id.clone()),
        status: e.and_then(|e| e.status.clone()),
    }
}

/// The item page: holder, row and custody chain (oldest first).
pub fn item_detail(
    inputs: &Inputs,
    model: &DashboardModel,
    repo: &str,
    target: &str,
    now: Instant,
) -> ItemDetail {
    let row = model
        .rows
        .iter()
        .find(|r| r.repo == repo && r.target == target)
        .cloned();
    let mut events: Vec<&EventIn> = inputs
        .events
        .iter()
        .map(AsRef::as_ref)
        .filter(|e| e.repo.as_deref() == Some(repo) && e.target.as_deref() == Some(target))
        .collect();
    events.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.path.cmp(&b.path)));

    let mut timeline = Vec::new();
    let mut holder: Option<String> = None;
    let mut proven = false;
    let mut last_phase: Option<String> = None;
    for e in &events {
        let kind = e.kind.to_lowercase();
        if kind == "claim.acquired" || kind == "claim" || kind == "takeover" {
            let agent = e.agent.clone().unwrap_or_else(|| "unattributed".into());
            let mut t = match &holder {
                None => entry(
                    TimelineKind::Acquired,
                    format!("acquired by {agent}"),
                    Some(e),
                    e.at,
                ),
                Some(h) if *h == agent => entry(
                    TimelineKind::Renewed,
                    format!("renewed by {agent}"),
                    Some(e),
                    e.at,
                ),
                Some(h) => {
                    let mut t = entry(
                        TimelineKind::TakenOver,
                        format!("{h} → {agent}"),
                        Some(e),
                        e.at,
                    );
                    t.previous_agent = Some(h.clone());
                    t
                }
            };
            t.agent = Some(agent.clone());
            timeline.push(t);
            holder = Some(agent);
            proven = true;
            last_phase = None;
        } else if is_release(e) {
            let by_holder = e.agent.is_none() || e.agent == holder;
            if holder.is_some() && by_holder {
                let agent = holder.take().unwrap_or_default();
                timeline.push(entry(
                    TimelineKind::Released,
                    format!("released by {agent}"),
                    Some(e),
                    e.at,
                ));
                last_phase = None;
            } else {
                timeline.push(entry(TimelineKind::Event, e.kind.clone(), Some(e), e.at));
            }
        } else if is_phase(&kind) {
            let phase = e.status.clone().unwrap_or_else(|| e.kind.clone());
            if last_phase.as_deref() != Some(phase.as_str()) {
                timeline.push(entry(TimelineKind::Phase, phase.clone(), Some(e), e.at));
                last_phase = Some(phase);
            }
        } else {
            let label = match &e.status {
                Some(s) => format!("{} · {s}", e.kind),
                None => e.kind.clone(),
            };
            timeline.push(entry(TimelineKind::Event, label, Some(e), e.at));
        }
    }
    // The current claim snapshot closes the chain.
    let claim = inputs
        .claims
        .iter()
        .find(|c| c.repo == repo && c.target == target);
    if let Some(c) = claim {
        if c.status == "active" && holder.as_deref() != Some(c.agent.as_str()) {
            let mut t = if !proven {
                entry(
                    TimelineKind::UnknownOwnership,
                    format!("UNKNOWN ownership by {}", c.agent),
                    None,
                    c.updated_at,
                )
            } else if let Some(h) = &holder {
                let mut t = entry(
                    TimelineKind::TakenOver,
                    format!("{h} → {}", c.agent),
                    None,
                    c.updated_at,
                );
                t.previous_agent = Some(h.clone());
                t
            } else {
                entry(
                    TimelineKind::Acquired,
                    format!("acquired by {}", c.agent),
                    None,
                    c.updated_at,
                )
            };
            t.agent = Some(c.agent.clone());
            t.machine = c.meta.machine.clone();
            t.batch_id = c.batch_id.clone();
            timeline.push(t);
        } else if c.status == "released" && holder.is_some() {
            let mut t = entry(
                TimelineKind::Released,
                format!("released by {}", c.agent),
                None,
                c.updated_at,
            );
            t.agent = Some(c.agent.clone());
            timeline.push(t);
        }
    }
    let heartbeats: Vec<_> = inputs
        .heartbeats
        .iter()
        .filter(|h| h.repo.as_deref() == Some(repo) && h.target.as_deref() == Some(target))
        .collect();
    for h in &heartbeats {
        let live = h.liveness(now);
        let mut t = entry(
            TimelineKind::Liveness,
            format!(
                "{} · heartbeat {} ({} ago)",
                live,
                h.status,
                derive::age_label(h.updated_at, now)
            ),
            None,
            h.updated_at,
        );
        t.agent = Some(h.agent.clone());
        t.machine = h.meta.machine.clone();
        t.batch_id = h.batch_id.clone();
        t.status = Some(h.status.clone());
        timeline.push(t);
    }
    // Oldest first; entries without a time go last.
    timeline.sort_by(|a, b| match (&a.at, &b.at) {
        (Some(x), Some(y)) => x.cmp(y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    let done = row.as_ref().is_some_and(|r| r.state == RowState::Done);
    let holder = if done {
        None
    } else {
        claim
            .filter(|c| c.status == "active")
            .map(|c| c.agent.clone())
            .or_else(|| {
                heartbeats
                    .iter()
                    .find(|h| matches!(h.liveness(now), Liveness::Live | Liveness::Stale))
                    .map(|h| h.agent.clone())
            })
    };
    ItemDetail {
        repo: repo.to_owned(),
        target: target.to_owned(),
        row,
        holder,
        timeline,
        version: model.version.clone(),
    }
}
