//! Attribution and lineage: which events belong to a lane, and which agents a lane's
//! lifecycle trail authorizes, replayed in `(at, event_id)` order.

use super::*;

/// What attribution needs to know about the whole batch.
pub(super) struct Scope<'a> {
    pub(super) batch_id: &'a str,
    /// The declared repo (`""` when none: no repo gate).
    pub(super) repo: String,
    /// On how many lanes each known owner appears.
    pub(super) owners: HashMap<String, usize>,
    /// On how many lanes each target appears.
    pub(super) targets: HashMap<String, usize>,
}

impl<'a> Scope<'a> {
    pub(super) fn new(batch_id: &'a str, batch: &Record, rows: &[Value]) -> Self {
        let mut owners = HashMap::new();
        let mut targets = HashMap::new();
        for lane in rows.iter().filter_map(Value::as_object) {
            let owner = deps::lane_owner(lane).into_owned();
            if owner != UNKNOWN {
                *owners.entry(owner).or_insert(0) += 1;
            }
            let distinct: BTreeSet<String> = deps::lane_targets(lane).into_iter().collect();
            for target in distinct {
                *targets.entry(target).or_insert(0) += 1;
            }
        }
        Scope {
            batch_id,
            repo: loose_string(f::REPO.get(batch)),
            owners,
            targets,
        }
    }

    pub(super) fn lane(&self, lane: &Record) -> Lane<'a> {
        let targets = deps::lane_targets(lane);
        let unique_targets = targets
            .iter()
            .filter(|t| self.targets.get(*t).copied().unwrap_or(0) <= 1)
            .cloned()
            .collect();
        let owner = deps::lane_owner(lane).into_owned();
        let owner_unique = owner != UNKNOWN && self.owners.get(&owner).copied().unwrap_or(0) <= 1;
        Lane {
            batch_id: self.batch_id,
            name: deps::lane_name(lane).into_owned(),
            owner,
            targets,
            unique_targets,
            owner_unique,
        }
    }

    /// Returns the events that pass the repo gate and belong to `lane` (§7.2).
    pub(super) fn attributed<'e>(
        &self,
        lane: &Lane,
        events: &'e [(String, Record)],
    ) -> Vec<&'e Record> {
        events
            .iter()
            .map(|(_, event)| event)
            .filter(|event| self.repo.is_empty() || loose_string(f::REPO.get(event)) == self.repo)
            .filter(|event| lane.attributes(event))
            .collect()
    }
}

/// One lane as attribution and lineage see it.
pub(super) struct Lane<'a> {
    pub(super) batch_id: &'a str,
    pub(super) name: String,
    pub(super) owner: String,
    pub(super) targets: Vec<String>,
    /// Targets that appear on no other lane of the batch.
    pub(super) unique_targets: Vec<String>,
    /// Whether the owner is known and owns no other lane.
    pub(super) owner_unique: bool,
}

