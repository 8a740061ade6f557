//! The incremental build: when a new tip differs from the last only by new events, renewed
//! heartbeats (the same agent on the same work and machine; its status and times moved),
//! claims written, changed or released (on no batch or a saved one), manifests written,
//! rewritten or removed (their batches are taken again, with any inferred batch of their
//! ids), coordinator task checkpoints and operators' annotations, re-derive just what those can change — their
//! items, their batches (and the batches waiting on them), those batches' rows and health,
//! for heartbeats the lanes, and for heartbeats and claims their agents on the machines view —
//! with the full build's steps. Task checkpoints and annotations only feed the attention
//! queue, which assembling derives again every time, so a tip that changed nothing else
//! reuses every row.

use std::collections::BTreeSet;
use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;
use rustc_hash::FxHashSet as HashSet;

use super::assemble;
use super::batch_views;
use super::event_index::Control;
use super::event_index::EventIndex;
use super::full::Derivation;
use super::items;
use super::machine_groups;
use super::machine_groups::MachineOf;
use super::operator_rows::RowSet;
use super::signals;
use super::sources;
use super::sources::BatchSrc;
use crate::dashboard::inputs::records::ClaimIn;
use crate::dashboard::inputs::records::EventIn;
use crate::dashboard::inputs::records::HeartbeatIn;
use crate::dashboard::inputs::records::Inputs;
use crate::dashboard::inputs::records::ManifestIn;
use crate::dashboard::model::BatchSource;
use crate::dashboard::model::BatchView;
use crate::dashboard::model::DashboardModel;
use crate::dashboard::model::HealthItem;
use crate::dashboard::model::QaItem;
use crate::dashboard::model::Row;
use crate::dashboard::model::Signal;
use crate::time::Instant;

/// More new events than this: a full build is cheaper.
const MAX_ADDED: usize = 64;

/// Updates `prev` (built from `prev_inputs`) for `inputs`, re-deriving only what the
/// change can touch (the module's kinds of change): its items, its batches (and the
/// batches waiting on them), those batches' rows and health. Coordinator task checkpoints
/// and annotations may differ in any way (they only feed the attention queue, which is
/// assembled again). Returns `None` for any other change, for more than [`MAX_ADDED`] of
/// one kind, or when new events name an agent whose machine the previous build did not
/// know; the caller then builds from scratch.
///
/// Rows and batches the change does not touch keep the liveness they were derived with
/// (the caller re-derives everything periodically, so that staleness is bounded).
pub fn update(
    prev: DashboardModel,
    derivation: &Derivation,
    prev_inputs: &Inputs,
    inputs: &Inputs,
    now: Instant,
    version: &str,
) -> Option<DashboardModel> {
    let mut derivation = derivation.clone();
    update_with(prev, &mut derivation, prev_inputs, inputs, now, version)
}

