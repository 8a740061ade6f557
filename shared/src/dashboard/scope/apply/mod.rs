//! What the dashboard reads of the state under a scope (reference §7.3): [`apply`] turns
//! every record into the [`Inputs`] of a scoped build.
//!
//! - Claims of other repositories are left out (released ones uncounted: the build drops
//!   them anyway); so are coordinator tasks.
//! - Heartbeats are kept when their repository is in scope, or, without one, when their agent
//!   owns a lane of a batch still shown (and of the target they report, if any).
//! - Batches naming another repository in their id or path are left out; the others keep
//!   the targets and lanes whose repository (explicit, the batch's, or the one repository
//!   the claims and heartbeats of that `batch:target` agree on) is in scope. A number that is
//!   another repository's target in the same batch is ambiguous and left out too. A batch
//!   with nothing left in scope is left out. Objective and launch prompt are redacted when
//!   any of the batch's free text names another repository; a dependency on a lane no longer
//!   shown reads [`OUTSIDE`].
//! - Events naming another repository in their type or batch id are left out; an event of a
//!   batch is kept when the batch is and its repository (if it names one) is in scope, any
//!   other when its repository is.
//! - Operator metadata (thread, host, operator, branch, pull request, message, status)
//!   naming another repository is deleted from whatever stays.
//! - Unreadable claims and tasks are kept or left out by the repository of their path; the
//!   other unreadable records say only which kind they were.
//!
//! Each kind left out is counted in one notice.

use std::collections::BTreeSet;
use std::sync::Arc;

use rustc_hash::FxHashMap as HashMap;
use rustc_hash::FxHashSet as HashSet;

use super::refs::repo_refs;
use super::repos::Scope;
use super::repos::OUTSIDE;
use crate::dashboard::inputs::records::ClaimIn;
use crate::dashboard::inputs::records::EventIn;
use crate::dashboard::inputs::records::HeartbeatIn;
use crate::dashboard::inputs::records::Inputs;
use crate::dashboard::inputs::records::LaneIn;
use crate::dashboard::inputs::records::ManifestIn;
use crate::dashboard::inputs::records::Meta;
use crate::dashboard::inputs::records::TargetIn;
use crate::dashboard::inputs::tasks::TaskIn;

/// How many records of each kind were left out.
#[derive(Debug, Default)]
struct Skipped {
    claims: usize,
    heartbeats: usize,
    batches: usize,
    history: usize,
    tasks: usize,
    warnings: usize,
}

impl Skipped {
    /// One notice per kind left out, in the reference's words.
    fn notices(&self) -> Vec<String> {
        [
            (self.claims, "claim records"),
            (self.heartbeats, "heartbeat records"),
            (self.batches, "batch records"),
            (self.history, "batch history records"),
            (self.tasks, "coordinator task records"),
            (self.warnings, "warning records"),
        ]
        .into_iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("Skipped {n} {what} outside saved target repositories."))
        .collect()
    }
}

/// Returns `inputs` as a build under `scope` reads them, with the notices of what was left
/// out; an empty scope returns them unchanged.
pub fn apply(inputs: &Inputs, scope: &Scope) -> Inputs {
    if scope.is_all() {
        return inputs.clone();
    }
    let mut skipped = Skipped::default();
    let corroborated = corroboration(inputs);
    let batches = Batches::of(inputs, scope, &corroborated, &mut skipped);
    let mut out = Inputs {
        claims: claims(inputs, scope, &mut skipped),
        heartbeats: heartbeats(inputs, scope, &batches, &mut skipped),
        events: events(inputs, scope, &batches, &mut skipped),
        tasks: tasks(inputs, scope, &mut skipped),
        malformed: malformed(&inputs.malformed, scope, &mut skipped),
        manifests: batches.kept,
        notices: Vec::new(),
        target_repos: scope.repos(),
        github: inputs.github.clone(),
        // An annotation names its item's repository: only those in scope apply.
        annotations: inputs
            .annotations
            .iter()
            .filter(|a| scope.contains(&a.repo))
            .cloned()
            .collect(),
        // The operator's holds concern workers and repositories alike: all stay in view.
        controls: inputs.controls.clone(),
    };
    out.notices = inputs
        .notices
        .iter()
        .cloned()
        .chain(skipped.notices())
        .collect();
    out
}

/// `(batch, target)` → the repositories claims and heartbeats of that batch name for it.
type Corroboration = HashMap<(String, String), BTreeSet<String>>;

