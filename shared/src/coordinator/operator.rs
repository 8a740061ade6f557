//! The operator's decisions on one task (`coordinate cancel`, `coordinate retry`): when each
//! is allowed, and what it changes in the checkpoint. The I/O side stops lanes, posts the
//! one comment and releases the claim; these rules only decide.
//!
//! A retry is the operator's explicit decision to run a `failed` or `uncertain` task again.
//! It is the only way out of `uncertain` besides an authorized reply on the issue, and it is
//! recorded on the task (who, when, why, from which phase) as the human evidence the spec
//! requires before a second model starts. It may only go on from a phase whose inputs the
//! task still holds: the worktree's pinned base for `implement`, a pushed head for the
//! checks, that head's passes for each later phase (every phase re-verifies them anyway).

use std::fmt;

use super::task::Intervention;
use super::task::OperatorAction;
use super::task::Phase;
use super::task::Task;
use super::task::TaskState;
use crate::serde_name::WireName;

/// The final comment kinds whose occurrence a retry closes (a later ending posts anew).
pub const FINAL_KINDS: [&str; 2] = ["failed", "uncertain"];

/// The occurrence key marking the last final comment of `kind` that belongs to an ending
/// before a retry.
pub fn retried_mark(kind: &str) -> String {
    format!("retried:{kind}")
}

/// Why an operator's command on a task was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OperatorError {
    /// The task has already ended.
    #[error("task {task} is already {state}: nothing to cancel")]
    AlreadyEnded {
        /// The task id.
        task: String,
        /// Its state's wire name.
        state: &'static str,
    },
    /// Only a failed or uncertain task can be retried.
    #[error("task {task} is {state}: only a failed or uncertain task can be retried{hint}")]
    NotRetriable {
        /// The task id.
        task: String,
        /// Its state's wire name.
        state: &'static str,
        /// What to do instead.
        hint: &'static str,
    },
    /// The phase asked for is not safe for the task's state.
    #[error("task {task} cannot go on from {from}: {}", allowed_text(.allowed))]
    UnsafePhase {
        /// The task id.
        task: String,
        /// The phase asked for.
        from: Phase,
        /// The phases it may go on from.
        allowed: Vec<Phase>,
    },
}

fn allowed_text(allowed: &[Phase]) -> String {
    if allowed.is_empty() {
        "no phase is safe (it was merged or never accepted)".to_owned()
    } else {
        format!(
            "allowed phases are {}",
            allowed
                .iter()
                .map(|p| p.wire_name())
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// Who runs a command, when, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Operator<'a> {
    /// The operator's name.
    pub by: &'a str,
    /// The time (RFC 3339).
    pub at: &'a str,
    /// Why, if said.
    pub reason: Option<&'a str>,
}

impl fmt::Display for Operator<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.by)?;
        if let Some(reason) = self.reason {
            write!(f, ": {reason}")?;
        }
        Ok(())
    }
}

/// Cancels `task`: terminal, its blocker says who cancelled it and why; its pending lanes
/// stay recorded so the machine that runs them stops them.
pub fn cancel(task: &mut Task, op: &Operator<'_>) -> Result<(), OperatorError> {
    if task.state.terminal() {
        return Err(OperatorError::AlreadyEnded {
            task: task.task_id.clone(),
            state: task.state.wire_name(),
        });
    }
    let was = task.state;
    task.state = TaskState::Cancelled;
    task.resume_phase = None;
    task.question_activity_id = None;
    task.question_comment_id = None;
    task.paused = None;
    task.blocker = Some(format!("cancelled by {op}"));
    task.updated_at = op.at.to_owned();
    task.interventions.push(Intervention {
        action: OperatorAction::Cancel,
        by: op.by.to_owned(),
        at: op.at.to_owned(),
        reason: op.reason.map(str::to_owned),
        from: None,
        was: Some(was),
    });
    Ok(())
}

