//! Agents grouped by machine (reference §1.8).

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use rustc_hash::FxHashMap as HashMap;

use super::rules;
use crate::dashboard::inputs::records::ClaimIn;
use crate::dashboard::inputs::records::EventIn;
use crate::dashboard::inputs::records::HeartbeatIn;
use crate::dashboard::inputs::records::Inputs;
use crate::dashboard::model::AgentView;
use crate::dashboard::model::LivenessView;
use crate::dashboard::model::MachineView;
use crate::time;
use crate::time::Instant;

/// Where an agent's machine id came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MachineOf {
    /// Reported by a heartbeat, claim or event.
    Observed(String),
    /// A legacy `m<N>` token in the agent id.
    Inferred(String),
    /// Not known.
    Missing,
}

/// Resolves every agent's machine: heartbeat → claim → event → legacy token.
pub fn machine_of_agents(
    inputs: &Inputs,
    active_claims: &[&ClaimIn],
    events: &[&EventIn],
) -> BTreeMap<String, MachineOf> {
    let mut out: BTreeMap<String, MachineOf> = BTreeMap::new();
    let mut observed = |agent: &str, m: Option<&String>| {
        let slot = out.entry(agent.to_owned()).or_insert(MachineOf::Missing);
        if let (MachineOf::Missing, Some(m)) = (&slot, m) {
            *slot = MachineOf::Observed(m.clone());
        }
    };
    for h in &inputs.heartbeats {
        observed(&h.agent, h.meta.machine.as_ref());
    }
    for c in active_claims {
        observed(&c.agent, c.meta.machine.as_ref());
    }
    for e in events.iter().rev() {
        if let Some(a) = &e.agent {
            observed(a, e.meta.machine.as_ref());
        }
    }
    for (agent, m) in &mut out {
        if *m == MachineOf::Missing {
            if let Some(token) = rules::legacy_machine(agent) {
                *m = MachineOf::Inferred(token);
            }
        }
    }
    out
}

/// Resolves one agent's machine as [`machine_of_agents`] would (`None`: nothing names the
/// agent, so it is on no machine).
pub fn machine_of(agent: &str, inputs: &Inputs, active_claims: &[&ClaimIn]) -> Option<MachineOf> {
    let beat = inputs.heartbeat_of(agent);
    let claims: Vec<&ClaimIn> = active_claims
        .iter()
        .copied()
        .filter(|c| c.agent == agent)
        .collect();
    let mut events: Vec<&EventIn> = inputs
        .events
        .iter()
        .map(AsRef::as_ref)
        .filter(|e| e.agent.as_deref() == Some(agent))
        .collect();
    if beat.is_none() && claims.is_empty() && events.is_empty() {
        return None;
    }
    super::event_index::sort_events(&mut events);
    let observed = beat
        .and_then(|h| h.meta.machine.clone())
        .or_else(|| claims.iter().find_map(|c| c.meta.machine.clone()))
        .or_else(|| events.iter().rev().find_map(|e| e.meta.machine.clone()));
    Some(match observed {
        Some(m) => MachineOf::Observed(m),
        None => rules::legacy_machine(agent).map_or(MachineOf::Missing, MachineOf::Inferred),
    })
}

/// Builds the machines view.
pub fn machines(
    inputs: &Inputs,
    active_claims: &[&ClaimIn],
    resolved: &BTreeMap<String, MachineOf>,
    now: Instant,
) -> Vec<MachineView> {
    let hb: HashMap<&str, &HeartbeatIn> = inputs
        .heartbeats
        .iter()
        .map(|h| (h.agent.as_str(), h.as_ref()))
        .collect();
    let mut claims: HashMap<&str, Vec<&ClaimIn>> = HashMap::default();
    for c in active_claims {
        claims.entry(&c.agent).or_default().push(c);
    }
    let mut groups: BTreeMap<(String, bool), Vec<AgentView>> = BTreeMap::new();
    for (agent, m) in resolved {
        let (id, inferred) = match m {
            MachineOf::Observed(m) => (m.clone(), false),
            MachineOf::Inferred(m) => (m.clone(), true),
            MachineOf::Missing => ("unassigned".to_owned(), false),
        };
        let held = claims
            .get(agent.as_str())
            .map(Vec::as_slice)
            .unwrap_or_default();
        let view = agent_view(agent, hb.get(agent.as_str()).copied(), held, now);
        groups.entry((id, inferred)).or_default().push(view);
    }
    let mut out: Vec<MachineView> = groups
        .into_iter()
        .map(|((id, inferred), agents)| machine_view(id, inferred, agents))
        .collect();
    sort_machines(&mut out);
    out
}