fn corroboration(inputs: &Inputs) -> Corroboration {
    let mut map: Corroboration = HashMap::default();
    let claims = inputs.claims.iter().filter_map(|c| {
        Some((
            c.batch_id.as_deref()?,
            c.target.as_str(),
            Some(c.repo.as_str()),
        ))
    });
    let beats = inputs.heartbeats.iter().filter_map(|h| {
        Some((
            h.batch_id.as_deref()?,
            h.target.as_deref()?,
            h.repo.as_deref(),
        ))
    });
    for (batch, target, repo) in claims.chain(beats) {
        if let Some(repo) = repo.filter(|r| *r != "UNKNOWN") {
            map.entry((batch.to_owned(), target.to_owned()))
                .or_default()
                .insert(repo.to_ascii_lowercase());
        }
    }
    map
}

/// Returns `meta` without the fields that name a repository outside `scope`.
fn meta(m: &Meta, scope: &Scope) -> Meta {
    Meta {
        machine: m.machine.clone(),
        thread: scope.redact(&m.thread),
        host: scope.redact(&m.host),
        operator: scope.redact(&m.operator),
        branch: scope.redact(&m.branch),
        pr_url: scope.redact(&m.pr_url),
        generation: m.generation.clone(),
    }
}

/// The batch id and lane a record names, both dropped when the id names another repository.
fn batch_of(
    batch: &Option<String>,
    lane: &Option<String>,
    scope: &Scope,
) -> (Option<String>, Option<String>) {
    match batch {
        Some(b) if scope.mentions_foreign(b) => (None, None),
        _ => (batch.clone(), scope.redact(lane)),
    }
}

/// Keeps `old` (shared) when scoping changed nothing, else the new value.
fn keep_or<T: PartialEq>(old: &Arc<T>, new: T) -> Arc<T> {
    if **old == new {
        old.clone()
    } else {
        Arc::new(new)
    }
}

fn claims(inputs: &Inputs, scope: &Scope, skipped: &mut Skipped) -> Vec<Arc<ClaimIn>> {
    let mut out = Vec::new();
    for c in &inputs.claims {
        if !scope.contains(&c.repo) {
            if c.status != "released" {
                skipped.claims += 1;
            }
            continue;
        }
        let (batch_id, lane) = batch_of(&c.batch_id, &c.lane, scope);
        out.push(keep_or(
            c,
            ClaimIn {
                batch_id,
                lane,
                meta: meta(&c.meta, scope),
                ..(**c).clone()
            },
        ));
    }
    out
}

fn tasks(inputs: &Inputs, scope: &Scope, skipped: &mut Skipped) -> Vec<Arc<TaskIn>> {
    let (kept, left): (Vec<_>, Vec<_>) = inputs
        .tasks
        .iter()
        .cloned()
        .partition(|t| scope.contains(&t.task.repo));
    skipped.tasks += left.len();
    kept
}

fn heartbeats(
    inputs: &Inputs,
    scope: &Scope,
    batches: &Batches,
    skipped: &mut Skipped,
) -> Vec<Arc<HeartbeatIn>> {
    let mut out = Vec::new();
    for h in &inputs.heartbeats {
        let keep = match (&h.repo, &h.batch_id) {
            (Some(repo), _) => scope.contains(repo),
            (None, Some(batch)) => batches.kept.iter().filter(|m| m.id == *batch).any(|m| {
                m.lanes.iter().any(|l| {
                    l.owner.as_deref() == Some(h.agent.as_str())
                        && h.target.as_ref().is_none_or(|t| l.targets.contains(t))
                })
            }),
            (None, None) => false,
        };
        if !keep {
            skipped.heartbeats += 1;
            continue;
        }
        let (batch_id, lane) = batch_of(&h.batch_id, &h.lane, scope);
        out.push(keep_or(
            h,
            HeartbeatIn {
                batch_id,
                lane,
                meta: meta(&h.meta, scope),
                ..(**h).clone()
            },
        ));
    }
    out
}

fn events(
    inputs: &Inputs,
    scope: &Scope,
    batches: &Batches,
    skipped: &mut Skipped,
) -> Vec<Arc<EventIn>> {
    // Batches without a manifest are shown when a claim or heartbeat in scope carries them.
    let carried: HashSet<&str> = inputs
        .claims
        .iter()
        .filter(|c| scope.contains(&c.repo))
        .filter_map(|c| c.batch_id.as_deref())
        .chain(
            inputs
                .heartbeats
                .iter()
                .filter(|h| h.repo.as_deref().is_some_and(|r| scope.contains(r)))
                .filter_map(|h| h.batch_id.as_deref()),
        )
        .collect();
    let mut out = Vec::new();
    for e in &inputs.events {
        let repo_in = e.repo.as_deref().map(|r| scope.contains(r));
        let keep = !scope.mentions_foreign(&e.kind)
            && match &e.batch_id {
                Some(b) if scope.mentions_foreign(b) => false,
                Some(b) if batches.ids.contains(b.as_str()) => {
                    match batches.kept.iter().find(|m| m.id == *b) {
                        None => false,
                        Some(m) => match repo_in {
                            Some(r) => r,
                            None => e.target.as_ref().is_none_or(|t| {
                                !batches.ambiguous.contains(&(m.id.clone(), t.clone()))
                            }),
                        },
                    }
                }
                Some(b) => repo_in.unwrap_or_else(|| carried.contains(b.as_str())),
                None => repo_in.unwrap_or(false),
            };
        if !keep {
            skipped.history += 1;
            continue;
        }
        out.push(keep_or(
            e,
            EventIn {
                lane: scope.redact(&e.lane),
                status: scope.redact(&e.status),
                message: scope.redact(&e.message),
                meta: meta(&e.meta, scope),
                ..(**e).clone()
            },
        ));
    }
    out
}

