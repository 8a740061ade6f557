//! The operator's desk: the writes `coordinate cancel|retry|pause|resume|drain` make on the
//! coordination state, each one commit decided on the fleet's latest state (synced first,
//! published after, when the repository has a remote) with a `human_intervention` event
//! naming who ran it. The rules are `coordinator::operator` and `coordinator::controls`;
//! stopping a cancelled task's lanes and posting its comment is the job of the machine that
//! runs it (`phases::advance`), which this command does at once when that is this machine.
//!
//! The event's `kind` stays inside the telemetry contract's vocabulary (`drain` for a drain,
//! `manual-fix` for the others); `action` says exactly which command it was.

use std::str::FromStr;

use agent_coord_shared::coordinator::controls::Change;
use agent_coord_shared::coordinator::controls::Controls;
use agent_coord_shared::coordinator::controls::Scope;
use agent_coord_shared::coordinator::controls::CONTROLS_PATH;
use agent_coord_shared::coordinator::naming;
use agent_coord_shared::coordinator::operator;
use agent_coord_shared::coordinator::operator::Operator;
use agent_coord_shared::coordinator::task::task_path;
use agent_coord_shared::coordinator::task::Phase;
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
use agent_coord_shared::rules::Ctx;
use agent_coord_shared::rules::Plan;
use agent_coord_shared::rules::RuleError;
use agent_coord_shared::serde_name::WireName;
use agent_coord_shared::snapshot::Snapshot;
use agent_coord_shared::time;
use serde_json::Value;

use super::ledger;
use crate::command_error::CommandError;
use crate::context::Context;
use crate::store::Store;
use crate::store::TipSnapshot;
use crate::sync;

/// The batch of hold events that concern more than one worker.
const OPERATOR_BATCH: &str = "operator";

/// Who runs an operator command: `--operator`, else `AGENT_COORD_OPERATOR`, else the login
/// name of the account running it.
pub(crate) fn operator_name(given: Option<&str>) -> Result<AgentId, CommandError> {
    let name = given
        .map(str::to_owned)
        .or_else(|| std::env::var("AGENT_COORD_OPERATOR").ok())
        .or_else(|| std::env::var("USER").ok())
        .or_else(|| std::env::var("LOGNAME").ok())
        .filter(|n| !n.trim().is_empty())
        .ok_or_else(|| {
            CommandError::usage("who runs this? pass --operator NAME (or set AGENT_COORD_OPERATOR)")
        })?;
    AgentId::from_str(&name)
        .map_err(|e| CommandError::usage(format!("unusable operator name {name:?}: {e}")))
}

/// The coordination state as an operator writes it.
pub(crate) struct Desk<'a> {
    cx: &'a Context,
    store: Store,
}

