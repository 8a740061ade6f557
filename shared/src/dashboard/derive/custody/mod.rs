//! One work item's custody timeline (reference §1.11, "Custody derivation"): the claim chain
//! its events and current claim tell, each claim entry with its fencing generation; phase
//! spans; and liveness spans, one live/stale/dead run per heartbeat, clipped where custody
//! changed hands. Oldest first; ties go claim < liveness < event < phase, and entries with
//! no time go last.

use crate::dashboard::derive::words;
use crate::dashboard::inputs::records::ClaimIn;
use crate::dashboard::inputs::records::EventIn;
use crate::dashboard::inputs::records::HeartbeatIn;
use crate::dashboard::model::TimelineEntry;
use crate::dashboard::model::TimelineKind;
use crate::record::EventKind;
use crate::rules::liveness::Liveness;
use crate::rules::liveness::DEAD_AFTER_TTL_MULTIPLIER;
use crate::time;
use crate::time::Instant;

/// The item's timeline from its claim record, its events (oldest first) and the heartbeats
/// that point at it, as of `now`.
pub fn timeline(
    claim: Option<&ClaimIn>,
    events: &[&EventIn],
    heartbeats: &[&HeartbeatIn],
    now: Instant,
) -> Vec<TimelineEntry> {
    let mut chain = Chain::default();
    for e in events {
        chain.event(e);
    }
    if let Some(c) = claim {
        chain.claim_snapshot(c);
    }
    chain.close_phases(now);
    let mut entries = chain.entries;
    for h in heartbeats {
        let end = span_end(h, heartbeats, &entries, now);
        entries.extend(liveness_spans(h, end, now));
    }
    // Stable: equal keys keep the order the chain found them in.
    entries.sort_by_key(|t| (t.at.is_none(), t.at, rank(t.entry.kind)));
    entries.into_iter().map(|t| t.entry).collect()
}

/// Claim entries sort before liveness, liveness before other events, events before phases.
fn rank(kind: TimelineKind) -> u8 {
    match kind {
        TimelineKind::Acquired
        | TimelineKind::Renewed
        | TimelineKind::TakenOver
        | TimelineKind::Released
        | TimelineKind::UnknownOwnership => 0,
        TimelineKind::Liveness => 1,
        TimelineKind::Event => 2,
        TimelineKind::Phase => 3,
    }
}

/// An entry with its time, for sorting.
struct Timed {
    at: Option<Instant>,
    entry: TimelineEntry,
}

fn timed(kind: TimelineKind, label: String, e: Option<&EventIn>, at: Option<Instant>) -> Timed {
    Timed {
        at,
        entry: TimelineEntry {
            kind,
            label,
            at: at.map(time::format),
            until: None,
            agent: e.and_then(|e| e.agent.clone()),
            previous_agent: None,
            machine: e.and_then(|e| e.meta.machine.clone()),
            batch_id: e.and_then(|e| e.batch_id.clone()),
            status: e.and_then(|e| e.status.clone()),
            generation: e.and_then(|e| e.meta.generation.clone()),
        },
    }
}

fn is_phase(kind: &str) -> bool {
    kind == "phase"
        || kind.starts_with("phase.")
        || ["plan", "implement", "verify", "push", "review"]
            .iter()
            .any(|p| kind.starts_with(p))
}

/// An event that proves who holds the claim (acquired, renewed or taken over).
fn is_acquisition(kind: &str) -> bool {
    EventKind::ClaimAcquired.is(kind)
        || matches!(
            kind,
            "claim" | "claimed" | "acquire" | "acquired" | "takeover" | "claim.takeover"
        )
}

/// An event that only renews: it counts for the holder and is ignored from anyone else.
fn is_renewal(kind: &str) -> bool {
    matches!(kind, "renew" | "renewed" | "claim.renewed")
}

fn is_release(kind: &str) -> bool {
    EventKind::ClaimReleased.is(kind)
        || kind == "release"
        || kind == "released"
        || (words::terminal(kind).is_some() && !kind.starts_with(EventKind::ClaimAcquired.as_str()))
}

/// The custody chain as the item's events tell it.
#[derive(Default)]
struct Chain {
    entries: Vec<Timed>,
    /// The agent holding the item after the events so far.
    holder: Option<String>,
    /// Some acquisition is on record.
    proven: bool,
    /// The generation of the last claim entry.
    generation: Option<String>,
    /// The open phase span (index into `entries`), and its phase.
    phase: Option<(usize, String)>,
}

