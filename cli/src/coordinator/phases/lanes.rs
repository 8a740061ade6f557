//! The model phases: implement and inner review through lane argv, the uncertain-lane
//! refusal, and routing each outcome (continue, publish a checkpoint, or fail).

use super::*;

impl Engine<'_> {
    /// Runs a lane with `prompt` on stdin in the worktree; the prompt and the (redacted)
    /// output are kept in the control directory.
    fn run_lane(
        &mut self,
        task: &mut Task,
        slot: LaneSlot,
        prompt: &str,
    ) -> Result<(ProcessEnd, String), Halt> {
        let mut ends = self.run_lanes(task, vec![(slot, prompt.to_owned())])?;
        ends.pop().ok_or_else(|| Halt::Retry {
            task: task.task_id.clone(),
            message: "the lane left no outcome".into(),
        })
    }

    /// Runs fresh, independent lanes in parallel (one thread each), after recording them
    /// as started in one commit; the outcomes come back in order and are persisted by the
    /// caller on this thread.
    pub(super) fn run_lanes(
        &mut self,
        task: &mut Task,
        lanes: Vec<(LaneSlot, String)>,
    ) -> Result<Vec<(ProcessEnd, String)>, Halt> {
        self.record_started(task, &lanes)?;
        let control = self.setup.task_control(task);
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
                    stem,
                    argv: self.setup.lane_argv(slot),
                    prompt,
                }
            })
            .collect();
        let bounds = LaneBounds {
            dir: self.setup.worktree(task),
            remove_env: accounts::token_variables(self.setup.config),
            timeout: Duration::from_secs(self.setup.worker.lane_timeout),
        };
        let results = run_parallel(&jobs, &bounds);
        let mut out = Vec::new();
        for (job, (end, stdout, elapsed)) in jobs.iter().zip(results) {
            let _ = std::fs::write(
                control.join(format!("{}.out", job.stem)),
                self.secrets.scrub(&stdout),
            );
            self.observe(
                Some(&task.task_id),
                format!("{} ran for {} s", job.stem, elapsed.as_secs()),
            );
            out.push((end, stdout));
        }
        crate::coordinator::failpoint("lane-finished");
        Ok(out)
    }

    /// Records `lanes` as running in one commit before any starts (a crash then leaves the
    /// task uncertain, never a second model); refuses while a lane is already recorded.
    fn record_started(
        &mut self,
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
            started_at: self.ledger.now(),
        });
        self.commit(
            task,
            "coordinator.lane_started",
            format!("{joined} started"),
            None,
        )
    }

    /// An implementer or reviewer started in an earlier tick never reported: its outcome is
    /// unknown, and no second model starts for it.
    pub(super) fn refuse_uncertain(&mut self, task: &mut Task) -> Result<bool, Halt> {
        let Some(p) = task.pending.clone() else {
            return Ok(false);
        };
        task.mark_uncertain(&format!(
            "the coordinator stopped while {} ran (started {}); its outcome is unknown, so no second model starts; an operator must inspect the worktree",
            p.slot, p.started_at
        ));
        self.commit(
            task,
            "coordinator.uncertain",
            "lane outcome unknown".into(),
            None,
        )?;
        Ok(true)
    }

    fn has_patch(&self, task: &Task) -> Result<bool, Halt> {
        if task.pr.is_some() {
            return Ok(true);
        }
        let dir = self.setup.worktree(task);
        let clean = git::is_clean(&dir).map_err(|e| self.git_halt(task, e))?;
        let head = git::head(&dir).map_err(|e| self.git_halt(task, e))?;
        Ok(!clean || task.base_sha.as_deref() != Some(head.as_str()))
    }

    pub(super) fn implement(&mut self, task: &mut Task) -> Result<bool, Halt> {
        if self.refuse_uncertain(task)? {
            return Ok(true);
        }
        task.rounds += 1;
        let prompt = protocol::implement_prompt(&ImplementPrompt {
            repo: &task.repo,
            issue: task.issue,
            title: &task.title,
            body: &task.body,
            branch: &task.branch,
            findings: match (&task.carry.findings, &task.carry.check_output) {
                (Some(f), _) => Some(Findings::Review(f)),
                (None, Some(c)) => Some(Findings::Checks(c)),
                (None, None) => None,
            },
            reply: match (&task.carry.reply, &task.carry.reply_login) {
                (Some(body), Some(login)) => Some(HumanReply { login, body }),
                _ => None,
            },
            round: task.rounds,
        });
        let (end, stdout) = self.run_lane(task, LaneSlot::GrokImplementer, &prompt)?;
        let outcome = protocol::implementer(end, &self.secrets.scrub(&stdout));
        let has_patch = self.has_patch(task)?;
        let next = task.apply_implementer(&outcome, has_patch);
        self.follow(task, next, Phase::Implement, "implementer")
    }

    pub(super) fn follow(
        &mut self,
        task: &mut Task,
        next: Next,
        phase: Phase,
        who: &str,
    ) -> Result<bool, Halt> {
        match next {
            Next::Continue => {
                self.commit(
                    task,
                    "coordinator.phase",
                    format!("{who} finished; next {}", task.phase),
                    Some(phase),
                )?;
                self.observe(
                    Some(&task.task_id),
                    format!("{who} finished; next {}", task.phase),
                );
                Ok(true)
            }
            Next::Publish { kind, text } => {
                let kind = if kind == QUESTION { QUESTION } else { BLOCKER };
                self.park(task, phase, kind, text)?;
                Ok(true)
            }
            Next::Fail { reason } => {
                let reason = self.secrets.clean(&reason, redact::COMMENT_MAX);
                task.fail(&format!("{who} reported blocked: {reason}"));
                self.commit(
                    task,
                    "coordinator.failed",
                    format!("{who} blocked: {reason}"),
                    Some(phase),
                )?;
                Ok(true)
            }
        }
    }

    /// Stages the worktree and writes the base→worktree diff outside it.
    fn diff_artifact(&self, task: &Task) -> Result<PathBuf, Halt> {
        let dir = self.setup.worktree(task);
        let base = task.base_sha.clone().unwrap_or_default();
        let diff = git::staged_diff(&dir, &base).map_err(|e| self.git_halt(task, e))?;
        let control = self.setup.task_control(task);
        let _ = std::fs::create_dir_all(&control);
        let path = control.join(format!("review-{}.diff", task.rounds));
        std::fs::write(&path, diff).map_err(|e| Halt::Retry {
            task: task.task_id.clone(),
            message: format!("cannot write the diff artifact: {e}"),
        })?;
        Ok(path)
    }

    pub(super) fn inner_review(&mut self, task: &mut Task) -> Result<bool, Halt> {
        if self.refuse_uncertain(task)? {
            return Ok(true);
        }
        let diff = self.diff_artifact(task)?;
        let diff_path = diff.to_string_lossy().into_owned();
        let prompt = protocol::review_prompt(&ReviewPrompt {
            repo: &task.repo,
            issue: task.issue,
            title: &task.title,
            body: &task.body,
            diff_path: &diff_path,
            summary_en: task.carry.summary_en.as_deref().unwrap_or_default(),
            summary_de: task.carry.summary_de.as_deref().unwrap_or_default(),
            focus: ReviewFocus::Inner,
        });
        let (end, stdout) = self.run_lane(task, LaneSlot::GrokReviewer, &prompt)?;
        let outcome = protocol::reviewer(end, &self.secrets.scrub(&stdout));
        let next = task.apply_reviewer(&outcome);
        self.follow(task, next, Phase::InnerReview, "inner reviewer")
    }
}

