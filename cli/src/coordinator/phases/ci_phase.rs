//! Step 8, GitHub CI: one observer of the exact head's check runs, statuses and workflow-run
//! inventory, shared by the CI phase and every Ready-side recheck. Pending evidence and
//! transport errors wait for the next tick without a model or a reply gate; failures fetch
//! the failed jobs' plain-text logs for the implementer; authorization waits, unreadable
//! logs and protocol faults are blockers an authorized reply resumes at `ci`. The pull
//! request's actual head is read first: a head someone else pushed is such a blocker too.

use agent_coord_shared::coordinator::ci;
use agent_coord_shared::coordinator::ci::Verdict;
use agent_coord_shared::coordinator::ci::WorkflowRun;

use super::gates::short;
use super::*;

/// What one observation of the head's CI found.
pub(super) enum Seen {
    Verdict(Verdict),
    /// A malformed or truncated answer (never "no CI").
    Fault(String),
}

/// The pull request's actual head, against the task's signed head.
pub(super) enum PrHead {
    /// The task's head.
    Ours,
    /// An earlier head of the task: GitHub has not caught up with the push yet.
    Behind(String),
    /// A head the coordinator did not sign (someone else pushed): the blocker text.
    Foreign(String),
}

/// Why a failed CI's logs cannot be read for the implementer.
#[derive(Debug, thiserror::Error)]
enum LogsUnreadable {
    /// Only a check or a status failed: no workflow run has logs.
    #[error("only a check or status failed, and no workflow run has logs to read")]
    NoRun,
    /// Listing a run's jobs was refused.
    #[error("the jobs of {run} answered {status}: {message}")]
    Jobs {
        /// The run's label.
        run: String,
        /// GitHub's status code.
        status: u16,
        /// GitHub's message.
        message: String,
    },
    /// A failed run lists no failed job.
    #[error("{run} has no failed job")]
    NoFailedJob {
        /// The run's label.
        run: String,
    },
    /// The jobs list could not be read.
    #[error(transparent)]
    Protocol(ci::CiProtocolError),
    /// Reading a job's log was refused.
    #[error("the log of job {job} of {run} answered {status}: {message}")]
    Log {
        /// The job's name.
        job: String,
        /// The run's label.
        run: String,
        /// GitHub's status code.
        status: u16,
        /// GitHub's message.
        message: String,
    },
    /// A job's log is empty.
    #[error("the log of job {job} of {run} is empty")]
    EmptyLog {
        /// The job's name.
        job: String,
        /// The run's label.
        run: String,
    },
}