/// [`update`], bringing `derivation` up to date in place (renewed heartbeats move lane
/// statuses and liveness). It is left as it was when this returns `None`.
pub fn update_with(
    prev: DashboardModel,
    derivation: &mut Derivation,
    prev_inputs: &Inputs,
    inputs: &Inputs,
    now: Instant,
    version: &str,
) -> Option<DashboardModel> {
    let added = added_events(prev_inputs, inputs)?;
    let renewed = renewed_beats(prev_inputs, inputs)?;
    let claims = changed_claims(prev_inputs, inputs)?;
    let manifests = changed_manifests(prev_inputs, inputs)?;
    let active = sources::active_claims(inputs);
    let manifest_ids = manifest_ids(&manifests);
    if added.len() > MAX_ADDED
        || renewed.len() > MAX_ADDED
        || claims.len() > MAX_ADDED
        || !machines_known(added.iter().map(|e| e.as_ref()), derivation)
        || !claims_local(&claims, inputs, &active, derivation, &manifest_ids)
        || manifest_ids.len() > MAX_ADDED
        || !manifests_local(&manifests, inputs)
    {
        return None;
    }
    if added.is_empty() && renewed.is_empty() && claims.is_empty() && manifests.is_empty() {
        // Coordinator tasks (or records the dashboard does not read) changed: rows,
        // batches, machines and health are the previous ones, assembled again.
        let parts = previous_parts(prev);
        return Some(assemble::assemble(inputs, now, version, parts));
    }
    derivation.events.add(added.iter().copied());
    let added: Vec<&EventIn> = added.iter().map(|e| e.as_ref()).collect();
    // Renewed heartbeats move lane statuses and liveness (the batches are the same ones,
    // in the same order, as agent, work and batch did not move).
    if !renewed.is_empty() {
        sources::renew(&mut derivation.srcs, inputs, &renewed, &active, now);
    }
    // A written or removed manifest is its batch id's batches again: the items their
    // lanes named before and name now (batches after it may move: lane rows are indexed
    // again).
    let manifest_keys = lane_keys(&derivation.srcs, &manifest_ids);
    if !manifest_ids.is_empty() {
        let kept_from = sources::rebatch(&mut derivation.srcs, inputs, &manifest_ids, &active, now);
        derivation.lane_rows = lane_rows_again(&derivation.lane_rows, &derivation.srcs, &kept_from);
    }
    let changes = Changes {
        added: &added,
        renewed: &renewed,
        claims: &claims,
        manifest_ids: &manifest_ids,
        manifest_keys,
    };
    let parts = rederive(prev, derivation, inputs, &changes, &active, now);
    Some(assemble::assemble(inputs, now, version, parts))
}

/// What changed since the previous build, as the update handles it.
struct Changes<'c, 'a> {
    /// New events.
    added: &'c [&'a EventIn],
    /// Renewed heartbeats.
    renewed: &'c [&'a HeartbeatIn],
    /// Claims written, changed or released: `(before, after)` at one path.
    claims: &'c [ClaimChange<'a>],
    /// The batch ids of manifests written, rewritten or removed (before and after).
    manifest_ids: &'c BTreeSet<String>,
    /// The items the lanes of those batches named before they changed.
    manifest_keys: BTreeSet<(String, String)>,
}

/// One claim path's record before and after (`None`: no record there).
type ClaimChange<'a> = (Option<&'a ClaimIn>, Option<&'a ClaimIn>);

/// One manifest path's record before and after (`None`: no record there).
type ManifestChange<'a> = (Option<&'a ManifestIn>, Option<&'a ManifestIn>);

/// The previous model's rows, batches, machines and health, unchanged.
fn previous_parts(prev: DashboardModel) -> assemble::Parts {
    let DashboardModel {
        rows,
        qa,
        batches,
        health,
        machines,
        ..
    } = prev;
    assemble::Parts {
        rows: RowSet { rows, qa },
        batches,
        machines,
        health,
    }
}

/// Re-derives the rows, batches and health the added events and renewed heartbeats touch
/// (and, for renewed heartbeats, the machines), keeping the rest of `prev`.
fn rederive(
    prev: DashboardModel,
    derivation: &Derivation,
    inputs: &Inputs,
    changes: &Changes<'_, '_>,
    active: &[&ClaimIn],
    now: Instant,
) -> assemble::Parts {
    let srcs = &derivation.srcs;
    let (renewed, claims) = (changes.renewed, changes.claims);
    let mut affected = Affected::of(changes.added, srcs);
    if !changes.manifest_ids.is_empty() {
        affected.manifests(changes.manifest_ids, &changes.manifest_keys, srcs);
    }
    if !claims.is_empty() {
        affected.claimed(claims, srcs);
    }
    if !renewed.is_empty() {
        affected.renewed(renewed, active, srcs);
    }
    let keys: HashSet<(&str, &str)> = affected
        .keys
        .iter()
        .map(|(r, t)| (r.as_str(), t.as_str()))
        .collect();
    // The events of the affected items and batches, from the lists the build keeps.
    let index = derivation.events.index(
        keys.iter().copied(),
        affected.batch_ids.iter().map(String::as_str),
    );
    let DashboardModel {
        rows: prev_rows,
        qa: prev_qa,
        batches: prev_batches,
        health: prev_health,
        machines,
        ..
    } = prev;
    let step = Step {
        inputs,
        derivation,
        affected: &affected,
        keys: &keys,
        controls: controls(srcs, &affected.direct, &index, &prev_batches),
        index,
        active,
        now,
    };
    let rows = step.rows(prev_rows, prev_qa);
    let batches = step.views(prev_batches, &rows);
    let health = step.health(prev_health, &rows.rows);
    let agents: BTreeSet<&str> = renewed
        .iter()
        .map(|h| h.agent.as_str())
        .chain(claim_agents(claims))
        .collect();
    let machines = if agents.is_empty() {
        machines
    } else {
        machine_groups::refresh_agents(machines, &agents, inputs, active, now)
    };
    assemble::Parts {
        rows,
        batches,
        machines,
        health,
    }
}

