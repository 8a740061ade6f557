//! Batch views: each batch with its lanes' states and notes, audit and QA counts, tier,
//! control and repairs (reference §4).

use std::collections::BTreeSet;

use rustc_hash::FxHashMap as HashMap;

use super::event_index::Control;
use super::operator_rows::fmt;
use super::operator_rows::RowSet;
use super::rules;
use super::sources::resolve_dep;
use super::sources::BatchSrc;
use super::sources::LaneSrc;
use crate::dashboard::inputs::records::EventIn;
use crate::dashboard::model::AuditCounts;
use crate::dashboard::model::BatchSource;
use crate::dashboard::model::BatchTier;
use crate::dashboard::model::BatchView;
use crate::dashboard::model::ControlStatus;
use crate::dashboard::model::LaneView;
use crate::dashboard::model::LivenessView;
use crate::dashboard::model::QaCounts;
use crate::dashboard::model::QaItem;
use crate::dashboard::model::QaStatus;
use crate::dashboard::model::Repair;
use crate::dashboard::model::Row;
use crate::dashboard::model::RowState;
use crate::rules::liveness::Liveness;

/// Lane key `(batch, lane)` → its state and the row that backs it.
type LaneStates = HashMap<(String, String), (RowState, Option<String>)>;

/// The views of every batch, or of the batches in `only` (by index), in view order.
pub(crate) fn batch_views(
    srcs: &[BatchSrc],
    controls: &[Control],
    rows: &RowSet,
    events_by_batch: &HashMap<&str, Vec<&EventIn>>,
    only: Option<&BTreeSet<usize>>,
) -> Vec<BatchView> {
    // Lane states first: notes follow dependency chains across lanes.
    let states = lane_states(srcs, &rows.rows, only);
    let mut views: Vec<BatchView> = srcs
        .iter()
        .zip(controls)
        .enumerate()
        .filter(|(i, _)| only.is_none_or(|o| o.contains(i)))
        .map(|(_, (b, control))| {
            batch_view(
                b,
                control,
                &states,
                &rows.qa,
                events_by_batch.get(b.id.as_str()),
            )
        })
        .collect();
    sort_views(&mut views, srcs);
    views
}

/// Batches by tier, then in source order (manifests by path, then inferred batches).
pub(crate) fn sort_views(views: &mut [BatchView], srcs: &[BatchSrc]) {
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

/// The state of every lane of the batches needed: those in `only` (all without it) and the
/// other batches their lanes depend on.
fn lane_states(srcs: &[BatchSrc], rows: &[Row], only: Option<&BTreeSet<usize>>) -> LaneStates {
    let row_index: HashMap<&str, usize> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id.as_str(), i))
        .collect();
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
    let mut states = LaneStates::default();
    for b in srcs
        .iter()
        .filter(|b| needed.as_ref().is_none_or(|n| n.contains(b.id.as_str())))
    {
        for lane in &b.lanes {
            let row_id = lane_row_id(b, lane, &row_index);
            let state = if lane.terminal() {
                RowState::Done
            } else if let Some(i) = row_id.as_deref().and_then(|id| row_index.get(id)) {
                rows[*i].state
            } else if !lane.blocked_on.is_empty() {
                RowState::Blocked
            } else if lane.liveness == Some(Liveness::Dead) {
                RowState::Dead
            } else {
                rules::lane_status_state(&lane.status)
            };
            states.insert((b.id.clone(), lane.name.clone()), (state, row_id));
        }
    }
    states
}

/// The row backing a lane: its first target's item row, else the lane's own row.
fn lane_row_id(b: &BatchSrc, lane: &LaneSrc, row_index: &HashMap<&str, usize>) -> Option<String> {
    lane.targets
        .iter()
        .find_map(|t| {
            let id = format!("target:{}#{t}", b.repo_of(t)?);
            row_index.contains_key(id.as_str()).then_some(id)
        })
        .or_else(|| {
            let id = format!("lane:{}:{}", b.id, lane.name);
            row_index.contains_key(id.as_str()).then_some(id)
        })
}

fn batch_view(
    b: &BatchSrc,
    control: &Control,
    states: &LaneStates,
    qa: &[QaItem],
    evs: Option<&Vec<&EventIn>>,
) -> BatchView {
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
                liveness: LivenessView::of(l.liveness),
                note: lane_note(b, l, state, states, &owners),
                row_id,
            }
        })
        .collect();
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
        tier: tier(b, control.status, &lanes),
        audit: audit(&lanes, b),
        lanes,
        control: control.status,
        stop_requested_at: control.requested_at.clone(),
        event_count: evs.map_or(0, Vec::len),
        last_event_at: evs.and_then(|e| e.last()).and_then(|e| fmt(e.at)),
        qa: qa_counts(qa, &b.id),
        repairs: repairs(b, control.status),
    }
}

