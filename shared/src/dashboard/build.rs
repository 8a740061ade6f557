//! Assembles the [`DashboardModel`] from normalised records and a clock.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::collections::HashMap;
use std::collections::HashSet;

use super::derive;
use super::derive::RowFacts;
use super::input::ClaimIn;
use super::input::EventIn;
use super::input::HeartbeatIn;
use super::input::Inputs;
use super::input::Meta;
use super::machines::MachineOf;
use super::model::*;
use super::text;
use super::text::Terminal;
use crate::rules::liveness::Liveness;
use crate::time;
use crate::time::Instant;

/// A batch as the build sees it: a manifest, or one inferred from claims and heartbeats.
#[derive(Debug, Clone)]
pub(crate) struct BatchSrc {
    pub(crate) id: String,
    pub(crate) source: BatchSource,
    pub(crate) path: String,
    pub(crate) repo: Option<String>,
    pub(crate) objective: Option<String>,
    /// `(number, kind, title, repo)`.
    pub(crate) targets: Vec<(String, String, Option<String>, Option<String>)>,
    pub(crate) lanes: Vec<LaneSrc>,
    pub(crate) created_at: Option<String>,
    pub(crate) updated_at: Option<Instant>,
    pub(crate) created_by_machine: Option<String>,
    pub(crate) launch_prompt: Option<String>,
    pub(crate) has_blocker: bool,
}

/// A lane with its owner's heartbeat applied.
#[derive(Debug, Clone)]
pub(crate) struct LaneSrc {
    pub(crate) name: String,
    pub(crate) owner: Option<String>,
    pub(crate) targets: Vec<String>,
    pub(crate) depends_on: Vec<String>,
    /// The heartbeat status when the owner's heartbeat applies, else the manifest's.
    pub(crate) status: String,
    pub(crate) closed: bool,
    pub(crate) liveness: Option<Liveness>,
    pub(crate) blocked_on: Vec<String>,
    pub(crate) meta: Meta,
    /// The owner's heartbeat exists but points at other work.
    pub(crate) mismatch: Option<String>,
}

impl LaneSrc {
    fn terminal(&self) -> bool {
        self.closed || text::terminal(&self.status) == Some(Terminal::Completion)
    }

    fn complete(&self) -> bool {
        self.closed
            || self.terminal()
            || derive::COMPLETE_STATUSES.contains(&self.status.to_lowercase().as_str())
    }
}

impl BatchSrc {
    /// The repository of `target` in this batch.
    fn repo_of(&self, target: &str) -> Option<String> {
        self.targets
            .iter()
            .find(|t| t.0 == target)
            .and_then(|t| t.3.clone())
            .or_else(|| self.repo.clone())
    }

    /// Target → the lanes that own it (for `owner/repo#N` dependency references).
    fn lane_owners(&self) -> HashMap<String, Vec<String>> {
        let mut owners: HashMap<String, Vec<String>> = HashMap::new();
        for l in &self.lanes {
            for t in &l.targets {
                owners.entry(t.clone()).or_default().push(l.name.clone());
            }
        }
        owners
    }

    /// The repository of `target` in this batch (for the health rules).
    pub(crate) fn repo_of_pub(&self, target: &str) -> Option<String> {
        self.repo_of(target)
    }

    fn kind_of(&self, target: &str) -> Option<(String, Option<String>)> {
        self.targets
            .iter()
            .find(|t| t.0 == target)
            .map(|t| (t.1.clone(), t.2.clone()))
    }
}

fn heartbeat_applies(hb: &HeartbeatIn, batch: &str, lane: &LaneSrc) -> bool {
    hb.batch_id.as_deref().is_none_or(|b| b == batch)
        && hb
            .target
            .as_deref()
            .is_none_or(|t| lane.targets.iter().any(|x| x == t))
}

/// Collects manifest and inferred batches, with lane heartbeats and dependencies applied.
pub(crate) fn batches(
    inputs: &Inputs,
    hb_by_agent: &HashMap<&str, &HeartbeatIn>,
    active_claims: &[&ClaimIn],
    now: Instant,
) -> Vec<BatchSrc> {
    let mut out: Vec<BatchSrc> = inputs
        .manifests
        .iter()
        .map(|m| BatchSrc {
            id: m.id.clone(),
            source: BatchSource::Manifest,
            path: m.path.clone(),
            repo: m.repo.clone(),
            objective: m.objective.clone(),
            targets: m
                .targets
                .iter()
                .map(|t| {
                    (
                        t.target.clone(),
                        t.kind.clone(),
                        t.title.clone(),
                        t.repo.clone(),
                    )
                })
                .collect(),
            lanes: m
                .lanes
                .iter()
                .map(|l| LaneSrc {
                    name: l.name.clone(),
                    owner: l.owner.clone(),
                    targets: l.targets.clone(),
                    depends_on: l.depends_on.clone(),
                    status: l.status.clone(),
                    closed: l.closed,
                    liveness: None,
                    blocked_on: Vec::new(),
                    meta: l.meta.clone(),
                    mismatch: None,
                })
                .collect(),
            created_at: m.created_at.clone(),
            updated_at: m.updated_at,
            created_by_machine: m.created_by_machine.clone(),
            launch_prompt: m.launch_prompt.clone(),
            has_blocker: m.has_blocker,
        })
        .collect();
    let saved: BTreeSet<&str> = inputs.manifests.iter().map(|m| m.id.as_str()).collect();
    // Inferred: (batch) → agent → (targets, repo, newest status, time).
    type Signals = BTreeMap<
        String,
        (
            BTreeSet<String>,
            BTreeSet<String>,
            Option<(Option<Instant>, String)>,
        ),
    >;
    let mut inferred: BTreeMap<String, Signals> = BTreeMap::new();
    let mut signal =
        |batch: &str, agent: &str, repo: &str, target: &str, status: &str, at: Option<Instant>| {
            if saved.contains(batch) {
                return;
            }
            let entry = inferred
                .entry(batch.to_owned())
                .or_default()
                .entry(agent.to_owned())
                .or_default();
            entry.0.insert(target.to_owned());
            entry.1.insert(repo.to_owned());
            if entry.2.as_ref().is_none_or(|(t, _)| at >= *t) {
                entry.2 = Some((at, status.to_owned()));
            }
        };
    for c in active_claims {
        if let Some(b) = &c.batch_id {
            signal(b, &c.agent, &c.repo, &c.target, &c.status, c.updated_at);
        }
    }
    for h in &inputs.heartbeats {
        if let (Some(b), Some(r), Some(t)) = (&h.batch_id, &h.repo, &h.target) {
            signal(b, &h.agent, r, t, &h.status, h.updated_at);
        }
    }
    for (id, agents) in inferred {
        let repos: BTreeSet<&String> = agents.values().flat_map(|a| &a.1).collect();
        let repo = (repos.len() == 1)
            .then(|| repos.iter().next().map(|r| (*r).clone()))
            .flatten();
        let updated_at = agents
            .values()
            .filter_map(|a| a.2.as_ref().and_then(|s| s.0))
            .max();
        let mut targets = Vec::new();
        let lanes = agents
            .iter()
            .map(|(agent, (ts, rs, status))| {
                for t in ts {
                    let r = (rs.len() == 1).then(|| rs.iter().next().cloned()).flatten();
                    targets.push((
                        t.clone(),
                        "unknown".to_owned(),
                        None,
                        r.filter(|r| Some(r) != repo.as_ref()),
                    ));
                }
                LaneSrc {
                    name: agent.clone(),
                    owner: Some(agent.clone()),
                    targets: ts.iter().cloned().collect(),
                    depends_on: Vec::new(),
                    status: status
                        .as_ref()
                        .map(|s| s.1.clone())
                        .unwrap_or_else(|| "unknown".into()),
                    closed: false,
                    liveness: None,
                    blocked_on: Vec::new(),
                    meta: Meta::default(),
                    mismatch: None,
                }
            })
            .collect();
        out.push(BatchSrc {
            path: format!(
                "inferred-batches/{}/{id}.json",
                repo.as_deref().unwrap_or("UNKNOWN").replace('/', "__")
            ),
            id,
            source: BatchSource::Inferred,
            repo,
            objective: None,
            targets,
            lanes,
            created_at: None,
            updated_at,
            created_by_machine: None,
            launch_prompt: None,
            has_blocker: false,
        });
    }
    // Lane liveness: the owner's heartbeat, when it is about this lane.
    for b in &mut out {
        for lane in &mut b.lanes {
            let Some(hb) = lane.owner.as_deref().and_then(|o| hb_by_agent.get(o)) else {
                continue;
            };
            if heartbeat_applies(hb, &b.id, lane) {
                lane.status = hb.status.clone();
                lane.liveness = Some(hb.liveness(now));
            } else if let (Some(r), Some(t)) = (&hb.repo, &hb.target) {
                lane.mismatch = Some(format!("{r}#{t}"));
            }
        }
    }
    // Dependencies: a dependency blocks until its lane is complete; unknown lanes block.
    let index: HashMap<(String, String), bool> = out
        .iter()
        .flat_map(|b| {
            b.lanes
                .iter()
                .map(|l| ((b.id.clone(), l.name.clone()), l.complete()))
        })
        .collect();
    for b in &mut out {
        let owners = b.lane_owners();
        let id = b.id.clone();
        for lane in &mut b.lanes {
            lane.blocked_on = lane
                .depends_on
                .iter()
                .filter(|dep| {
                    let key = resolve_dep(dep, &id, &owners);
                    !key.and_then(|k| index.get(&k).copied()).unwrap_or(false)
                })
                .cloned()
                .collect();
        }
    }
    out
}

