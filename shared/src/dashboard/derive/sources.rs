//! Batches and lanes as the dashboard derives from: saved manifests, and batches inferred
//! from claims and heartbeats, each lane with its owner's heartbeat and its dependencies
//! applied (reference §1.1, §7). Both [`super::build`] and [`super::signals`] read these.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use rustc_hash::FxHashMap as HashMap;

use super::words;
use super::words::Terminal;
use crate::dashboard::inputs::records::heartbeat_work;
use crate::dashboard::inputs::records::is_active;
use crate::dashboard::inputs::records::ClaimIn;
use crate::dashboard::inputs::records::HeartbeatIn;
use crate::dashboard::inputs::records::Inputs;
use crate::dashboard::inputs::records::LaneIn;
use crate::dashboard::inputs::records::ManifestIn;
use crate::dashboard::inputs::records::Meta;
use crate::dashboard::model::BatchSource;
use crate::rules::liveness::Liveness;
use crate::rules::vocab;
use crate::time::Instant;

/// A batch as the build sees it: a manifest, or one inferred from claims and heartbeats.
#[derive(Debug, Clone)]
pub(crate) struct BatchSrc {
    pub(crate) id: String,
    pub(crate) source: BatchSource,
    pub(crate) path: String,
    pub(crate) repo: Option<String>,
    pub(crate) objective: Option<String>,
    pub(crate) targets: Vec<TargetSrc>,
    pub(crate) lanes: Vec<LaneSrc>,
    pub(crate) created_at: Option<String>,
    pub(crate) updated_at: Option<Instant>,
    pub(crate) created_by_machine: Option<String>,
    pub(crate) launch_prompt: Option<String>,
    pub(crate) has_blocker: bool,
}

/// A target a batch names.
#[derive(Debug, Clone)]
pub(crate) struct TargetSrc {
    /// The number (or other repo-scoped id).
    pub(crate) target: String,
    /// `pull_request`, `issue` or `unknown`.
    pub(crate) kind: String,
    /// A title, when the plan gives one.
    pub(crate) title: Option<String>,
    /// Its repository when it differs from the batch's.
    pub(crate) repo: Option<String>,
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
    /// A lane from a manifest, before any heartbeat is applied.
    fn of_manifest(l: &LaneIn) -> LaneSrc {
        LaneSrc {
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
        }
    }

    /// Reports whether the lane is closed or its status is a completion.
    pub(crate) fn terminal(&self) -> bool {
        self.closed || words::terminal(&self.status) == Some(Terminal::Completion)
    }

    /// Reports whether the lane satisfies a dependency on it.
    pub(crate) fn complete(&self) -> bool {
        self.terminal() || self.status_complete()
    }

    /// Reports whether the lane's status is one the dashboard counts as complete.
    pub(crate) fn status_complete(&self) -> bool {
        vocab::LANE_COMPLETE.contains(&self.status.to_lowercase().as_str())
    }
}

impl BatchSrc {
    /// A batch from its saved manifest.
    fn of_manifest(m: &ManifestIn) -> BatchSrc {
        BatchSrc {
            id: m.id.clone(),
            source: BatchSource::Manifest,
            path: m.path.clone(),
            repo: m.repo.clone(),
            objective: m.objective.clone(),
            targets: m
                .targets
                .iter()
                .map(|t| TargetSrc {
                    target: t.target.clone(),
                    kind: t.kind.clone(),
                    title: t.title.clone(),
                    repo: t.repo.clone(),
                })
                .collect(),
            lanes: m.lanes.iter().map(LaneSrc::of_manifest).collect(),
            created_at: m.created_at.clone(),
            updated_at: m.updated_at,
            created_by_machine: m.created_by_machine.clone(),
            launch_prompt: m.launch_prompt.clone(),
            has_blocker: m.has_blocker,
        }
    }

    fn target(&self, target: &str) -> Option<&TargetSrc> {
        self.targets.iter().find(|t| t.target == target)
    }

    /// The repository of `target` in this batch.
    pub(crate) fn repo_of(&self, target: &str) -> Option<String> {
        self.target(target)
            .and_then(|t| t.repo.clone())
            .or_else(|| self.repo.clone())
    }