impl Lane<'_> {
    /// Reports whether `event` belongs to this lane: explicit lane, unique target, or
    /// unique owner whose event target is absent or one of this lane's.
    pub(super) fn attributes(&self, event: &Record) -> bool {
        let explicit = self.name != UNKNOWN
            && !self.name.is_empty()
            && loose_string(f::LANE.get(event)) == self.name;
        let target = loose_string(f::TARGET.get(event));
        let by_owner = self.owner_unique
            && loose_string(f::AGENT_ID.get(event)) == self.owner
            && (target.is_empty() || self.targets.contains(&target));
        explicit || self.unique_targets.contains(&target) || by_owner
    }

    pub(super) fn has_target(&self, event: &Record) -> bool {
        f::TARGET
            .text(event)
            .is_some_and(|t| self.targets.iter().any(|x| x == t))
    }

    /// Reports whether an ordinary lifecycle event carries this lane's identity facts.
    pub(super) fn identity_facts(&self, event: &Record) -> bool {
        number_is(event, f::SCHEMA_VERSION, 1.0)
            && facts(event, &ORDINARY_REQUIRED)
            && optional_facts(event, &ORDINARY_OPTIONAL)
            && f::BATCH_ID.text(event) == Some(self.batch_id)
            && (!f::LANE.is_in(event) || f::LANE.text(event) == Some(self.name.as_str()))
            && (!f::TARGET.is_in(event) || self.has_target(event))
            && f::AT.text(event).is_some_and(time::is_rfc3339)
    }

    /// Reports whether a `claim.acquired` validly admits its agent to the lane.
    pub(super) fn admits(&self, event: &Record) -> bool {
        if !self.identity_facts(event) || !payload_valid(event, EventKind::ClaimAcquired) {
            return false;
        }
        if f::AGENT_ID.text(event) == Some(self.owner.as_str()) {
            return true;
        }
        if self.owner == UNKNOWN || !self.has_target(event) {
            return false;
        }
        // A takeover names its lane, or its target identifies exactly one lane.
        f::LANE.is_in(event)
            || f::TARGET
                .text(event)
                .is_some_and(|t| self.unique_targets.iter().any(|u| u == t))
    }

    /// Reports whether a `lane_closed` is attributed to this lane and closed by an agent
    /// authorized at its position (`authorized_here`).
    pub(super) fn terminal_attributed(&self, event: &Record, authorized_here: bool) -> bool {
        let closer = closer_of(event);
        (!f::BATCH_ID.is_in(event) || f::BATCH_ID.text(event) == Some(self.batch_id))
            && (!f::LANE.is_in(event) || f::LANE.text(event) == Some(self.name.as_str()))
            && self.has_target(event)
            && authorized_here
            && (!f::AGENT_ID.is_in(event) || f::AGENT_ID.text(event) == closer)
    }
}

/// Reports whether an ordinary lifecycle event satisfies its type's payload contract.
pub(super) fn payload_valid(event: &Record, kind: EventKind) -> bool {
    // An absent status is fine; a present one (`null` included) must be the word.
    let status_is =
        |status: Option<&Value>, want: &str| status.is_none_or(|s| s.as_str() == Some(want));
    match Payload::read(kind, event) {
        Some(Ok(Payload::ClaimAcquired { status })) => status_is(status, "active"),
        Some(Ok(Payload::ClaimReleased { status })) => status_is(status, "released"),
        Some(Ok(Payload::PhaseChanged {
            phase,
            previous_phase,
            old_phase,
            new_phase,
            status,
        })) => phase_change_valid(phase, previous_phase, old_phase, new_phase, status),
        _ => false,
    }
}

/// Reports whether a `phase.changed` is a real transition, in the current
/// (`previous_phase`) or historical (`old_phase`/`new_phase`) shape.
pub(super) fn phase_change_valid(
    phase: Option<&Value>,
    previous_phase: Option<&Value>,
    old_phase: Option<&Value>,
    new_phase: Option<&Value>,
    status: Option<&Value>,
) -> bool {
    if !is_fact(phase) || (status.is_some() && !is_fact(status)) {
        return false;
    }
    let historical = old_phase.is_some() || new_phase.is_some();
    let published = previous_phase.is_some();
    if historical
        && !(is_fact(old_phase)
            && is_fact(new_phase)
            && old_phase != new_phase
            && new_phase == phase)
    {
        return false;
    }
    if published && !(is_fact(previous_phase) && previous_phase != phase) {
        return false;
    }
    historical || published
}

pub(super) fn closer_of(event: &Record) -> Option<&str> {
    f::CLOSED_BY
        .get(event)
        .and_then(Value::as_object)
        .and_then(|c| f::AGENT_ID.text(c))
}

pub(super) fn type_of(event: &Record) -> Option<&str> {
    f::TYPE.text(event)
}

/// The result of replaying a lane's lifecycle events in `(at, event_id)` order.
pub(super) struct Lineage {
    /// Whether every lifecycle event has a fact `event_id`, a valid `at`, and a unique key.
    pub(super) ordered: bool,
    /// Whether every ordinary lifecycle event is valid at its position.
    pub(super) ordinary_valid: bool,
    /// The agents authorized after the last event.
    pub(super) authorized: BTreeSet<String>,
    /// Per lane event (same index): valid and authorized at its position.
    pub(super) ok: Vec<bool>,
}

