//! One tick of one worker: take the worker's lock, preflight, discover assigned issues in
//! every configured repository, admit new ones, and advance every task of the worker as far
//! as it can go without waiting (spec "Assumptions": a bounded, resumable advancement).

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::fs::File;
use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use std::time::Instant;

use agent_coord_shared::coordinator::config::CoordinatorConfig;
use agent_coord_shared::coordinator::config::PinnedIdentity;
use agent_coord_shared::coordinator::config::WorkerConfig;
use agent_coord_shared::coordinator::controls::Controls;
use agent_coord_shared::coordinator::controls::Hold;
use agent_coord_shared::coordinator::controls::HoldKind;
use agent_coord_shared::coordinator::controls::Scope;
use agent_coord_shared::coordinator::evidence;
use agent_coord_shared::coordinator::naming;
use agent_coord_shared::coordinator::priority;
use agent_coord_shared::coordinator::redact;
use agent_coord_shared::coordinator::slots;
use agent_coord_shared::coordinator::spend::CostTotals;
use agent_coord_shared::coordinator::takeover;
use agent_coord_shared::coordinator::task::Admitted;
use agent_coord_shared::coordinator::task::Assignment;
use agent_coord_shared::coordinator::task::Task;
use agent_coord_shared::coordinator::task::TaskState;
use agent_coord_shared::coordinator::webhook::route::Target;
use agent_coord_shared::ids::RepoSlug;
use agent_coord_shared::output::coordinate::PreflightCheck;
use agent_coord_shared::serde_name::WireName;
use serde::Serialize;
use serde_json::Value;

use super::engine::Engine;
use super::engine::Halt;
use super::engine::Observation;
use super::ledger::Admission;
use super::ledger::Held;
use super::ledger::Ledger;
use super::phases;
use super::preflight;
use super::preflight::Check;
use super::running;
use crate::command_error::CommandError;
use crate::context::Context;

/// A tick's outcome.
pub(crate) struct TickReport {
    pub(crate) worker: String,
    pub(crate) checks: Vec<Check>,
    pub(crate) observations: Vec<Observation>,
    pub(crate) requests: u64,
    pub(crate) not_modified: u64,
    /// The preflight failed: nothing started.
    pub(crate) preflight_failed: bool,
    /// The lane spend of the worker's tasks after the tick.
    pub(crate) costs: CostTotals,
    /// The issues assigned to the worker as this tick knew them (what a collecting tick
    /// goes on with).
    pub(crate) assigned: BTreeSet<(String, u64)>,
}

impl TickReport {
    pub(crate) fn failed(&self) -> bool {
        self.preflight_failed || self.observations.iter().any(|o| o.error)
    }

    /// Returns the report as its `--json` document.
    pub(crate) fn to_json(&self) -> Value {
        let doc = TickDocument {
            worker: &self.worker,
            preflight: if self.preflight_failed {
                Preflight::Failed(self.checks.iter().map(Check::to_output).collect())
            } else {
                Preflight::Passed("ok")
            },
            observations: &self.observations,
            github_requests: self.requests,
            github_not_modified: self.not_modified,
            costs: &self.costs,
        };
        crate::output::to_json_value(&doc)
    }

    pub(crate) fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.preflight_failed {
            out.push(format!(
                "worker {}: preflight failed, nothing started:",
                self.worker
            ));
            for c in self.checks.iter().filter(|c| !c.ok) {
                out.push(format!("  {}: {}", c.name, c.detail));
            }
        }
        for o in &self.observations {
            match &o.task {
                Some(t) => out.push(format!("worker {}: {t}: {}", self.worker, o.message)),
                None => out.push(format!("worker {}: {}", self.worker, o.message)),
            }
        }
        if out.is_empty() {
            out.push(format!("worker {}: nothing to do", self.worker));
        }
        let total = &self.costs.total;
        if total.runs > 0 {
            out.push(format!(
                "worker {}: lane spend: {} run{}, {} tokens, ${:.4}{}",
                self.worker,
                total.runs,
                if total.runs == 1 { "" } else { "s" },
                total.tokens(),
                total.cost_usd,
                match total.unpriced_runs {
                    0 => String::new(),
                    n => format!(" (+{n} of unknown cost)"),
                }
            ));
        }
        out
    }
}