    /// The kind and title of `target` in this batch.
    pub(crate) fn kind_of(&self, target: &str) -> Option<(String, Option<String>)> {
        self.target(target)
            .map(|t| (t.kind.clone(), t.title.clone()))
    }

    /// Target → the lanes that own it (for `owner/repo#N` dependency references).
    pub(crate) fn lane_owners(&self) -> HashMap<String, Vec<String>> {
        let mut owners: HashMap<String, Vec<String>> = HashMap::default();
        for l in &self.lanes {
            for t in &l.targets {
                owners.entry(t.clone()).or_default().push(l.name.clone());
            }
        }
        owners
    }
}

/// Claims that are not released.
pub(crate) fn active_claims(inputs: &Inputs) -> Vec<&ClaimIn> {
    inputs
        .claims
        .iter()
        .map(AsRef::as_ref)
        .filter(|c| is_active(c))
        .collect()
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
        .map(|m| BatchSrc::of_manifest(m))
        .collect();
    out.extend(inferred_batches(inputs, active_claims, None));
    apply_heartbeats(&mut out, hb_by_agent, now);
    apply_dependencies(&mut out);
    out
}

/// What one agent's claims and heartbeats say about an inferred batch.
#[derive(Default)]
struct AgentSignals {
    targets: BTreeSet<String>,
    repos: BTreeSet<String>,
    /// The newest status and its time.
    newest: Option<(Option<Instant>, String)>,
}

/// Batches named by active claims or heartbeats but not saved: one lane per agent. With
/// `only`, just the batches of those ids.
fn inferred_batches(
    inputs: &Inputs,
    active_claims: &[&ClaimIn],
    only: Option<&BTreeSet<String>>,
) -> Vec<BatchSrc> {
    let saved: BTreeSet<&str> = (inputs.manifests.iter())
        .map(|m| m.id.as_str())
        .filter(|id| only.is_none_or(|ids| ids.contains(*id)))
        .collect();
    // batch → agent → signals.
    let mut inferred: BTreeMap<String, BTreeMap<String, AgentSignals>> = BTreeMap::new();
    let mut signal =
        |batch: &str, agent: &str, repo: &str, target: &str, status: &str, at: Option<Instant>| {
            if only.is_some_and(|ids| !ids.contains(batch)) || saved.contains(batch) {
                return;
            }
            let entry = inferred
                .entry(batch.to_owned())
                .or_default()
                .entry(agent.to_owned())
                .or_default();
            entry.targets.insert(target.to_owned());
            entry.repos.insert(repo.to_owned());
            if entry.newest.as_ref().is_none_or(|(t, _)| at >= *t) {
                entry.newest = Some((at, status.to_owned()));
            }
        };
    for c in active_claims {
        if let Some(b) = &c.batch_id {
            signal(b, &c.agent, &c.repo, &c.target, &c.status, c.updated_at);
        }
    }
    for h in &inputs.heartbeats {
        if let Some((b, r, t)) = heartbeat_work(h) {
            signal(b, &h.agent, r, t, &h.status, h.updated_at);
        }
    }
    inferred
        .into_iter()
        .map(|(id, agents)| inferred_batch(id, &agents))
        .collect()
}

