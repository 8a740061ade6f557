//! Running lanes for the model phases (implement, inner review, the PR gates): each lane's
//! argv with its prompt on stdin, several in parallel, the uncertain-lane refusal (no second
//! model start without a human), and routing each outcome (continue, publish a checkpoint,
//! or fail).

use std::path::Path;

use agent_coord_shared::coordinator::config::LaneSpec;
use agent_coord_shared::coordinator::lane::reading;
use agent_coord_shared::coordinator::lane::usage::CostSource;
use agent_coord_shared::coordinator::lane::usage::LaneUsage;
use agent_coord_shared::coordinator::lane::usage::Tokens;
use agent_coord_shared::coordinator::leases;
use agent_coord_shared::coordinator::slots;
use agent_coord_shared::coordinator::slots::Caps;
use agent_coord_shared::coordinator::spend;
use agent_coord_shared::coordinator::task::LaneLaunch;
use agent_coord_shared::coordinator::task::LanePause;
use agent_coord_shared::coordinator::task::LaneRun;
use agent_coord_shared::coordinator::task::LaneVerdict;
use agent_coord_shared::coordinator::task::RunFacts;
use agent_coord_shared::coordinator::task::TranscriptRef;
use agent_coord_shared::time;

use super::*;
use crate::command_error::CommandError;
use crate::coordinator::ledger::LeaseAsk;
use crate::coordinator::pauses;
use crate::coordinator::preflight::control_dir;
use crate::coordinator::running;
use crate::lanes::supervisor;
use crate::lanes::supervisor::LaneState;
use crate::lanes::supervisor::LaunchSpec;

/// Which protocol a lane answers in (how its verdict is read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Answers {
    /// The implementer's `RESULT: done|no-change|ask|blocked`.
    Implementer,
    /// A reviewer's `RESULT: approved|rejected`.
    Reviewer,
}

/// Why lanes did not run: the caller returns [`Held::go_on`] from its phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Held {
    /// A vendor's usage limit holds them (saved and observed): stop for this tick.
    Paused,
    /// The task's budget is reached: a question checkpoint is parked, to be published now.
    Parked,
    /// They were started, or still run: a later tick collects them.
    Running,
    /// Every lane slot they could take is in use (observed): a later tick starts them.
    NoSlot,
    /// An operator's pause holds them (observed): a tick after `coordinate resume` starts
    /// them.
    OnHold,
    /// Their outcome cannot be known: the task was saved `uncertain`.
    Uncertain,
}

impl Held {
    /// Whether the task goes on in this tick (to publish a parked question or the
    /// uncertain task's blocker).
    pub(super) fn go_on(self) -> bool {
        matches!(self, Held::Parked | Held::Uncertain)
    }
}

/// What the lanes of one call gave: each lane's end and its protocol text (the `USAGE:`
/// line split off), in order; or why none ran.
pub(super) type Ran = Result<Vec<(ProcessEnd, String)>, Held>;

/// Runs a lane with `prompt` on stdin in the worktree (see [`run_lanes`]).
pub(super) fn run_lane(
    engine: &mut Engine<'_>,
    task: &mut Task,
    slot: LaneSlot,
    answers: Answers,
    prompt: &str,
) -> Result<Result<(ProcessEnd, String), Held>, Halt> {
    let ends = run_lanes(engine, task, answers, vec![(slot, prompt.to_owned())])?;
    match ends {
        Err(held) => Ok(Err(held)),
        Ok(mut ends) => ends.pop().map(Ok).ok_or_else(|| Halt::Retry {
            task: task.task_id.clone(),
            message: "the lane left no outcome".into(),
        }),
    }
}