/// Whether both inputs carry the very same GitHub facts (or none): new facts re-derive all.
fn same_github(prev: &Inputs, now: &Inputs) -> bool {
    match (&prev.github, &now.github) {
        (None, None) => true,
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        _ => false,
    }
}

/// Events in `now` that `prev` did not have (maybe none), when the events changed only by
/// those and unreadable records and GitHub's facts are the very same.
fn added_events<'a>(prev: &Inputs, now: &'a Inputs) -> Option<Vec<&'a Arc<EventIn>>> {
    if prev.malformed != now.malformed
        || !same_github(prev, now)
        || now.events.len() < prev.events.len()
    {
        return None;
    }
    // Both lists are sorted by path: walk them together.
    let mut added = Vec::new();
    let mut old = prev.events.iter().peekable();
    for e in &now.events {
        match old.peek() {
            Some(o) if Arc::ptr_eq(o, e) => {
                old.next();
            }
            Some(o) if o.path == e.path => return None,
            _ => added.push(e),
        }
    }
    (old.next().is_none()).then_some(added)
}

/// The claim paths whose record differs between `prev` and `now` (maybe none).
fn changed_claims<'a>(prev: &'a Inputs, now: &'a Inputs) -> Option<Vec<ClaimChange<'a>>> {
    changed_by_path(&prev.claims, &now.claims, |c| &c.path)
}

/// The manifest paths whose record differs between `prev` and `now` (maybe none): written,
/// rewritten or removed.
fn changed_manifests<'a>(prev: &'a Inputs, now: &'a Inputs) -> Option<Vec<ManifestChange<'a>>> {
    changed_by_path(&prev.manifests, &now.manifests, |m| &m.path)
}

/// Each path whose record differs between `old` and `new`, both sorted by `path`, as the
/// record before and after (`None`: no record there); `None` past [`MAX_ADDED`] changes.
/// Unchanged records are the very same `Arc`s, as the server's reads keep them.
fn changed_by_path<'a, R>(
    old: &'a [Arc<R>],
    new: &'a [Arc<R>],
    path: impl Fn(&R) -> &str,
) -> Option<Vec<(Option<&'a R>, Option<&'a R>)>> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    loop {
        let change = match (old.get(i), new.get(j)) {
            (Some(o), Some(n)) if path(o) == path(n) => {
                i += 1;
                j += 1;
                (!Arc::ptr_eq(o, n)).then(|| (Some(o.as_ref()), Some(n.as_ref())))
            }
            (Some(o), Some(n)) if path(o) < path(n) => {
                i += 1;
                Some((Some(o.as_ref()), None))
            }
            (Some(o), None) => {
                i += 1;
                Some((Some(o.as_ref()), None))
            }
            (_, Some(n)) => {
                j += 1;
                Some((None, Some(n.as_ref())))
            }
            (None, None) => break,
        };
        out.extend(change);
        if out.len() > MAX_ADDED {
            return None;
        }
    }
    Some(out)
}

