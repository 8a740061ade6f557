//! What GitHub says about the task's pull request head: whether it is still ours, and its CI
//! (read by the CI phase and re-checked by the Ready phase).

use agent_coord_shared::coordinator::ci;
use agent_coord_shared::coordinator::ci::Verdict;

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

/// Classifies `actual`, the head GitHub shows for the task's pull request, against the
/// task's signed `head`. A foreign head is never observed, approved or made Ready.
pub(super) fn classify_pr_head(
    engine: &Engine<'_>,
    task: &Task,
    head: &str,
    actual: &str,
) -> PrHead {
    if actual == head {
        return PrHead::Ours;
    }
    let pr = task.pr.unwrap_or_default();
    let dir = engine.setup.worktree(task);
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

/// Observes the head's CI; a transport error halts the tick for this task (retry).
pub(super) fn observe_ci(engine: &mut Engine<'_>, task: &Task, head: &str) -> Result<Seen, Halt> {
    let repo = task.repo.clone();
    let fetched = (|| {
        let checks = engine.gh.check_run_pages(&repo, head)?;
        let statuses = engine.gh.statuses(&repo, head)?;
        let runs = engine.gh.workflow_run_pages(&repo, head)?;
        Ok::<_, crate::github::GhError>((checks, statuses, runs))
    })();
    let (checks, statuses, runs) = match fetched {
        Ok(f) => f,
        Err(crate::github::GhError::Protocol { what, detail }) => {
            return Ok(Seen::Fault(format!("{what}: {detail}")))
        }
        Err(e) => return Err(effects::github_halt(engine, task, "observe CI", e)),
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