fn audit(lanes: &[LaneView], b: &BatchSrc) -> AuditCounts {
    let mut audit = AuditCounts {
        lanes: lanes.len(),
        ..AuditCounts::default()
    };
    for (l, src) in lanes.iter().zip(&b.lanes) {
        match l.state {
            RowState::Done | RowState::Archived => audit.done += 1,
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
    audit
}

fn tier(b: &BatchSrc, control: ControlStatus, lanes: &[LaneView]) -> BatchTier {
    if b.has_blocker
        || control != ControlStatus::Running
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
    } else if !lanes.is_empty() && lanes.iter().all(|l| l.state.is_terminal()) {
        BatchTier::Archive
    } else {
        BatchTier::Running
    }
}

fn qa_counts(qa: &[QaItem], batch: &str) -> QaCounts {
    let mut counts = QaCounts::default();
    for q in qa.iter().filter(|q| q.batch_id.as_deref() == Some(batch)) {
        counts.total += 1;
        match q.status {
            QaStatus::Missing => counts.missing += 1,
            QaStatus::Requested => counts.requested += 1,
            QaStatus::InProgress => counts.in_progress += 1,
            QaStatus::Passed => counts.passed += 1,
            QaStatus::Failed => counts.failed += 1,
            QaStatus::Unknown => counts.unknown += 1,
        }
    }
    counts
}

fn repairs(b: &BatchSrc, control: ControlStatus) -> Vec<Repair> {
    let plan = match b.source {
        BatchSource::Inferred => Some(Repair::BatchPlanMissing),
        BatchSource::Manifest if b.launch_prompt.is_none() => Some(Repair::PromptMissing),
        BatchSource::Manifest => None,
    };
    let control = match control {
        ControlStatus::StopRequested => Some(Repair::StopRequested),
        ControlStatus::Stopped => Some(Repair::Stopped),
        ControlStatus::Running => None,
    };
    plan.into_iter().chain(control).collect()
}

/// The objective's first sentence, at most 68 characters, else the batch id.
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

/// What a lane waits on, following its dependency chain to the root (reference §4.2).
fn lane_note(
    b: &BatchSrc,
    lane: &LaneSrc,
    state: RowState,
    states: &LaneStates,
    owners: &HashMap<String, Vec<String>>,
) -> Option<String> {
    if state.is_terminal() {
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
    let unknown = || {
        Some(format!(
            "{verb} {first}, which is not in coordination state"
        ))
    };
    let Some(key) = resolve_dep(first, &b.id, owners) else {
        return unknown();
    };
    let Some((state, _)) = states.get(&key).cloned() else {
        return unknown();
    };
    let start = (b.id.clone(), lane.name.clone());
    let (key, root_state) = match follow_chain(b, owners, states, start, key, state) {
        Ok(root) => root,
        Err(cycle) => return Some(format!("{verb} {first} → {cycle}")),
    };
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
        RowState::Done | RowState::Archived if !direct => {
            format!("{verb} {first} → root {root}, which is done — ready to relaunch")
        }
        RowState::Blocked => format!("{verb} {first}, which is blocked with no blocker recorded"),
        s => format!("{verb} {first}, which is {}", s.as_str()),
    })
}

/// A chain of blocked lanes that comes back to a lane already followed.
#[derive(Debug, thiserror::Error)]
#[error("dependency cycle back to {back_to}")]
struct DependencyCycle {
    /// The lane name the chain comes back to.
    back_to: String,
}

/// Follows a chain of blocked lanes from `key` to its root: the first lane that is not itself
/// blocked. Only same-batch chains are followed. Returns the root and its state, or the
/// cycle the chain runs into.
fn follow_chain(
    b: &BatchSrc,
    owners: &HashMap<String, Vec<String>>,
    states: &LaneStates,
    start: (String, String),
    mut key: (String, String),
    mut root_state: RowState,
) -> Result<((String, String), RowState), DependencyCycle> {
    let mut seen = BTreeSet::from([start, key.clone()]);
    for _ in 0..64 {
        if root_state != RowState::Blocked {
            break;
        }
        let Some(next) = first_blocker(&key, b, owners) else {
            break;
        };
        if !seen.insert(next.clone()) {
            return Err(DependencyCycle { back_to: next.1 });
        }
        match states.get(&next) {
            Some((s, _)) => {
                key = next;
                root_state = *s;
            }
            None => break,
        }
    }
    Ok((key, root_state))
}

/// The lane the lane `key` is first blocked on, when it is in batch `b`.
fn first_blocker(
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