/// The batch ids changed manifests had before and have now.
fn manifest_ids(changed: &[ManifestChange<'_>]) -> BTreeSet<String> {
    (changed.iter())
        .flat_map(|(old, new)| [old, new])
        .flatten()
        .map(|m| m.id.clone())
        .collect()
}

/// Whether changed manifests touch only what an update re-derives: GitHub's facts cover
/// none of the repositories they name, before or after (which items GitHub alone adds
/// depends on the targets the fleet plans).
fn manifests_local(changed: &[ManifestChange<'_>], now: &Inputs) -> bool {
    let Some(facts) = now.github.as_deref() else {
        return true;
    };
    (changed.iter())
        .flat_map(|(old, new)| [old, new])
        .flatten()
        .all(|m| {
            let repos = m
                .repo
                .iter()
                .chain(m.targets.iter().filter_map(|t| t.repo.as_ref()));
            repos.into_iter().all(|r| !facts.repos.contains_key(r))
        })
}

/// The lanes no item backs, as `(batch index, lane index)`, after the batches moved: a kept
/// batch's (`kept_from[i]`: its index before) from `before`, the others' found again.
fn lane_rows_again(
    before: &[(usize, usize)],
    srcs: &[BatchSrc],
    kept_from: &[Option<usize>],
) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(before.len());
    for (i, b) in srcs.iter().enumerate() {
        match kept_from[i] {
            Some(old) => {
                let from = before.partition_point(|(bi, _)| *bi < old);
                let to = before.partition_point(|(bi, _)| *bi <= old);
                out.extend(before[from..to].iter().map(|(_, li)| (i, *li)));
            }
            None => out.extend(items::lane_rows_of(i, b)),
        }
    }
    out
}

/// The items the lanes of the batches of ids `ids` name.
fn lane_keys(srcs: &[BatchSrc], ids: &BTreeSet<String>) -> BTreeSet<(String, String)> {
    let mut keys = BTreeSet::new();
    for b in srcs.iter().filter(|b| ids.contains(&b.id)) {
        for t in b.lanes.iter().flat_map(|l| &l.targets) {
            if let Some(r) = b.repo_of(t) {
                keys.insert((r, t.clone()));
            }
        }
    }
    keys
}

/// The agents of changed claims: who held them, and who holds them now.
fn claim_agents<'a>(claims: &'a [ClaimChange<'_>]) -> impl Iterator<Item = &'a str> + 'a {
    claims
        .iter()
        .flat_map(|(old, new)| [old, new])
        .flatten()
        .map(|c| c.agent.as_str())
}

/// Whether changed claims touch only what an update re-derives: each on no batch, on a
/// saved one, or on one a changed manifest names (`retaken`: its batches are taken again
/// whole; other inferred batches are made of claims), no GitHub facts about its repository
/// (which items GitHub alone adds depends on the claims), and each agent's machine resolved
/// as before.
fn claims_local(
    claims: &[ClaimChange<'_>],
    inputs: &Inputs,
    active: &[&ClaimIn],
    derivation: &Derivation,
    retaken: &BTreeSet<String>,
) -> bool {
    if claims.is_empty() {
        return true;
    }
    let saved = |batch: &Option<String>| {
        batch.as_deref().is_none_or(|id| {
            retaken.contains(id)
                || derivation
                    .srcs
                    .iter()
                    .any(|b| b.id == id && b.source == BatchSource::Manifest)
        })
    };
    let github = |repo: &str| {
        inputs
            .github
            .as_deref()
            .is_some_and(|f| f.repos.contains_key(repo))
    };
    let each = claims.iter().flat_map(|(old, new)| [old, new]).flatten();
    if !each.clone().all(|c| saved(&c.batch_id) && !github(&c.repo)) {
        return false;
    }
    let agents: BTreeSet<&str> = claim_agents(claims).collect();
    agents.into_iter().all(|a| {
        derivation.resolved.get(a) == machine_groups::machine_of(a, inputs, active).as_ref()
    })
}

/// The heartbeats in `now` that renew one in `prev` (maybe none), when every other one is
/// the very same record: the same agents, each renewal on the same work (repository, target,
/// batch, lane) from the same machine — only its status, times and other metadata moved.
fn renewed_beats<'a>(prev: &Inputs, now: &'a Inputs) -> Option<Vec<&'a HeartbeatIn>> {
    if prev.heartbeats.len() != now.heartbeats.len() {
        return None;
    }
    let mut renewed = Vec::new();
    for (old, new) in prev.heartbeats.iter().zip(&now.heartbeats) {
        if Arc::ptr_eq(old, new) {
            continue;
        }
        let same_work = old.agent == new.agent
            && old.repo == new.repo
            && old.target == new.target
            && old.batch_id == new.batch_id
            && old.lane == new.lane
            && old.meta.machine == new.meta.machine;
        if !same_work {
            return None;
        }
        renewed.push(new.as_ref());
    }
    Some(renewed)
}