/// A tick's `--json` document (field order is the printed key order).
#[derive(Serialize)]
struct TickDocument<'a> {
    worker: &'a str,
    preflight: Preflight,
    observations: &'a [Observation],
    github_requests: u64,
    github_not_modified: u64,
    costs: &'a CostTotals,
}

/// The preflight in a tick's document: `"ok"`, or every check when one failed.
#[derive(Serialize)]
#[serde(untagged)]
enum Preflight {
    /// Every check passed.
    Passed(&'static str),
    /// Some check failed: all of them.
    Failed(Vec<PreflightCheck>),
}

/// The worker's lock: held for the whole tick; a second tick of the same worker exits at
/// once saying who holds it.
struct Lock {
    _file: nix::fcntl::Flock<File>,
}

fn lock(worker: &WorkerConfig, worker_id: &str) -> Result<Lock, CommandError> {
    let dir = preflight::control_dir(worker).join("locks");
    std::fs::create_dir_all(&dir)
        .map_err(|e| CommandError::operational(format!("cannot create {}: {e}", dir.display())))?;
    let path = dir.join(format!("{worker_id}.lock"));
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(&path)
        .map_err(|e| CommandError::operational(format!("cannot open {}: {e}", path.display())))?;
    match nix::fcntl::Flock::lock(file, nix::fcntl::FlockArg::LockExclusiveNonblock) {
        Ok(mut locked) => {
            let _ = locked.set_len(0);
            let _ = writeln!(locked, "{}", std::process::id());
            Ok(Lock { _file: locked })
        }
        Err(_) => {
            let holder = std::fs::read_to_string(&path).unwrap_or_default();
            Err(CommandError::operational(format!(
                "worker {worker_id} is already ticking (process {}); try again when it finishes",
                holder.trim()
            )))
        }
    }
}

/// Runs one tick of `worker_id`; `verified` carries the accounts already authenticated in
/// this process (a `--follow` loop) into its preflight.
pub(crate) fn tick(
    cx: &Context,
    config: &CoordinatorConfig,
    worker_id: &str,
    stop: &AtomicBool,
    verified: &mut preflight::Verified,
    wait: Wait,
) -> Result<TickReport, CommandError> {
    let worker = config.workers.get(worker_id).ok_or_else(|| {
        CommandError::usage(format!("no worker {worker_id} in the configuration"))
    })?;
    let started = Instant::now();
    let _lock = lock(worker, worker_id)?;
    let pre = preflight::run(config, worker_id, verified);
    let preflight_done = Instant::now();
    let Some(ready) = pre.ready else {
        return Ok(TickReport {
            worker: worker_id.to_owned(),
            checks: pre.checks,
            observations: Vec::new(),
            requests: 0,
            not_modified: 0,
            preflight_failed: true,
            costs: CostTotals::default(),
            assigned: match wait {
                Wait::Collect(assigned) => assigned,
                Wait::Woken(woken) => woken.assigned,
                Wait::No | Wait::ForLanes | Wait::Finish(_) => BTreeSet::new(),
            },
        });
    };
    let ledger = Ledger::open(
        cx,
        worker_id,
        &naming::batch_id(worker_id),
        heartbeat_ttl(worker),
    )?;
    let mut engine = Engine::new(config, worker_id, worker, ledger, ready, stop);
    let marks = work(&mut engine, wait)?;
    let (requests, not_modified) = github_requests(&engine);
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    // The tick's time split, for `-v` and `bench coordinator`.
    tracing::debug!(
        worker = worker_id,
        preflight_ms = ms(preflight_done - started),
        open_ms = ms(marks.opened - preflight_done),
        discover_ms = ms(marks.discovered - marks.opened),
        advance_ms = ms(marks.advanced - marks.discovered),
        finish_ms = ms(marks.advanced.elapsed()),
        total_ms = ms(started.elapsed()),
        requests,
        not_modified,
        "tick timings"
    );
    let costs = match engine.ledger.tasks() {
        Ok(tasks) => CostTotals::of(&tasks),
        Err(e) => {
            engine.error(None, format!("cannot total the lane spend: {}", e.message));
            CostTotals::default()
        }
    };
    Ok(TickReport {
        worker: worker_id.to_owned(),
        checks: pre.checks,
        observations: engine.observations,
        requests,
        not_modified,
        preflight_failed: false,
        costs,
        assigned: std::mem::take(&mut engine.assigned),
    })
}

/// How long a worker's heartbeat stays live: a lane and a check may run in one tick, with
/// room for a few polls around them.
fn heartbeat_ttl(worker: &WorkerConfig) -> i64 {
    i64::try_from(worker.lane_timeout + worker.check_timeout + 4 * worker.poll_seconds + 600)
        .unwrap_or(i64::MAX / 2)
}

/// When the parts of a tick after its preflight ended, for its time split.
struct Marks {
    /// The state was opened and synced.
    opened: Instant,
    /// Discovery and admission ended.
    discovered: Instant,
    /// Every task was advanced.
    advanced: Instant,
}

/// What a tick does about lanes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Wait {
    /// A full tick: start what may start and return; a later tick collects (`coordinate`,
    /// `--follow`).
    No,
    /// A full tick that collects each of the worker's lanes as it ends and advances its
    /// task, until none runs (`coordinate --wait`).
    ForLanes,
    /// Only the tasks whose lanes ended, and those waiting for a lane slot, are advanced —
    /// no discovery, no takeover, no poll of the other tasks — with the assignments the
    /// last full tick saw (`--follow` between its polls, as soon as a lane ends).
    Collect(BTreeSet<(String, u64)>),
    /// Only these tasks, and only once they have ended (a cancelled task's lanes stopped
    /// and its comment posted): `coordinate cancel` finishing what it cancelled here.
    Finish(BTreeSet<(String, u64)>),
    /// Only the tasks webhook deliveries point at are advanced — re-reading GitHub as any
    /// tick does, the delivery is no evidence — with the assignments the last full tick saw
    /// (`--follow --listen`, as soon as a delivery arrives).
    Woken(Woken),
}

