//! Running lanes for the model phases (implement, inner review, the PR gates): each lane's
//! argv with its prompt on stdin, several in parallel, the uncertain-lane refusal (no second
//! model start without a human), and routing each outcome (continue, publish a checkpoint,
//! or fail).

use super::*;

/// Runs a lane with `prompt` on stdin in the worktree; the prompt and the (redacted)
/// output are kept in the control directory.
pub(super) fn run_lane(
    engine: &mut Engine<'_>,
    task: &mut Task,
    slot: LaneSlot,
    prompt: &str,
) -> Result<(ProcessEnd, String), Halt> {
    let mut ends = run_lanes(engine, task, vec![(slot, prompt.to_owned())])?;
    ends.pop().ok_or_else(|| Halt::Retry {
        task: task.task_id.clone(),
        message: "the lane left no outcome".into(),
    })
}

/// Runs fresh, independent lanes in parallel (one thread each), after recording them
/// as started in one commit; the outcomes come back in order and are persisted by the
/// caller on this thread.
pub(super) fn run_lanes(
    engine: &mut Engine<'_>,
    task: &mut Task,
    lanes: Vec<(LaneSlot, String)>,
) -> Result<Vec<(ProcessEnd, String)>, Halt> {
    record_started(engine, task, &lanes)?;
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
            LaneJob {
                transcript: control.join(format!("{stem}.transcript.jsonl")),
                stem,
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
    let mut out = Vec::new();
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
        out.push((end, stdout));
    }
    crate::coordinator::failpoint("lane-finished");
    Ok(out)
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

/// Runs `jobs` on one thread each and returns their ends in order (a panicked thread is a
/// lane that ended without an exit code).
/// How one lane ran.
struct LaneRan {
    /// How it ended, as the protocol reads it (a stall is a timeout).
    end: ProcessEnd,
    stdout: String,
    elapsed: Duration,
    /// It was killed for printing nothing for `lane_stall_seconds`.
    stalled: bool,
}

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