impl Chain {
    /// Adds what one event says: an acquisition, a renewal, a release, a phase or any other
    /// event.
    fn event(&mut self, e: &EventIn) {
        let kind = e.kind.to_lowercase();
        if is_acquisition(&kind) {
            self.acquired(e);
        } else if is_renewal(&kind) {
            let agent = e.agent.as_deref();
            if agent.is_some() && agent == self.holder.as_deref() {
                self.acquired(e);
            }
        } else if is_release(&kind) {
            let by_holder = e.agent.is_none() || e.agent == self.holder;
            if self.holder.is_some() && by_holder {
                let agent = self.holder.take().unwrap_or_default();
                let mut t = timed(
                    TimelineKind::Released,
                    format!("released by {agent}"),
                    Some(e),
                    e.at,
                );
                t.entry.agent = Some(agent);
                // A release ends the generation it held, unless it names one.
                if t.entry.generation.is_none() {
                    t.entry.generation = self.generation.clone();
                }
                self.claim_entry(t);
                self.end_phase(e.at);
            } else {
                self.entries
                    .push(timed(TimelineKind::Event, e.kind.clone(), Some(e), e.at));
                // A terminal event ends the phase whoever wrote it.
                self.end_phase(e.at);
            }
        } else if is_phase(&kind) {
            let phase = e.status.clone().unwrap_or_else(|| e.kind.clone());
            if self.phase.as_ref().map(|p| p.1.as_str()) != Some(phase.as_str()) {
                self.end_phase(e.at);
                self.phase = Some((self.entries.len(), phase.clone()));
                self.entries
                    .push(timed(TimelineKind::Phase, phase, Some(e), e.at));
            }
        } else {
            let label = match &e.status {
                Some(s) => format!("{} · {s}", e.kind),
                None => e.kind.clone(),
            };
            self.entries
                .push(timed(TimelineKind::Event, label, Some(e), e.at));
        }
    }

    /// Adds a claim entry, remembering its generation (an entry that names none keeps the
    /// last one known).
    fn claim_entry(&mut self, t: Timed) {
        if t.entry.generation.is_some() {
            self.generation = t.entry.generation.clone();
        }
        self.entries.push(t);
    }

    /// An acquisition: acquired, renewed by the holder, or taken over from it.
    fn acquired(&mut self, e: &EventIn) {
        let agent = e.agent.clone().unwrap_or_else(|| "unattributed".into());
        let mut t = match &self.holder {
            None => timed(
                TimelineKind::Acquired,
                format!("acquired by {agent}"),
                Some(e),
                e.at,
            ),
            Some(h) if *h == agent => timed(
                TimelineKind::Renewed,
                format!("renewed by {agent}"),
                Some(e),
                e.at,
            ),
            Some(h) => {
                let mut t = timed(
                    TimelineKind::TakenOver,
                    format!("{h} → {agent}"),
                    Some(e),
                    e.at,
                );
                t.entry.previous_agent = Some(h.clone());
                t
            }
        };
        if t.entry.kind != TimelineKind::Renewed {
            self.end_phase(e.at);
        }
        t.entry.agent = Some(agent.clone());
        self.claim_entry(t);
        self.holder = Some(agent);
        self.proven = true;
    }

    /// What the current claim record adds: an unproven or newer holder, a renewal with a new
    /// generation, or its release.
    fn claim_snapshot(&mut self, c: &ClaimIn) {
        let of_claim = |kind, label: String| {
            let mut t = timed(kind, label, None, c.updated_at);
            t.entry.agent = Some(c.agent.clone());
            t.entry.machine = c.meta.machine.clone();
            t.entry.batch_id = c.batch_id.clone();
            t.entry.generation = c.meta.generation.clone();
            t
        };
        let holds = self.holder.as_deref() == Some(c.agent.as_str());
        if c.status == "active" && !holds {
            let t = if !self.proven {
                of_claim(
                    TimelineKind::UnknownOwnership,
                    format!("UNKNOWN ownership by {}", c.agent),
                )
            } else if let Some(h) = &self.holder {
                let mut t = of_claim(TimelineKind::TakenOver, format!("{h} → {}", c.agent));
                t.entry.previous_agent = Some(h.clone());
                t
            } else {
                of_claim(TimelineKind::Acquired, format!("acquired by {}", c.agent))
            };
            self.end_phase(c.updated_at);
            self.claim_entry(t);
            self.holder = Some(c.agent.clone());
        } else if c.status == "active"
            && c.meta.generation.is_some()
            && c.meta.generation != self.generation
        {
            let t = of_claim(TimelineKind::Renewed, format!("renewed by {}", c.agent));
            self.claim_entry(t);
        } else if c.status == "released" && (self.holder.is_some() || !self.proven) {
            let t = of_claim(TimelineKind::Released, format!("released by {}", c.agent));
            self.end_phase(c.updated_at);
            self.claim_entry(t);
            self.holder = None;
        }
    }

