//! The coordinator's writes to the coordination state: admission of an issue (a claim by the
//! worker's agent id), task checkpoints, activity records, the worker's batch manifest (one
//! lane per task, so the dashboard shows coordinator work like any other lane), the worker's
//! heartbeat and an event per transition. One save = one CAS commit.

use std::str::FromStr;

use agent_coord_shared::coordinator::takeover;
use agent_coord_shared::coordinator::task::activity_path;
use agent_coord_shared::coordinator::task::task_path;
use agent_coord_shared::coordinator::task::Activity;
use agent_coord_shared::coordinator::task::Task;
use agent_coord_shared::coordinator::task::TASKS_DIR;
use agent_coord_shared::coordinator::telemetry;
use agent_coord_shared::ids::paths;
use agent_coord_shared::ids::AgentId;
use agent_coord_shared::ids::BatchId;
use agent_coord_shared::ids::RepoSlug;
use agent_coord_shared::ids::Target;
use agent_coord_shared::record::field as f;
use agent_coord_shared::record::Claim;
use agent_coord_shared::record::Record;
use agent_coord_shared::rules::batch;
use agent_coord_shared::rules::claim;
use agent_coord_shared::rules::event::new_event;
use agent_coord_shared::rules::heartbeat;
use agent_coord_shared::rules::liveness;
use agent_coord_shared::rules::Ctx;
use agent_coord_shared::rules::Plan;
use agent_coord_shared::rules::RuleError;
use agent_coord_shared::serde_name::WireName;
use agent_coord_shared::snapshot::Snapshot;
use agent_coord_shared::time;
use serde_json::Value;

use crate::command_error::CommandError;
use crate::context::Context;
use crate::store::Store;
use crate::store::TipSnapshot;
use crate::sync;
use crate::sync::SyncFlags;

mod leases;
mod records;

pub(crate) use leases::LeaseAsk;
pub(crate) use records::read_controls;
pub(crate) use records::read_task;
pub(crate) use records::to_record;

/// Claims held by the coordinator last a week and are renewed on every save past half of
/// that; liveness comes from the worker's heartbeat.
const CLAIM_TTL_SECONDS: i64 = 7 * 24 * 3600;

/// What admission decided.
pub(crate) enum Admission {
    /// The claim was granted and the task recorded.
    Admitted,
    /// Someone else holds the issue.
    Refused(String),
}

/// Who holds an issue's claim, as [`Ledger::claim_of`] sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Held {
    /// No active claim.
    Free,
    /// This worker on this machine.
    Ours,
    /// Someone else, described (`w2`, `w1 on machine box-2`).
    Other(String),
}

/// An event to record with a save.
pub(crate) struct Note {
    pub(crate) kind: &'static str,
    pub(crate) message: String,
    pub(crate) previous_phase: Option<String>,
}

/// The coordination state as the coordinator writes it.
pub(crate) struct Ledger<'a> {
    cx: &'a Context,
    store: Store,
    worker: AgentId,
    batch: BatchId,
    heartbeat_ttl: i64,
}

fn parse_err(what: &str, e: impl std::fmt::Display) -> CommandError {
    CommandError::usage(format!("{what}: {e}"))
}