/// Unreadable records: claims and tasks by the repository of their path, the others only
/// by kind (their path or error could name another repository).
fn malformed(
    malformed: &[(String, String)],
    scope: &Scope,
    skipped: &mut Skipped,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (path, message) in malformed {
        let parts: Vec<&str> = path.split('/').collect();
        let repo = match parts.as_slice() {
            ["claims", owner, repo, _, ..] => Some(format!("{owner}/{repo}")),
            ["coordinator", "tasks", owner, repo, _, ..] => Some(format!("{owner}/{repo}")),
            _ => None,
        };
        match repo {
            Some(r) if scope.contains(&r) => out.push((path.clone(), message.clone())),
            Some(_) => skipped.warnings += 1,
            None => {
                let kind = parts
                    .first()
                    .copied()
                    .filter(|k| matches!(*k, "heartbeats" | "batches" | "events"))
                    .unwrap_or("history");
                out.push((format!("an unscoped {kind} record"), String::new()));
            }
        }
    }
    out.sort();
    out
}

/// The manifests under a scope.
struct Batches {
    /// Every manifest's batch id.
    ids: HashSet<String>,
    /// The manifests shown, scoped.
    kept: Vec<Arc<ManifestIn>>,
    /// `(batch, target)` numbers left out of a batch still shown.
    ambiguous: HashSet<(String, String)>,
}

impl Batches {
    fn of(
        inputs: &Inputs,
        scope: &Scope,
        corroborated: &Corroboration,
        skipped: &mut Skipped,
    ) -> Batches {
        let mut kept = Vec::new();
        let mut ambiguous = HashSet::default();
        // (batch, lane) pairs no longer shown, for dependencies.
        let mut hidden: HashSet<(String, String)> = HashSet::default();
        for m in &inputs.manifests {
            match scope_manifest(m, scope, corroborated) {
                Some((scoped, gone, foreign)) => {
                    hidden.extend(gone.into_iter().map(|l| (m.id.clone(), l)));
                    ambiguous.extend(foreign.into_iter().map(|t| (m.id.clone(), t)));
                    kept.push((m, scoped));
                }
                None => {
                    skipped.batches += 1;
                    hidden.extend(m.lanes.iter().map(|l| (m.id.clone(), l.name.clone())));
                }
            }
        }
        let kept = kept
            .into_iter()
            .map(|(m, mut scoped)| {
                for lane in &mut scoped.lanes {
                    lane.depends_on = dependencies(&lane.depends_on, &scoped.id, &hidden, scope);
                }
                keep_or(m, scoped)
            })
            .collect();
        Batches {
            ids: inputs.manifests.iter().map(|m| m.id.clone()).collect(),
            kept,
            ambiguous,
        }
    }
}

/// A lane's dependencies with those on lanes no longer shown replaced by [`OUTSIDE`].
fn dependencies(
    deps: &[String],
    batch: &str,
    hidden: &HashSet<(String, String)>,
    scope: &Scope,
) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for dep in deps {
        let key = match dep.split_once(':') {
            Some((b, l)) => (b.to_owned(), l.to_owned()),
            None => (batch.to_owned(), dep.clone()),
        };
        let shown = if scope.mentions_foreign(dep) || hidden.contains(&key) {
            OUTSIDE.to_owned()
        } else {
            dep.clone()
        };
        if !out.contains(&shown) {
            out.push(shown);
        }
    }
    out
}