/// What webhook deliveries woke, for a [`Wait::Woken`] tick.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Woken {
    /// The issues assigned to the worker as the last full tick saw them.
    pub(crate) assigned: BTreeSet<(String, u64)>,
    /// Each configured repository and what in it identifies a task to wake.
    pub(crate) targets: BTreeSet<(String, Target)>,
}

impl Woken {
    /// Reports whether a delivery points at `task`.
    fn wakes(&self, task: &Task) -> bool {
        self.targets.iter().any(|(repo, target)| {
            repo.eq_ignore_ascii_case(&task.repo)
                && target.matches(task.issue, task.pr, task.head.as_deref())
        })
    }
}

/// The tick's work once the preflight passed: sync, discover and admit, advance every
/// task (with `--wait`, again as their lanes end), then beat, publish and save the GitHub
/// caches.
fn work(engine: &mut Engine<'_>, wait: Wait) -> Result<Marks, CommandError> {
    // Decide on the fleet's latest state, and publish what this tick did at its end.
    if let Err(e) = engine.ledger.sync() {
        engine.error(None, format!("sync before the tick failed: {}", e.message));
    }
    match engine.ledger.controls() {
        Ok(controls) => engine.controls = controls,
        // Unreadable holds hold everything: no lane starts, nothing is admitted.
        Err(e) => {
            engine.error(
                None,
                format!(
                    "{}; no lane starts and nothing is admitted until it is fixed",
                    e.message
                ),
            );
            engine.controls = unreadable_controls(&engine.ledger.now());
        }
    }
    let opened = Instant::now();
    match &wait {
        Wait::Collect(assigned) => {
            return between_polls(engine, opened, assigned, |e| collect_ended(e, assigned))
        }
        Wait::Woken(woken) => {
            return between_polls(engine, opened, &woken.assigned, |e| advance_woken(e, woken))
        }
        Wait::Finish(only) => {
            return between_polls(engine, opened, &BTreeSet::new(), |e| finish_ended(e, only))
        }
        Wait::No | Wait::ForLanes => {}
    }
    let (assigned, labels) = discover(engine)?;
    take_over_orphans(engine)?;
    let discovered = Instant::now();
    advance_all(engine, &assigned, &labels)?;
    if wait == Wait::ForLanes {
        wait_for_lanes(engine, &assigned)?;
    }
    engine.assigned = assigned.clone();
    sweep(engine)?;
    let tasks = engine.ledger.tasks()?;
    super::lifecycle::expire(engine, &tasks);
    let advanced = Instant::now();
    finish(engine)?;
    Ok(Marks {
        opened,
        discovered,
        advanced,
    })
}

