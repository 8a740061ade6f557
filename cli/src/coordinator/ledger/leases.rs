//! Fleet-wide repository lane leases (`coordinator::leases`) as claims on the repository's
//! slot targets: taken in the commit that records a start (decided on the snapshot that
//! commit is made on, so two starts never take one slot), checked again once the start is
//! published, and released by the task's next save without running lanes. Leases write no
//! lifecycle events: they would only repeat the task's own `coordinator.lane_*` events.

use std::collections::BTreeSet;
use std::str::FromStr;

use agent_coord_shared::coordinator::leases;
use agent_coord_shared::coordinator::slots::SlotWait;
use agent_coord_shared::coordinator::task::TaskState;

use super::*;

/// What a start asks of a capped repository.
pub(crate) struct LeaseAsk {
    /// `repo_max_lanes` of the task's repository.
    pub(crate) cap: u64,
    /// How many lanes start.
    pub(crate) want: usize,
    /// How long each lease lasts.
    pub(crate) ttl: u64,
}

impl Ledger<'_> {
    /// Saves the start of `task`'s lanes (its `pending` set) with `note`, taking the leases
    /// `ask` wants in the same commit; the slots go into the task's launch. `Err(wait)` when
    /// the repository's slots are taken (nothing is written then).
    pub(crate) fn save_start(
        &self,
        task: &mut Task,
        note: Note,
        ask: Option<LeaseAsk>,
    ) -> Result<Result<(), SlotWait>, CommandError> {
        let trailer = self.trailer();
        let path = task_path(&task.repo, task.issue);
        let done = self
            .store
            .transact(&trailer, |snap| -> Result<_, CommandError> {
                let ctx = self.ctx();
                fence(read_task(snap, &path)?.as_ref(), task)?;
                let mut started = task.clone();
                let mut plan = Plan::nothing("coordinate", Ok(Vec::new()));
                if let Some(ask) = &ask {
                    let held = held_slots(snap, &ctx, task, self.worker.as_str())?;
                    match leases::pick(&task.repo, ask.cap, &held, ask.want) {
                        Ok(slots) => {
                            for n in &slots {
                                plan.state.push(self.lease(snap, &ctx, task, *n, ask.ttl)?);
                            }
                            if let Some(l) =
                                started.pending.as_mut().and_then(|p| p.launch.as_mut())
                            {
                                l.leases = slots.clone();
                            }
                            plan.outcome = Ok(slots);
                        }
                        Err(wait) => {
                            // Nothing is written: the start waits for a slot.
                            return Ok(Plan::nothing("coordinate", Err(wait)));
                        }
                    }
                }
                plan.state.push((path.clone(), to_record(&started)));
                self.extend(snap, &ctx, &mut plan, &started, Some(&note))?;
                plan.summary = format!(
                    "coordinator: {} {} ({})",
                    started.task_id,
                    started.phase,
                    started.state.wire_name()
                );
                Ok(plan)
            })?;
        match done.plan.outcome {
            Ok(slots) => {
                if let Some(l) = task.pending.as_mut().and_then(|p| p.launch.as_mut()) {
                    l.leases = slots;
                }
                Ok(Ok(()))
            }
            Err(wait) => Ok(Err(wait)),
        }
    }

    /// Whether every lease `task`'s pending launch records is still its own in the state
    /// (after a sync: another machine's start may have reached the remote first).
    pub(crate) fn leases_kept(&self, task: &Task) -> Result<bool, CommandError> {
        let Some(launch) = task.pending.as_ref().and_then(|p| p.launch.as_ref()) else {
            return Ok(true);
        };
        if launch.leases.is_empty() {
            return Ok(true);
        }
        let snap = self.store.snapshot()?;
        let agent = leases::lease_agent(self.worker.as_str(), &task.task_id);
        for n in &launch.leases {
            let claim = slot_claim(&snap, &task.repo, *n)?;
            if claim.as_ref().and_then(Claim::active_holder) != Some(agent.as_str()) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The lease on slot `n` of the task's repository: a claim by its lease agent, without
    /// the lifecycle event the claim rule adds.
    fn lease(
        &self,
        snap: &TipSnapshot<'_>,
        ctx: &Ctx,
        task: &Task,
        n: u64,
        ttl: u64,
    ) -> Result<(String, Record), CommandError> {
        let (repo, target) = slot_ids(&task.repo, n)?;
        let agent = AgentId::from_str(&leases::lease_agent(self.worker.as_str(), &task.task_id))
            .map_err(|e| parse_err("lease agent", e))?;
        let mut metadata = Record::new();
        metadata.insert("task_id".into(), Value::from(task.task_id.as_str()));
        let request = claim::ClaimRequest {
            agent,
            repo: repo.clone(),
            target: target.clone(),
            batch: Some(self.batch.clone()),
            branch: None,
            ttl_seconds: i64::try_from(ttl).unwrap_or(i64::MAX / 2),
            metadata,
        };
        let path = paths::claim(&repo, &target);
        let plan = claim::decide(snap, &request, ctx)?;
        plan.state
            .into_iter()
            .find(|(p, _)| *p == path)
            .ok_or_else(|| {
                CommandError::operational(format!("the lease on {path} was not written"))
            })
    }

    /// Releases of the leases `task` holds, when it has no lanes running (an uncertain
    /// task's lane may still run somewhere: its leases expire by themselves).
    pub(super) fn lease_releases(
        &self,
        snap: &TipSnapshot<'_>,
        ctx: &Ctx,
        task: &Task,
    ) -> Result<Vec<(String, Record)>, CommandError> {
        if task.pending.is_some() || task.state == TaskState::Uncertain {
            return Ok(Vec::new());
        }
        let agent = leases::lease_agent(self.worker.as_str(), &task.task_id);
        let mut out = Vec::new();
        for (path, _, claim) in slot_claims(snap, &task.repo)? {
            if claim.active_holder() != Some(agent.as_str()) {
                continue;
            }
            let agent = AgentId::from_str(&agent).map_err(|e| parse_err("lease agent", e))?;
            out.push((
                path,
                claim::stamp_released(&claim, &agent, None, &Record::new(), ctx).into(),
            ));
        }
        Ok(out)
    }
}

/// The slots of the task's repository held now by other tasks' leases (active, unexpired).
fn held_slots(
    snap: &TipSnapshot<'_>,
    ctx: &Ctx,
    task: &Task,
    worker: &str,
) -> Result<BTreeSet<u64>, CommandError> {
    let ours = leases::lease_agent(worker, &task.task_id);
    let mut held = BTreeSet::new();
    for (_, n, claim) in slot_claims(snap, &task.repo)? {
        let Some(holder) = claim.active_holder() else {
            continue;
        };
        let live = f::EXPIRES_AT
            .text(&claim)
            .and_then(time::parse)
            .is_none_or(|t| t > ctx.now);
        if holder != ours && live {
            held.insert(n);
        }
    }
    Ok(held)
}

/// Every lease claim of `repo`'s slot targets: its path, slot and record.
fn slot_claims(
    snap: &TipSnapshot<'_>,
    repo: &str,
) -> Result<Vec<(String, u64, Claim)>, CommandError> {
    let Ok(slug) = RepoSlug::from_str(repo) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    for path in snap.paths(&format!("claims/{slug}"))? {
        let slot = path
            .rsplit('/')
            .next()
            .and_then(|f| f.strip_suffix(".json"))
            .and_then(leases::slot_of);
        if let Some(n) = slot {
            if let Some(claim) = slot_claim(snap, repo, n)? {
                out.push((path, n, claim));
            }
        }
    }
    Ok(out)
}

fn slot_ids(repo: &str, n: u64) -> Result<(RepoSlug, Target), CommandError> {
    let repo = RepoSlug::from_str(repo).map_err(|e| parse_err("repository", e))?;
    let target =
        Target::from_str(&leases::slot_target(n)).map_err(|e| parse_err("slot target", e))?;
    Ok((repo, target))
}

fn slot_claim(snap: &TipSnapshot<'_>, repo: &str, n: u64) -> Result<Option<Claim>, CommandError> {
    let (repo, target) = slot_ids(repo, n)?;
    Ok(snap.read_as(&paths::claim(&repo, &target))?)
}