/// Whether the previous build resolved the machine of every agent the new events name
/// (and no event reports a machine for an agent whose machine was not observed).
fn machines_known<'e>(
    mut added: impl Iterator<Item = &'e EventIn>,
    derivation: &Derivation,
) -> bool {
    added.all(|e| {
        let Some(a) = &e.agent else {
            return true;
        };
        match derivation.resolved.get(a) {
            None => false,
            Some(MachineOf::Observed(_)) => true,
            Some(_) => e.meta.machine.is_none(),
        }
    })
}

/// What new events can change.
struct Affected {
    /// Batches the events belong to (by index): their controls, counts and rows may change.
    direct: BTreeSet<usize>,
    /// Items: where the events point, and every target of those batches.
    keys: BTreeSet<(String, String)>,
    /// Batches whose views may change (by index): those, any batch with a lane on an
    /// affected item, and any batch with a lane depending on one of them.
    batches: BTreeSet<usize>,
    /// The ids of `batches`, and `retaken`.
    batch_ids: BTreeSet<String>,
    /// Batch ids whose batches were taken again (or are gone): whatever was derived for
    /// them before goes (their views, lane rows and signals), and what waits on them moves.
    retaken: BTreeSet<String>,
}

impl Affected {
    fn of(added: &[&EventIn], srcs: &[BatchSrc]) -> Affected {
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
        let keys: BTreeSet<(String, String)> = added
            .iter()
            .filter_map(|e| Some((e.repo.clone()?, e.target.clone()?)))
            .collect();
        let mut affected = Affected {
            direct,
            keys,
            batches: BTreeSet::new(),
            batch_ids: BTreeSet::new(),
            retaken: BTreeSet::new(),
        };
        affected.settle(srcs);
        affected
    }
}

impl Affected {
    /// Adds every target of the direct batches to the items, and takes the batches whose
    /// views may change again.
    fn settle(&mut self, srcs: &[BatchSrc]) {
        for i in &self.direct {
            let b = &srcs[*i];
            for lane in &b.lanes {
                for t in &lane.targets {
                    if let Some(r) = b.repo_of(t) {
                        self.keys.insert((r, t.clone()));
                    }
                }
            }
        }
        self.batches = affected_batches(srcs, &self.direct, &self.keys, &self.retaken);
        self.batch_ids = (self.batches.iter())
            .map(|i| srcs[*i].id.clone())
            .chain(self.retaken.iter().cloned())
            .collect();
    }