/// The holds to act on when the stored ones cannot be read: a pause of everything.
fn unreadable_controls(now: &str) -> Controls {
    let mut controls = Controls::default();
    controls.set(Hold {
        kind: HoldKind::Pause,
        scope: Scope::All,
        by: "agent-coord".into(),
        at: now.to_owned(),
        reason: Some("the holds record is unreadable".into()),
    });
    controls
}

/// A tick between full ones (collecting or woken): `advance`, then the sweep and the end
/// of the tick, going on with the assignments the last full tick saw.
fn between_polls(
    engine: &mut Engine<'_>,
    opened: Instant,
    assigned: &BTreeSet<(String, u64)>,
    advance: impl FnOnce(&mut Engine<'_>) -> Result<(), CommandError>,
) -> Result<Marks, CommandError> {
    let discovered = Instant::now();
    advance(engine)?;
    sweep(engine)?;
    let advanced = Instant::now();
    finish(engine)?;
    engine.assigned = assigned.clone();
    Ok(Marks {
        opened,
        discovered,
        advanced,
    })
}

/// Advances each task of the worker in turn, in priority order (who gets lane slots first,
/// see `coordinator::priority`), until the tick is interrupted; a task that halts is
/// reported and the next one goes on.
fn advance_all(
    engine: &mut Engine<'_>,
    assigned: &BTreeSet<(String, u64)>,
    labels: &Labels,
) -> Result<(), CommandError> {
    let tasks = engine.ledger.tasks()?;
    for task in in_priority_order(tasks, labels, &engine.setup.worker.priority_labels) {
        if engine.stop.load(std::sync::atomic::Ordering::SeqCst) {
            engine.observe(None, "interrupted: stopping after the current step");
            break;
        }
        advance_one(engine, task, assigned);
    }
    Ok(())
}

/// Advances each task whose lanes ended, as they end, until none of the worker's lanes
/// runs (or the tick is interrupted).
fn wait_for_lanes(
    engine: &mut Engine<'_>,
    assigned: &BTreeSet<(String, u64)>,
) -> Result<(), CommandError> {
    let control = preflight::control_dir(engine.setup.worker);
    let worker_id = engine.setup.worker_id.clone();
    loop {
        if engine.stop.load(std::sync::atomic::Ordering::SeqCst) {
            return Ok(());
        }
        let (settled, running) = running::settled(&control, &worker_id);
        if settled.is_empty() {
            if running == 0 {
                return Ok(());
            }
            std::thread::sleep(LANE_POLL);
            continue;
        }
        advance_settled(engine, &control, settled, assigned)?;
        // Slots freed: the tasks that waited for one try again, in the order they waited.
        for (repo, issue) in std::mem::take(&mut engine.slot_waiters) {
            if let Some(task) = engine.ledger.task(&repo, issue)? {
                if task.pending.is_none() {
                    advance_one(engine, task, assigned);
                }
            }
        }
    }
}

/// Takes over the worker's tasks whose machine died (its heartbeat is dead), each
/// decided on the fleet's latest state, and rebuilds the worktree of each that needs one;
/// the tick then advances them with its own tasks.
fn take_over_orphans(engine: &mut Engine<'_>) -> Result<(), CommandError> {
    for orphan in engine.ledger.orphans()? {
        let from = orphan.machine.clone().unwrap_or_default();
        let label = orphan.task_id.clone();
        let Some(mut task) = engine.ledger.take_over(&orphan)? else {
            continue;
        };
        engine.observe(
            Some(&label),
            format!(
                "taken over from machine {from} (its heartbeat is dead); goes on at {}",
                task.phase
            ),
        );
        if takeover::needs_worktree(task.phase) && task.state != TaskState::Uncertain {
            match phases::adopt_worktree(engine, &mut task) {
                Ok(()) => {}
                Err(Halt::Retry { task, message }) => engine.error(Some(&task), message),
                Err(Halt::Fatal(e)) => engine.error(Some(&label), e.message),
            }
        }
    }
    Ok(())
}

/// The labels of each issue assigned to the worker now, by (repository, issue).
type Labels = BTreeMap<(String, u64), Vec<String>>;

/// `tasks` in the order they get lane slots: priority by label, fair turns between
/// repositories, then the oldest verified assignment.
fn in_priority_order(tasks: Vec<Task>, labels: &Labels, map: &BTreeMap<String, u64>) -> Vec<Task> {
    let none = Vec::new();
    let candidates: Vec<priority::Candidate<'_>> = tasks
        .iter()
        .map(|t| priority::Candidate {
            repo: &t.repo,
            issue: t.issue,
            labels: labels.get(&(t.repo.clone(), t.issue)).unwrap_or(&none),
            assigned_at: &t.assignment.created_at,
        })
        .collect();
    let order = priority::order(&candidates, map);
    let mut slots: Vec<Option<Task>> = tasks.into_iter().map(Some).collect();
    order.into_iter().filter_map(|i| slots[i].take()).collect()
}

/// Advances one task; one that halts is reported and the tick goes on.
fn advance_one(engine: &mut Engine<'_>, task: Task, assigned: &BTreeSet<(String, u64)>) {
    let label = task.task_id.clone();
    match phases::advance(engine, task, assigned) {
        Ok(()) => {}
        Err(Halt::Retry { task, message }) => engine.error(Some(&task), message),
        Err(Halt::Fatal(e)) => engine.error(Some(&label), e.message),
    }
}

/// Advances the tasks whose lanes ended, then the tasks that wait to start lanes (in
/// priority order, labels unknown here), once.
fn collect_ended(
    engine: &mut Engine<'_>,
    assigned: &BTreeSet<(String, u64)>,
) -> Result<(), CommandError> {
    let control = preflight::control_dir(engine.setup.worker);
    let worker_id = engine.setup.worker_id.clone();
    let (settled, _) = running::settled(&control, &worker_id);
    advance_settled(engine, &control, settled, assigned)?;
    let waiting: Vec<Task> = engine
        .ledger
        .tasks()?
        .into_iter()
        .filter(|t| {
            (t.pending.is_none() && t.paused.is_none() && slots::starts_lanes_next(t))
                || cancel_unfinished(t)
        })
        .collect();
    for task in in_priority_order(
        waiting,
        &Labels::new(),
        &engine.setup.worker.priority_labels,
    ) {
        if engine.stop.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
        advance_one(engine, task, assigned);
    }
    admit_into_free_slots(engine, assigned)
}

/// Slots freed between polls: the issues the last full tick saw assigned but nobody has
/// admitted go in now (discovered and vetted as a full tick does, under `max_lanes`), and
/// each admitted one starts, instead of waiting for the next poll.
fn admit_into_free_slots(
    engine: &mut Engine<'_>,
    assigned: &BTreeSet<(String, u64)>,
) -> Result<(), CommandError> {
    let mine = engine.ledger.tasks()?;
    let room = slots::admission_room(engine.setup.worker.max_lanes, &mine);
    if room.is_none_or(|r| r == 0) || engine.stop.load(std::sync::atomic::Ordering::SeqCst) {
        return Ok(());
    }
    let taken = engine.ledger.task_keys()?;
    if assigned.iter().all(|k| taken.contains(k)) {
        return Ok(());
    }
    let before: BTreeSet<String> = mine.into_iter().map(|t| t.task_id).collect();
    discover(engine)?;
    let admitted: Vec<Task> = engine
        .ledger
        .tasks()?
        .into_iter()
        .filter(|t| !before.contains(&t.task_id))
        .collect();
    for task in admitted {
        advance_one(engine, task, assigned);
    }
    Ok(())
}

/// Advances `only` those tasks that have ended and run here (a cancelled task's lanes
/// stopped and its comment posted).
fn finish_ended(
    engine: &mut Engine<'_>,
    only: &BTreeSet<(String, u64)>,
) -> Result<(), CommandError> {
    for (repo, issue) in only {
        if let Some(task) = engine.ledger.task(repo, *issue)? {
            if task.state.terminal() && engine.ledger.runs_here(&task) {
                advance_one(engine, task, &BTreeSet::new());
            }
        }
    }
    Ok(())
}

/// Whether a cancelled task still has lanes to stop or its comment to post.
fn cancel_unfinished(task: &Task) -> bool {
    task.state == TaskState::Cancelled
        && (task.pending.is_some() || task.occurrence("cancelled") == 0)
}

/// Advances each of the worker's tasks a webhook delivery points at, once, in priority
/// order (labels unknown here).
fn advance_woken(engine: &mut Engine<'_>, woken: &Woken) -> Result<(), CommandError> {
    let tasks: Vec<Task> = engine
        .ledger
        .tasks()?
        .into_iter()
        .filter(|t| woken.wakes(t))
        .collect();
    for task in in_priority_order(tasks, &Labels::new(), &engine.setup.worker.priority_labels) {
        if engine.stop.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
        engine.observe(
            Some(&task.task_id),
            "woken by a webhook delivery: reading GitHub again",
        );
        advance_one(engine, task, &woken.assigned);
    }
    Ok(())
}

/// Advances the task of each start whose lanes all ended (this machine's), and forgets the
/// start: collected, or nobody's any more — a task that could not collect it now does so
/// on the next tick, from its checkpoint.
fn advance_settled(
    engine: &mut Engine<'_>,
    control: &std::path::Path,
    settled: Vec<(String, running::Entry)>,
    assigned: &BTreeSet<(String, u64)>,
) -> Result<(), CommandError> {
    for (nonce, entry) in settled {
        if let Some(task) = engine.ledger.task(&entry.repo, entry.issue)? {
            if launched_as(&task, &nonce) && engine.ledger.runs_here(&task) {
                advance_one(engine, task, assigned);
            }
        }
        running::remove(control, &nonce);
    }
    Ok(())
}

/// How often a waiting tick looks for a lane's end.
const LANE_POLL: Duration = Duration::from_millis(50);

/// Whether `task`'s pending lanes are the start recorded under `nonce`.
fn launched_as(task: &Task, nonce: &str) -> bool {
    task.pending
        .as_ref()
        .and_then(|p| p.launch.as_ref())
        .is_some_and(|l| l.nonce == nonce)
}

/// Forgets the worker's recorded starts that no task is waiting for any more (its task
/// collected them in another process, or moved on), so they hold no slot; lanes still
/// running for a task that has ended (done, failed, cancelled) are stopped first.
fn sweep(engine: &mut Engine<'_>) -> Result<(), CommandError> {
    let control = preflight::control_dir(engine.setup.worker);
    for (nonce, entry) in running::entries(&control) {
        if entry.worker != engine.setup.worker_id {
            continue;
        }
        let task = engine.ledger.task(&entry.repo, entry.issue)?;
        if task.as_ref().is_some_and(|t| launched_as(t, &nonce)) {
            continue;
        }
        if let Some(t) = task.filter(|t| t.state.terminal()) {
            let stopped = crate::lanes::supervisor::stop(&nonce);
            if stopped > 0 {
                engine.observe(
                    Some(&t.task_id),
                    format!(
                        "stopped {stopped} lane processes left running for this {} task",
                        t.state.wire_name()
                    ),
                );
            }
        }
        running::remove(&control, &nonce);
    }
    Ok(())
}

/// Ends the tick: the worker's heartbeat, publication to the fleet, the GitHub caches.
fn finish(engine: &mut Engine<'_>) -> Result<(), CommandError> {
    engine.ledger.beat()?;
    if let Err(e) = engine.ledger.sync() {
        engine.error(
            None,
            format!("written locally but not published: {}", e.message),
        );
    }
    // After the tick's work is published; what they record goes out with the next sync.
    super::notify::deliver(engine);
    let saved = [engine.gh.cache().save(), engine.review_gh.cache().save()];
    for e in saved.into_iter().filter_map(Result::err) {
        engine.observe(None, format!("could not save the GitHub cache: {e}"));
    }
    Ok(())
}

/// Returns the requests both clients made and how many of them were answered 304.
fn github_requests(engine: &Engine<'_>) -> (u64, u64) {
    (
        engine.gh.requests + engine.review_gh.requests,
        engine.gh.not_modified + engine.review_gh.not_modified,
    )
}

/// Discovers open issues assigned to the worker's login in every configured repository
/// and admits new ones — in priority order, as many as this machine has room for (see
/// [`slots::admission_room`]); returns the `repo#issue` keys currently assigned, and their
/// labels.
fn discover(engine: &mut Engine<'_>) -> Result<(BTreeSet<(String, u64)>, Labels), CommandError> {
    let mut assigned = BTreeSet::new();
    let mut labels = Labels::new();
    let mut fresh: Vec<(String, crate::github::Issue)> = Vec::new();
    let repos: Vec<String> = engine
        .setup
        .worker
        .repositories
        .keys()
        .map(ToString::to_string)
        .collect();
    for repo in repos {
        let login = engine.login.clone();
        let issues = match engine.gh.assigned_issues(&repo, &login) {
            Ok(issues) => issues,
            Err(e) => {
                let msg = engine.secrets.scrub(&e.to_string());
                engine.error(None, format!("cannot list issues of {repo}: {msg}"));
                continue;
            }
        };
        for issue in issues {
            assigned.insert((repo.clone(), issue.number));
            labels.insert((repo.clone(), issue.number), issue.labels.clone());
            let key = format!("{repo}#{}", issue.number);
            if let Some(task) = engine.ledger.task(&repo, issue.number)? {
                if task.worker != engine.setup.worker_id {
                    engine.observe(
                        Some(&key),
                        format!("skipped: worker {} already has a task for it", task.worker),
                    );
                } else if task.state == TaskState::Failed && engine.ledger.runs_here(&task) {
                    engine.observe(
                        Some(&task.task_id),
                        "failed task remains; it is not reopened while the issue stays assigned",
                    );
                }
                continue;
            }
            fresh.push((repo.clone(), issue));
        }
    }
    admit_fresh(engine, fresh)?;
    Ok((assigned, labels))
}

/// Vets each new issue (claim, assignment evidence, configuration), then admits the vetted
/// ones in priority order while this machine has room; the others wait, unclaimed, for a
/// later tick or another machine of the worker.
fn admit_fresh(
    engine: &mut Engine<'_>,
    fresh: Vec<(String, crate::github::Issue)>,
) -> Result<(), CommandError> {
    if fresh.is_empty() {
        return Ok(());
    }
    let mut vetted = Vec::new();
    for (repo, issue) in fresh {
        if let Some(v) = vet(engine, &repo, &issue)? {
            vetted.push((repo, issue, v));
        }
    }
    let candidates: Vec<priority::Candidate<'_>> = vetted
        .iter()
        .map(|(repo, issue, v)| priority::Candidate {
            repo,
            issue: issue.number,
            labels: &issue.labels,
            assigned_at: &v.evidence.created_at,
        })
        .collect();
    let order = priority::order(&candidates, &engine.setup.worker.priority_labels);
    let cap = engine.setup.worker.max_lanes;
    let mut room = slots::admission_room(cap, &engine.ledger.tasks()?);
    let live = engine.ledger.live_machines()?;
    let mut share = slots::admission_share(order.len(), live);
    let mut slots: Vec<Option<(String, crate::github::Issue, Vetted)>> =
        vetted.into_iter().map(Some).collect();
    for i in order {
        let Some((repo, issue, v)) = slots[i].take() else {
            continue;
        };
        if let Some(hold) = engine
            .controls
            .admission_held(&engine.setup.worker_id, &repo)
            .cloned()
        {
            engine.observe(
                Some(&format!("{repo}#{}", issue.number)),
                format!("not admitted: {hold}; an operator resumes with `coordinate resume`"),
            );
            continue;
        }
        if share == 0 {
            engine.observe(
                Some(&format!("{repo}#{}", issue.number)),
                format!(
                    "left for another machine: {live} machines run worker {} and this one took its share of the new issues",
                    engine.setup.worker_id
                ),
            );
            continue;
        }
        if room == Some(0) {
            engine.observe(
                Some(&format!("{repo}#{}", issue.number)),
                format!(
                    "not admitted yet: this machine's tasks that still need lanes fill max_lanes {}; a later tick or another machine of the worker takes it",
                    cap.unwrap_or(0)
                ),
            );
            continue;
        }
        if admit(engine, &repo, &issue, v)? {
            room = room.map(|r| r.saturating_sub(1));
            share = share.saturating_sub(1);
        }
    }
    Ok(())
}

/// What admission needs of an issue that passed vetting.
struct Vetted {
    slug: RepoSlug,
    evidence: evidence::AssignmentEvidence,
    pinned: PinnedIdentity,
}

/// Whether `issue` may become a task here: nobody else claims it, a human's standing
/// assignment is on record, its repository is configured; each refusal is observed.
fn vet(
    engine: &mut Engine<'_>,
    repo: &str,
    issue: &crate::github::Issue,
) -> Result<Option<Vetted>, CommandError> {
    let key = format!("{repo}#{}", issue.number);
    let slug: RepoSlug = match repo.parse() {
        Ok(s) => s,
        Err(e) => {
            engine.error(Some(&key), format!("unusable repository name: {e}"));
            return Ok(None);
        }
    };
    if let Held::Other(holder) = engine.ledger.claim_of(&slug, issue.number)? {
        engine.observe(Some(&key), format!("skipped: claimed by {holder}"));
        return Ok(None);
    }
    let events = match engine.gh.issue_events(repo, issue.number) {
        Ok(e) => e,
        Err(e) => {
            let msg = engine.secrets.scrub(&e.to_string());
            engine.error(
                Some(&key),
                format!("cannot read the assignment events: {msg}"),
            );
            return Ok(None);
        }
    };
    let evidence = match evidence::assignment_evidence(&events, &engine.login) {
        Ok(ev) => ev,
        Err(e) => {
            engine.observe(
                Some(&key),
                format!("not admitted: {e}; a human must assign the issue"),
            );
            return Ok(None);
        }
    };
    let Some(pinned) = engine.setup.pin_of(repo) else {
        engine.error(
            Some(&key),
            "the repository is not configured for this worker",
        );
        return Ok(None);
    };
    Ok(Some(Vetted {
        slug,
        evidence,
        pinned,
    }))
}

/// Admits a vetted issue; whether it became this machine's task.
fn admit(
    engine: &mut Engine<'_>,
    repo: &str,
    issue: &crate::github::Issue,
    v: Vetted,
) -> Result<bool, CommandError> {
    let key = format!("{repo}#{}", issue.number);
    let task = admitted_task(engine, &v.slug, repo, issue, v.evidence, &v.pinned);
    let task_id = task.task_id.clone();
    match engine.ledger.admit(&task) {
        Ok(Admission::Admitted) => {
            engine.observe(Some(&task_id), format!("admitted {key}"));
            Ok(true)
        }
        Ok(Admission::Refused(why)) => {
            engine.observe(Some(&key), format!("skipped: {why}"));
            Ok(false)
        }
        Err(e) => {
            engine.error(Some(&key), format!("not admitted: {}", e.message));
            Ok(false)
        }
    }
}

/// The task record of an admitted issue: its id and branch derived, its text redacted and
/// bounded, its assignment evidence and the execution identity it is pinned to.
fn admitted_task(
    engine: &Engine<'_>,
    slug: &RepoSlug,
    repo: &str,
    issue: &crate::github::Issue,
    evidence: evidence::AssignmentEvidence,
    pinned: &PinnedIdentity,
) -> Task {
    let task_id = naming::task_id(slug, issue.number);
    let now = engine.ledger.now();
    let base = engine
        .setup
        .repo_config(repo)
        .map(|r| r.base.clone())
        .unwrap_or_default();
    let mut task = Task::admitted(
        Admitted {
            task_id: task_id.clone(),
            worker: engine.setup.worker_id.clone(),
            repo: repo.to_owned(),
            issue: issue.number,
            title: engine.secrets.clean(&issue.title, 512),
            body: engine.secrets.clean(&issue.body, redact::ISSUE_BODY_MAX),
            assignment: Assignment {
                event_id: evidence.event_id,
                actor: evidence.actor,
                created_at: evidence.created_at,
            },
            pinned: serde_json::to_value(pinned).unwrap_or(Value::Null),
            branch: naming::branch(&task_id),
            base,
        },
        &now,
    );
    task.machine = Some(engine.ledger.machine());
    task
}