/// Updates `prev` (built by [`machines`] from earlier inputs) for `agents` whose heartbeat
/// was renewed (the same work and machine; status, times and metadata moved) or whose claims
/// changed, each on the machine it was on: their views are built again from `inputs`, with
/// their machines' order and counts. Other agents keep the liveness they were built with.
pub fn refresh_agents(
    prev: Vec<MachineView>,
    agents: &BTreeSet<&str>,
    inputs: &Inputs,
    active_claims: &[&ClaimIn],
    now: Instant,
) -> Vec<MachineView> {
    let mut held: HashMap<&str, Vec<&ClaimIn>> = HashMap::default();
    for c in active_claims {
        if agents.contains(c.agent.as_str()) {
            held.entry(&c.agent).or_default().push(c);
        }
    }
    let mut out: Vec<MachineView> = prev
        .into_iter()
        .map(|m| {
            if !m.agents.iter().any(|a| agents.contains(a.id.as_str())) {
                return m;
            }
            let agents = m
                .agents
                .into_iter()
                .map(|a| {
                    if !agents.contains(a.id.as_str()) {
                        return a;
                    }
                    let claims = held.get(a.id.as_str()).map(Vec::as_slice);
                    agent_view(
                        &a.id,
                        inputs.heartbeat_of(&a.id),
                        claims.unwrap_or_default(),
                        now,
                    )
                })
                .collect();
            machine_view(m.id, m.inferred, agents)
        })
        .collect();
    sort_machines(&mut out);
    out
}

/// One agent: its heartbeat (if any) and the claims it holds.
fn agent_view(agent: &str, h: Option<&HeartbeatIn>, held: &[&ClaimIn], now: Instant) -> AgentView {
    let work = h
        .and_then(|h| Some((h.repo.clone()?, h.target.clone()?)))
        .or_else(|| held.first().map(|c| (c.repo.clone(), c.target.clone())));
    AgentView {
        id: agent.to_owned(),
        liveness: LivenessView::of(h.map(|h| h.liveness(now))),
        heartbeat_at: h.and_then(|h| h.updated_at).map(time::format),
        status: h.map(|h| h.status.clone()),
        host: h
            .and_then(|h| h.meta.host.clone())
            .or_else(|| held.first().and_then(|c| c.meta.host.clone())),
        thread: h
            .and_then(|h| h.meta.thread.clone())
            .or_else(|| held.first().and_then(|c| c.meta.thread.clone())),
        claims: held.len(),
        work_row: work.as_ref().map(|(r, t)| format!("target:{r}#{t}")),
        work: work.map(|(r, t)| format!("{r}#{t}")),
        batch_id: h
            .and_then(|h| h.batch_id.clone())
            .or_else(|| held.first().and_then(|c| c.batch_id.clone())),
    }
}

/// One machine: its agents in order (live first, then stale, unknown, dead and
/// heartbeat-less — the enum's order — then by id) and its counts.
fn machine_view(id: String, inferred: bool, mut agents: Vec<AgentView>) -> MachineView {
    agents.sort_by(|a, b| a.liveness.cmp(&b.liveness).then_with(|| a.id.cmp(&b.id)));
    let count = |want: LivenessView| agents.iter().filter(|a| a.liveness == want).count();
    MachineView {
        live: count(LivenessView::Live),
        stale: count(LivenessView::Stale),
        dead: count(LivenessView::Dead) + count(LivenessView::NoHeartbeat),
        claims: agents.iter().map(|a| a.claims).sum(),
        id,
        inferred,
        agents,
    }
}

/// Machines with the most live agents first, then by id.
fn sort_machines(machines: &mut [MachineView]) {
    machines.sort_by(|a, b| b.live.cmp(&a.live).then_with(|| a.id.cmp(&b.id)));
}