impl<'a> Desk<'a> {
    pub(crate) fn open(cx: &'a Context) -> Result<Desk<'a>, CommandError> {
        let (store, _notices) = cx.open_store(true)?;
        Ok(Desk { cx, store })
    }

    fn ctx(&self) -> Ctx {
        let mut ctx = self.cx.rule_ctx(&self.store);
        if self.cx.env.now.is_none() {
            ctx.now = chrono::Utc::now();
        }
        ctx
    }

    /// Returns the current time as records store it (pinned by `AGENT_COORD_NOW`).
    pub(crate) fn now(&self) -> String {
        time::format(self.ctx().now)
    }

    /// Returns the current time (pinned by `AGENT_COORD_NOW`).
    pub(crate) fn now_time(&self) -> chrono::DateTime<chrono::Utc> {
        self.ctx().now
    }

    /// Returns this machine's id.
    pub(crate) fn machine(&self) -> String {
        self.store.machine.to_string()
    }

    /// Fetches and merges the fleet's state first, when there is a remote.
    pub(crate) fn sync(&self) -> Result<(), CommandError> {
        if let Some(remote) = ledger::publishing_remote(&self.store) {
            sync::run_sync(self.cx, &self.store, &remote)?;
        }
        Ok(())
    }

    /// Every task checkpoint, in path order (an unreadable one is skipped and named).
    pub(crate) fn tasks(&self) -> Result<(Vec<Task>, Vec<String>), CommandError> {
        let snap = self.store.snapshot()?;
        let mut tasks = Vec::new();
        let mut unreadable = Vec::new();
        for (path, record) in snap.list(TASKS_DIR)? {
            match serde_json::from_value::<Task>(Value::Object(record)) {
                Ok(t) => tasks.push(t),
                Err(e) => unreadable.push(format!("{path}: {e}")),
            }
        }
        Ok((tasks, unreadable))
    }

    /// The operator's holds in force.
    pub(crate) fn controls(&self) -> Result<Controls, CommandError> {
        let snap = self.store.snapshot()?;
        ledger::read_controls(&snap)
    }

    /// The active claim on `repo#issue`, if any: its holder (with the machine it names) and
    /// until when.
    pub(crate) fn claim_on(
        &self,
        repo: &str,
        issue: u64,
    ) -> Result<Option<(String, String)>, CommandError> {
        let (Ok(repo), Ok(target)) = (
            RepoSlug::from_str(repo),
            Target::from_str(&issue.to_string()),
        ) else {
            return Ok(None);
        };
        let snap = self.store.snapshot()?;
        let claim: Option<Claim> = snap.read_as(&paths::claim(&repo, &target))?;
        Ok(claim.filter(|c| c.is_active()).and_then(|c| {
            let agent = f::AGENT_ID.text(&c)?.to_owned();
            let holder = match f::MACHINE_ID.text(&c) {
                Some(m) => format!("{agent} on machine {m}"),
                None => agent,
            };
            Some((holder, f::EXPIRES_AT.text(&c).unwrap_or("?").to_owned()))
        }))
    }

    /// The task a command names: its id (`acme.widget.7`) or `OWNER/REPO#N`.
    pub(crate) fn find(&self, name: &str) -> Result<Task, CommandError> {
        let (tasks, _) = self.tasks()?;
        let wanted = name.trim();
        let by_issue = wanted
            .rsplit_once('#')
            .and_then(|(repo, n)| Some((repo.to_owned(), n.parse::<u64>().ok()?)));
        tasks
            .into_iter()
            .find(|t| {
                t.task_id == wanted
                    || by_issue
                        .as_ref()
                        .is_some_and(|(r, n)| r.eq_ignore_ascii_case(&t.repo) && *n == t.issue)
            })
            .ok_or_else(|| {
                CommandError::usage(format!(
                    "no task {wanted:?}: name it by its id (see `coordinate tasks`) or as OWNER/REPO#N"
                ))
            })
    }

    /// Cancels the task: terminal, its claim released, the worker's manifest lane
    /// abandoned, with the event, in one commit.
    pub(crate) fn cancel(&self, task: &Task, op: &Operator<'_>) -> Result<Task, CommandError> {
        self.operate(task, op, "cancel", |t| operator::cancel(t, op))
    }

    /// Runs a failed or uncertain task again from `from`, the decision recorded.
    pub(crate) fn retry(
        &self,
        task: &Task,
        from: Phase,
        op: &Operator<'_>,
    ) -> Result<Task, CommandError> {
        self.operate(task, op, "retry", |t| operator::retry(t, from, op))
    }

    /// Applies `decide` to the stored task (re-read on every compare-and-swap retry) and
    /// writes it with its event and manifest lane; a cancel also releases the claim.
    fn operate(
        &self,
        task: &Task,
        op: &Operator<'_>,
        action: &'static str,
        decide: impl Fn(&mut Task) -> Result<(), operator::OperatorError>,
    ) -> Result<Task, CommandError> {
        let path = task_path(&task.repo, task.issue);
        let trailer = vec![("Agent-Coord-Session", op.by.to_owned())];
        let done = self
            .store
            .transact(&trailer, |snap| -> Result<_, CommandError> {
                let ctx = self.ctx();
                let mut current = ledger::read_task(snap, &path)?.ok_or_else(|| {
                    CommandError::operational(format!("task {} is gone", task.task_id))
                })?;
                decide(&mut current).map_err(|e| CommandError::usage(e.to_string()))?;
                let mut plan = Plan::nothing("coordinate", current.clone());
                plan.state.push((path.clone(), ledger::to_record(&current)));
                let batch = batch_of(&naming::batch_id(&current.worker))?;
                let mut fields = intervention_fields(op, action, "manual-fix");
                f::LANE.set(&mut fields, current.task_id.as_str());
                f::REPO.set(&mut fields, current.repo.as_str());
                f::TARGET.set(&mut fields, current.issue.to_string());
                f::PHASE.set(&mut fields, current.phase.wire_name());
                fields.insert("state".into(), Value::from(current.state.wire_name()));
                plan.state
                    .extend(manifest_lane(snap, &ctx, &current, &batch)?);
                if action == "cancel" {
                    plan.state.extend(release_claim(snap, &ctx, &current)?);
                }
                let event = event_apart(snap, &ctx, &batch, fields, &plan.state)?;
                plan.state.push(event);
                plan.summary = format!(
                    "coordinator: {action} {} by {} ({})",
                    current.task_id,
                    op.by,
                    current.state.wire_name()
                );
                Ok(plan)
            })?;
        Ok(done.plan.outcome)
    }

    /// Changes the holds with `change` and records the event, in one commit.
    pub(crate) fn hold(
        &self,
        op: &Operator<'_>,
        action: &'static str,
        scope: &Scope,
        change: impl Fn(&mut Controls) -> Result<Change, CommandError>,
    ) -> Result<Change, CommandError> {
        let trailer = vec![("Agent-Coord-Session", op.by.to_owned())];
        let done = self
            .store
            .transact(&trailer, |snap| -> Result<_, CommandError> {
                let ctx = self.ctx();
                let mut controls = ledger::read_controls(snap)?;
                let what = change(&mut controls)?;
                let mut plan = Plan::nothing("coordinate", what);
                let record = match serde_json::to_value(&controls) {
                    Ok(Value::Object(m)) => m,
                    _ => Record::new(),
                };
                plan.state.push((CONTROLS_PATH.to_owned(), record));
                let batch = match scope {
                    Scope::Worker(w) => naming::batch_id(w),
                    _ => naming::batch_id(OPERATOR_BATCH),
                };
                let kind = if action == "drain" {
                    "drain"
                } else {
                    "manual-fix"
                };
                let mut fields = intervention_fields(op, action, kind);
                fields.insert("scope".into(), Value::from(scope.to_string()));
                let event = event_apart(snap, &ctx, &batch_of(&batch)?, fields, &plan.state)?;
                plan.state.push(event);
                plan.summary = format!("coordinator: {action} {scope} by {}", op.by);
                Ok(plan)
            })?;
        Ok(done.plan.outcome)
    }

    /// Publishes what was written, when there is a remote (the write stands either way).
    pub(crate) fn publish(&self) -> Option<String> {
        self.sync()
            .err()
            .map(|e| format!("warning: written locally but not published: {}", e.message))
    }
}

/// The `human_intervention` event, at a path none of `written` takes (a lifecycle event of
/// the same commit, such as the claim's release, draws its id from the same snapshot).
fn event_apart(
    snap: &TipSnapshot<'_>,
    ctx: &Ctx,
    batch: &BatchId,
    fields: Record,
    written: &[(String, Record)],
) -> Result<(String, Record), CommandError> {
    let mut ctx = ctx.clone();
    for _ in 0..16 {
        let event = new_event(snap, &ctx, batch, "human_intervention", fields.clone())?;
        if !written.iter().any(|(p, _)| *p == event.0) {
            return Ok(event);
        }
        ctx.nonce = ctx.nonce.wrapping_mul(0x9E37_79B9).wrapping_add(1);
    }
    Err(CommandError::operational(
        "could not find a free event id for the intervention; try again",
    ))
}

fn batch_of(id: &str) -> Result<BatchId, CommandError> {
    BatchId::from_str(id).map_err(|e| CommandError::usage(format!("batch id {id:?}: {e}")))
}

/// The common fields of an operator's `human_intervention` event.
fn intervention_fields(op: &Operator<'_>, action: &str, kind: &str) -> Record {
    let mut fields = Record::new();
    f::AGENT_ID.set(&mut fields, op.by);
    f::KIND.set(&mut fields, kind);
    fields.insert("action".into(), Value::from(action));
    fields.insert("operator".into(), Value::from(op.by));
    if let Some(reason) = op.reason {
        f::MESSAGE.set(&mut fields, reason);
    }
    fields
}

/// The worker's manifest with `task` as it now stands (its lane's status follows the task).
fn manifest_lane(
    snap: &TipSnapshot<'_>,
    ctx: &Ctx,
    task: &Task,
    batch: &BatchId,
) -> Result<Vec<(String, Record)>, CommandError> {
    let here = task_path(&task.repo, task.issue);
    let mut tasks: Vec<Task> = Vec::new();
    for (path, record) in snap.list(TASKS_DIR)? {
        if let Ok(other) = serde_json::from_value::<Task>(Value::Object(record)) {
            if other.worker == task.worker {
                tasks.push(if path == here { task.clone() } else { other });
            }
        }
    }
    let refs: Vec<&Task> = tasks.iter().collect();
    let request = batch::RegisterRequest {
        manifest: telemetry::manifest(&task.worker, batch.as_str(), &refs),
        batch_id: None,
        launch_prompt: Some(telemetry::launch_prompt(&task.worker, &refs)),
        synthetic: false,
        synthetic_kind: None,
    };
    Ok(batch::register(snap, &request, ctx)?.state)
}

/// The release of the task's claim by its worker (nothing when the claim is gone or is
/// someone else's by now).
fn release_claim(
    snap: &TipSnapshot<'_>,
    ctx: &Ctx,
    task: &Task,
) -> Result<Vec<(String, Record)>, CommandError> {
    let (Ok(agent), Ok(repo), Ok(target)) = (
        AgentId::from_str(&naming::agent_id(&task.worker)),
        RepoSlug::from_str(&task.repo),
        Target::from_str(&task.issue.to_string()),
    ) else {
        return Ok(Vec::new());
    };
    let request = claim::ReleaseRequest {
        agent,
        repo,
        target,
        branch: None,
        handoff_to: None,
        handoff_note: Some(format!("task {} cancelled", task.task_id)),
        metadata: Record::new(),
    };
    match claim::release(snap, &request, ctx) {
        Ok(plan) => Ok(plan.state),
        Err(RuleError::ReleaseRefused(_)) => Ok(Vec::new()),
        Err(e) => Err(e.into()),
    }
}
