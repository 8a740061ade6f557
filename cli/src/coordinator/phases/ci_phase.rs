//! Step 8, GitHub CI: one observer of the exact head's check runs, statuses and workflow-run
//! inventory, shared by the CI phase and every Ready-side recheck. Pending evidence and
//! transport errors wait for the next tick without a model or a reply gate; failures fetch
//! the failed jobs' plain-text logs for the implementer; authorization waits, unreadable
//! logs and protocol faults are blockers an authorized reply resumes at `ci`. The pull
//! request's actual head is read first: a head someone else pushed is such a blocker too.

use agent_coord_shared::coordinator::ci;
use agent_coord_shared::coordinator::ci::Verdict;
use agent_coord_shared::coordinator::ci::WorkflowRun;

use super::pr_state::PrHead;
use super::pr_state::Seen;
use super::*;

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

/// Reads the task's pull request before its CI is observed (a transport error retries):
/// `None` when it shows the task's head; `Some(false)` when GitHub has not caught up with
/// the push yet (next tick); `Some(true)` after parking on the blocker of a head someone
/// else pushed — otherwise that head would leave the task "CI pending" on its own.
fn pr_head_moved(
    engine: &mut Engine<'_>,
    task: &mut Task,
    head: &str,
) -> Result<Option<bool>, Halt> {
    let pr = task.pr.unwrap_or_default();
    let pull = engine
        .gh
        .pull(&task.repo, pr)
        .map_err(|e| effects::github_halt(engine, task, "read the pull request", e))?;
    match pr_state::classify_pr_head(engine, task, head, &pull.head_sha) {
        PrHead::Ours => Ok(None),
        PrHead::Behind(why) => {
            engine.observe(
                Some(&task.task_id),
                format!("{why}; looking again next tick"),
            );
            Ok(Some(false))
        }
        PrHead::Foreign(text) => {
            checkpoint::park(engine, task, Phase::Ci, BLOCKER, text)?;
            Ok(Some(true))
        }
    }
}

pub(super) fn ci(engine: &mut Engine<'_>, task: &mut Task) -> Result<bool, Halt> {
    let Some(head) = checkpoint::checked_head(engine, task)? else {
        return Ok(true);
    };
    if !task.evidence.tested_and_reviewed(&head) {
        return checkpoint::back_to(
            engine,
            task,
            Phase::PrGatesGrok,
            "the PR gates have not all approved this head",
        );
    }
    if let Some(keep_going) = pr_head_moved(engine, task, &head)? {
        return Ok(keep_going);
    }
    match pr_state::observe_ci(engine, task, &head)? {
        Seen::Fault(fault) => {
            checkpoint::park(engine, task, Phase::Ci, BLOCKER, format!(
                    "GitHub CI could not be observed reliably ({fault}); nothing counts as green, and a reply resumes CI observation once GitHub answers properly"
                ))?;
            Ok(true)
        }
        Seen::Verdict(Verdict::Green) => record_green(engine, task, &head),
        Seen::Verdict(Verdict::Pending { waiting }) => {
            report_pending(engine, task, &head, &waiting);
            Ok(false)
        }
        Seen::Verdict(Verdict::ActionRequired { runs }) => {
            checkpoint::park(engine, task, Phase::Ci, BLOCKER, format!(
                    "GitHub CI waits for a maintainer to authorize workflow runs ({}); this is not the implementer's to fix. Approve the runs, then reply to resume CI observation",
                    runs.join(", ")
                ))?;
            Ok(true)
        }
        Seen::Verdict(Verdict::NotGreen { items }) => {
            checkpoint::park(engine, task, Phase::Ci, BLOCKER, format!(
                    "GitHub CI ended without success and without a failure to fix ({}); rerun it, then reply to resume CI observation",
                    items.join(", ")
                ))?;
            Ok(true)
        }
        Seen::Verdict(Verdict::Failed { runs, failed }) => {
            route_failure(engine, task, &head, &runs, &failed)
        }
    }
}

/// Saves that CI is green on `head`.
fn record_green(engine: &mut Engine<'_>, task: &mut Task, head: &str) -> Result<bool, Halt> {
    task.ci_green(head);
    checkpoint::commit(
        engine,
        task,
        "coordinator.phase",
        format!("GitHub CI green on {head}"),
        Some(Phase::Ci),
    )?;
    engine.observe(Some(&task.task_id), format!("CI green on {}", short(head)));
    Ok(true)
}

/// Says what CI on `head` still waits for; the next tick looks again.
fn report_pending(engine: &mut Engine<'_>, task: &Task, head: &str, waiting: &[String]) {
    let what = if waiting.is_empty() {
        "nothing reported yet".to_owned()
    } else {
        waiting.join(", ")
    };
    engine.observe(
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
    engine: &mut Engine<'_>,
    task: &mut Task,
    head: &str,
    runs: &[WorkflowRun],
    failed: &[String],
) -> Result<bool, Halt> {
    match failed_logs(engine, task, runs)? {
        Ok(logs) => {
            let text = format!(
                "GitHub CI failed on {head}: {}\n\n{logs}",
                failed.join(", ")
            );
            let text = redact::bound_tail(&engine.secrets.scrub(&text), redact::CHECK_OUTPUT_MAX);
            task.ci_failed(head, &text);
            checkpoint::commit(
                engine,
                task,
                "coordinator.phase",
                format!("GitHub CI failed on {head}; logs go to the implementer"),
                Some(Phase::Ci),
            )?;
            engine.observe(
                Some(&task.task_id),
                format!(
                    "CI failed on {}; the implementer gets the logs",
                    short(head)
                ),
            );
            Ok(true)
        }
        Err(why) => {
            checkpoint::park(engine, task, Phase::Ci, BLOCKER, format!(
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
    engine: &mut Engine<'_>,
    task: &Task,
    runs: &[WorkflowRun],
) -> Result<Result<String, LogsUnreadable>, Halt> {
    if runs.is_empty() {
        return Ok(Err(LogsUnreadable::NoRun));
    }
    let mut out = String::new();
    for run in runs {
        let pages = match engine.gh.job_pages(&task.repo, run.id, run.attempt) {
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
            Err(e) => {
                return Err(effects::github_halt(
                    engine,
                    task,
                    "list the failed jobs",
                    e,
                ))
            }
        };
        let jobs = match ci::failed_jobs(&pages) {
            Ok(j) if !j.is_empty() => j,
            Ok(_) => return Ok(Err(LogsUnreadable::NoFailedJob { run: run.label() })),
            Err(e) => return Ok(Err(LogsUnreadable::Protocol(e))),
        };
        for job in jobs {
            let log = match engine.gh.job_log(&task.repo, job.id) {
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
                Err(e) => return Err(effects::github_halt(engine, task, "read a job log", e)),
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