    /// Adds what changed claims can change: the work each names (before and after), and the
    /// saved batch each is on, with every target of those batches (a claim moves its item's
    /// row, which the batch's view counts).
    fn claimed(&mut self, claims: &[ClaimChange<'_>], srcs: &[BatchSrc]) {
        for c in claims.iter().flat_map(|(old, new)| [old, new]).flatten() {
            self.keys.insert((c.repo.clone(), c.target.clone()));
            if let Some(id) = &c.batch_id {
                if let Some(i) = srcs.iter().position(|b| &b.id == id) {
                    self.direct.insert(i);
                }
            }
        }
        self.settle(srcs);
    }

    /// Adds what written or removed manifests can change: the batches of their ids (as
    /// `srcs` has them now; maybe none), the items their lanes named before (`before`) and
    /// name now, and the batches waiting on them (a lane renamed, added or completed, or a
    /// batch gone, moves what depends on it).
    fn manifests(
        &mut self,
        ids: &BTreeSet<String>,
        before: &BTreeSet<(String, String)>,
        srcs: &[BatchSrc],
    ) {
        self.keys.extend(before.iter().cloned());
        self.retaken.extend(ids.iter().cloned());
        let changed: BTreeSet<usize> = (srcs.iter().enumerate())
            .filter(|(_, b)| ids.contains(&b.id))
            .map(|(i, _)| i)
            .collect();
        let waiting = affected_batches(srcs, &changed, &BTreeSet::new(), &self.retaken);
        self.direct.extend(changed);
        self.direct.extend(waiting);
        self.settle(srcs);
    }

    /// Adds what renewed heartbeats can change: the work each points at, the work its agent
    /// claims, and every batch with a lane it owns — with every target of those batches and
    /// of the batches waiting on them (a lane's status can complete a dependency).
    fn renewed(&mut self, beats: &[&HeartbeatIn], active: &[&ClaimIn], srcs: &[BatchSrc]) {
        let agents: BTreeSet<&str> = beats.iter().map(|h| h.agent.as_str()).collect();
        for h in beats {
            if let (Some(r), Some(t)) = (&h.repo, &h.target) {
                self.keys.insert((r.clone(), t.clone()));
            }
        }
        for c in active {
            if agents.contains(c.agent.as_str()) {
                self.keys.insert((c.repo.clone(), c.target.clone()));
            }
        }
        for (i, b) in srcs.iter().enumerate() {
            if b.lanes
                .iter()
                .any(|l| l.owner.as_deref().is_some_and(|o| agents.contains(o)))
            {
                self.direct.insert(i);
            }
        }
        // Batches depending on those: their lanes' blocked_on may move, so their rows too.
        let waiting = affected_batches(srcs, &self.direct, &BTreeSet::new(), &self.retaken);
        self.direct.extend(waiting);
        self.settle(srcs);
    }
}

/// `direct`, the batches with a lane on an item of `keys`, and the batches with a lane
/// waiting on one of those or on a batch of `retaken`.
fn affected_batches(
    srcs: &[BatchSrc],
    direct: &BTreeSet<usize>,
    keys: &BTreeSet<(String, String)>,
    retaken: &BTreeSet<String>,
) -> BTreeSet<usize> {
    let key_set: HashSet<(&str, &str)> =
        keys.iter().map(|(r, t)| (r.as_str(), t.as_str())).collect();
    let targets: HashSet<&str> = keys.iter().map(|(_, t)| t.as_str()).collect();
    let mut affected = direct.clone();
    for (bi, b) in srcs.iter().enumerate() {
        let on_key = b.lanes.iter().any(|l| {
            l.targets.iter().any(|t| {
                targets.contains(t.as_str())
                    && b.repo_of(t)
                        .is_some_and(|r| key_set.contains(&(r.as_str(), t.as_str())))
            })
        });
        if on_key {
            affected.insert(bi);
        }
    }
    let touched: BTreeSet<&str> = (affected.iter())
        .map(|i| srcs[*i].id.as_str())
        .chain(retaken.iter().map(String::as_str))
        .collect();
    let dependents: Vec<usize> = srcs
        .iter()
        .enumerate()
        .filter(|(_, b)| {
            b.lanes.iter().any(|l| {
                l.depends_on.iter().any(|d| {
                    !d.contains('#')
                        && d.split_once(':')
                            .is_some_and(|(batch, _)| touched.contains(batch))
                })
            })
        })
        .map(|(bi, _)| bi)
        .collect();
    affected.extend(dependents);
    affected
}

/// Controls: recomputed for the batches with new events, kept for the others.
fn controls(
    srcs: &[BatchSrc],
    direct: &BTreeSet<usize>,
    index: &EventIndex<'_>,
    prev: &[BatchView],
) -> Vec<Control> {
    let prev: HashMap<&str, &BatchView> = prev.iter().map(|b| (b.id.as_str(), b)).collect();
    srcs.iter()
        .enumerate()
        .map(|(i, b)| {
            if direct.contains(&i) {
                index.control(&b.id)
            } else {
                prev.get(b.id.as_str())
                    .map(|v| Control {
                        status: v.control,
                        requested_at: v.stop_requested_at.clone(),
                    })
                    .unwrap_or_default()
            }
        })
        .collect()
}

/// One update's inputs, for its steps.
struct Step<'u, 'a> {
    inputs: &'a Inputs,
    derivation: &'u Derivation,
    affected: &'u Affected,
    keys: &'u HashSet<(&'u str, &'u str)>,
    index: EventIndex<'a>,
    /// The active claims (computed once per update).
    active: &'u [&'a ClaimIn],
    controls: Vec<Control>,
    now: Instant,
}