impl Engine<'_> {
    /// Classifies `actual`, the head GitHub shows for the task's pull request, against the
    /// task's signed `head`. A foreign head is never observed, approved or made Ready.
    pub(super) fn classify_pr_head(&self, task: &Task, head: &str, actual: &str) -> PrHead {
        if actual == head {
            return PrHead::Ours;
        }
        let pr = task.pr.unwrap_or_default();
        let dir = self.setup.worktree(task);
        // A git failure counts as "not contained": a blocker, never a silent wait.
        if git::contains(&dir, head, actual).unwrap_or(false) {
            return PrHead::Behind(format!(
                "pull request #{pr} still shows {}, an earlier head of this task, not the pushed {}",
                short(actual),
                short(head)
            ));
        }
        PrHead::Foreign(format!(
            "pull request #{pr}'s head is {actual}, not the task's signed head {head}: someone else pushed to {}. Nothing is approved or made Ready on a head the coordinator did not sign; restore {} to {}, then reply to resume",
            task.branch,
            task.branch,
            short(head)
        ))
    }

    /// Reads the task's pull request before its CI is observed (a transport error retries):
    /// `None` when it shows the task's head; `Some(false)` when GitHub has not caught up with
    /// the push yet (next tick); `Some(true)` after parking on the blocker of a head someone
    /// else pushed — otherwise that head would leave the task "CI pending" on its own.
    fn pr_head_moved(&mut self, task: &mut Task, head: &str) -> Result<Option<bool>, Halt> {
        let pr = task.pr.unwrap_or_default();
        let pull = self
            .gh
            .pull(&task.repo, pr)
            .map_err(|e| self.github_halt(task, "read the pull request", e))?;
        match self.classify_pr_head(task, head, &pull.head_sha) {
            PrHead::Ours => Ok(None),
            PrHead::Behind(why) => {
                self.observe(
                    Some(&task.task_id),
                    format!("{why}; looking again next tick"),
                );
                Ok(Some(false))
            }
            PrHead::Foreign(text) => {
                self.park(task, Phase::Ci, BLOCKER, text)?;
                Ok(Some(true))
            }
        }
    }

    /// Observes the head's CI; a transport error halts the tick for this task (retry).
    pub(super) fn observe_ci(&mut self, task: &Task, head: &str) -> Result<Seen, Halt> {
        let repo = task.repo.clone();
        let fetched = (|| {
            let checks = self.gh.check_run_pages(&repo, head)?;
            let statuses = self.gh.statuses(&repo, head)?;
            let runs = self.gh.workflow_run_pages(&repo, head)?;
            Ok::<_, crate::github::GhError>((checks, statuses, runs))
        })();
        let (checks, statuses, runs) = match fetched {
            Ok(f) => f,
            Err(crate::github::GhError::Protocol { what, detail }) => {
                return Ok(Seen::Fault(format!("{what}: {detail}")))
            }
            Err(e) => return Err(self.github_halt(task, "observe CI", e)),
        };
        let observation = (|| {
            Ok::<_, ci::CiProtocolError>(ci::Observation {
                check_runs: ci::check_runs(&checks, head)?,
                statuses: ci::statuses(&statuses)?,
                runs: ci::workflow_runs(&runs, head)?,
            })
        })();
        Ok(match observation {
            Ok(o) => Seen::Verdict(ci::classify(&o)),
            Err(e) => Seen::Fault(e.to_string()),
        })
    }

    pub(super) fn ci(&mut self, task: &mut Task) -> Result<bool, Halt> {
        let Some(head) = self.current_head(task)? else {
            return Ok(true);
        };
        if task.evidence.checks_passed.as_deref() != Some(head.as_str()) {
            return self.back_to(task, Phase::Checks, "no passing checks on this head");
        }
        if !task.evidence.tested_and_reviewed(&head) {
            return self.back_to(
                task,
                Phase::PrGatesGrok,
                "the PR gates have not all approved this head",
            );
        }
        if let Some(keep_going) = self.pr_head_moved(task, &head)? {
            return Ok(keep_going);
        }
        match self.observe_ci(task, &head)? {
            Seen::Fault(fault) => {
                self.park(task, Phase::Ci, BLOCKER, format!(
                    "GitHub CI could not be observed reliably ({fault}); nothing counts as green, and a reply resumes CI observation once GitHub answers properly"
                ))?;
                Ok(true)
            }
            Seen::Verdict(Verdict::Green) => self.record_green(task, &head),
            Seen::Verdict(Verdict::Pending { waiting }) => {
                self.report_pending(task, &head, &waiting);
                Ok(false)
            }
            Seen::Verdict(Verdict::ActionRequired { runs }) => {
                self.park(task, Phase::Ci, BLOCKER, format!(
                    "GitHub CI waits for a maintainer to authorize workflow runs ({}); this is not the implementer's to fix. Approve the runs, then reply to resume CI observation",
                    runs.join(", ")
                ))?;
                Ok(true)
            }
            Seen::Verdict(Verdict::NotGreen { items }) => {
                self.park(task, Phase::Ci, BLOCKER, format!(
                    "GitHub CI ended without success and without a failure to fix ({}); rerun it, then reply to resume CI observation",
                    items.join(", ")
                ))?;
                Ok(true)
            }
            Seen::Verdict(Verdict::Failed { runs, failed }) => {
                self.route_failure(task, &head, &runs, &failed)
            }
        }
    }

    /// Saves that CI is green on `head`.
    fn record_green(&mut self, task: &mut Task, head: &str) -> Result<bool, Halt> {
        task.ci_green(head);
        self.commit(
            task,
            "coordinator.phase",
            format!("GitHub CI green on {head}"),
            Some(Phase::Ci),
        )?;
        self.observe(Some(&task.task_id), format!("CI green on {}", short(head)));
        Ok(true)
    }

    /// Says what CI on `head` still waits for; the next tick looks again.
    fn report_pending(&mut self, task: &Task, head: &str, waiting: &[String]) {
        let what = if waiting.is_empty() {
            "nothing reported yet".to_owned()
        } else {
            waiting.join(", ")
        };
        self.observe(
            Some(&task.task_id),
            format!(
                "CI pending on {} ({what}); looking again next tick",
                short(head)
            ),
        );
    }

    /// Sends a failed CI's logs to the implementer, or parks on a blocker when the logs
    /// cannot be read (a failure nobody can see is not the implementer's to fix).
    fn route_failure(
        &mut self,
        task: &mut Task,
        head: &str,
        runs: &[WorkflowRun],
        failed: &[String],
    ) -> Result<bool, Halt> {
        match self.failed_logs(task, runs)? {
            Ok(logs) => {
                let text = format!(
                    "GitHub CI failed on {head}: {}\n\n{logs}",
                    failed.join(", ")
                );
                let text = redact::bound_tail(&self.secrets.scrub(&text), redact::CHECK_OUTPUT_MAX);
                task.ci_failed(head, &text);
                self.commit(
                    task,
                    "coordinator.phase",
                    format!("GitHub CI failed on {head}; logs go to the implementer"),
                    Some(Phase::Ci),
                )?;
                self.observe(
                    Some(&task.task_id),
                    format!(
                        "CI failed on {}; the implementer gets the logs",
                        short(head)
                    ),
                );
                Ok(true)
            }
            Err(why) => {
                self.park(task, Phase::Ci, BLOCKER, format!(
                    "GitHub CI failed ({}) but its logs cannot be read: {why}. Make the logs available (or rerun), then reply to resume CI observation",
                    failed.join(", ")
                ))?;
                Ok(true)
            }
        }
    }

    /// The plain-text logs of the failed jobs of each failed run's attempt, or why they are
    /// not readable (inaccessible, empty, or no workflow run to read them from).
    fn failed_logs(
        &mut self,
        task: &Task,
        runs: &[WorkflowRun],
    ) -> Result<Result<String, LogsUnreadable>, Halt> {
        if runs.is_empty() {
            return Ok(Err(LogsUnreadable::NoRun));
        }
        let mut out = String::new();
        for run in runs {
            let pages = match self.gh.job_pages(&task.repo, run.id, run.attempt) {
                Ok(p) => p,
                Err(crate::github::GhError::Status {
                    status, message, ..
                }) => {
                    return Ok(Err(LogsUnreadable::Jobs {
                        run: run.label(),
                        status,
                        message,
                    }))
                }
                Err(e) => return Err(self.github_halt(task, "list the failed jobs", e)),
            };
            let jobs = match ci::failed_jobs(&pages) {
                Ok(j) if !j.is_empty() => j,
                Ok(_) => return Ok(Err(LogsUnreadable::NoFailedJob { run: run.label() })),
                Err(e) => return Ok(Err(LogsUnreadable::Protocol(e))),
            };
            for job in jobs {
                let log = match self.gh.job_log(&task.repo, job.id) {
                    Ok(l) => l,
                    Err(crate::github::GhError::Status {
                        status, message, ..
                    }) => {
                        return Ok(Err(LogsUnreadable::Log {
                            job: job.name,
                            run: run.label(),
                            status,
                            message,
                        }))
                    }
                    Err(e) => return Err(self.github_halt(task, "read a job log", e)),
                };
                if log.trim().is_empty() {
                    return Ok(Err(LogsUnreadable::EmptyLog {
                        job: job.name,
                        run: run.label(),
                    }));
                }
                out.push_str(&format!("== {} / {} ==\n", run.label(), job.name));
                out.push_str(&redact::bound_tail(&log, redact::CHECK_OUTPUT_MAX / 2));
                out.push('\n');
            }
        }
        Ok(Ok(out))
    }
}