fn inferred_batch(id: String, agents: &BTreeMap<String, AgentSignals>) -> BatchSrc {
    let single = |set: &BTreeSet<String>| (set.len() == 1).then(|| set.iter().next().cloned());
    let repos: BTreeSet<String> = agents.values().flat_map(|a| a.repos.clone()).collect();
    let repo = single(&repos).flatten();
    let updated_at = agents
        .values()
        .filter_map(|a| a.newest.as_ref().and_then(|s| s.0))
        .max();
    let mut targets = Vec::new();
    let lanes = agents
        .iter()
        .map(|(agent, a)| {
            for t in &a.targets {
                let r = single(&a.repos).flatten();
                targets.push(TargetSrc {
                    target: t.clone(),
                    kind: "unknown".to_owned(),
                    title: None,
                    repo: r.filter(|r| Some(r) != repo.as_ref()),
                });
            }
            LaneSrc {
                name: agent.clone(),
                owner: Some(agent.clone()),
                targets: a.targets.iter().cloned().collect(),
                depends_on: Vec::new(),
                status: a
                    .newest
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
    BatchSrc {
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
    }
}

fn heartbeat_applies(hb: &HeartbeatIn, batch: &str, lane: &LaneSrc) -> bool {
    hb.batch_id.as_deref().is_none_or(|b| b == batch)
        && hb
            .target
            .as_deref()
            .is_none_or(|t| lane.targets.iter().any(|x| x == t))
}

/// Lane liveness: the owner's heartbeat, when it is about this lane.
fn apply_heartbeats(out: &mut [BatchSrc], hb_by_agent: &HashMap<&str, &HeartbeatIn>, now: Instant) {
    for b in out {
        for lane in &mut b.lanes {
            if let Some(hb) = lane.owner.as_deref().and_then(|o| hb_by_agent.get(o)) {
                apply_heartbeat(hb, &b.id, lane, now);
            }
        }
    }
}

/// Applies the owner's heartbeat `hb` to a lane of `batch`: its status and liveness when the
/// heartbeat is about the lane (returns true), else the work it points at instead.
fn apply_heartbeat(hb: &HeartbeatIn, batch: &str, lane: &mut LaneSrc, now: Instant) -> bool {
    if heartbeat_applies(hb, batch, lane) {
        lane.status = hb.status.clone();
        lane.liveness = Some(hb.liveness(now));
        true
    } else {
        if let (Some(r), Some(t)) = (&hb.repo, &hb.target) {
            lane.mismatch = Some(format!("{r}#{t}"));
        }
        false
    }
}

/// Dependencies: a dependency blocks until its lane is complete; unknown lanes block.
fn apply_dependencies(out: &mut [BatchSrc]) {
    if out
        .iter()
        .all(|b| b.lanes.iter().all(|l| l.depends_on.is_empty()))
    {
        for lane in out.iter_mut().flat_map(|b| b.lanes.iter_mut()) {
            lane.blocked_on.clear();
        }
        return;
    }
    // Decided over the lanes as they are, then written back.
    let blocked: Vec<Vec<Vec<String>>> = {
        // Batches by id; a lane's completeness is looked up only for the lanes named as
        // dependencies (the last batch and lane of that id and name count, as a map built
        // over every lane would keep).
        let mut by_id: HashMap<&str, Vec<usize>> = HashMap::default();
        for (i, b) in out.iter().enumerate() {
            by_id.entry(b.id.as_str()).or_default().push(i);
        }
        let complete = |batch: &str, lane: &str| {
            by_id.get(batch)?.iter().rev().find_map(|&i| {
                out[i]
                    .lanes
                    .iter()
                    .rev()
                    .find(|l| l.name == lane)
                    .map(LaneSrc::complete)
            })
        };
        out.iter()
            .map(|b| {
                let by_target = b
                    .lanes
                    .iter()
                    .any(|l| l.depends_on.iter().any(|d| d.contains('#')))
                    .then(|| b.lane_owners());
                let no_owners = HashMap::default();
                let owners = by_target.as_ref().unwrap_or(&no_owners);
                b.lanes
                    .iter()
                    .map(|lane| {
                        lane.depends_on
                            .iter()
                            .filter(|dep| {
                                let key = resolve_dep(dep, &b.id, owners);
                                !key.and_then(|(b, l)| complete(&b, &l)).unwrap_or(false)
                            })
                            .cloned()
                            .collect()
                    })
                    .collect()
            })
            .collect()
    };
    for (b, lanes) in out.iter_mut().zip(blocked) {
        for (lane, blocked_on) in b.lanes.iter_mut().zip(lanes) {
            lane.blocked_on = blocked_on;
        }
    }
}

/// Updates `srcs` (derived by [`batches`] from earlier inputs) for heartbeats renewed since:
/// `renewed` pairs each earlier heartbeat with its renewal (the same agent on the same
/// work; its status and times moved). The lanes those agents own take the new status and
/// liveness where the heartbeat applies (as [`batches`] would apply it), an inferred batch a
/// renewal names takes its newest signal time again, and dependencies are applied again.
/// Other lanes keep the liveness they were derived with. Returns the indices of the batches
/// with a lane a renewal applies to.
pub(crate) fn renew(
    srcs: &mut [BatchSrc],
    inputs: &Inputs,
    renewed: &[&HeartbeatIn],
    active_claims: &[&ClaimIn],
    now: Instant,
) -> BTreeSet<usize> {
    let by_agent: HashMap<&str, &HeartbeatIn> =
        renewed.iter().map(|h| (h.agent.as_str(), *h)).collect();
    let named: BTreeSet<&str> = renewed
        .iter()
        .filter_map(|h| heartbeat_work(h).map(|w| w.0))
        .collect();
    let mut touched = BTreeSet::new();
    // Whether a lane became complete or stopped being: only then can a dependency move.
    let mut flipped = false;
    for (i, b) in srcs.iter_mut().enumerate() {
        for lane in &mut b.lanes {
            let Some(hb) = lane.owner.as_deref().and_then(|o| by_agent.get(o)) else {
                continue;
            };
            let was = lane.complete();
            if apply_heartbeat(hb, &b.id, lane, now) {
                flipped |= lane.complete() != was;
                touched.insert(i);
            }
        }
        if b.source == BatchSource::Inferred && named.contains(b.id.as_str()) {
            b.updated_at = newest_signal(inputs, active_claims, &b.id);
        }
    }
    if flipped {
        apply_dependencies(srcs);
    }
    touched
}

/// Updates `srcs` (derived by [`batches`] from earlier inputs) for manifests written,
/// rewritten or removed since: `ids` names every batch id such a manifest had before or has
/// now. Batches of other ids are kept as they were (with the liveness they were derived
/// with); the batches of `ids` are taken again — saved ones from their manifests, inferred
/// ones from the claims and heartbeats naming them (a manifest written over an inferred
/// batch replaces it, one removed may leave one) — with their owners' heartbeats applied as
/// [`batches`] applies them, in the order [`batches`] gives, and dependencies are applied
/// again over every batch. Returns, for each batch now, the index it was kept from.
pub(crate) fn rebatch(
    srcs: &mut Vec<BatchSrc>,
    inputs: &Inputs,
    ids: &BTreeSet<String>,
    active_claims: &[&ClaimIn],
    now: Instant,
) -> Vec<Option<usize>> {
    let with_beats = |mut b: BatchSrc| {
        for lane in &mut b.lanes {
            if let Some(hb) = lane.owner.as_deref().and_then(|o| inputs.heartbeat_of(o)) {
                apply_heartbeat(hb, &b.id, lane, now);
            }
        }
        b
    };
    let old = std::mem::take(srcs);
    let mut kept_from = Vec::with_capacity(old.len() + 1);
    // Saved batches come first, in their manifests' path order, then inferred ones by id:
    // both lists are walked beside the new ones.
    let split = old.partition_point(|b| b.source != BatchSource::Inferred);
    let mut old = old.into_iter().enumerate().peekable();
    for m in &inputs.manifests {
        while old
            .next_if(|(i, b)| *i < split && b.path.as_str() < m.path.as_str())
            .is_some()
        {}
        let kept = old.next_if(|(i, b)| *i < split && b.path == m.path);
        match kept {
            Some((i, b)) if !ids.contains(&b.id) && b.id == m.id => {
                srcs.push(b);
                kept_from.push(Some(i));
            }
            _ => {
                srcs.push(with_beats(BatchSrc::of_manifest(m)));
                kept_from.push(None);
            }
        }
    }
    let mut fresh = inferred_batches(inputs, active_claims, Some(ids))
        .into_iter()
        .peekable();
    for (i, b) in old.filter(|(i, b)| *i >= split && !ids.contains(&b.id)) {
        while let Some(f) = fresh.next_if(|f| f.id < b.id) {
            srcs.push(with_beats(f));
            kept_from.push(None);
        }
        srcs.push(b);
        kept_from.push(Some(i));
    }
    for f in fresh {
        srcs.push(with_beats(f));
        kept_from.push(None);
    }
    apply_dependencies(srcs);
    kept_from
}

/// The time of the newest signal an inferred batch has (as [`inferred_batches`] takes it).
fn newest_signal(inputs: &Inputs, active_claims: &[&ClaimIn], batch: &str) -> Option<Instant> {
    let claims = active_claims
        .iter()
        .filter(|c| c.batch_id.as_deref() == Some(batch))
        .filter_map(|c| c.updated_at);
    let beats = inputs
        .heartbeats
        .iter()
        .filter(|h| heartbeat_work(h).is_some_and(|w| w.0 == batch))
        .filter_map(|h| h.updated_at);
    claims.chain(beats).max()
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
