//! The batch page and the item page: custody timeline (reference §1.11) and coordinator task.

use super::build::event_view;
use super::coordinator;
use super::derive;
use super::input::ClaimIn;
use super::input::EventIn;
use super::input::HeartbeatIn;
use super::input::Inputs;
use super::model::BatchDetail;
use super::model::DashboardModel;
use super::model::ItemDetail;
use super::model::TimelineEntry;
use super::model::TimelineKind;
use super::text;
use crate::record::EventKind;
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
        omitted_events: 0,
        history_notice: None,
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
    EventKind::ClaimReleased.is(&k)
        || k == "release"
        || k == "released"
        || (text::terminal(&k).is_some() && !k.starts_with(EventKind::ClaimAcquired.as_str()))
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

/// The item page: holder, row, custody chain (oldest first) and the coordinator's task for
/// the issue, if any.
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

    let mut custody = Custody::default();
    for e in &events {
        custody.event(e);
    }
    // The current claim snapshot closes the chain.
    let claim = inputs
        .claims
        .iter()
        .find(|c| c.repo == repo && c.target == target);
    if let Some(c) = claim {
        custody.claim_snapshot(c);
    }
    let heartbeats: Vec<&HeartbeatIn> = inputs
        .heartbeats
        .iter()
        .map(AsRef::as_ref)
        .filter(|h| h.repo.as_deref() == Some(repo) && h.target.as_deref() == Some(target))
        .collect();
    let mut timeline = custody.timeline;
    timeline.extend(heartbeats.iter().map(|h| liveness_entry(h, now)));
    // Oldest first; entries without a time go last.
    timeline.sort_by(|a, b| match (&a.at, &b.at) {
        (Some(x), Some(y)) => x.cmp(y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    let done = row.as_ref().is_some_and(|r| r.state.is_terminal());
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
    let (coordinator, coordinator_warning) =
        coordinator::item_section(&inputs.tasks, &inputs.malformed, repo, target);
    ItemDetail {
        repo: repo.to_owned(),
        target: target.to_owned(),
        row,
        holder,
        timeline,
        coordinator,
        coordinator_warning,
        version: model.version.clone(),
    }
}

/// The custody chain as the item's events tell it.
#[derive(Default)]
struct Custody {
    timeline: Vec<TimelineEntry>,
    /// The agent holding the item after the events so far.
    holder: Option<String>,
    /// Some acquisition is on record.
    proven: bool,
    /// The last phase shown (a repeated phase is shown once).
    last_phase: Option<String>,
}

impl Custody {
    /// Adds what one event says: an acquisition, a release, a phase or any other event.
    fn event(&mut self, e: &EventIn) {
        let kind = e.kind.to_lowercase();
        if EventKind::ClaimAcquired.is(&kind) || kind == "claim" || kind == "takeover" {
            self.acquired(e);
        } else if is_release(e) {
            let by_holder = e.agent.is_none() || e.agent == self.holder;
            if self.holder.is_some() && by_holder {
                let agent = self.holder.take().unwrap_or_default();
                self.timeline.push(entry(
                    TimelineKind::Released,
                    format!("released by {agent}"),
                    Some(e),
                    e.at,
                ));
                self.last_phase = None;
            } else {
                self.timeline
                    .push(entry(TimelineKind::Event, e.kind.clone(), Some(e), e.at));
            }
        } else if is_phase(&kind) {
            let phase = e.status.clone().unwrap_or_else(|| e.kind.clone());
            if self.last_phase.as_deref() != Some(phase.as_str()) {
                self.timeline
                    .push(entry(TimelineKind::Phase, phase.clone(), Some(e), e.at));
                self.last_phase = Some(phase);
            }
        } else {
            let label = match &e.status {
                Some(s) => format!("{} · {s}", e.kind),
                None => e.kind.clone(),
            };
            self.timeline
                .push(entry(TimelineKind::Event, label, Some(e), e.at));
        }
    }

    /// An acquisition: acquired, renewed by the holder, or taken over from it.
    fn acquired(&mut self, e: &EventIn) {
        let agent = e.agent.clone().unwrap_or_else(|| "unattributed".into());
        let mut t = match &self.holder {
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
        self.timeline.push(t);
        self.holder = Some(agent);
        self.proven = true;
        self.last_phase = None;
    }

    /// What the current claim record adds: an unproven or newer holder, or its release.
    fn claim_snapshot(&mut self, c: &ClaimIn) {
        if c.status == "active" && self.holder.as_deref() != Some(c.agent.as_str()) {
            let mut t = if !self.proven {
                entry(
                    TimelineKind::UnknownOwnership,
                    format!("UNKNOWN ownership by {}", c.agent),
                    None,
                    c.updated_at,
                )
            } else if let Some(h) = &self.holder {
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
            self.timeline.push(t);
        } else if c.status == "released" && self.holder.is_some() {
            let mut t = entry(
                TimelineKind::Released,
                format!("released by {}", c.agent),
                None,
                c.updated_at,
            );
            t.agent = Some(c.agent.clone());
            self.timeline.push(t);
        }
    }
}

/// A heartbeat's liveness now, as a timeline entry.
fn liveness_entry(h: &HeartbeatIn, now: Instant) -> TimelineEntry {
    let mut t = entry(
        TimelineKind::Liveness,
        format!(
            "{} · heartbeat {} ({} ago)",
            h.liveness(now),
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
    t
}