/// Resolves `batch:lane`, `lane`, or `owner/repo#N` (when one lane owns N) to a lane key.
pub(crate) fn resolve_dep(
    dep: &str,
    batch: &str,
    owners: &HashMap<String, Vec<String>>,
) -> Option<(String, String)> {
    if let Some((_, n)) = dep.rsplit_once('#') {
        return match owners.get(n).map(Vec::as_slice) {
            Some([one]) => Some((batch.to_owned(), one.clone())),
            _ => None,
        };
    }
    match dep.split_once(':') {
        Some((b, l)) => Some((b.to_owned(), l.to_owned())),
        None => Some((batch.to_owned(), dep.to_owned())),
    }
}

/// One work item (repo + target) with everything known about it.
#[derive(Debug, Default)]
pub(crate) struct Item<'a> {
    pub(crate) claim: Option<&'a ClaimIn>,
    pub(crate) heartbeats: Vec<&'a HeartbeatIn>,
    /// `(batch index, lane index)`.
    pub(crate) signals: Vec<(usize, usize)>,
    pub(crate) events: Vec<&'a EventIn>,
}

fn newest<'a>(events: &[&'a EventIn], keep: impl Fn(&EventIn) -> bool) -> Option<&'a EventIn> {
    events.iter().rev().find(|e| keep(e)).copied()
}

fn fmt(t: Option<Instant>) -> Option<String> {
    t.map(time::format)
}

fn numeric_key(target: &str) -> (u8, u64, String) {
    match target.parse::<u64>() {
        Ok(n) => (0, n, String::new()),
        Err(_) => (1, 0, target.to_owned()),
    }
}

fn first_sentence_title(objective: Option<&str>, id: &str) -> String {
    let Some(obj) = objective.map(str::trim).filter(|o| !o.is_empty()) else {
        return id.to_owned();
    };
    let sentence = match obj.find(". ") {
        Some(i) => &obj[..=i],
        None => obj,
    };
    if sentence.chars().count() > 68 {
        format!("{}…", sentence.chars().take(65).collect::<String>())
    } else {
        sentence.to_owned()
    }
}

/// What a build keeps besides the model so that the next tip can update it instead of
/// deriving everything again.
#[derive(Debug, Clone, Default)]
pub struct Derivation {
    pub(crate) srcs: Vec<BatchSrc>,
    pub(crate) resolved: BTreeMap<String, MachineOf>,
    pub(crate) lane_rows: Vec<(usize, usize)>,
}

/// Builds the dashboard model.
pub fn build(inputs: &Inputs, now: Instant, version: &str) -> DashboardModel {
    build_with(inputs, now, version).0
}

fn active_claims(inputs: &Inputs) -> Vec<&ClaimIn> {
    inputs
        .claims
        .iter()
        .map(AsRef::as_ref)
        .filter(|c| c.status != "released")
        .collect()
}

fn control_of_batch(evs: &[&EventIn]) -> (ControlStatus, Option<String>) {
    let mut status = ControlStatus::Running;
    let mut requested_at = None;
    for e in evs {
        if let Some(c) = derive::control_of(e) {
            status = c;
            if c == ControlStatus::StopRequested {
                requested_at = e.at.map(time::format).or_else(|| e.at_raw.clone());
            }
        }
    }
    (status, requested_at)
}

fn sort_events(events: &mut [&EventIn]) {
    events.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.path.cmp(&b.path)));
}

/// Whether an item with these facts is on the dashboard at all.
fn item_exists(item: &Item<'_>) -> bool {
    item.claim.is_some()
        || !item.heartbeats.is_empty()
        || !item.signals.is_empty()
        || newest(&item.events, |e| !derive::is_qa_type(&e.kind))
            .is_some_and(|e| !derive::event_closes_work(e.status_or_type()))
}

fn sort_rows(rows: &mut [Row]) {
    rows.sort_by(|a, b| {
        a.state
            .cmp(&b.state)
            .then_with(|| a.repo.cmp(&b.repo))
            .then_with(|| numeric_key(&a.target).cmp(&numeric_key(&b.target)))
            .then_with(|| a.id.cmp(&b.id))
    });
}

