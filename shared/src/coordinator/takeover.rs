//! Taking a task over from a machine that died (several machines may run one worker).
//!
//! A task is another machine's to keep while that machine beats: only once the worker's
//! heartbeat on the machine that runs the task (what that machine last wrote on its own
//! heartbeat ref, whatever other machines of the worker beat) is dead may a machine of the
//! same worker take it, and only a task that still has work to do.
//! The new machine continues from the last durable checkpoint: everything that lives on the
//! pushed branch (the PR head) goes on from the recorded phase; what lived only in the dead
//! machine's worktree (an implementer's uncommitted change awaiting the inner review or the
//! signed commit) is gone, so those tasks go back to `implement`. A lane that was running on
//! the dead machine is never restarted here: its task's pending start names the other
//! machine, so collecting it finds its outcome unknown and the task becomes `uncertain`.

use crate::rules::claim::HolderBeat;
use crate::rules::liveness::Liveness;

use super::task::Phase;
use super::task::Task;

/// Whether `task` (of this worker) may be taken over by machine `here`, given the worker's
/// heartbeat `beat` on the machine that runs it.
pub fn may_take_over(task: &Task, here: &str, beat: &HolderBeat) -> bool {
    let elsewhere = task.machine.as_deref().is_some_and(|m| m != here);
    let open = !task.state.terminal();
    elsewhere && open && matches!(beat, HolderBeat::Seen(Liveness::Dead))
}

/// The phase a taken-over task goes on from: its own, unless the phase's input was an
/// uncommitted change in the dead machine's worktree (then `implement` runs a new round).
/// A task with a pending start keeps its phase, so the lost lane is judged as such.
pub fn resume_phase(task: &Task) -> Phase {
    match task.phase {
        Phase::InnerReview | Phase::Publish if task.pending.is_none() => Phase::Implement,
        phase => phase,
    }
}

/// Whether the new machine needs the task's worktree before it goes on (from the pinned
/// base, at the pushed head when there is one): every phase after the checkout.
pub fn needs_worktree(phase: Phase) -> bool {
    !matches!(phase, Phase::Accept | Phase::Checkout | Phase::Finished)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::task::tests::task as sample_task;
    use crate::coordinator::task::TaskState;

    fn on(machine: &str, phase: Phase, state: TaskState) -> Task {
        let mut task = sample_task();
        task.machine = Some(machine.to_owned());
        task.phase = phase;
        task.state = state;
        task
    }

    #[test]
    fn only_a_dead_heartbeat_of_another_machines_open_task_allows_a_takeover() {
        let dead = HolderBeat::Seen(Liveness::Dead);
        let task = on("box-0", Phase::Ci, TaskState::Active);
        assert!(may_take_over(&task, "box-1", &dead));
        assert!(!may_take_over(&task, "box-0", &dead), "its own task");
        for beat in [
            HolderBeat::Seen(Liveness::Live),
            HolderBeat::Seen(Liveness::Stale),
            HolderBeat::Missing,
            HolderBeat::Invalid,
        ] {
            assert!(!may_take_over(&task, "box-1", &beat), "{beat:?}");
        }
        for state in [TaskState::Done, TaskState::Failed, TaskState::Cancelled] {
            assert!(!may_take_over(
                &on("box-0", Phase::Ci, state),
                "box-1",
                &dead
            ));
        }
        // Waiting for a human and uncertain tasks move too: their machine is gone.
        for state in [TaskState::Waiting, TaskState::Uncertain] {
            assert!(may_take_over(
                &on("box-0", Phase::Ci, state),
                "box-1",
                &dead
            ));
        }
        let mut legacy = task.clone();
        legacy.machine = None;
        assert!(
            !may_take_over(&legacy, "box-1", &dead),
            "no machine recorded"
        );
    }

    #[test]
    fn what_lived_only_in_the_dead_worktree_goes_back_to_implement() {
        let mut task = on("box-0", Phase::InnerReview, TaskState::Active);
        assert_eq!(resume_phase(&task), Phase::Implement);
        task.phase = Phase::Publish;
        assert_eq!(resume_phase(&task), Phase::Implement);
        for phase in [
            Phase::Implement,
            Phase::Checks,
            Phase::PrGatesGrok,
            Phase::Ci,
            Phase::AwaitMerge,
        ] {
            task.phase = phase;
            assert_eq!(resume_phase(&task), phase);
        }
        task.phase = Phase::InnerReview;
        task.pending = Some(crate::coordinator::task::PendingLane {
            slot: "grok:reviewer".into(),
            phase: Phase::InnerReview,
            started_at: "2026-01-01T00:00:00Z".into(),
            launch: None,
        });
        assert_eq!(
            resume_phase(&task),
            Phase::InnerReview,
            "its lost lane is judged"
        );
    }

    #[test]
    fn every_phase_after_the_checkout_needs_the_worktree() {
        assert!(!needs_worktree(Phase::Accept));
        assert!(!needs_worktree(Phase::Checkout));
        assert!(!needs_worktree(Phase::Finished));
        assert!(needs_worktree(Phase::Implement));
        assert!(needs_worktree(Phase::Ci));
    }
}