impl Step<'_, '_> {
    fn key(&self, repo: &str, target: &str) -> bool {
        self.keys.contains(&(repo, target))
    }

    /// Rows and QA of the affected items and lane rows again, the others as they were.
    fn rows(&self, prev_rows: Vec<Row>, prev_qa: Vec<QaItem>) -> RowSet {
        let srcs = &self.derivation.srcs;
        let direct = &self.affected.direct;
        let lane_rows: Vec<(usize, usize)> = self
            .derivation
            .lane_rows
            .iter()
            .filter(|(bi, _)| direct.contains(bi))
            .copied()
            .collect();
        // A direct batch's lane rows are derived again (its lanes may have changed), and a
        // retaken batch's old ones go.
        let direct_ids: HashSet<&str> = (direct.iter())
            .map(|i| srcs[*i].id.as_str())
            .chain(self.affected.retaken.iter().map(String::as_str))
            .collect();
        // Kept in place (rows are large: moving every one into a new list cost more than
        // deriving the few that changed).
        let mut set = RowSet {
            rows: prev_rows,
            qa: prev_qa,
        };
        set.rows.retain(|r| {
            if r.id.starts_with("lane:") {
                !r.batch_id
                    .as_deref()
                    .is_some_and(|b| direct_ids.contains(b))
            } else {
                !self.key(&r.repo, &r.target)
            }
        });
        set.qa.retain(|q| !self.key(&q.repo, &q.target));
        let mut fresh = RowSet::default();
        let keys = self
            .affected
            .keys
            .iter()
            .map(|(r, t)| (r.as_str(), t.as_str()));
        let items = items::gather(keys, self.inputs, self.active, srcs, &self.index);
        for ((repo, target), item) in self.affected.keys.iter().zip(items) {
            if item.exists() {
                fresh.push_item(repo, target, &item, srcs, &self.controls, self.now);
            }
        }
        for lane in lane_rows {
            fresh.push_lane(srcs, lane, &self.controls, self.now);
        }
        set.merged(fresh)
    }

    /// Batch views: the affected ones again, the others as they were.
    fn views(&self, prev: Vec<BatchView>, rows: &RowSet) -> Vec<BatchView> {
        let srcs = &self.derivation.srcs;
        let fresh = batch_views::batch_views(
            srcs,
            &self.controls,
            rows,
            &self.index.by_batch,
            Some(&self.affected.batches),
        );
        let mut views = prev;
        views.retain(|b| !self.affected.batch_ids.contains(&b.id));
        views.extend(fresh);
        batch_views::sort_views(&mut views, srcs);
        views
    }

    /// Health: the signals about affected items and batches again, the others as they were.
    fn health(&self, prev: Vec<HealthItem>, rows: &[Row]) -> Vec<HealthItem> {
        let hb_agents: BTreeSet<&str> = self
            .inputs
            .heartbeats
            .iter()
            .filter(|h| match (&h.repo, &h.target) {
                (Some(r), Some(t)) => self.key(r, t),
                _ => false,
            })
            .map(|h| h.agent.as_str())
            .collect();
        let batch_ids = &self.affected.batch_ids;
        let mut out = prev;
        out.retain(|h| {
            let key = || match (&h.repo, &h.target) {
                (Some(r), Some(t)) => self.key(r, t),
                _ => false,
            };
            match h.signal {
                Signal::H1 => !h.agent.as_deref().is_some_and(|a| hb_agents.contains(a)),
                Signal::H2 | Signal::H3 => !key(),
                Signal::R1 => true,
                _ => !h.batch_id.as_ref().is_some_and(|b| batch_ids.contains(b)),
            }
        });
        let pass = signals::Pass::Only {
            keys: self.keys,
            batches: batch_ids,
        };
        out.extend(signals::health(
            self.inputs,
            &self.derivation.srcs,
            rows,
            &self.index.by_batch,
            &self.derivation.resolved,
            &pass,
        ));
        signals::sort(&mut out);
        out
    }
}