/// The phases a failed or uncertain `task` may go on from, in workflow order: those whose
/// inputs it still holds.
pub fn retry_phases(task: &Task) -> Vec<Phase> {
    if task.merge.is_some() {
        return Vec::new();
    }
    let mut out = Vec::new();
    if task.occurrence("accept") == 0 {
        out.push(Phase::Accept);
        return out;
    }
    if task.base_sha.is_none() {
        out.push(Phase::Checkout);
        return out;
    }
    out.push(Phase::Implement);
    let (Some(head), Some(_)) = (task.head.as_deref(), task.pr) else {
        return out;
    };
    let on = |h: &Option<String>| h.as_deref() == Some(head);
    let e = &task.evidence;
    out.push(Phase::Checks);
    if !on(&e.checks_passed) {
        return out;
    }
    out.push(Phase::PrGatesGrok);
    if !(on(&e.grok_quality) && on(&e.grok_logic)) {
        return out;
    }
    out.push(Phase::PrGatesCodex);
    if !(on(&e.codex_quality) && on(&e.codex_logic)) {
        return out;
    }
    out.push(Phase::Ci);
    if on(&e.ci_green) {
        out.push(Phase::Ready);
    }
    out
}

/// Runs a failed or uncertain `task` again from `from`: active, its blocker and pending
/// lane cleared, the retry recorded, and its final comments closed so a later ending is
/// published anew.
pub fn retry(task: &mut Task, from: Phase, op: &Operator<'_>) -> Result<(), OperatorError> {
    let was = task.state;
    if !matches!(was, TaskState::Failed | TaskState::Uncertain) {
        return Err(OperatorError::NotRetriable {
            task: task.task_id.clone(),
            state: was.wire_name(),
            hint: match was {
                TaskState::Waiting => "; it waits for an authorized reply on its issue",
                TaskState::Active => "; it is running",
                _ => "",
            },
        });
    }
    let allowed = retry_phases(task);
    if !allowed.contains(&from) {
        return Err(OperatorError::UnsafePhase {
            task: task.task_id.clone(),
            from,
            allowed,
        });
    }
    for kind in FINAL_KINDS {
        let current = task.occurrence(kind);
        task.occurrences.insert(retried_mark(kind), current);
    }
    task.state = TaskState::Active;
    task.phase = from;
    task.resume_phase = None;
    task.question_activity_id = None;
    task.question_comment_id = None;
    task.question_url = None;
    task.blocker = None;
    task.pending = None;
    task.paused = None;
    task.updated_at = op.at.to_owned();
    task.interventions.push(Intervention {
        action: OperatorAction::Retry,
        by: op.by.to_owned(),
        at: op.at.to_owned(),
        reason: op.reason.map(str::to_owned),
        from: Some(from),
        was: Some(was),
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::task::tests::task as sample;
    use crate::coordinator::task::PendingLane;

    const HEAD: &str = "1111111111111111111111111111111111111111";

    fn op() -> Operator<'static> {
        Operator {
            by: "alice",
            at: "2026-12-07T12:00:00Z",
            reason: Some("fixed the worktree"),
        }
    }

    fn failed() -> Task {
        let mut t = sample();
        t.occurrences.insert("accept".into(), 1);
        t.base_sha = Some("b".repeat(40));
        t.fail("the implementer is blocked");
        t
    }

    #[test]
    fn cancel_ends_an_open_task_once_and_says_who() {
        for state in [TaskState::Active, TaskState::Waiting, TaskState::Uncertain] {
            let mut t = sample();
            t.state = state;
            t.pending = Some(PendingLane {
                slot: "grok:implementer".into(),
                phase: Phase::Implement,
                started_at: "t".into(),
                launch: None,
            });
            cancel(&mut t, &op()).expect("cancels");
            assert_eq!(t.state, TaskState::Cancelled);
            assert!(t.state.terminal());
            assert!(t.pending.is_some(), "its machine stops the lanes");
            assert_eq!(
                t.blocker.as_deref(),
                Some("cancelled by alice: fixed the worktree")
            );
            assert_eq!(t.interventions[0].was, Some(state));
            let again = cancel(&mut t, &op()).unwrap_err();
            assert_eq!(
                again.to_string(),
                format!("task {} is already cancelled: nothing to cancel", t.task_id)
            );
        }
        let mut done = sample();
        done.state = TaskState::Done;
        assert!(matches!(
            cancel(&mut done, &op()),
            Err(OperatorError::AlreadyEnded { state: "done", .. })
        ));
    }

    #[test]
    fn retry_phases_follow_what_the_task_still_holds() {
        let mut t = sample();
        t.state = TaskState::Failed;
        assert_eq!(retry_phases(&t), vec![Phase::Accept], "never accepted");
        t.occurrences.insert("accept".into(), 1);
        assert_eq!(retry_phases(&t), vec![Phase::Checkout], "no worktree yet");
        t.base_sha = Some("b".repeat(40));
        assert_eq!(retry_phases(&t), vec![Phase::Implement]);
        t.head = Some(HEAD.into());
        assert_eq!(
            retry_phases(&t),
            vec![Phase::Implement],
            "no pull request yet"
        );
        t.pr = Some(9);
        assert_eq!(retry_phases(&t), vec![Phase::Implement, Phase::Checks]);
        t.evidence.checks_passed = Some("2".repeat(40));
        assert_eq!(
            retry_phases(&t).len(),
            2,
            "a pass on another head counts for nothing"
        );
        t.evidence.checks_passed = Some(HEAD.into());
        t.evidence.grok_quality = Some(HEAD.into());
        assert_eq!(
            retry_phases(&t).last(),
            Some(&Phase::PrGatesGrok),
            "one Grok approval is not both"
        );
        t.evidence.grok_logic = Some(HEAD.into());
        assert_eq!(retry_phases(&t).last(), Some(&Phase::PrGatesCodex));
        t.evidence.codex_quality = Some(HEAD.into());
        t.evidence.codex_logic = Some(HEAD.into());
        assert_eq!(retry_phases(&t).last(), Some(&Phase::Ci));
        t.evidence.ci_green = Some(HEAD.into());
        assert_eq!(
            retry_phases(&t),
            vec![
                Phase::Implement,
                Phase::Checks,
                Phase::PrGatesGrok,
                Phase::PrGatesCodex,
                Phase::Ci,
                Phase::Ready
            ]
        );
        t.merge = Some(crate::coordinator::task::MergeRecord {
            sha: HEAD.into(),
            merged_at: "t".into(),
            merged_by: "bot".into(),
            base: "main".into(),
            queue: None,
        });
        assert!(retry_phases(&t).is_empty(), "merged: nothing to run again");
    }

    #[test]
    fn retry_runs_a_failed_or_uncertain_task_again_and_records_the_decision() {
        let mut t = failed();
        t.occurrences.insert("failed".into(), 1);
        retry(&mut t, Phase::Implement, &op()).expect("retries");
        assert_eq!((t.state, t.phase), (TaskState::Active, Phase::Implement));
        assert!(t.blocker.is_none() && t.pending.is_none());
        assert_eq!(t.occurrence(&retried_mark("failed")), 1);
        let i = &t.interventions[0];
        assert_eq!(
            (i.action, i.from, i.was),
            (
                OperatorAction::Retry,
                Some(Phase::Implement),
                Some(TaskState::Failed)
            )
        );

        let mut u = failed();
        u.mark_uncertain("the lane's outcome is unknown");
        u.pending = Some(PendingLane {
            slot: "grok:implementer".into(),
            phase: Phase::Implement,
            started_at: "t".into(),
            launch: None,
        });
        retry(&mut u, Phase::Implement, &op())
            .expect("an operator's retry is the way out of uncertain");
        assert!(
            u.pending.is_none(),
            "the unknown lane is the operator's call now"
        );
    }

    #[test]
    fn retry_refuses_other_states_and_unsafe_phases_with_the_allowed_list() {
        let mut t = failed();
        let err = retry(&mut t, Phase::Ci, &op()).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "task {} cannot go on from ci: allowed phases are implement",
                t.task_id
            )
        );
        assert_eq!(t.state, TaskState::Failed, "a refusal changes nothing");
        for (state, hint) in [
            (TaskState::Active, "it is running"),
            (TaskState::Waiting, "authorized reply"),
            (TaskState::Done, "retried"),
            (TaskState::Cancelled, "retried"),
        ] {
            let mut t = failed();
            t.state = state;
            let err = retry(&mut t, Phase::Implement, &op())
                .unwrap_err()
                .to_string();
            assert!(err.contains(hint), "{state:?}: {err}");
        }
        let mut merged = failed();
        merged.merge = Some(crate::coordinator::task::MergeRecord {
            sha: HEAD.into(),
            merged_at: "t".into(),
            merged_by: "bot".into(),
            base: "main".into(),
            queue: None,
        });
        let err = retry(&mut merged, Phase::Implement, &op())
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with("no phase is safe (it was merged or never accepted)"),
            "{err}"
        );
    }
}