/// Batches by tier, then in source order (manifests by path, then inferred batches).
fn sort_views(views: &mut [BatchView], srcs: &[BatchSrc]) {
    let order: HashMap<&str, usize> = srcs
        .iter()
        .enumerate()
        .map(|(i, b)| (b.id.as_str(), i))
        .collect();
    views.sort_by_key(|v| {
        (
            v.tier,
            order.get(v.id.as_str()).copied().unwrap_or(usize::MAX),
        )
    });
}

fn sort_qa(qa: &mut [QaItem]) {
    qa.sort_by(|a, b| {
        (a.repo.as_str(), numeric_key(&a.target), a.id.as_str()).cmp(&(
            b.repo.as_str(),
            numeric_key(&b.target),
            b.id.as_str(),
        ))
    });
}

/// Builds the model and what a later [`update`] needs.
pub fn build_with(inputs: &Inputs, now: Instant, version: &str) -> (DashboardModel, Derivation) {
    let hb_by_agent: HashMap<&str, &HeartbeatIn> = inputs
        .heartbeats
        .iter()
        .map(|h| (h.agent.as_str(), h.as_ref()))
        .collect();
    let active_claims = active_claims(inputs);
    let srcs = batches(inputs, &hb_by_agent, &active_claims, now);

    let mut events: Vec<&EventIn> = inputs.events.iter().map(AsRef::as_ref).collect();
    sort_events(&mut events);
    let mut events_by_item: HashMap<(&str, &str), Vec<&EventIn>> = HashMap::new();
    let mut events_by_batch: HashMap<&str, Vec<&EventIn>> = HashMap::new();
    for e in &events {
        if let (Some(r), Some(t)) = (&e.repo, &e.target) {
            events_by_item.entry((r, t)).or_default().push(e);
        }
        if let Some(b) = &e.batch_id {
            events_by_batch.entry(b).or_default().push(e);
        }
    }

    // Work items.
    let mut items: BTreeMap<(String, String), Item<'_>> = BTreeMap::new();
    let mut lane_rows: Vec<(usize, usize)> = Vec::new();
    for c in &active_claims {
        items
            .entry((c.repo.clone(), c.target.clone()))
            .or_default()
            .claim = Some(c);
    }
    for h in &inputs.heartbeats {
        if let (Some(r), Some(t)) = (&h.repo, &h.target) {
            items
                .entry((r.clone(), t.clone()))
                .or_default()
                .heartbeats
                .push(h);
        }
    }
    for (bi, b) in srcs.iter().enumerate() {
        for (li, lane) in b.lanes.iter().enumerate() {
            let mut placed = false;
            for t in &lane.targets {
                if let Some(repo) = b.repo_of(t) {
                    items
                        .entry((repo, t.clone()))
                        .or_default()
                        .signals
                        .push((bi, li));
                    placed = true;
                }
            }
            if !placed {
                lane_rows.push((bi, li));
            }
        }
    }
    for ((r, t), evs) in &events_by_item {
        let key = ((*r).to_owned(), (*t).to_owned());
        match items.get_mut(&key) {
            Some(item) => item.events = evs.clone(),
            None => {
                let item = Item {
                    events: evs.clone(),
                    ..Item::default()
                };
                if item_exists(&item) {
                    items.insert(key, item);
                }
            }
        }
    }

    // Batch controls first: rows need them for attention.
    let controls: Vec<(ControlStatus, Option<String>)> = srcs
        .iter()
        .map(|b| {
            control_of_batch(
                events_by_batch
                    .get(b.id.as_str())
                    .map(Vec::as_slice)
                    .unwrap_or_default(),
            )
        })
        .collect();

    let mut rows = Vec::with_capacity(items.len() + lane_rows.len());
    let mut qa = Vec::new();
    for ((repo, target), item) in &items {
        let (row, mut qas) = item_row(repo, target, item, &srcs, &controls, now);
        rows.push(row);
        qa.append(&mut qas);
    }
    for (bi, li) in &lane_rows {
        rows.push(lane_row(
            &srcs[*bi],
            &srcs[*bi].lanes[*li],
            &controls[*bi],
            now,
        ));
    }
    sort_rows(&mut rows);
    sort_qa(&mut qa);

    let batch_views = batch_views(&srcs, &controls, &rows, &qa, &events_by_batch, None);
    let resolved = super::machines::machine_of_agents(inputs, &active_claims, &events);
    let machines = super::machines::machines(inputs, &active_claims, &resolved, now);
    let health = super::health::health(
        inputs,
        &srcs,
        &rows,
        &events_by_batch,
        &resolved,
        &super::health::Scope::All,
    );
    let model = assemble(
        inputs,
        now,
        version,
        rows,
        batch_views,
        machines,
        health,
        qa,
    );
    let derivation = Derivation {
        srcs,
        resolved,
        lane_rows,
    };
    (model, derivation)
}

/// The parts every build shares: attention, counts, recent events, warnings.
#[allow(clippy::too_many_arguments)]
fn assemble(
    inputs: &Inputs,
    now: Instant,
    version: &str,
    rows: Vec<Row>,
    batches: Vec<BatchView>,
    machines: Vec<MachineView>,
    health: Vec<HealthItem>,
    qa: Vec<QaItem>,
) -> DashboardModel {
    let mut attention: Vec<Attention> = rows
        .iter()
        .filter_map(|r| {
            r.attention.map(|kind| Attention {
                row_id: r.id.clone(),
                kind,
                priority: kind.priority(),
                label: kind.label().to_owned(),
                subject: if r.target.is_empty() {
                    format!(
                        "{}:{}",
                        r.batch_id.as_deref().unwrap_or("UNKNOWN"),
                        r.lane.as_deref().unwrap_or("UNKNOWN")
                    )
                } else {
                    format!("{}#{}", r.repo, r.target)
                },
                last_activity: r.last_activity.clone(),
            })
        })
        .collect();
    attention.sort_by(|a, b| {
        a.priority
            .cmp(&b.priority)
            .then_with(|| a.last_activity.cmp(&b.last_activity))
            .then_with(|| a.row_id.cmp(&b.row_id))
    });

    let mut counts = Counts {
        rows: rows.len(),
        needs_attention: attention.len(),
        batches: batches.len(),
        batches_blocked: batches
            .iter()
            .filter(|b| b.tier == BatchTier::Blocked)
            .count(),
        batch_repairs: batches.iter().filter(|b| !b.repairs.is_empty()).count(),
        agents: machines.iter().map(|m| m.agents.len()).sum(),
        agents_live: machines.iter().map(|m| m.live).sum(),
        machines: machines.iter().filter(|m| m.id != "unassigned").count(),
        health_warnings: health
            .iter()
            .filter(|h| h.severity == Severity::Warning)
            .count(),
        health_notices: health
            .iter()
            .filter(|h| h.severity == Severity::Info)
            .count(),
        qa_gaps: qa.iter().filter(|q| q.status.is_gap()).count(),
        malformed: inputs.malformed.len(),
        ..Counts::default()
    };
    let mut by_state = [0usize; RowState::ALL.len()];
    for r in &rows {
        by_state[r.state.index()] += 1;
    }
    for (state, n) in RowState::ALL.iter().zip(by_state) {
        counts.rows_by_state.insert(state.as_str().to_owned(), n);
    }
    // The newest events, without sorting them all.
    let mut recent: Vec<&EventIn> = Vec::with_capacity(RECENT_EVENTS + 1);
    let newer = |a: &EventIn, b: &EventIn| a.at.cmp(&b.at).then_with(|| a.path.cmp(&b.path));
    for e in &inputs.events {
        if recent.len() == RECENT_EVENTS
            && recent
                .last()
                .is_some_and(|last| newer(e, last) != std::cmp::Ordering::Greater)
        {
            continue;
        }
        let at = recent
            .iter()
            .position(|r| newer(e, r) == std::cmp::Ordering::Greater)
            .unwrap_or(recent.len());
        recent.insert(at, e);
        recent.truncate(RECENT_EVENTS);
    }
    DashboardModel {
        version: version.to_owned(),
        generated_at: time::format(now),
        counts,
        attention,
        rows,
        batches,
        machines,
        health,
        qa,
        recent_events: recent.into_iter().map(event_view).collect(),
        warnings: inputs
            .malformed
            .iter()
            .map(|(p, m)| format!("Malformed JSON in {p}: {m}"))
            .collect(),
    }
}

