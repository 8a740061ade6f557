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
use agent_coord_shared::coordinator::spend;
use agent_coord_shared::coordinator::task::LanePause;
use agent_coord_shared::coordinator::task::LaneRun;
use agent_coord_shared::coordinator::task::LaneVerdict;
use agent_coord_shared::coordinator::task::RunFacts;
use agent_coord_shared::coordinator::task::TranscriptRef;
use agent_coord_shared::time;

use super::*;
use crate::coordinator::pauses;
use crate::coordinator::preflight::control_dir;

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
}

impl Held {
    /// Whether the task goes on in this tick (to publish a parked question).
    pub(super) fn go_on(self) -> bool {
        self == Held::Parked
    }
}

/// What the lanes of one call gave: each lane's end and its protocol text (the `USAGE:`
/// line split off), in order; or why none ran.
pub(super) type Ran = Result<Vec<(ProcessEnd, String)>, Held>;

/// Runs a lane with `prompt` on stdin in the worktree; the prompt and the (redacted)
/// output are kept in the control directory.
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

/// Runs fresh, independent lanes in parallel (one thread each), after recording them
/// as started in one commit; every run is recorded in the task (usage, cost, transcript);
/// the outcomes come back in order and are persisted by the caller on this thread. A paused
/// vendor or a reached budget runs nothing; a usage-limit answer pauses the vendor and
/// saves the task to run the same lanes again after the reset.
pub(super) fn run_lanes(
    engine: &mut Engine<'_>,
    task: &mut Task,
    answers: Answers,
    lanes: Vec<(LaneSlot, String)>,
) -> Result<Ran, Halt> {
    let slots: Vec<LaneSlot> = lanes.iter().map(|(slot, _)| *slot).collect();
    if let Some(held) = held(engine, task, &slots)? {
        return Ok(Err(held));
    }
    record_started(engine, task, &lanes)?;
    let started_at = engine.ledger.now();
    let control = engine.setup.task_control(task);
    let _ = std::fs::create_dir_all(&control);
    let jobs: Vec<LaneJob> = lanes
        .into_iter()
        .map(|(slot, prompt)| {
            let stem = format!(
                "{}-{}-{}",
                task.phase,
                task.rounds,
                slot.wire_name().replace(':', "-")
            );
            let _ = std::fs::write(control.join(format!("{stem}.prompt")), &prompt);
            let transcript = control.join(format!("{stem}.transcript.jsonl"));
            // A rerun (after a pause, a reply) starts its own transcript.
            let _ = std::fs::remove_file(&transcript);
            LaneJob {
                transcript,
                stem,
                slot,
                argv: engine.setup.lane_argv(slot),
                prompt,
            }
        })
        .collect();
    let bounds = LaneBounds {
        dir: engine.setup.worktree(task),
        remove_env: accounts::token_variables(engine.setup.config),
        timeout: Duration::from_secs(engine.setup.worker.lane_timeout),
        stall: engine
            .setup
            .worker
            .lane_stall_seconds
            .map(Duration::from_secs),
    };
    let results = run_parallel(&jobs, &bounds);
    let ended_at = engine.ledger.now();
    let mut out = Vec::new();
    let mut pauses = Vec::new();
    for (job, ran) in jobs.iter().zip(results) {
        let LaneRan {
            end,
            stdout,
            elapsed,
            stalled,
        } = ran;
        let _ = std::fs::write(
            control.join(format!("{}.out", job.stem)),
            engine.secrets.scrub(&stdout),
        );
        engine.observe(
            Some(&task.task_id),
            match (stalled, bounds.stall) {
                (true, Some(stall)) => format!(
                    "{} ran for {} s and was killed: no output for {} s (lane_stall_seconds)",
                    job.stem,
                    elapsed.as_secs(),
                    stall.as_secs()
                ),
                _ => format!("{} ran for {} s", job.stem, elapsed.as_secs()),
            },
        );
        let answer = reading::read(&stdout);
        let verdict = match answer.retry_after {
            Some(until) => {
                pauses.push((pause_key(engine, job.slot, answer.usage.as_ref()), until));
                LaneVerdict::Paused
            }
            None => verdict(answers, end, &engine.secrets.scrub(&answer.protocol)),
        };
        let run = lane_run(
            engine,
            task,
            job,
            RunTimes {
                started_at: &started_at,
                ended_at: &ended_at,
            },
            end,
            verdict,
            &answer,
        );
        task.record_lane_run(run);
        out.push((end, answer.protocol));
    }
    crate::coordinator::failpoint("lane-finished");
    if !pauses.is_empty() {
        pause(engine, task, &pauses)?;
        return Ok(Err(Held::Paused));
    }
    Ok(Ok(out))
}

/// The start and end of one call's lanes.
struct RunTimes<'a> {
    started_at: &'a str,
    ended_at: &'a str,
}