/// One lane to run: the stem of its files in the control directory, its argv, its prompt.
struct LaneJob {
    stem: String,
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
}

/// Runs `jobs` on one thread each and returns their ends in order (a panicked thread is a
/// lane that ended without an exit code).
fn run_parallel(jobs: &[LaneJob], bounds: &LaneBounds) -> Vec<(ProcessEnd, String, Duration)> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = jobs
            .iter()
            .map(|job| {
                scope.spawn(move || {
                    let spec = process::Spec {
                        argv: &job.argv,
                        cwd: &bounds.dir,
                        env: Vec::new(),
                        remove_env: bounds.remove_env.clone(),
                        stdin: Some(job.prompt.as_bytes().to_vec()),
                        timeout: bounds.timeout,
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
                h.join().unwrap_or_else(|_| {
                    (
                        ProcessEnd {
                            exit_code: None,
                            timed_out: false,
                        },
                        "the lane's thread panicked".to_owned(),
                        Duration::ZERO,
                    )
                })
            })
            .collect()
    })
}

/// A lane process's end, its stdout, and how long it ran (a failure to start is a
/// non-zero end with the reason as output: never approval).
fn lane_end(run: Result<process::Finished, process::RunError>) -> (ProcessEnd, String, Duration) {
    match run {
        Ok(done) => (
            ProcessEnd {
                exit_code: done.exit_code(),
                timed_out: done.timed_out(),
            },
            done.stdout,
            done.elapsed,
        ),
        Err(e) => (
            ProcessEnd {
                exit_code: None,
                timed_out: false,
            },
            format!("cannot start the lane: {e}"),
            Duration::ZERO,
        ),
    }
}