/// Starts fresh, independent lanes together, or collects them once they all ended.
///
/// With no lane pending, the lanes are recorded as started (one commit, with how to find
/// them again) and launched under detached supervisors that outlive this process: the
/// answer is [`Held::Running`] and the tick goes on with other tasks. When the task's
/// lanes are pending, each is looked up by its files: all ended, every run is recorded in
/// the task (usage, cost, transcript) and the outcomes come back in order, to be persisted
/// by the caller; one still running is [`Held::Running`]; one that can no longer be found
/// makes the task `uncertain` (no second model starts). A paused vendor, a reached budget or
/// a full lane slot starts nothing; a usage-limit answer pauses the vendor and saves the task
/// to run the same lanes again after the reset.
pub(super) fn run_lanes(
    engine: &mut Engine<'_>,
    task: &mut Task,
    answers: Answers,
    lanes: Vec<(LaneSlot, String)>,
) -> Result<Ran, Halt> {
    let slots: Vec<LaneSlot> = lanes.iter().map(|(slot, _)| *slot).collect();
    if let Some(pending) = task.pending.clone() {
        return collect(engine, task, answers, &slots, &pending);
    }
    if let Some(held) = may_start(engine, task, &slots)? {
        return Ok(Err(held));
    }
    if let Some(held) = start(engine, task, lanes)? {
        return Ok(Err(held));
    }
    Ok(Err(Held::Running))
}

/// Whether lanes of `slots` may start now: not while a vendor of theirs is paused or the
/// task's budget is reached (see [`held`]), nor while every slot they could take is in use.
pub(super) fn may_start(
    engine: &mut Engine<'_>,
    task: &mut Task,
    slots: &[LaneSlot],
) -> Result<Option<Held>, Halt> {
    if let Some(hold) = engine
        .controls
        .lanes_held(&engine.setup.worker_id, &task.repo)
        .cloned()
    {
        engine.observe(
            Some(&task.task_id),
            format!(
                "waits for an operator to resume: {hold}; its {} lanes start after `coordinate resume`",
                task.phase
            ),
        );
        return Ok(Some(Held::OnHold));
    }
    if let Some(held) = held(engine, task, slots)? {
        return Ok(Some(held));
    }
    let caps = Caps {
        worker: engine.setup.worker.max_lanes,
        machine: engine.setup.config.machine_max_lanes,
        vendor: engine.setup.worker.max_vendor_lanes.clone(),
    };
    let vendors: Vec<Option<&str>> = slots
        .iter()
        .map(|slot| lane_vendor(engine, *slot))
        .collect();
    let in_use = running::in_use(engine.setup.config, &engine.setup.worker_id);
    if let Err(wait) = slots::may_start(&engine.setup.worker_id, &caps, &in_use, &vendors) {
        return Ok(Some(no_slot(engine, task, &wait)));
    }
    Ok(None)
}

/// Says that `task`'s lanes wait for a slot (`wait`) and queues it for the next free one.
fn no_slot(engine: &mut Engine<'_>, task: &Task, wait: &slots::SlotWait) -> Held {
    engine.observe(
        Some(&task.task_id),
        format!(
            "waits for a lane slot: {wait}; its {} lanes start when one frees",
            task.phase
        ),
    );
    engine.slot_waiters.push((task.repo.clone(), task.issue));
    Held::NoSlot
}