/// What is recorded of one lane run: its usage, its cost by the configured price table
/// (the vendor's own figure stays), and where its transcript is.
fn lane_run(
    engine: &Engine<'_>,
    task: &Task,
    job: &LaneJob,
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

/// Records `lanes` as running in one commit before any starts (a crash then leaves the
/// task uncertain, never a second model); refuses while a lane is already recorded.
fn record_started(
    engine: &mut Engine<'_>,
    task: &mut Task,
    lanes: &[(LaneSlot, String)],
) -> Result<(), Halt> {
    if task.pending.is_some() {
        return Err(Halt::Retry {
            task: task.task_id.clone(),
            message: "a lane is already recorded as running".into(),
        });
    }
    let names: Vec<&str> = lanes.iter().map(|(s, _)| s.wire_name()).collect();
    let joined = names.join("+");
    task.pending = Some(PendingLane {
        slot: joined.clone(),
        phase: task.phase,
        started_at: engine.ledger.now(),
    });
    checkpoint::commit(
        engine,
        task,
        "coordinator.lane_started",
        format!("{joined} started"),
        None,
    )
}

/// An implementer or reviewer started in an earlier tick never reported: its outcome is
/// unknown, and no second model starts for it.
pub(super) fn refuse_uncertain(engine: &mut Engine<'_>, task: &mut Task) -> Result<bool, Halt> {
    let Some(p) = task.pending.clone() else {
        return Ok(false);
    };
    task.mark_uncertain(&format!(
            "the coordinator stopped while {} ran (started {}); its outcome is unknown, so no second model starts; an operator must inspect the worktree",
            p.slot, p.started_at
        ));
    checkpoint::commit(
        engine,
        task,
        "coordinator.uncertain",
        "lane outcome unknown".into(),
        None,
    )?;
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

/// One lane to run: the stem of its files in the control directory, its argv, its prompt.
struct LaneJob {
    stem: String,
    slot: LaneSlot,
    /// Where `agent-coord lane` writes the lane's transcript (named to it through
    /// `AGENT_COORD_LANE_TRANSCRIPT`); its growth is output for the stall limit.
    transcript: PathBuf,
    argv: Vec<String>,
    prompt: String,
}

/// Where and within what every lane of one phase runs.
struct LaneBounds {
    /// The task's worktree.
    dir: PathBuf,
    /// The configuration's token variables, removed from every lane.
    remove_env: Vec<String>,
    /// How long a lane may run.
    timeout: Duration,
    /// The silence after which a lane is killed like a timeout (`lane_stall_seconds`).
    stall: Option<Duration>,
}

/// How one lane ran.
struct LaneRan {
    /// How it ended, as the protocol reads it (a stall is a timeout).
    end: ProcessEnd,
    stdout: String,
    elapsed: Duration,
    /// It was killed for printing nothing for `lane_stall_seconds`.
    stalled: bool,
}

/// Runs `jobs` on one thread each and returns their ends in order (a panicked thread is a
/// lane that ended without an exit code).
fn run_parallel(jobs: &[LaneJob], bounds: &LaneBounds) -> Vec<LaneRan> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .iter()
            .map(|job| {
                scope.spawn(move || {
                    let spec = process::Spec {
                        argv: &job.argv,
                        cwd: &bounds.dir,
                        env: vec![(
                            crate::lanes::TRANSCRIPT_ENV.to_owned(),
                            job.transcript.to_string_lossy().into_owned(),
                        )],
                        remove_env: bounds.remove_env.clone(),
                        stdin: Some(job.prompt.as_bytes().to_vec()),
                        timeout: bounds.timeout,
                        stall: bounds.stall,
                        watch: Some(job.transcript.clone()),
                        max_output: redact::LANE_BODY_MAX * 4,
                        gh_config_dir: None,
                    };
                    lane_end(process::run(&spec))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| LaneRan {
                    end: ProcessEnd {
                        exit_code: None,
                        timed_out: false,
                    },
                    stdout: "the lane's thread panicked".to_owned(),
                    elapsed: Duration::ZERO,
                    stalled: false,
                })
            })
            .collect()
    })
}

/// A lane process's end, its stdout, and how long it ran (a failure to start is a
/// non-zero end with the reason as output: never approval; a stall ends it like a timeout).
fn lane_end(run: Result<process::Finished, process::RunError>) -> LaneRan {
    match run {
        Ok(done) => LaneRan {
            end: ProcessEnd {
                exit_code: done.exit_code(),
                timed_out: done.timed_out() || done.stalled(),
            },
            stalled: done.stalled(),
            stdout: done.stdout,
            elapsed: done.elapsed,
        },
        Err(e) => LaneRan {
            end: ProcessEnd {
                exit_code: None,
                timed_out: false,
            },
            stdout: format!("cannot start the lane: {e}"),
            elapsed: Duration::ZERO,
            stalled: false,
        },
    }
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