    /// Ends the open phase span at `at` (a custody boundary or the next phase).
    fn end_phase(&mut self, at: Option<Instant>) {
        if let Some((i, _)) = self.phase.take() {
            close(&mut self.entries[i], at);
        }
    }

    /// Phases still open run until now.
    fn close_phases(&mut self, now: Instant) {
        self.end_phase(Some(now));
    }
}

/// Ends a span entry at `until` (never before it starts).
fn close(t: &mut Timed, until: Option<Instant>) {
    if let Some(until) = until.filter(|u| t.at.is_none_or(|at| *u >= at)) {
        t.entry.until = Some(time::format(until));
    }
}

/// Where a heartbeat's spans end: the agent's next heartbeat, the first release of its
/// custody or takeover from it after the beat, else now.
fn span_end(h: &HeartbeatIn, all: &[&HeartbeatIn], chain: &[Timed], now: Instant) -> Instant {
    let Some(start) = h.updated_at else {
        return now;
    };
    let next_beat = all
        .iter()
        .filter(|o| o.agent == h.agent)
        .filter_map(|o| o.updated_at)
        .filter(|t| *t > start);
    let boundary = chain
        .iter()
        .filter(|t| match t.entry.kind {
            TimelineKind::Released => t.entry.agent.as_deref() == Some(h.agent.as_str()),
            TimelineKind::TakenOver => t.entry.previous_agent.as_deref() == Some(h.agent.as_str()),
            _ => false,
        })
        .filter_map(|t| t.at)
        .filter(|t| *t > start);
    next_beat.chain(boundary).chain([now]).min().unwrap_or(now)
}

/// One heartbeat's liveness as spans from its beat to `end`: live until it expires, stale
/// until 4 × ttl, dead after; a heartbeat with unusable timestamps (or one beating after
/// `end`) is one entry of its liveness `now`, with no end.
fn liveness_spans(h: &HeartbeatIn, end: Instant, now: Instant) -> Vec<Timed> {
    let span = |liveness: Liveness, from: Option<Instant>, until: Option<Instant>| {
        let mut t = timed(TimelineKind::Liveness, liveness.to_string(), None, from);
        t.entry.agent = Some(h.agent.clone());
        t.entry.machine = h.meta.machine.clone();
        t.entry.batch_id = h.batch_id.clone();
        t.entry.status = Some(h.status.clone());
        t.entry.generation = h.meta.generation.clone();
        close(&mut t, until);
        t
    };
    let (Some(start), Some(expires)) = (h.updated_at, h.expires_at) else {
        return vec![span(h.liveness(now), h.updated_at, None)];
    };
    let ttl = expires - start;
    let bounds: [(Liveness, Instant); 3] = if ttl <= chrono::Duration::zero() {
        [
            (Liveness::Live, start),
            (Liveness::Stale, start),
            (Liveness::Dead, start),
        ]
    } else {
        [
            (Liveness::Live, start),
            (Liveness::Stale, expires),
            (Liveness::Dead, start + ttl * DEAD_AFTER_TTL_MULTIPLIER),
        ]
    };
    let mut out = Vec::new();
    for (i, (liveness, from)) in bounds.iter().enumerate() {
        let to = bounds.get(i + 1).map_or(end, |b| b.1.min(end));
        // An empty run is no span (a dead-on-arrival beat has only its dead run).
        if *from < to {
            out.push(span(*liveness, Some(*from), Some(to)));
        }
    }
    if out.is_empty() {
        out.push(span(h.liveness(now), Some(start), None));
    }
    out
}

#[cfg(test)]
mod tests;
