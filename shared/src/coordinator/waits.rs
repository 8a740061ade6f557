//! What a task waits for now, in words — one rule for the tick's lines, `coordinate tasks`
//! and the dashboard's Coordinator panel: a human (a reply, an operator, the merge), an
//! operator's pause, a vendor's usage limit, its running lanes, a lane slot, or CI.

use super::controls::Controls;
use super::slots;
use super::task::Phase;
use super::task::Task;
use super::task::TaskState;

/// What `task` waits for now, given the operator's holds in force (`None`: none known);
/// `None` while it just goes on, or once it is over.
pub fn waits_for(task: &Task, controls: Option<&Controls>) -> Option<String> {
    match task.state {
        TaskState::Done | TaskState::Failed | TaskState::Cancelled => return None,
        TaskState::Waiting => return Some("a reply from an authorized human on the issue".into()),
        TaskState::Uncertain => {
            return Some("an operator: a lane's outcome is unknown, so no model starts".into())
        }
        TaskState::Active => {}
    }
    if let Some(pause) = &task.paused {
        return Some(format!(
            "the {} usage limit to reset ({})",
            pause.vendor, pause.until
        ));
    }
    if let Some(pending) = &task.pending {
        let on = pending
            .launch
            .as_ref()
            .map(|l| format!(" on {}", l.machine))
            .unwrap_or_default();
        return Some(format!(
            "its running lanes {}{on}, started {}",
            pending.slot, pending.started_at
        ));
    }
    let hold = controls.and_then(|c| c.lanes_held(&task.worker, &task.repo));
    if let (Some(hold), true) = (hold, slots::starts_lanes_next(task)) {
        return Some(format!("an operator to resume: {hold}"));
    }
    if slots::starts_lanes_next(task) {
        return Some("a lane slot to start its next lanes".into());
    }
    match task.phase {
        Phase::Ci => Some("CI on the exact head".into()),
        Phase::AwaitMerge => Some("a human to merge the pull request".into()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::controls::Hold;
    use crate::coordinator::controls::HoldKind;
    use crate::coordinator::task::tests::task;

    #[test]
    fn a_pause_on_the_task_is_what_a_task_about_to_start_lanes_waits_for() {
        let mut t = task();
        t.state = TaskState::Active;
        t.phase = Phase::Implement;
        let mut controls = Controls::default();
        controls.set(Hold {
            kind: HoldKind::Pause,
            scope: format!("repo:{}", t.repo).parse().expect("scope"),
            by: "alice".into(),
            at: "2026-12-07T10:00:00Z".into(),
            reason: Some("upgrade".into()),
        });
        assert_eq!(
            waits_for(&t, Some(&controls)).as_deref(),
            Some(format!("an operator to resume: paused (repo:{}) by alice since 2026-12-07T10:00:00Z: upgrade", t.repo).as_str())
        );
        assert_eq!(
            waits_for(&t, None).as_deref(),
            Some("a lane slot to start its next lanes")
        );
        t.phase = Phase::Ci;
        assert_eq!(
            waits_for(&t, Some(&controls)).as_deref(),
            Some("CI on the exact head"),
            "script-owned steps go on under a pause"
        );
        t.state = TaskState::Cancelled;
        assert_eq!(waits_for(&t, Some(&controls)), None);
    }
}