impl Lineage {
    pub(super) fn replay(events: &[&Record], lane: &Lane) -> Self {
        let mut authorized = BTreeSet::new();
        if lane.owner != UNKNOWN {
            authorized.insert(lane.owner.clone());
        }
        let mut ok = vec![false; events.len()];
        let lost = lost_acquisitions(events);
        let Some(order) = lifecycle_order(events) else {
            return Lineage {
                ordered: false,
                ordinary_valid: false,
                authorized,
                ok,
            };
        };
        let mut ordinary_valid = true;
        for i in order {
            let event = events[i];
            let agent = f::AGENT_ID.text(event);
            let valid = match type_of(event).and_then(EventKind::parse) {
                // A claim that lost a cross-machine race admits nobody; it is no fault in
                // the trail either (sync recorded the loss).
                Some(EventKind::ClaimAcquired) if lost.contains(&i) => continue,
                Some(EventKind::ClaimAcquired) => {
                    let valid = lane.admits(event);
                    if let (true, Some(agent)) = (valid, agent) {
                        authorized.insert(agent.to_owned());
                    }
                    ordinary_valid &= valid;
                    valid
                }
                Some(kind @ (EventKind::ClaimReleased | EventKind::PhaseChanged)) => {
                    let valid = lane.identity_facts(event)
                        && agent.is_some_and(|a| authorized.contains(a))
                        && payload_valid(event, kind);
                    ordinary_valid &= valid;
                    valid
                }
                _ => closer_of(event).is_some_and(|c| authorized.contains(c)),
            };
            ok[i] = valid;
        }
        Lineage {
            ordered: true,
            ordinary_valid,
            authorized,
            ok,
        }
    }
}

/// Returns the indices of the `claim.acquired` events that a later `claim.lost` cancelled:
/// each `claim.lost` (written by sync when the remote kept another holder) cancels the
/// latest acquisition by the same agent of the same target at or before its `at` that no
/// other loss cancelled.
pub(super) fn lost_acquisitions(events: &[&Record]) -> BTreeSet<usize> {
    let key = |event: &Record| {
        let at = f::AT.text(event).and_then(time::parse)?;
        Some((
            f::AGENT_ID.text(event)?.to_owned(),
            f::TARGET.text(event)?.to_owned(),
            at,
        ))
    };
    let of_kind = |kind: EventKind| -> Vec<(usize, (String, String, time::Instant))> {
        events
            .iter()
            .enumerate()
            .filter(|(_, e)| type_of(e) == Some(kind.as_str()))
            .filter_map(|(i, e)| Some((i, key(e)?)))
            .collect()
    };
    let acquired = of_kind(EventKind::ClaimAcquired);
    let mut losses: Vec<(String, String, time::Instant)> = of_kind(EventKind::ClaimLost)
        .into_iter()
        .map(|(_, k)| k)
        .collect();
    losses.sort_by_key(|(_, _, at)| *at);
    let mut cancelled = BTreeSet::new();
    for (agent, target, lost_at) in losses {
        let latest = acquired
            .iter()
            .filter(|(i, (a, t, at))| {
                *a == agent && *t == target && *at <= lost_at && !cancelled.contains(i)
            })
            .max_by_key(|(i, (_, _, at))| (*at, *i));
        if let Some((i, _)) = latest {
            cancelled.insert(*i);
        }
    }
    cancelled
}

/// Returns the indices of the lifecycle events sorted by `(at, event_id)`, or `None` when
/// one lacks a fact `event_id` or a valid `at`, or two share a key.
pub(super) fn lifecycle_order(events: &[&Record]) -> Option<Vec<usize>> {
    let mut keyed = Vec::new();
    for (i, event) in events.iter().enumerate() {
        let lifecycle = type_of(event).is_some_and(|t| {
            EventKind::parse(t)
                .is_some_and(|k| k.is_ordinary_lifecycle() || k == EventKind::LaneClosed)
        });
        if !lifecycle {
            continue;
        }
        let at = f::AT
            .text(event)
            .filter(|at| time::is_rfc3339(at))
            .and_then(time::parse);
        let id = f::EVENT_ID
            .text(event)
            .filter(|_| is_fact(f::EVENT_ID.get(event)));
        keyed.push(((at?, id?), i));
    }
    keyed.sort();
    if keyed.windows(2).any(|w| w[0].0 == w[1].0) {
        return None;
    }
    Some(keyed.into_iter().map(|(_, i)| i).collect())
}