fn same_list<T>(a: &[std::sync::Arc<T>], b: &[std::sync::Arc<T>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| std::sync::Arc::ptr_eq(x, y))
}

/// Events in `now` that `prev` did not have, when that is the only difference (claims,
/// heartbeats, manifests and unreadable records are the very same records).
fn added_events<'a>(prev: &Inputs, now: &'a Inputs) -> Option<Vec<&'a EventIn>> {
    if !same_list(&prev.claims, &now.claims)
        || !same_list(&prev.heartbeats, &now.heartbeats)
        || !same_list(&prev.manifests, &now.manifests)
        || prev.malformed != now.malformed
        || now.events.len() <= prev.events.len()
    {
        return None;
    }
    // Both lists are sorted by path: walk them together.
    let mut added = Vec::new();
    let mut old = prev.events.iter().peekable();
    for e in &now.events {
        match old.peek() {
            Some(o) if std::sync::Arc::ptr_eq(o, e) => {
                old.next();
            }
            Some(o) if o.path == e.path => return None,
            _ => added.push(e.as_ref()),
        }
    }
    (old.next().is_none()).then_some(added)
}

/// Updates `prev` (built from `prev_inputs`) for `inputs`, re-deriving only what new events
/// can change: their items, their batches (and the batches waiting on them), those
/// batches' rows and health. Returns `None` when the change is not new events alone, or
/// when the new events name an agent whose machine the previous build did not know; the
/// caller then builds from scratch.
///
/// Rows and batches the events do not touch keep the liveness they were derived with
/// (the caller re-derives everything periodically, so that staleness is bounded).
pub fn update(
    prev: DashboardModel,
    derivation: &Derivation,
    prev_inputs: &Inputs,
    inputs: &Inputs,
    now: Instant,
    version: &str,
) -> Option<DashboardModel> {
    let added = added_events(prev_inputs, inputs)?;
    if added.len() > 64 {
        return None;
    }
    for e in &added {
        if let Some(a) = &e.agent {
            match derivation.resolved.get(a) {
                None => return None,
                Some(MachineOf::Observed(_)) => {}
                Some(_) if e.meta.machine.is_some() => return None,
                Some(_) => {}
            }
        }
    }
    let srcs = &derivation.srcs;
    // Batches the events belong to: their controls, counts and rows may change.
    let direct: BTreeSet<usize> = srcs
        .iter()
        .enumerate()
        .filter(|(_, b)| {
            added
                .iter()
                .any(|e| e.batch_id.as_deref() == Some(b.id.as_str()))
        })
        .map(|(i, _)| i)
        .collect();
    // Items: where the events point, and every target of those batches.
    let mut keys: BTreeSet<(String, String)> = added
        .iter()
        .filter_map(|e| Some((e.repo.clone()?, e.target.clone()?)))
        .collect();
    for i in &direct {
        let b = &srcs[*i];
        for lane in &b.lanes {
            for t in &lane.targets {
                if let Some(r) = b.repo_of(t) {
                    keys.insert((r, t.clone()));
                }
            }
        }
    }
    // Lookups without allocating.
    let key_set: HashSet<(&str, &str)> =
        keys.iter().map(|(r, t)| (r.as_str(), t.as_str())).collect();
    let targets: HashSet<&str> = keys.iter().map(|(_, t)| t.as_str()).collect();
    let key_of = |repo: &str, target: &str| key_set.contains(&(repo, target));
    // Batches whose views may change: those, any batch with a lane on an affected item,
    // and any batch with a lane depending on one of them.
    let mut affected = direct.clone();
    for (bi, b) in srcs.iter().enumerate() {
        let on_key = b.lanes.iter().any(|l| {
            l.targets.iter().any(|t| {
                targets.contains(t.as_str()) && b.repo_of(t).is_some_and(|r| key_of(&r, t))
            })
        });
        if on_key {
            affected.insert(bi);
        }
    }
    let touched: BTreeSet<String> = affected.iter().map(|i| srcs[*i].id.clone()).collect();
    for (bi, b) in srcs.iter().enumerate() {
        let depends = b.lanes.iter().any(|l| {
            l.depends_on.iter().any(|d| {
                !d.contains('#')
                    && d.split_once(':')
                        .is_some_and(|(batch, _)| touched.contains(batch))
            })
        });
        if depends {
            affected.insert(bi);
        }
    }
    let batch_ids: BTreeSet<String> = affected.iter().map(|i| srcs[*i].id.clone()).collect();
    // One pass over the events for the affected items and batches.
    let mut events_by_item: HashMap<(&str, &str), Vec<&EventIn>> = HashMap::new();
    let mut events_by_batch: HashMap<&str, Vec<&EventIn>> = HashMap::new();
    for e in &inputs.events {
        if let (Some(r), Some(t)) = (&e.repo, &e.target) {
            if key_of(r, t) {
                events_by_item.entry((r, t)).or_default().push(e);
            }
        }
        if let Some(b) = &e.batch_id {
            if batch_ids.contains(b) {
                events_by_batch.entry(b).or_default().push(e);
            }
        }
    }
    for v in events_by_item
        .values_mut()
        .chain(events_by_batch.values_mut())
    {
        sort_events(v);
    }
    // Controls: recomputed for affected batches, kept for the others.
    let prev_views: HashMap<&str, &BatchView> =
        prev.batches.iter().map(|b| (b.id.as_str(), b)).collect();
    let controls: Vec<(ControlStatus, Option<String>)> = srcs
        .iter()
        .enumerate()
        .map(|(i, b)| {
            if direct.contains(&i) {
                control_of_batch(
                    events_by_batch
                        .get(b.id.as_str())
                        .map(Vec::as_slice)
                        .unwrap_or_default(),
                )
            } else {
                prev_views
                    .get(b.id.as_str())
                    .map(|v| (v.control, v.stop_requested_at.clone()))
                    .unwrap_or((ControlStatus::Running, None))
            }
        })
        .collect();

    // Rows and QA of the affected items and lane rows.
    let active = active_claims(inputs);
    let lane_row_ids: BTreeSet<String> = derivation
        .lane_rows
        .iter()
        .filter(|(bi, _)| direct.contains(bi))
        .map(|(bi, li)| format!("lane:{}:{}", srcs[*bi].id, srcs[*bi].lanes[*li].name))
        .collect();
    let DashboardModel {
        rows: prev_rows,
        qa: prev_qa,
        batches: prev_batches,
        health: prev_health,
        machines,
        ..
    } = prev;
    let mut rows: Vec<Row> = prev_rows
        .into_iter()
        .filter(|r| r.id.starts_with("lane:") || !key_of(&r.repo, &r.target))
        .filter(|r| !lane_row_ids.contains(&r.id))
        .collect();
    let mut qa: Vec<QaItem> = prev_qa
        .into_iter()
        .filter(|q| !key_of(&q.repo, &q.target))
        .collect();
    for (repo, target) in &keys {
        let mut item = Item {
            // The last one wins, as in a full build.
            claim: active
                .iter()
                .rfind(|c| c.repo == *repo && c.target == *target)
                .copied(),
            heartbeats: inputs
                .heartbeats
                .iter()
                .map(AsRef::as_ref)
                .filter(|h| h.repo.as_deref() == Some(repo) && h.target.as_deref() == Some(target))
                .collect(),
            signals: Vec::new(),
            events: events_by_item
                .get(&(repo.as_str(), target.as_str()))
                .cloned()
                .unwrap_or_default(),
        };
        for (bi, b) in srcs.iter().enumerate() {
            for (li, lane) in b.lanes.iter().enumerate() {
                if lane
                    .targets
                    .iter()
                    .any(|t| t == target && b.repo_of(t).as_deref() == Some(repo))
                {
                    item.signals.push((bi, li));
                }
            }
        }
        if item_exists(&item) {
            let (row, mut qas) = item_row(repo, target, &item, srcs, &controls, now);
            rows.push(row);
            qa.append(&mut qas);
        }
    }
    for (bi, li) in derivation
        .lane_rows
        .iter()
        .filter(|(bi, _)| direct.contains(bi))
    {
        rows.push(lane_row(
            &srcs[*bi],
            &srcs[*bi].lanes[*li],
            &controls[*bi],
            now,
        ));
    }
    sort_rows(&mut rows);
    sort_qa(&mut qa);

    // Batch views: the affected ones again, the others as they were.
    let fresh = batch_views(
        srcs,
        &controls,
        &rows,
        &qa,
        &events_by_batch,
        Some(&affected),
    );
    let mut views: Vec<BatchView> = prev_batches
        .into_iter()
        .filter(|b| !batch_ids.contains(&b.id))
        .chain(fresh)
        .collect();
    sort_views(&mut views, srcs);

    // Health: the signals about affected items and batches, again.
    let hb_agents: BTreeSet<&str> = inputs
        .heartbeats
        .iter()
        .filter(|h| match (&h.repo, &h.target) {
            (Some(r), Some(t)) => key_of(r, t),
            _ => false,
        })
        .map(|h| h.agent.as_str())
        .collect();
    let mut health: Vec<HealthItem> = prev_health
        .into_iter()
        .filter(|h| {
            let key = || match (&h.repo, &h.target) {
                (Some(r), Some(t)) => key_of(r, t),
                _ => false,
            };
            match h.signal.as_str() {
                "H1" => !h.agent.as_deref().is_some_and(|a| hb_agents.contains(a)),
                "H2" | "H3" => !key(),
                "R1" => true,
                _ => !h.batch_id.as_ref().is_some_and(|b| batch_ids.contains(b)),
            }
        })
        .collect();
    let scope = super::health::Scope::Only {
        keys: &key_set,
        batches: &batch_ids,
    };
    health.extend(super::health::health(
        inputs,
        srcs,
        &rows,
        &events_by_batch,
        &derivation.resolved,
        &scope,
    ));
    super::health::sort(&mut health);

    Some(assemble(
        inputs, now, version, rows, views, machines, health, qa,
    ))
}