/// The vendor a lane of `slot` counts under (an adapter's; a raw argv names none).
fn lane_vendor(engine: &Engine<'_>, slot: LaneSlot) -> Option<&'static str> {
    engine
        .setup
        .lane_spec(slot)
        .and_then(LaneSpec::vendor)
        .map(|v| v.wire_name())
}

/// The file stem of a start's lane (its launch, pid, result and transcript files): the run's
/// number, then the stem its prompt and output files have (`<phase>-<round>-<slot>`).
fn run_stem(run: u64, stem: &str) -> String {
    format!("run{run}-{stem}")
}

/// The prompt and output stem of a lane, without its run number.
fn short_stem(run_stem: &str) -> &str {
    run_stem.split_once('-').map_or(run_stem, |(_, rest)| rest)
}

/// Records `lanes` as started in one commit (with the nonce and the stems that find them
/// again), then launches each under its own detached supervisor; a lane that cannot be
/// launched gets a result saying why, so it is collected as a failed lane, never as
/// approval and never as unknown.
/// The repository's fleet-wide lane cap (`repo_max_lanes`), if any.
fn repo_cap(engine: &Engine<'_>, task: &Task) -> Option<u64> {
    let slug: agent_coord_shared::ids::RepoSlug = task.repo.parse().ok()?;
    engine.setup.config.repo_max_lanes.get(&slug).copied()
}

fn start(
    engine: &mut Engine<'_>,
    task: &mut Task,
    lanes: Vec<(LaneSlot, String)>,
) -> Result<Option<Held>, Halt> {
    let control = engine.setup.task_control(task);
    let _ = std::fs::create_dir_all(&control);
    // Every run gets files of its own (a rerun after a pause or a reply never overwrites
    // the transcript an earlier run's record points to).
    let runs_before = task.earlier_runs.runs + task.lane_runs.len() as u64;
    let nonce = nonce(&task.task_id);
    let jobs: Vec<(LaneSlot, String, String)> = lanes
        .into_iter()
        .enumerate()
        .map(|(i, (slot, prompt))| {
            let stem = format!(
                "{}-{}-{}",
                task.phase,
                task.rounds,
                slot.wire_name().replace(':', "-")
            );
            (slot, run_stem(runs_before + i as u64 + 1, &stem), prompt)
        })
        .collect();
    let names: Vec<&str> = jobs.iter().map(|(s, _, _)| s.wire_name()).collect();
    let joined = names.join("+");
    task.pending = Some(PendingLane {
        slot: joined.clone(),
        phase: task.phase,
        started_at: engine.ledger.now(),
        launch: Some(LaneLaunch {
            machine: engine.ledger.machine(),
            nonce: nonce.clone(),
            stems: jobs.iter().map(|(_, stem, _)| stem.clone()).collect(),
            leases: Vec::new(),
            vendors: jobs
                .iter()
                .map(|(slot, _, _)| lane_vendor(engine, *slot).map(str::to_owned))
                .collect(),
        }),
    });
    // A repository under a fleet-wide cap: the start takes its leases in the same commit.
    let ask = repo_cap(engine, task).map(|cap| LeaseAsk {
        cap,
        want: jobs.len(),
        ttl: leases::lease_ttl(engine.setup.worker.lane_timeout),
    });
    task.updated_at = engine.ledger.now();
    let note = Note {
        kind: "coordinator.lane_started",
        message: format!("{joined} started"),
        previous_phase: None,
    };
    if let Err(wait) = engine.ledger.save_start(task, note, ask)? {
        task.pending = None;
        return Ok(Some(no_slot(engine, task, &wait)));
    }
    // The fleet learns of the start before any model runs: a machine that takes this task
    // over after this one dies must find the start (and judge the lane's outcome unknown)
    // instead of starting a second model. Unpublished, or beaten to a repository slot by
    // another machine's start, the start is withdrawn.
    let published = engine.ledger.sync().and_then(|()| {
        if engine.ledger.leases_kept(task)? {
            Ok(())
        } else {
            Err(CommandError::operational(
                "another machine's start took a repository lane slot first",
            ))
        }
    });
    if let Err(e) = published {
        task.pending = None;
        checkpoint::commit(
            engine,
            task,
            "coordinator.lane_withdrawn",
            format!("{joined} not started: the start could not be published"),
            None,
        )?;
        return Err(Halt::Retry {
            task: task.task_id.clone(),
            message: format!(
                "{joined} not started: the start could not be published to the fleet ({}); the next tick tries again",
                e.message
            ),
        });
    }
    let remove_env = accounts::token_variables(engine.setup.config);
    let worktree = engine.setup.worktree(task);
    let mut entry = running::Entry {
        worker: engine.setup.worker_id.clone(),
        task_id: task.task_id.clone(),
        repo: task.repo.clone(),
        issue: task.issue,
        lanes: Vec::new(),
    };
    let mut specs = Vec::with_capacity(jobs.len());
    for (slot, stem, prompt) in &jobs {
        let prompt_path = control.join(format!("{}.prompt", short_stem(stem)));
        let _ = std::fs::write(&prompt_path, prompt);
        let transcript = control.join(format!("{stem}.transcript.jsonl"));
        let spec = LaunchSpec {
            argv: engine.setup.lane_argv(*slot),
            cwd: worktree.clone(),
            env: vec![
                (
                    crate::lanes::TRANSCRIPT_ENV.to_owned(),
                    transcript.to_string_lossy().into_owned(),
                ),
                (supervisor::NONCE_ENV.to_owned(), nonce.clone()),
            ],
            remove_env: remove_env.clone(),
            prompt: prompt_path,
            timeout_ms: engine.setup.worker.lane_timeout.saturating_mul(1000),
            stall_ms: engine
                .setup
                .worker
                .lane_stall_seconds
                .map(|s| s.saturating_mul(1000)),
            watch: Some(transcript),
            max_output: redact::LANE_BODY_MAX * 4,
            pid: control.join(format!("{stem}.pid.json")),
            result: control.join(format!("{stem}.result.json")),
        };
        entry.lanes.push(running::EntryLane {
            slot: slot.wire_name().to_owned(),
            vendor: lane_vendor(engine, *slot).map(str::to_owned),
            result: spec.result.clone(),
            pid: spec.pid.clone(),
        });
        specs.push((control.join(format!("{stem}.launch.json")), spec));
    }
    // The slot registry learns of the lanes before they run, so no crash lets them run
    // uncounted.
    let root = control_dir(engine.setup.worker);
    if let Err(e) = running::record(&root, &nonce, &entry) {
        engine.error(
            Some(&task.task_id),
            format!("cannot record the running lanes for the slot caps: {e}"),
        );
    }
    for (spec_path, spec) in &specs {
        if let Err(e) = supervisor::launch(spec_path, spec, &nonce, &remove_env) {
            let why = format!("cannot start the lane: {e}");
            if let Err(write) = supervisor::record_not_started(spec, why.clone()) {
                engine.error(
                    Some(&task.task_id),
                    format!("{why}; and cannot record that: {write}"),
                );
            }
        }
    }
    crate::coordinator::failpoint("lanes-started");
    engine.observe(
        Some(&task.task_id),
        format!(
            "started {}",
            jobs.iter()
                .map(|(_, stem, _)| short_stem(stem))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    Ok(None)
}

/// A token no other launch has: 16 bytes of the system's randomness (else a digest of the
/// task, the process and the time).
fn nonce(task_id: &str) -> String {
    use std::io::Read;

    use sha2::Digest;
    let mut bytes = [0u8; 16];
    let random = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .is_ok();
    if !random {
        let seed = format!(
            "{task_id}:{}:{:?}",
            std::process::id(),
            std::time::SystemTime::now()
        );
        bytes.copy_from_slice(&sha2::Sha256::digest(seed.as_bytes())[..16]);
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Looks up the task's pending lanes by their files (see [`run_lanes`]).
fn collect(
    engine: &mut Engine<'_>,
    task: &mut Task,
    answers: Answers,
    slots: &[LaneSlot],
    pending: &PendingLane,
) -> Result<Ran, Halt> {
    let Some(launch) = pending.launch.clone() else {
        unknown(
            engine,
            task,
            pending,
            "it ran inside a tick that never finished",
        )?;
        return Ok(Err(Held::Uncertain));
    };
    let root = control_dir(engine.setup.worker);
    let wanted: Vec<&str> = slots.iter().map(|s| s.wire_name()).collect();
    if pending.slot != wanted.join("+") || launch.stems.len() != slots.len() {
        running::remove(&root, &launch.nonce);
        unknown(
            engine,
            task,
            pending,
            &format!("this phase runs {} instead", wanted.join("+")),
        )?;
        return Ok(Err(Held::Uncertain));
    }
    if launch.machine != engine.ledger.machine() {
        unknown(
            engine,
            task,
            pending,
            &format!("it was started on machine {}", launch.machine),
        )?;
        return Ok(Err(Held::Uncertain));
    }
    let control = engine.setup.task_control(task);
    let mut results = Vec::new();
    let mut still = Vec::new();
    let mut lost = Vec::new();
    for stem in &launch.stems {
        let result = control.join(format!("{stem}.result.json"));
        let pid = control.join(format!("{stem}.pid.json"));
        match supervisor::state(&result, &pid, &launch.nonce) {
            LaneState::Ended(r) => results.push(r),
            LaneState::Running => still.push(short_stem(stem).to_owned()),
            LaneState::Unknown => lost.push(short_stem(stem).to_owned()),
        }
    }
    if !lost.is_empty() {
        running::remove(&root, &launch.nonce);
        unknown(
            engine,
            task,
            pending,
            &format!(
                "neither a result nor a live process of {} is left",
                lost.join(", ")
            ),
        )?;
        return Ok(Err(Held::Uncertain));
    }
    if !still.is_empty() {
        engine.observe(
            Some(&task.task_id),
            format!(
                "{} still running (started {})",
                still.join(", "),
                pending.started_at
            ),
        );
        return Ok(Err(Held::Running));
    }
    let started = time::parse(&pending.started_at).unwrap_or_else(|| engine.ledger.now_time());
    let started_at = time::format(started);
    let mut out = Vec::new();
    let mut pauses = Vec::new();
    let stall = engine.setup.worker.lane_stall_seconds;
    for ((slot, stem), result) in slots.iter().zip(&launch.stems).zip(results) {
        let elapsed = Duration::from_millis(result.elapsed_ms);
        let end = ProcessEnd {
            exit_code: result.exit_code,
            timed_out: result.timed_out,
        };
        let short = short_stem(stem);
        let _ = std::fs::write(
            control.join(format!("{short}.out")),
            engine.secrets.scrub(&result.stdout),
        );
        engine.observe(
            Some(&task.task_id),
            match (result.stalled, stall) {
                (true, Some(stall)) => format!(
                    "{short} ran for {} s and was killed: no output for {stall} s (lane_stall_seconds)",
                    elapsed.as_secs(),
                ),
                _ => format!("{short} ran for {} s", elapsed.as_secs()),
            },
        );
        let answer = reading::read(&result.stdout);
        let verdict = match answer.retry_after {
            Some(until) => {
                pauses.push((pause_key(engine, *slot, answer.usage.as_ref()), until));
                LaneVerdict::Paused
            }
            None => verdict(answers, end, &engine.secrets.scrub(&answer.protocol)),
        };
        let run = lane_run(
            engine,
            task,
            &RanLane {
                slot: *slot,
                transcript: control.join(format!("{stem}.transcript.jsonl")),
            },
            RunTimes {
                started_at: &started_at,
                // Lanes of one start start together and end each on its own.
                ended_at: &time::format(
                    started + chrono::Duration::from_std(elapsed).unwrap_or_default(),
                ),
                duration_ms: result.elapsed_ms,
            },
            end,
            verdict,
            &answer,
        );
        task.record_lane_run(run);
        out.push((end, answer.protocol));
    }
    running::remove(&root, &launch.nonce);
    crate::coordinator::failpoint("lane-finished");
    if !pauses.is_empty() {
        pause(engine, task, &pauses)?;
        return Ok(Err(Held::Paused));
    }
    Ok(Ok(out))
}

/// Pending lanes whose outcome cannot be known (`why`): the task is saved `uncertain` and
/// no second model starts for it.
fn unknown(
    engine: &mut Engine<'_>,
    task: &mut Task,
    pending: &PendingLane,
    why: &str,
) -> Result<(), Halt> {
    task.mark_uncertain(&format!(
        "{} was started {} and its outcome is unknown ({why}), so no second model starts; an operator must inspect the worktree",
        pending.slot, pending.started_at
    ));
    checkpoint::commit(
        engine,
        task,
        "coordinator.uncertain",
        "lane outcome unknown".into(),
        None,
    )
}

/// The start and end of one call's lanes.
struct RunTimes<'a> {
    started_at: &'a str,
    ended_at: &'a str,
    duration_ms: u64,
}

/// What is recorded of one lane run: its usage, its cost by the configured price table
/// (the vendor's own figure stays), and where its transcript is.
fn lane_run(
    engine: &Engine<'_>,
    task: &Task,
    job: &RanLane,
    times: RunTimes<'_>,
    end: ProcessEnd,
    verdict: LaneVerdict,
    answer: &reading::LaneAnswer,
) -> LaneRun {
    let usage = answer.usage.as_ref();
    let cost = match usage {
        Some(u) if u.cost_source == CostSource::Vendor => (u.cost_usd, CostSource::Vendor),
        Some(u) => engine
            .setup
            .config
            .prices
            .cost(None, u.model.as_deref(), Tokens::of(u)),
        None => (None, CostSource::Unknown),
    };
    LaneRun::of(
        RunFacts {
            slot: job.slot.wire_name().to_owned(),
            phase: task.phase,
            round: task.rounds,
            started_at: times.started_at.to_owned(),
            ended_at: times.ended_at.to_owned(),
            duration_ms: times.duration_ms,
            end,
            verdict,
            transcript: transcript_ref(engine, &job.transcript),
        },
        usage,
        cost,
    )
}

/// The pointer to a lane's transcript: this machine, the path under the workspace root,
/// its size and digest now (none when the lane wrote no transcript).
fn transcript_ref(engine: &Engine<'_>, path: &Path) -> Option<TranscriptRef> {
    use sha2::Digest;
    let bytes = std::fs::read(path).ok()?;
    let relative = path
        .strip_prefix(&engine.setup.worker.workspace_root)
        .ok()?;
    let relative = relative.to_string_lossy().into_owned();
    if !TranscriptRef::safe_path(&relative) {
        return None;
    }
    let digest: String = sha2::Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    Some(TranscriptRef {
        machine: engine.ledger.machine(),
        path: relative,
        bytes: bytes.len() as u64,
        sha256: format!("sha256:{digest}"),
    })
}

/// The verdict of a lane's answer, as its phase will read it.
fn verdict(answers: Answers, end: ProcessEnd, protocol: &str) -> LaneVerdict {
    match answers {
        Answers::Implementer => LaneVerdict::of_implementer(&protocol::implementer(end, protocol)),
        Answers::Reviewer => LaneVerdict::of_reviewer(&protocol::reviewer(end, protocol)),
    }
}

/// What a pause is keyed by: the vendor the lane reported (else the adapter's vendor,
/// else, for a raw argv that named none, its slot).
fn pause_key(engine: &Engine<'_>, slot: LaneSlot, usage: Option<&LaneUsage>) -> String {
    usage
        .map(|u| u.vendor)
        .or_else(|| engine.setup.lane_spec(slot).and_then(LaneSpec::vendor))
        .map(|v| v.wire_name().to_owned())
        .unwrap_or_else(|| slot.wire_name().to_owned())
}

/// The keys a lane of `slot` may be paused under.
fn pause_keys(engine: &Engine<'_>, slot: LaneSlot) -> Vec<String> {
    let mut keys = vec![slot.wire_name().to_owned()];
    if let Some(v) = engine.setup.lane_spec(slot).and_then(LaneSpec::vendor) {
        keys.push(v.wire_name().to_owned());
    }
    keys
}

/// Whether the lanes may not start: a vendor of theirs is paused on this worker (the task
/// says so, saved once, and waits without a GitHub blocker), or the task's budget is reached
/// (a question checkpoint is parked). A pause that ended is cleared here.
pub(super) fn held(
    engine: &mut Engine<'_>,
    task: &mut Task,
    slots: &[LaneSlot],
) -> Result<Option<Held>, Halt> {
    let control = control_dir(engine.setup.worker);
    let now = engine.ledger.now_time();
    let paused = slots
        .iter()
        .flat_map(|slot| pause_keys(engine, *slot))
        .find_map(|key| pauses::until(&control, &key, now).map(|until| (key, until)));
    if let Some((vendor, until)) = paused {
        let pause = LanePause {
            vendor,
            until: time::format(until),
        };
        if task.paused.as_ref() != Some(&pause) {
            task.paused = Some(pause.clone());
            checkpoint::commit(
                engine,
                task,
                "coordinator.lane_paused",
                format!("{} paused until {}", pause.vendor, pause.until),
                None,
            )?;
        }
        engine.observe(
            Some(&task.task_id),
            format!(
                "waits for the {} usage limit to reset at {}; no {} lane starts before (no blocker is published)",
                pause.vendor, pause.until, task.phase
            ),
        );
        return Ok(Some(Held::Paused));
    }
    task.paused = None;
    if let Some(question) = engine
        .setup
        .worker
        .budget
        .and_then(|b| spend::budget_reached(&b, task))
    {
        task.occurrences.insert(BUDGET.to_owned(), 1);
        let resume = task.phase;
        checkpoint::park(engine, task, resume, QUESTION, question)?;
        return Ok(Some(Held::Parked));
    }
    Ok(None)
}

/// A usage-limit answer: the vendor is paused on this worker until its reset, the lanes are
/// no longer pending (they ended: nothing is uncertain), and the task is saved with its runs
/// to run the same lanes again then.
fn pause(
    engine: &mut Engine<'_>,
    task: &mut Task,
    pauses: &[(String, chrono::DateTime<chrono::Utc>)],
) -> Result<(), Halt> {
    let control = control_dir(engine.setup.worker);
    let now = engine.ledger.now_time();
    for (key, until) in pauses {
        if let Err(e) = pauses::pause(&control, key, *until, now) {
            engine.error(
                Some(&task.task_id),
                format!(
                    "cannot record the {key} pause in {}: {e}",
                    control.display()
                ),
            );
        }
    }
    let (vendor, until) = pauses
        .iter()
        .max_by_key(|(_, until)| *until)
        .cloned()
        .unwrap_or_default();
    task.pending = None;
    if task.phase == Phase::Implement {
        // The paused implementer is no round: the same round runs again after the reset.
        task.rounds = task.rounds.saturating_sub(1);
    }
    task.paused = Some(LanePause {
        vendor: vendor.clone(),
        until: time::format(until),
    });
    let message = format!(
        "{vendor} usage limit reached: paused until {}; the {} lane runs again then (no blocker is published)",
        time::format(until),
        task.phase
    );
    checkpoint::commit(
        engine,
        task,
        "coordinator.lane_paused",
        message.clone(),
        None,
    )?;
    engine.observe(Some(&task.task_id), message);
    Ok(())
}

/// A lane pending from a checkpoint of an earlier version (it ran inside a tick that never
/// finished): its outcome is unknown, and no second model starts for it. Lanes with a
/// launch record are collected by [`run_lanes`] instead.
pub(super) fn refuse_uncertain(engine: &mut Engine<'_>, task: &mut Task) -> Result<bool, Halt> {
    let Some(p) = task.pending.clone() else {
        return Ok(false);
    };
    if p.launch.is_some() {
        return Ok(false);
    }
    unknown(engine, task, &p, "it ran inside a tick that never finished")?;
    Ok(true)
}

pub(super) fn follow(
    engine: &mut Engine<'_>,
    task: &mut Task,
    next: Next,
    phase: Phase,
    who: &str,
) -> Result<bool, Halt> {
    match next {
        Next::Continue => {
            checkpoint::commit(
                engine,
                task,
                "coordinator.phase",
                format!("{who} finished; next {}", task.phase),
                Some(phase),
            )?;
            engine.observe(
                Some(&task.task_id),
                format!("{who} finished; next {}", task.phase),
            );
            Ok(true)
        }
        Next::Publish { kind, text } => {
            let kind = if kind == QUESTION { QUESTION } else { BLOCKER };
            checkpoint::park(engine, task, phase, kind, text)?;
            Ok(true)
        }
        Next::Fail { reason } => {
            let reason = engine.secrets.clean(&reason, redact::COMMENT_MAX);
            checkpoint::fail(
                engine,
                task,
                &format!("{who} reported blocked: {reason}"),
                format!("{who} blocked: {reason}"),
                phase,
            )
        }
    }
}

/// A collected lane: its slot and where its transcript is.
struct RanLane {
    slot: LaneSlot,
    transcript: PathBuf,
}

/// The prompt of a reviewer of the task's patch (`diff_path`) with `focus`: the inner
/// reviewer or one of the PR gates.
pub(super) fn review_prompt(task: &Task, diff_path: &str, focus: ReviewFocus) -> String {
    protocol::review_prompt(&ReviewPrompt {
        repo: &task.repo,
        issue: task.issue,
        title: &task.title,
        body: &task.body,
        diff_path,
        summary_en: task.carry.summary_en.as_deref().unwrap_or_default(),
        summary_de: task.carry.summary_de.as_deref().unwrap_or_default(),
        focus,
    })
}
