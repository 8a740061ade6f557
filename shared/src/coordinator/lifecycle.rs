//! When an ended task's files leave the disk: its worktree and control folder after the
//! worker's `worktree_ttl`, its lane transcripts after `transcript_ttl` (never before the
//! rest). Only a task that has ended for good (done, failed, cancelled) with no lane
//! recorded as running counts: a waiting or uncertain task may still need its worktree and
//! its transcripts for the human who decides on it. A failed task an operator retries later
//! gets its worktree rebuilt (the takeover's adoption: the pinned base and the pushed head).

use super::task::Task;
use crate::time;

/// What may be removed of one task's files now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Expiry {
    /// The worktree, and the control folder except its transcripts.
    pub worktree: bool,
    /// The transcripts too (the whole control folder).
    pub transcripts: bool,
}

/// What of `task`'s files may go at `now` (its end is its checkpoint's last change).
pub fn expiry(task: &Task, now: time::Instant, worktree_ttl: u64, transcript_ttl: u64) -> Expiry {
    if !task.state.terminal() || task.pending.is_some() {
        return Expiry::default();
    }
    let Some(ended) = time::parse(&task.updated_at) else {
        return Expiry::default();
    };
    let age = (now - ended).num_seconds();
    let past = |ttl: u64| age >= i64::try_from(ttl).unwrap_or(i64::MAX);
    let worktree = past(worktree_ttl);
    Expiry {
        worktree,
        transcripts: worktree && past(transcript_ttl),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::task::tests::task as sample;
    use crate::coordinator::task::PendingLane;
    use crate::coordinator::task::Phase;
    use crate::coordinator::task::TaskState;

    const DAY: u64 = 86_400;

    fn at(text: &str) -> time::Instant {
        time::parse(text).expect("time")
    }

    #[test]
    fn an_ended_task_loses_its_worktree_then_its_transcripts() {
        let mut t = sample();
        t.updated_at = "2026-12-01T00:00:00Z".into();
        for state in [TaskState::Done, TaskState::Failed, TaskState::Cancelled] {
            t.state = state;
            assert_eq!(
                expiry(&t, at("2026-12-07T23:59:59Z"), 7 * DAY, 30 * DAY),
                Expiry::default(),
                "{state:?}"
            );
            assert_eq!(
                expiry(&t, at("2026-12-08T00:00:00Z"), 7 * DAY, 30 * DAY),
                Expiry {
                    worktree: true,
                    transcripts: false
                },
                "{state:?}"
            );
            assert_eq!(
                expiry(&t, at("2026-12-31T00:00:00Z"), 7 * DAY, 30 * DAY),
                Expiry {
                    worktree: true,
                    transcripts: true
                }
            );
        }
        assert_eq!(
            expiry(&t, at("2026-12-02T00:00:00Z"), 7 * DAY, DAY),
            Expiry::default(),
            "transcripts never go before the worktree"
        );
    }

    #[test]
    fn nothing_goes_while_a_lane_or_a_human_may_need_it() {
        let now = at("2027-06-01T00:00:00Z");
        let mut t = sample();
        t.updated_at = "2026-12-01T00:00:00Z".into();
        for state in [TaskState::Active, TaskState::Waiting, TaskState::Uncertain] {
            t.state = state;
            assert_eq!(expiry(&t, now, DAY, DAY), Expiry::default(), "{state:?}");
        }
        t.state = TaskState::Cancelled;
        t.pending = Some(PendingLane {
            slot: "grok:implementer".into(),
            phase: Phase::Implement,
            started_at: "t".into(),
            launch: None,
        });
        assert_eq!(
            expiry(&t, now, DAY, DAY),
            Expiry::default(),
            "its lanes are not stopped yet"
        );
        t.pending = None;
        t.updated_at = "garbage".into();
        assert_eq!(
            expiry(&t, now, DAY, DAY),
            Expiry::default(),
            "an unknown end keeps everything"
        );
    }
}