/// A manifest under a scope, the lanes it lost and the target numbers left out; `None`
/// when nothing of it is in scope.
fn scope_manifest(
    m: &ManifestIn,
    scope: &Scope,
    corroborated: &Corroboration,
) -> Option<(ManifestIn, Vec<String>, BTreeSet<String>)> {
    if scope.mentions_foreign(&m.id) || scope.mentions_foreign(&m.path) {
        return None;
    }
    let foreign = foreign_numbers(m, scope, corroborated);
    let batch_in = m.repo.as_deref().is_some_and(|r| scope.contains(r));
    let targets: Vec<TargetIn> = m
        .targets
        .iter()
        .filter(|t| !foreign.contains(&t.target))
        .map(|t| TargetIn {
            title: scope.redact(&t.title),
            url: scope.redact(&t.url),
            ..t.clone()
        })
        .collect();
    let (lanes, gone) = scoped_lanes(m, scope, &foreign, batch_in);
    if !batch_in && targets.is_empty() && lanes.is_empty() {
        return None;
    }
    let free_text = [&m.objective, &m.launch_prompt]
        .into_iter()
        .flatten()
        .chain(m.targets.iter().filter_map(|t| t.title.as_ref()))
        .any(|s| scope.mentions_foreign(s));
    let (objective, launch_prompt) = if free_text {
        (None, None)
    } else {
        (m.objective.clone(), m.launch_prompt.clone())
    };
    let scoped = ManifestIn {
        targets,
        lanes,
        objective,
        launch_prompt,
        ..m.clone()
    };
    Some((scoped, gone, foreign))
}

/// The target numbers of `m` that resolve to no repository, several, or one `scope` does
/// not show.
fn foreign_numbers(
    m: &ManifestIn,
    scope: &Scope,
    corroborated: &Corroboration,
) -> BTreeSet<String> {
    // The repositories a target number resolves to (several when entries disagree).
    let resolve = |n: &str| -> BTreeSet<Option<String>> {
        let explicit: BTreeSet<Option<String>> = m
            .targets
            .iter()
            .filter(|t| t.target == n)
            .filter_map(target_repo)
            .map(Some)
            .collect();
        if !explicit.is_empty() {
            return explicit;
        }
        let fallback = m.repo.as_ref().map(|r| r.to_ascii_lowercase()).or_else(|| {
            corroborated
                .get(&(m.id.clone(), n.to_owned()))
                .filter(|repos| repos.len() == 1)
                .and_then(|repos| repos.first().cloned())
        });
        BTreeSet::from([fallback])
    };
    let in_scope = |n: &str| {
        let repos = resolve(n);
        repos.len() == 1
            && repos
                .iter()
                .all(|r| r.as_deref().is_some_and(|r| scope.contains(r)))
    };
    let numbers: BTreeSet<&str> = m
        .targets
        .iter()
        .map(|t| t.target.as_str())
        .chain(
            m.lanes
                .iter()
                .flat_map(|l| l.targets.iter().map(String::as_str)),
        )
        .collect();
    numbers
        .iter()
        .filter(|n| !in_scope(n))
        .map(|n| (*n).to_owned())
        .collect()
}

/// The lanes of `m` a scope keeps (their targets cut to those in scope), and the names of
/// those it drops: named for a foreign repository, or left with no target (a lane without
/// targets stays with its batch's repository).
fn scoped_lanes(
    m: &ManifestIn,
    scope: &Scope,
    foreign: &BTreeSet<String>,
    batch_in: bool,
) -> (Vec<LaneIn>, Vec<String>) {
    let mut lanes = Vec::new();
    let mut gone = Vec::new();
    for l in &m.lanes {
        let named_foreign = [Some(&l.name), l.owner.as_ref()]
            .into_iter()
            .flatten()
            .any(|s| scope.mentions_foreign(s))
            || meta_foreign(&l.meta, scope);
        let kept_targets: Vec<String> = l
            .targets
            .iter()
            .filter(|t| !foreign.contains(*t))
            .cloned()
            .collect();
        let empty = if l.targets.is_empty() {
            !batch_in
        } else {
            kept_targets.is_empty()
        };
        if named_foreign || empty {
            gone.push(l.name.clone());
            continue;
        }
        let mut lane = l.clone();
        lane.targets = kept_targets;
        lanes.push(lane);
    }
    (lanes, gone)
}

/// A target's own repository: its `repo`, else the one its URL names.
fn target_repo(t: &TargetIn) -> Option<String> {
    t.repo.as_ref().map(|r| r.to_ascii_lowercase()).or_else(|| {
        t.url
            .as_deref()
            .and_then(|u| repo_refs(u).into_iter().next())
    })
}

/// Reports whether any metadata field names a repository outside `scope`.
fn meta_foreign(m: &Meta, scope: &Scope) -> bool {
    [&m.thread, &m.host, &m.operator, &m.branch, &m.pr_url]
        .into_iter()
        .flatten()
        .any(|v| scope.mentions_foreign(v))
}

#[cfg(test)]
mod tests;