impl<'a> Ledger<'a> {
    pub(crate) fn open(
        cx: &'a Context,
        worker: &str,
        batch: &str,
        heartbeat_ttl: i64,
    ) -> Result<Ledger<'a>, CommandError> {
        let (store, _notices) = cx.open_store(true)?;
        Ok(Ledger {
            cx,
            store,
            worker: AgentId::from_str(worker).map_err(|e| parse_err("worker id", e))?,
            batch: BatchId::from_str(batch).map_err(|e| parse_err("batch id", e))?,
            heartbeat_ttl,
        })
    }

    /// A rule context at the real current time (a `--follow` loop outlives the command's
    /// start-up clock), unless `AGENT_COORD_NOW` pins it.
    fn ctx(&self) -> Ctx {
        let mut ctx = self.cx.rule_ctx(&self.store);
        if self.cx.env.now.is_none() {
            ctx.now = chrono::Utc::now();
        }
        ctx
    }

    /// Returns the current time (pinned by `AGENT_COORD_NOW` like [`Ledger::now`]).
    pub(crate) fn now_time(&self) -> chrono::DateTime<chrono::Utc> {
        self.ctx().now
    }

    /// Returns this machine's id (where lane transcripts stay).
    pub(crate) fn machine(&self) -> String {
        self.store.machine.to_string()
    }

    /// Returns the current time as stored in records.
    pub(crate) fn now(&self) -> String {
        time::format(self.ctx().now)
    }

    /// Returns every task of this worker that runs on this machine, in path order.
    pub(crate) fn tasks(&self) -> Result<Vec<Task>, CommandError> {
        let snap = self.store.snapshot()?;
        let mut out = Vec::new();
        for (_, record) in snap.list(TASKS_DIR)? {
            if let Ok(task) = serde_json::from_value::<Task>(Value::Object(record)) {
                if self.runs_here(&task) {
                    out.push(task);
                }
            }
        }
        Ok(out)
    }

    /// Whether `task` is this worker's on this machine (a checkpoint that names no machine
    /// is the worker's wherever it ticks).
    pub(crate) fn runs_here(&self, task: &Task) -> bool {
        task.worker == self.worker.as_str()
            && task
                .machine
                .as_deref()
                .is_none_or(|m| m == self.store.machine.to_string())
    }

    /// This worker's tasks on other machines that this machine may take over now: the
    /// worker's heartbeat on the machine that runs them is dead (see `coordinator::takeover`).
    pub(crate) fn orphans(&self) -> Result<Vec<Task>, CommandError> {
        let snap = self.store.snapshot()?;
        let here = self.store.machine.to_string();
        let now = self.ctx().now;
        let mut out = Vec::new();
        for (_, record) in snap.list(TASKS_DIR)? {
            let Ok(task) = serde_json::from_value::<Task>(Value::Object(record)) else {
                continue;
            };
            if task.worker != self.worker.as_str() {
                continue;
            }
            let beat = self.machine_beat(&snap, &task, now)?;
            if takeover::may_take_over(&task, &here, &beat) {
                out.push(task);
            }
        }
        Ok(out)
    }

    /// How many machines run this worker now: this one, and every other machine whose
    /// heartbeat for the worker is live.
    pub(crate) fn live_machines(&self) -> Result<usize, CommandError> {
        let snap = self.store.snapshot()?;
        let here = self.store.machine.to_string();
        let now = self.ctx().now;
        let mut machines: std::collections::BTreeSet<String> = snap
            .heartbeats()
            .iter()
            .filter_map(|hb| hb.name.rsplit('/').next().map(str::to_owned))
            .filter(|m| *m != here)
            .collect();
        machines.retain(|m| {
            matches!(
                snap.beat_on_machine(m, &paths::heartbeat(&self.worker)),
                Ok(Some(beat)) if liveness::of_record(&beat, now) == liveness::Liveness::Live
            )
        });
        Ok(machines.len() + 1)
    }

    /// The worker's heartbeat on the machine that runs `task` (what that machine last said,
    /// whatever other machines of the worker beat); a task that names no machine has none.
    fn machine_beat(
        &self,
        snap: &TipSnapshot<'_>,
        task: &Task,
        now: time::Instant,
    ) -> Result<claim::HolderBeat, CommandError> {
        let Some(machine) = task.machine.as_deref() else {
            return Ok(claim::HolderBeat::Missing);
        };
        Ok(
            match snap.beat_on_machine(machine, &paths::heartbeat(&self.worker)) {
                Ok(Some(beat)) => claim::HolderBeat::Seen(liveness::of_record(&beat, now)),
                Ok(None) => claim::HolderBeat::Missing,
                Err(agent_coord_shared::snapshot::ReadError::Malformed { .. }) => {
                    claim::HolderBeat::Invalid
                }
                Err(e) => return Err(CommandError::from(e)),
            },
        )
    }

    /// Takes `task` over for this machine, decided on the fleet's latest state: the task
    /// names this machine (the dead one among `previous_machines`) and goes on from
    /// [`takeover::resume_phase`], the issue's claim is stamped with this machine, with an
    /// event, in one commit published at once. Returns the task as taken, or `None` when it
    /// is no longer an orphan (it beat again, or another machine took it first).
    pub(crate) fn take_over(&self, task: &Task) -> Result<Option<Task>, CommandError> {
        let remote = self.remote();
        if let Some(remote) = &remote {
            sync::run_sync(self.cx, &self.store, remote)?;
        }
        let here = self.store.machine.to_string();
        let path = task_path(&task.repo, task.issue);
        let trailer = self.trailer();
        let mut taken: Option<Task> = None;
        self.store
            .transact(&trailer, |snap| -> Result<_, CommandError> {
                let ctx = self.ctx();
                taken = None;
                let mut plan = Plan::nothing("coordinate", ());
                let Some(mut current) = read_task(snap, &path)? else {
                    return Ok(plan);
                };
                let beat = self.machine_beat(snap, &current, ctx.now)?;
                if current.worker != self.worker.as_str()
                    || !takeover::may_take_over(&current, &here, &beat)
                {
                    return Ok(plan);
                }
                let from = current.machine.clone().unwrap_or_default();
                current.previous_machines.push(from.clone());
                current.machine = Some(here.clone());
                let resume = takeover::resume_phase(&current);
                let previous = current.phase;
                current.phase = resume;
                current.updated_at = time::format(ctx.now);
                plan.state.push((path.clone(), to_record(&current)));
                if let (Ok(repo), Ok(target)) = (
                    RepoSlug::from_str(&current.repo),
                    Target::from_str(&current.issue.to_string()),
                ) {
                    let claim_path = paths::claim(&repo, &target);
                    if let Some(mut claim) = snap.read(&claim_path)? {
                        ctx.identity.stamp(&mut claim);
                        f::UPDATED_AT.set(&mut claim, time::format(ctx.now));
                        plan.state.push((claim_path, claim));
                    }
                }
                let message = if resume == previous {
                    format!("taken over from machine {from}, whose heartbeat is dead; it goes on at {resume}")
                } else {
                    format!("taken over from machine {from}, whose heartbeat is dead; its {previous} input was an uncommitted change on that machine, so it goes on at {resume}")
                };
                let note = Note {
                    kind: "coordinator.takeover",
                    message,
                    previous_phase: Some(previous.wire_name().into()),
                };
                self.extend(snap, &ctx, &mut plan, &current, Some(&note))?;
                plan.summary = format!("coordinator: {} taken over from {from}", current.task_id);
                taken = Some(current);
                Ok(plan)
            })?;
        if taken.is_none() {
            return Ok(None);
        }
        if let Some(remote) = &remote {
            sync::run_sync(self.cx, &self.store, remote)?;
        }
        // The remote decided: the task is ours only if it still names this machine.
        let snap = self.store.snapshot()?;
        match read_task(&snap, &path)? {
            Some(now) if now.machine.as_deref() == Some(here.as_str()) => Ok(Some(now)),
            _ => Ok(None),
        }
    }

    /// Returns the operator's holds in force (pauses, drains).
    pub(crate) fn controls(
        &self,
    ) -> Result<agent_coord_shared::coordinator::controls::Controls, CommandError> {
        let snap = self.store.snapshot()?;
        read_controls(&snap)
    }

    /// Returns the (repository, issue) of every task, whoever owns it (paths only).
    pub(crate) fn task_keys(
        &self,
    ) -> Result<std::collections::BTreeSet<(String, u64)>, CommandError> {
        let snap = self.store.snapshot()?;
        Ok(snap
            .paths(TASKS_DIR)?
            .iter()
            .filter_map(|p| agent_coord_shared::coordinator::task::task_key(p))
            .collect())
    }

    /// Returns the task for `repo#issue`, whoever owns it.
    pub(crate) fn task(&self, repo: &str, issue: u64) -> Result<Option<Task>, CommandError> {
        let snap = self.store.snapshot()?;
        read_task(&snap, &task_path(repo, issue))
    }

    /// Returns an activity record.
    pub(crate) fn activity(
        &self,
        task_id: &str,
        activity_id: &str,
    ) -> Result<Option<Activity>, CommandError> {
        let snap = self.store.snapshot()?;
        Ok(snap
            .read(&activity_path(task_id, activity_id))?
            .and_then(|r| serde_json::from_value(Value::Object(r)).ok()))
    }

    /// Who holds an active claim on `repo#issue`: nobody, this worker on this machine, or
    /// someone else — another agent, or this worker on another machine (several machines
    /// may run one worker: each issue is one machine's task).
    pub(crate) fn claim_of(&self, repo: &RepoSlug, issue: u64) -> Result<Held, CommandError> {
        let snap = self.store.snapshot()?;
        let target = Target::from_str(&issue.to_string()).map_err(|e| parse_err("issue", e))?;
        let claim: Option<Claim> = snap.read_as(&paths::claim(repo, &target))?;
        let Some(claim) = claim.filter(|c| c.is_active()) else {
            return Ok(Held::Free);
        };
        let Some(agent) = claim.agent_id() else {
            return Ok(Held::Free);
        };
        if agent != self.worker.as_str() {
            return Ok(Held::Other(agent.to_owned()));
        }
        // A claim from before machines were told apart names none: it is this worker's.
        match f::MACHINE_ID.text(&claim) {
            Some(machine) if machine != self.store.machine.to_string() => {
                Ok(Held::Other(format!("{agent} on machine {machine}")))
            }
            _ => Ok(Held::Ours),
        }
    }

    /// Returns the remote this coordination repository publishes through, if any.
    ///
    /// Unlike a single `claim`, the coordinator publishes whenever the repository has a
    /// remote (even without `agent-coord.sync=true`): admission of an issue must hold across
    /// machines, or two workers could each open a pull request for it.
    pub(crate) fn remote(&self) -> Option<String> {
        publishing_remote(&self.store)
    }

    /// Syncs with the remote when the repository has one.
    pub(crate) fn sync(&self) -> Result<(), CommandError> {
        if let Some(remote) = self.remote() {
            sync::run_sync(self.cx, &self.store, &remote)?;
        }
        Ok(())
    }

    /// Admits a task. Locally: the claim on its issue by the worker, the checkpoint and an
    /// event, in one commit, refused when another agent holds the issue (re-decided on every
    /// CAS retry). Through a remote, the claim alone is decided on the fleet's latest state
    /// and published first, and the task is recorded only if the claim is still the worker's
    /// in the state the remote accepted: two machines never both get the issue.
    pub(crate) fn admit(&self, task: &Task) -> Result<Admission, CommandError> {
        let Some(remote) = self.remote() else {
            return self.admit_here(task);
        };
        sync::run_sync(self.cx, &self.store, &remote)?;
        if let Held::Other(holder) = self.claim_of_task(task)? {
            return Ok(Admission::Refused(format!("claimed by {holder}")));
        }
        let request = self.claim_request(task)?;
        let trailer = self.trailer();
        let claimed = self
            .store
            .transact(&trailer, |snap| -> Result<_, CommandError> {
                let ctx = self.ctx();
                Ok(claim::decide(snap, &request, &ctx)?)
            });
        match claimed {
            Ok(_) => {}
            Err(e) if e.kind == crate::command_error::ErrorKind::ClaimRefused => {
                return Ok(Admission::Refused(e.message))
            }
            Err(e) => return Err(e),
        }
        sync::run_sync(self.cx, &self.store, &remote)?;
        match self.claim_of_task(task)? {
            Held::Ours => {}
            Held::Other(holder) => {
                return Ok(Admission::Refused(format!(
                    "claimed by {holder}; it reached remote {remote} first"
                )))
            }
            Held::Free => {
                return Ok(Admission::Refused(format!(
                    "claimed by another agent (since released); it reached remote {remote} first"
                )))
            }
        }
        let admitted = self.admit_here(task)?;
        sync::run_sync(self.cx, &self.store, &remote)?;
        Ok(admitted)
    }

    fn claim_of_task(&self, task: &Task) -> Result<Held, CommandError> {
        let repo = RepoSlug::from_str(&task.repo).map_err(|e| parse_err("repository", e))?;
        self.claim_of(&repo, task.issue)
    }

    fn claim_request(&self, task: &Task) -> Result<claim::ClaimRequest, CommandError> {
        Ok(claim::ClaimRequest {
            agent: self.worker.clone(),
            repo: RepoSlug::from_str(&task.repo).map_err(|e| parse_err("repository", e))?,
            target: Target::from_str(&task.issue.to_string()).map_err(|e| parse_err("issue", e))?,
            batch: Some(self.batch.clone()),
            branch: Some(task.branch.clone()),
            ttl_seconds: CLAIM_TTL_SECONDS,
            metadata: Record::new(),
        })
    }

    /// Admits a task locally: the claim, the checkpoint and an event in one commit.
    fn admit_here(&self, task: &Task) -> Result<Admission, CommandError> {
        let request = self.claim_request(task)?;
        let trailer = self.trailer();
        let result = self
            .store
            .transact(&trailer, |snap| -> Result<_, CommandError> {
                if read_task(snap, &task_path(&task.repo, task.issue))?.is_some() {
                    return Err(CommandError::operational(format!(
                        "{}#{} already has a task",
                        task.repo, task.issue
                    )));
                }
                let ctx = self.ctx();
                let mut plan = claim::decide(snap, &request, &ctx).map_err(CommandError::from)?;
                plan.state
                    .push((task_path(&task.repo, task.issue), to_record(task)));
                let note = Note {
                    kind: "coordinator.admitted",
                    message: format!(
                        "admitted {}#{} as task {}",
                        task.repo, task.issue, task.task_id
                    ),
                    previous_phase: None,
                };
                self.extend(snap, &ctx, &mut plan, task, Some(&note))?;
                plan.summary = format!("coordinator: admit {}#{}", task.repo, task.issue);
                Ok(plan)
            });
        match result {
            Ok(_) => Ok(Admission::Admitted),
            Err(e) if e.kind == crate::command_error::ErrorKind::ClaimRefused => {
                Ok(Admission::Refused(e.message))
            }
            Err(e) => Err(e),
        }
    }

    /// Saves a checkpoint with its activity records and an optional event, plus the
    /// manifest lane and the worker's heartbeat, in one commit.
    pub(crate) fn save(
        &self,
        task: &Task,
        activities: &[&Activity],
        note: Option<Note>,
    ) -> Result<(), CommandError> {
        let trailer = self.trailer();
        self.store
            .transact(&trailer, |snap| -> Result<_, CommandError> {
                let ctx = self.ctx();
                let path = task_path(&task.repo, task.issue);
                fence(read_task(snap, &path)?.as_ref(), task)?;
                let mut plan = Plan::nothing("coordinate", ());
                plan.state.push((path, to_record(task)));
                for a in activities {
                    let record = match serde_json::to_value(a) {
                        Ok(Value::Object(m)) => m,
                        _ => Record::new(),
                    };
                    plan.state
                        .push((activity_path(&a.task_id, &a.activity_id), record));
                }
                self.extend(snap, &ctx, &mut plan, task, note.as_ref())?;
                plan.summary = format!(
                    "coordinator: {} {} ({})",
                    task.task_id,
                    task.phase,
                    task.state.wire_name()
                );
                Ok(plan)
            })
            .map(|_| ())
    }

    /// Beats for the worker without changing any task (an idle tick keeps claims live), unless
    /// its heartbeat is younger than [`telemetry::BEAT_REFRESH_SECONDS`] and would only get new
    /// timestamps: then an idle tick writes nothing.
    pub(crate) fn beat(&self) -> Result<(), CommandError> {
        let trailer = self.trailer();
        self.store
            .transact(&trailer, |snap| -> Result<_, CommandError> {
                let ctx = self.ctx();
                let mut plan = self.heartbeat_plan(snap, &ctx)?;
                plan.state.clear();
                let prior = snap.read(&paths::heartbeat(&self.worker))?;
                if let (Some(prior), Some((_, next))) = (prior, plan.heartbeats.first()) {
                    if telemetry::still_fresh(&prior, next) {
                        plan.heartbeats.clear();
                    }
                }
                Ok(plan)
            })
            .map(|_| ())
    }

    fn trailer(&self) -> Vec<(&'static str, String)> {
        vec![("Agent-Coord-Session", self.worker.to_string())]
    }

    fn heartbeat_plan(&self, snap: &TipSnapshot<'_>, ctx: &Ctx) -> Result<Plan<()>, CommandError> {
        let request = heartbeat::HeartbeatRequest {
            agent: self.worker.clone(),
            repo: None,
            target: None,
            batch: Some(self.batch.clone()),
            branch: None,
            status: Some("in_progress".into()),
            ttl_seconds: self.heartbeat_ttl,
            metadata: Record::new(),
        };
        let plan = heartbeat::decide(snap, &request, ctx)?;
        Ok(Plan {
            state: plan.state,
            removals: plan.removals,
            heartbeats: plan.heartbeats,
            heartbeat_removals: plan.heartbeat_removals,
            summary: plan.summary,
            op: "coordinate",
            warnings: plan.warnings,
            outcome: (),
        })
    }

    /// The task's own heartbeat (agent `<worker>.<task-id>`, the owner of its manifest lane):
    /// its issue, branch and status (the phase while it advances, `blocked` while it waits,
    /// `failed`, `done`), with the phase and pull request as metadata, so the dashboard shows each task
    /// live with its phase rather than as an issue nobody beats for.
    fn task_beat(
        &self,
        snap: &TipSnapshot<'_>,
        ctx: &Ctx,
        task: &Task,
    ) -> Result<Plan<heartbeat::Beat>, CommandError> {
        let mut metadata = Record::new();
        f::PHASE.set(&mut metadata, task.phase.wire_name());
        if let Some(url) = &task.pr_url {
            f::PR_URL.set(&mut metadata, url.as_str());
        }
        let request = heartbeat::HeartbeatRequest {
            agent: AgentId::from_str(&telemetry::task_agent(self.worker.as_str(), task))
                .map_err(|e| parse_err("task agent", e))?,
            repo: Some(RepoSlug::from_str(&task.repo).map_err(|e| parse_err("repository", e))?),
            target: Some(
                Target::from_str(&task.issue.to_string()).map_err(|e| parse_err("issue", e))?,
            ),
            batch: Some(self.batch.clone()),
            branch: Some(task.branch.clone()),
            status: Some(telemetry::heartbeat_status(task).to_owned()),
            ttl_seconds: self.heartbeat_ttl,
            metadata,
        };
        Ok(heartbeat::decide(snap, &request, ctx)?)
    }

    /// Adds the event, the manifest with this task's lane, the heartbeat and (past half its
    /// TTL) the claim renewal to `plan`.
    fn extend<T>(
        &self,
        snap: &TipSnapshot<'_>,
        ctx: &Ctx,
        plan: &mut Plan<T>,
        task: &Task,
        note: Option<&Note>,
    ) -> Result<(), CommandError> {
        if let Some(note) = note {
            plan.state.push(self.note_event(snap, ctx, task, note)?);
        }
        let registered = self.manifest_plan(snap, ctx, task)?;
        plan.state.extend(registered.state);
        let beat = self.heartbeat_plan(snap, ctx)?;
        plan.state.extend(beat.state);
        plan.heartbeats.extend(beat.heartbeats);
        let beat = self.task_beat(snap, ctx, task)?;
        plan.state.extend(beat.state);
        plan.heartbeats.extend(beat.heartbeats);
        // Renew the claim while the task holds its issue (the rule writes only past half TTL).
        if !task.state.terminal() {
            let already: Vec<String> = plan.state.iter().map(|(p, _)| p.clone()).collect();
            let renewal = self.claim_renewal(snap, ctx, task)?;
            plan.state
                .extend(renewal.into_iter().filter(|(p, _)| !already.contains(p)));
        }
        plan.state.extend(self.lease_releases(snap, ctx, task)?);
        Ok(())
    }

    /// The event saying what `note` records about `task`, at its path.
    fn note_event(
        &self,
        snap: &TipSnapshot<'_>,
        ctx: &Ctx,
        task: &Task,
        note: &Note,
    ) -> Result<(String, Record), CommandError> {
        let mut fields = Record::new();
        f::AGENT_ID.set(&mut fields, self.worker.to_string());
        f::LANE.set(&mut fields, task.task_id.as_str());
        f::REPO.set(&mut fields, task.repo.as_str());
        f::TARGET.set(&mut fields, task.issue.to_string());
        f::BRANCH.set(&mut fields, task.branch.as_str());
        if let Some(prev) = &note.previous_phase {
            f::PREVIOUS_PHASE.set(&mut fields, prev.as_str());
        }
        f::PHASE.set(&mut fields, task.phase.wire_name());
        fields.insert("state".into(), Value::from(task.state.wire_name()));
        f::MESSAGE.set(&mut fields, note.message.as_str());
        Ok(new_event(snap, ctx, &self.batch, note.kind, fields)?)
    }

    /// The worker's manifest registered again: one lane per task of this worker, in path
    /// order, with `task` as it now stands at its place (or last when it is new).
    fn manifest_plan(
        &self,
        snap: &TipSnapshot<'_>,
        ctx: &Ctx,
        task: &Task,
    ) -> Result<Plan<batch::Registered>, CommandError> {
        let here = task_path(&task.repo, task.issue);
        let mut stored = Vec::new();
        for (path, record) in snap.list(TASKS_DIR)? {
            if let Ok(other) = serde_json::from_value::<Task>(Value::Object(record)) {
                if other.worker == self.worker.as_str() {
                    stored.push((path, other));
                }
            }
        }
        let mut tasks: Vec<&Task> = stored
            .iter()
            .map(|(path, other)| if *path == here { task } else { other })
            .collect();
        if !stored.iter().any(|(path, _)| *path == here) {
            tasks.push(task);
        }
        let worker = self.worker.as_str();
        let request = batch::RegisterRequest {
            manifest: telemetry::manifest(worker, self.batch.as_str(), &tasks),
            batch_id: None,
            launch_prompt: Some(telemetry::launch_prompt(worker, &tasks)),
            synthetic: false,
            synthetic_kind: None,
        };
        Ok(batch::register(snap, &request, ctx)?)
    }

    /// The renewal of the task's claim, when the claim rule writes one (past half its TTL);
    /// a refusal renews nothing.
    fn claim_renewal(
        &self,
        snap: &TipSnapshot<'_>,
        ctx: &Ctx,
        task: &Task,
    ) -> Result<Vec<(String, Record)>, CommandError> {
        let (Ok(repo), Ok(target)) = (
            RepoSlug::from_str(&task.repo),
            Target::from_str(&task.issue.to_string()),
        ) else {
            return Ok(Vec::new());
        };
        let request = claim::ClaimRequest {
            agent: self.worker.clone(),
            repo,
            target,
            batch: Some(self.batch.clone()),
            branch: Some(task.branch.clone()),
            ttl_seconds: CLAIM_TTL_SECONDS,
            metadata: Record::new(),
        };
        match claim::decide(snap, &request, ctx) {
            Ok(renewal) => Ok(renewal.state),
            Err(RuleError::ClaimRefused(_)) => Ok(Vec::new()),
            Err(e) => Err(e.into()),
        }
    }
}

/// Returns the remote the coordinator publishes through, if any: the configured sync
/// remote, else the repository's default remote whenever it has one.
pub(crate) fn publishing_remote(store: &Store) -> Option<String> {
    SyncFlags::default()
        .remote(store)
        .or_else(|| store.has_remote().then(|| sync::default_remote(store)))
}

/// Refuses a save that would undo an operator's command: the stored task knows more
/// interventions (a cancel or retry since this tick read it).
fn fence(stored: Option<&Task>, task: &Task) -> Result<(), CommandError> {
    let Some(stored) = stored else {
        return Ok(());
    };
    if stored.interventions.len() <= task.interventions.len() {
        return Ok(());
    }
    let last = stored.interventions.last();
    Err(CommandError::operational(format!(
        "an operator changed task {} meanwhile ({} by {}); this tick leaves it as they set it",
        task.task_id,
        last.map(|i| i.action.wire_name()).unwrap_or("?"),
        last.map(|i| i.by.as_str()).unwrap_or("?"),
    )))
}