/// The event as the UI shows it.
pub fn event_view(e: &EventIn) -> EventView {
    EventView {
        id: e.id.clone(),
        kind: e.kind.clone(),
        batch_id: e.batch_id.clone(),
        lane: e.lane.clone(),
        agent: e.agent.clone(),
        repo: e.repo.clone(),
        target: e.target.clone(),
        status: e.status.clone(),
        message: e.message.clone(),
        at: e.at.map(time::format).or_else(|| e.at_raw.clone()),
        machine: e.meta.machine.clone(),
    }
}

/// Picks the heartbeat that speaks for an item (reference §1.2).
pub(crate) fn chosen_heartbeat<'a>(item: &Item<'a>, now: Instant) -> Option<&'a HeartbeatIn> {
    let holder = item.claim.map(|c| c.agent.as_str());
    let alive = |h: &&HeartbeatIn| matches!(h.liveness(now), Liveness::Live | Liveness::Stale);
    let of_holder = |h: &&HeartbeatIn| Some(h.agent.as_str()) == holder;
    item.heartbeats
        .iter()
        .find(|h| of_holder(h) && alive(h))
        .or_else(|| item.heartbeats.iter().find(|h| alive(h)))
        .or_else(|| item.heartbeats.iter().find(|h| of_holder(h)))
        .or_else(|| item.heartbeats.first())
        .copied()
}