/// Returns the lane's missing signals (§7.4).
pub(super) fn missing_signals(events: &[&Record], lane: &Lane) -> Vec<String> {
    let lineage = Lineage::replay(events, lane);
    let mut missing = Vec::new();
    let acquired = EventKind::ClaimAcquired;
    let lost = lost_acquisitions(events);
    let standing =
        |(i, e): &(usize, &&Record)| type_of(e) == Some(acquired.as_str()) && !lost.contains(i);
    if !events.iter().enumerate().any(|p| standing(&p)) {
        missing.push(acquired.to_string());
    }
    if !terminal_signal(events, lane, &lineage) {
        missing.push("terminal".to_owned());
    }
    if !lineage.ordinary_valid {
        missing.push("lifecycle".to_owned());
    }
    missing
}

/// Reports whether the lane has a valid terminal signal: valid, non-conflicting
/// `lane_closed` events, or (only when there are none) an authorized `claim.released`.
pub(super) fn terminal_signal(events: &[&Record], lane: &Lane, lineage: &Lineage) -> bool {
    let any_closed = events.iter().any(|e| type_of(e) == Some(LANE_CLOSED));
    if any_closed {
        return terminals_valid(events, lane, lineage);
    }
    events
        .iter()
        .zip(&lineage.ok)
        .any(|(e, ok)| *ok && type_of(e) == Some(EventKind::ClaimReleased.as_str()))
}

/// Reports whether every `lane_closed` among `events` passes the strict contract and
/// attribution, and none conflicts with another (vacuously true when there are none).
pub(super) fn terminals_valid(events: &[&Record], lane: &Lane, lineage: &Lineage) -> bool {
    let closed: Vec<(&Record, bool)> = events
        .iter()
        .zip(&lineage.ok)
        .filter(|(e, _)| type_of(e) == Some(LANE_CLOSED))
        .map(|(e, ok)| (*e, *ok))
        .collect();
    let all_valid = closed
        .iter()
        .all(|(e, ok)| strict_terminal_contract(e) && lane.terminal_attributed(e, *ok));
    let keys: Vec<[Value; 6]> = closed.iter().map(|(e, _)| conflict_key(e)).collect();
    all_valid && keys.windows(2).all(|w| w[0] == w[1])
}

/// Reports whether a `lane_closed` passes §8.4 plus fact strings for every field that
/// carries a fact, including the `closed_by` values.
pub(super) fn strict_terminal_contract(event: &Record) -> bool {
    is_valid_terminal_marker(event)
        && facts(event, &TERMINAL_REQUIRED)
        && optional_facts(event, &TERMINAL_OPTIONAL)
        && f::CLOSED_BY
            .get(event)
            .and_then(Value::as_object)
            .is_some_and(|c| c.values().all(|v| is_fact(Some(v))))
}

/// Returns the conflict semantics of a closeout: `terminal`, `workspace` (default
/// `default`), `closed_by.agent_id`, `pr_url`, `pr_state`, `evidence_url`.
pub(super) fn conflict_key(event: &Record) -> [Value; 6] {
    let field = |k: Field| k.get(event).cloned().unwrap_or(Value::Null);
    let workspace = given(event, f::WORKSPACE)
        .cloned()
        .unwrap_or_else(|| DEFAULT_WORKSPACE.into());
    let closer = closer_of(event).map_or(Value::Null, Value::from);
    [
        field(f::TERMINAL),
        workspace,
        closer,
        field(f::PR_URL),
        field(f::PR_STATE),
        field(f::EVIDENCE_URL),
    ]
}