fn item_row(
    repo: &str,
    target: &str,
    item: &Item<'_>,
    srcs: &[BatchSrc],
    controls: &[(ControlStatus, Option<String>)],
    now: Instant,
) -> (Row, Vec<QaItem>) {
    let hb = chosen_heartbeat(item, now);
    let liveness = hb.map(|h| h.liveness(now));
    let first_signal = item
        .signals
        .first()
        .map(|(b, l)| (&srcs[*b], &srcs[*b].lanes[*l]));
    let latest_non_qa = newest(&item.events, |e| !derive::is_qa_type(&e.kind));
    // The newest timestamped lifecycle status.
    let mut candidates: Vec<(Option<Instant>, &str)> = Vec::new();
    if let Some(h) = hb {
        candidates.push((h.updated_at, &h.status));
    }
    if let Some(c) = item.claim {
        candidates.push((c.updated_at, &c.status));
    }
    for (b, l) in &item.signals {
        candidates.push((srcs[*b].updated_at, &srcs[*b].lanes[*l].status));
    }
    if let Some(e) = latest_non_qa {
        candidates.push((e.at, e.status_or_type()));
    }
    let current_status = candidates
        .iter()
        .filter(|c| c.0.is_some())
        .max_by(|a, b| {
            a.0.cmp(&b.0).then_with(|| {
                // On a tie a terminal status wins.
                text::terminal(a.1)
                    .is_some()
                    .cmp(&text::terminal(b.1).is_some())
            })
        })
        .or_else(|| candidates.first())
        .map(|c| c.1.to_owned());
    let blocked_on: Vec<String> = item
        .signals
        .iter()
        .flat_map(|(b, l)| srcs[*b].lanes[*l].blocked_on.iter().cloned())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let lane_terminal_current = first_signal
        .is_some_and(|(b, l)| l.terminal() && hb.is_none_or(|h| b.updated_at >= h.updated_at));
    let facts = RowFacts {
        heartbeat_status: hb.map(|h| h.status.as_str()),
        liveness,
        claim_active: item.claim.is_some_and(|c| c.status == "active"),
        lane_status: first_signal.map(|(_, l)| l.status.as_str()),
        lane_terminal_current,
        current_status: current_status.as_deref(),
        blocked_on: !blocked_on.is_empty(),
        progress_at: latest_non_qa
            .and_then(|e| e.at)
            .or_else(|| hb.and_then(|h| h.updated_at)),
        now,
    };
    let state = derive::row_state(&facts);
    let scheduling = match liveness {
        Some(Liveness::Live | Liveness::Stale) => Scheduling::InProcess,
        _ if item.claim.is_some()
            || hb.is_some()
            || !item.signals.is_empty()
            || !item.events.is_empty() =>
        {
            Scheduling::StartedNotProcessing
        }
        _ => Scheduling::ReadyForBatch,
    };
    let (kind, title) = item
        .signals
        .iter()
        .find_map(|(b, _)| srcs[*b].kind_of(target))
        .unwrap_or_else(|| ("unknown".into(), None));
    let lane_meta = first_signal.map(|(_, l)| &l.meta);
    let newest_with =
        |f: &dyn Fn(&EventIn) -> Option<String>| item.events.iter().rev().find_map(|e| f(e));
    let pick = |c: Option<&Option<String>>,
                h: Option<&Option<String>>,
                l: Option<&Option<String>>,
                e: &dyn Fn(&EventIn) -> Option<String>| {
        c.and_then(Clone::clone)
            .or_else(|| h.and_then(Clone::clone))
            .or_else(|| l.and_then(Clone::clone))
            .or_else(|| newest_with(e))
    };
    let claim_meta = item.claim.map(|c| &c.meta);
    let hb_meta = hb.map(|h| &h.meta);
    let agent = item
        .claim
        .map(|c| c.agent.clone())
        .or_else(|| hb.map(|h| h.agent.clone()))
        .or_else(|| first_signal.and_then(|(_, l)| l.owner.clone()))
        .or_else(|| newest_with(&|e| e.agent.clone()));
    let machine = hb_meta
        .and_then(|m| m.machine.clone())
        .or_else(|| claim_meta.and_then(|m| m.machine.clone()))
        .or_else(|| newest_with(&|e| e.meta.machine.clone()));
    let meta = |f: fn(&Meta) -> &Option<String>| {
        pick(claim_meta.map(f), hb_meta.map(f), lane_meta.map(f), &|e| {
            f(&e.meta).clone()
        })
    };
    let thread = meta(|m| &m.thread);
    let host = meta(|m| &m.host);
    let operator = meta(|m| &m.operator);
    let branch = meta(|m| &m.branch);
    let pr_url = meta(|m| &m.pr_url);
    let last_activity = [
        hb.and_then(|h| h.updated_at),
        item.claim.and_then(|c| c.updated_at),
        item.events.last().and_then(|e| e.at),
    ]
    .into_iter()
    .flatten()
    .chain(item.signals.iter().filter_map(|(b, _)| srcs[*b].updated_at))
    .max();

    // QA: one record per batch signal, else one for the item.
    let mut qas = Vec::new();
    if kind == "pull_request" && state != RowState::Done {
        let scopes: Vec<Option<(&str, &str)>> = if item.signals.is_empty() {
            vec![None]
        } else {
            item.signals
                .iter()
                .map(|(b, l)| Some((srcs[*b].id.as_str(), srcs[*b].lanes[*l].name.as_str())))
                .collect()
        };
        for scope in scopes {
            let latest = newest(&item.events, |e| {
                derive::is_qa_type(&e.kind)
                    && scope.is_none_or(|(b, _)| e.batch_id.as_deref() == Some(b))
            });
            let status = derive::qa_status(latest);
            let at = latest.and_then(|e| e.at.map(time::format).or_else(|| e.at_raw.clone()));
            qas.push(QaItem {
                id: match scope {
                    Some((b, l)) => format!("{repo}#{target}:{b}:{l}"),
                    None => format!("{repo}#{target}"),
                },
                repo: repo.to_owned(),
                target: target.to_owned(),
                batch_id: scope.map(|s| s.0.to_owned()),
                lane: scope.map(|s| s.1.to_owned()),
                status,
                detail: derive::qa_detail(status, at.as_deref()),
                at,
            });
        }
    }
    let row_qa = qas.first().map(|q| q.status);

    // Attention, first match wins.
    let control = item
        .signals
        .iter()
        .map(|(b, _)| controls[*b].0)
        .min_by_key(|c| match c {
            ControlStatus::Stopped => 0,
            ControlStatus::StopRequested => 1,
            ControlStatus::Running => 2,
        })
        .unwrap_or(ControlStatus::Running);
    let status_text = [
        hb.map(|h| h.status.as_str()),
        first_signal.map(|(_, l)| l.status.as_str()),
        current_status.as_deref(),
    ]
    .into_iter()
    .flatten()
    .collect::<Vec<_>>()
    .join(" ")
    .to_lowercase();
    let ready_for_qa = text::has_qa_token(&status_text, "qa");
    let attention = if state == RowState::Done {
        None
    } else if control == ControlStatus::Stopped {
        Some(AttentionKind::BatchStopped)
    } else if control == ControlStatus::StopRequested {
        Some(AttentionKind::BatchStopRequested)
    } else if text::is_user_input(&status_text) {
        Some(AttentionKind::BlockedUserInput)
    } else if qas
        .iter()
        .any(|q| q.status == QaStatus::Failed || (q.status == QaStatus::Missing && ready_for_qa))
    {
        Some(AttentionKind::QaMissing)
    } else if liveness == Some(Liveness::Dead) {
        Some(AttentionKind::DeadHolder)
    } else if state == RowState::Wedged {
        Some(AttentionKind::Wedged)
    } else {
        None
    };

    // Coordination warnings (cleared once terminal).
    let mut warnings = Vec::new();
    if state != RowState::Done {
        if let Some(c) = item.claim {
            if let Some(h) = hb {
                if h.agent != c.agent {
                    warnings.push(format!(
                        "Work has a heartbeat from {} but the claim is held by {}.",
                        h.agent, c.agent
                    ));
                }
            }
        }
        if item.heartbeats.len() > 1 {
            warnings.push(format!(
                "Work has {} heartbeat records for the same target.",
                item.heartbeats.len()
            ));
        }
        for (b, l) in &item.signals {
            let lane = &srcs[*b].lanes[*l];
            if !lane.blocked_on.is_empty() {
                warnings.push(format!(
                    "batch {}:{} is blocked on {}.",
                    srcs[*b].id,
                    lane.name,
                    lane.blocked_on.join(", ")
                ));
            }
        }
        if scheduling == Scheduling::StartedNotProcessing && state != RowState::Ready {
            warnings.push("Work was started but the holder is not currently live or stale.".into());
        } else if item.claim.is_some() && hb.is_none() {
            warnings.push("Active claim has no matching heartbeat.".into());
        }
        if state.is_active() && scheduling == Scheduling::InProcess {
            for (name, v) in [
                ("Operator", &operator),
                ("Thread", &thread),
                ("Host", &host),
                ("Machine", &machine),
            ] {
                if v.is_none() {
                    warnings.push(format!("{name} UNKNOWN"));
                }
            }
            if kind == "pull_request" && pr_url.is_none() {
                warnings.push("PR URL UNKNOWN".into());
            }
        }
    }
    let row = Row {
        id: format!("target:{repo}#{target}"),
        repo: repo.to_owned(),
        target: target.to_owned(),
        kind,
        title,
        state,
        scheduling,
        liveness: liveness.map(|l| l.as_str().to_owned()),
        agent,
        machine,
        host,
        thread,
        operator,
        branch,
        pr_url,
        batch_id: first_signal
            .map(|(b, _)| b.id.clone())
            .or_else(|| item.claim.and_then(|c| c.batch_id.clone()))
            .or_else(|| hb.and_then(|h| h.batch_id.clone())),
        lane: first_signal.map(|(_, l)| l.name.clone()),
        status: current_status,
        blocked_on,
        attention,
        last_activity: fmt(last_activity),
        message: newest_with(&|e| e.message.clone()),
        qa: row_qa,
        warnings,
    };
    (row, qas)
}

fn lane_row(
    b: &BatchSrc,
    lane: &LaneSrc,
    control: &(ControlStatus, Option<String>),
    now: Instant,
) -> Row {
    let facts = RowFacts {
        heartbeat_status: lane.liveness.map(|_| lane.status.as_str()),
        liveness: lane.liveness,
        claim_active: false,
        lane_status: Some(&lane.status),
        lane_terminal_current: lane.terminal(),
        current_status: Some(&lane.status),
        blocked_on: !lane.blocked_on.is_empty(),
        progress_at: None,
        now,
    };
    let state = derive::row_state(&facts);
    let attention = match (state, control.0) {
        (RowState::Done, _) => None,
        (_, ControlStatus::Stopped) => Some(AttentionKind::BatchStopped),
        (_, ControlStatus::StopRequested) => Some(AttentionKind::BatchStopRequested),
        (RowState::Dead, _) if lane.liveness == Some(Liveness::Dead) => {
            Some(AttentionKind::DeadHolder)
        }
        _ => None,
    };
    let mut warnings = Vec::new();
    if !lane.targets.is_empty() {
        warnings.push(format!(
            "Target repository UNKNOWN: lane target #{} has no explicit repository evidence.",
            lane.targets[0]
        ));
    }
    Row {
        id: format!("lane:{}:{}", b.id, lane.name),
        repo: "UNKNOWN".into(),
        target: lane.targets.first().cloned().unwrap_or_default(),
        kind: "unknown".into(),
        title: None,
        state,
        scheduling: Scheduling::StartedNotProcessing,
        liveness: lane.liveness.map(|l| l.as_str().to_owned()),
        agent: lane.owner.clone(),
        machine: lane.meta.machine.clone(),
        host: lane.meta.host.clone(),
        thread: lane.meta.thread.clone(),
        operator: lane.meta.operator.clone(),
        branch: lane.meta.branch.clone(),
        pr_url: lane.meta.pr_url.clone(),
        batch_id: Some(b.id.clone()),
        lane: Some(lane.name.clone()),
        status: Some(lane.status.clone()),
        blocked_on: lane.blocked_on.clone(),
        attention,
        last_activity: fmt(b.updated_at),
        message: None,
        qa: None,
        warnings,
    }
}

fn batch_views(
    srcs: &[BatchSrc],
    controls: &[(ControlStatus, Option<String>)],
    rows: &[Row],
    qa: &[QaItem],
    events_by_batch: &HashMap<&str, Vec<&EventIn>>,
    only: Option<&BTreeSet<usize>>,
) -> Vec<BatchView> {
    let row_index: HashMap<&str, usize> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id.as_str(), i))
        .collect();
    // Lane states first (notes follow dependency chains across lanes).
    let mut states: HashMap<(String, String), (RowState, Option<String>)> = HashMap::new();
    // A partial pass needs its batches' lanes and the other batches they name.
    let needed: Option<BTreeSet<&str>> = only.map(|o| {
        let mut ids: BTreeSet<&str> = o.iter().map(|i| srcs[*i].id.as_str()).collect();
        for i in o {
            for lane in &srcs[*i].lanes {
                for d in &lane.depends_on {
                    if let Some((batch, _)) = d.split_once(':').filter(|_| !d.contains('#')) {
                        ids.insert(batch);
                    }
                }
            }
        }
        ids
    });
    for b in srcs
        .iter()
        .filter(|b| needed.as_ref().is_none_or(|n| n.contains(b.id.as_str())))
    {
        for lane in &b.lanes {
            let row_id = lane
                .targets
                .iter()
                .find_map(|t| {
                    let id = format!("target:{}#{t}", b.repo_of(t)?);
                    row_index.contains_key(id.as_str()).then_some(id)
                })
                .or_else(|| {
                    let id = format!("lane:{}:{}", b.id, lane.name);
                    row_index.contains_key(id.as_str()).then_some(id)
                });
            let state = if lane.terminal() {
                RowState::Done
            } else if let Some(i) = row_id.as_deref().and_then(|id| row_index.get(id)) {
                rows[*i].state
            } else if !lane.blocked_on.is_empty() {
                RowState::Blocked
            } else if lane.liveness == Some(Liveness::Dead) {
                RowState::Dead
            } else {
                derive::lane_status_state(&lane.status)
            };
            states.insert((b.id.clone(), lane.name.clone()), (state, row_id));
        }
    }
    let mut views: Vec<BatchView> = srcs
        .iter()
        .zip(controls)
        .enumerate()
        .filter(|(i, _)| only.is_none_or(|o| o.contains(i)))
        .map(|(_, (b, (control, stop_at)))| {
            let owners = b.lane_owners();
            let lanes: Vec<LaneView> = b
                .lanes
                .iter()
                .map(|l| {
                    let (state, row_id) = states
                        .get(&(b.id.clone(), l.name.clone()))
                        .cloned()
                        .unwrap_or((RowState::Unknown, None));
                    LaneView {
                        name: l.name.clone(),
                        owner: l.owner.clone(),
                        targets: l.targets.clone(),
                        depends_on: l.depends_on.clone(),
                        blocked_on: l.blocked_on.clone(),
                        status: l.status.clone(),
                        state,
                        liveness: l.liveness.map_or("no-heartbeat", |v| v.as_str()).to_owned(),
                        note: lane_note(b, l, state, &states, &owners),
                        row_id,
                    }
                })
                .collect();
            let mut audit = AuditCounts {
                lanes: lanes.len(),
                ..AuditCounts::default()
            };
            for (l, src) in lanes.iter().zip(&b.lanes) {
                match l.state {
                    RowState::Done => audit.done += 1,
                    RowState::Running | RowState::Wedged | RowState::Stale | RowState::Paused => {
                        audit.active += 1
                    }
                    RowState::Blocked => audit.blocked += 1,
                    RowState::Dead => audit.dead += 1,
                    _ => {}
                }
                if src.closed {
                    audit.closed += 1;
                }
            }
            let tier = if b.has_blocker
                || *control != ControlStatus::Running
                || lanes.iter().any(|l| l.state == RowState::Blocked)
            {
                BatchTier::Blocked
            } else if lanes.iter().any(|l| {
                matches!(
                    l.state,
                    RowState::Wedged | RowState::Stale | RowState::Paused | RowState::Dead
                )
            }) {
                BatchTier::Stuck
            } else if !lanes.is_empty() && lanes.iter().all(|l| l.state == RowState::Done) {
                BatchTier::Archive
            } else {
                BatchTier::Running
            };
            let mut qa_counts = QaCounts::default();
            for q in qa
                .iter()
                .filter(|q| q.batch_id.as_deref() == Some(b.id.as_str()))
            {
                qa_counts.total += 1;
                match q.status {
                    QaStatus::Missing => qa_counts.missing += 1,
                    QaStatus::Requested => qa_counts.requested += 1,
                    QaStatus::InProgress => qa_counts.in_progress += 1,
                    QaStatus::Passed => qa_counts.passed += 1,
                    QaStatus::Failed => qa_counts.failed += 1,
                    QaStatus::Unknown => qa_counts.unknown += 1,
                }
            }
            let evs = events_by_batch.get(b.id.as_str());
            let mut repairs = Vec::new();
            match b.source {
                BatchSource::Inferred => repairs.push("batch_plan_missing".to_owned()),
                BatchSource::Manifest if b.launch_prompt.is_none() => {
                    repairs.push("prompt_missing".to_owned())
                }
                BatchSource::Manifest => {}
            }
            match control {
                ControlStatus::StopRequested => repairs.push("stop_requested".into()),
                ControlStatus::Stopped => repairs.push("stopped".into()),
                ControlStatus::Running => {}
            }
            BatchView {
                id: b.id.clone(),
                source: b.source,
                path: b.path.clone(),
                repo: b.repo.clone(),
                objective: b.objective.clone(),
                title: first_sentence_title(b.objective.as_deref(), &b.id),
                created_at: b.created_at.clone(),
                created_by_machine: b.created_by_machine.clone(),
                launch_prompt: b.launch_prompt.clone(),
                lanes,
                tier,
                control: *control,
                stop_requested_at: stop_at.clone(),
                event_count: evs.map_or(0, Vec::len),
                last_event_at: evs.and_then(|e| e.last()).and_then(|e| fmt(e.at)),
                audit,
                qa: qa_counts,
                repairs,
            }
        })
        .collect();
    sort_views(&mut views, srcs);
    views
}

fn lane_note(
    b: &BatchSrc,
    lane: &LaneSrc,
    state: RowState,
    states: &HashMap<(String, String), (RowState, Option<String>)>,
    owners: &HashMap<String, Vec<String>>,
) -> Option<String> {
    if state == RowState::Done {
        return None;
    }
    let verb = if state == RowState::Blocked {
        "blocked by"
    } else {
        "waiting on"
    };
    let Some(first) = lane.blocked_on.first() else {
        if state == RowState::Blocked {
            return Some("blocked, no blocker recorded — check the PR or drop the lane".into());
        }
        return (!lane.depends_on.is_empty() && state == RowState::Ready)
            .then(|| "dependencies satisfied — ready to relaunch".to_owned());
    };
    let Some(mut key) = resolve_dep(first, &b.id, owners) else {
        return Some(format!(
            "{verb} {first}, which is not in coordination state"
        ));
    };
    let Some((mut root_state, _)) = states.get(&key).cloned() else {
        return Some(format!(
            "{verb} {first}, which is not in coordination state"
        ));
    };
    let start = (b.id.clone(), lane.name.clone());
    let mut seen = BTreeSet::from([start.clone(), key.clone()]);
    // Follow the chain to its root: the first lane that is not itself waiting.
    for _ in 0..64 {
        if root_state != RowState::Blocked {
            break;
        }
        let Some(next_dep) = blocked_on_of(states, &key, b, owners) else {
            break;
        };
        if !seen.insert(next_dep.clone()) {
            return Some(format!(
                "{verb} {first} → dependency cycle back to {}",
                next_dep.1
            ));
        }
        match states.get(&next_dep) {
            Some((s, _)) => {
                key = next_dep;
                root_state = *s;
            }
            None => break,
        }
    }
    let root = if key.0 == b.id {
        key.1.clone()
    } else {
        format!("{}:{}", key.0, key.1)
    };
    let direct = first.rsplit(':').next().unwrap_or(first) == root || *first == root;
    Some(match root_state {
        RowState::Dead if !direct => {
            format!("{verb} {first} → root {root}, which is dead — relaunch or drop {root}")
        }
        RowState::Done if !direct => {
            format!("{verb} {first} → root {root}, which is done — ready to relaunch")
        }
        RowState::Blocked => format!("{verb} {first}, which is blocked with no blocker recorded"),
        s => format!("{verb} {first}, which is {}", s.as_str()),
    })
}

fn blocked_on_of(
    _states: &HashMap<(String, String), (RowState, Option<String>)>,
    key: &(String, String),
    b: &BatchSrc,
    owners: &HashMap<String, Vec<String>>,
) -> Option<(String, String)> {
    // Only same-batch chains can be followed without the other batch's lanes at hand.
    if key.0 != b.id {
        return None;
    }
    let lane = b.lanes.iter().find(|l| l.name == key.1)?;
    resolve_dep(lane.blocked_on.first()?, &b.id, owners)
}

#[cfg(test)]
mod incremental;
#[cfg(test)]
mod tests;
