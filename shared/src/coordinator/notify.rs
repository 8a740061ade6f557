//! Notifications (`notify_argv`): which checkpoint of a task deserves one — it needs a human
//! (a question, a blocker, a budget question, an uncertain lane), its pull request became
//! Ready, it is done, it failed, it was cancelled — the document the command gets on stdin,
//! and what a delivery's outcome does to the task's log.
//!
//! Each checkpoint has a key; a key is delivered once (kept in the task's [`NoticeLog`]).
//! A failed command is tried again on later ticks, up to [`MAX_ATTEMPTS`] runs, then given
//! up (and logged). A crash after the command ran but before its outcome was saved runs it
//! again with the same `notification_id`, so a receiver that must not repeat itself can
//! tell.

use serde::Serialize;

use super::task::FailingNotice;
use super::task::NoticeLog;
use super::task::OperatorAction;
use super::task::Phase;
use super::task::Task;
use super::task::TaskState;

/// How many times a failing notification runs before it is given up.
pub const MAX_ATTEMPTS: u32 = 5;
/// How many delivered keys a task keeps.
pub const SENT_KEPT: usize = 32;
/// How many characters of a failure the log keeps.
const ERROR_MAX: usize = 500;

/// What happened to the task, as the notification names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeEvent {
    /// A human must act: see `reason`.
    NeedsHuman,
    /// The pull request left draft and waits for a human merge.
    Ready,
    /// A human merged it; the task is done.
    Done,
    /// It failed for good.
    Failed,
    /// An operator cancelled it.
    Cancelled,
}

/// One checkpoint worth a notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    /// The checkpoint's key (delivered once).
    pub key: String,
    /// What happened.
    pub event: NoticeEvent,
    /// Why a human is needed (`question`, `blocker`, `budget`, `uncertain`).
    pub reason: Option<&'static str>,
}

/// The checkpoint `task` is at, when it deserves a notification.
pub fn current(task: &Task) -> Option<Notice> {
    let retries = task
        .interventions
        .iter()
        .filter(|i| i.action == OperatorAction::Retry)
        .count();
    let notice = |key: String, event, reason| Notice { key, event, reason };
    match task.state {
        TaskState::Waiting => {
            // Only once the checkpoint is published, so the notification links to it.
            let id = task.question_activity_id.as_deref()?;
            let reason = if task.occurrences.contains_key("pending:budget") {
                "budget"
            } else if id.contains(".question.") {
                "question"
            } else {
                "blocker"
            };
            Some(notice(
                format!("waiting:{id}"),
                NoticeEvent::NeedsHuman,
                Some(reason),
            ))
        }
        TaskState::Uncertain => Some(notice(
            format!("uncertain:{retries}"),
            NoticeEvent::NeedsHuman,
            Some("uncertain"),
        )),
        TaskState::Active => {
            let head = task.head.as_deref()?;
            (task.phase == Phase::AwaitMerge && task.evidence.left_draft.as_deref() == Some(head))
                .then(|| notice(format!("ready:{head}"), NoticeEvent::Ready, None))
        }
        TaskState::Done => Some(notice("done".into(), NoticeEvent::Done, None)),
        TaskState::Failed => Some(notice(
            format!("failed:{retries}"),
            NoticeEvent::Failed,
            None,
        )),
        TaskState::Cancelled => Some(notice("cancelled".into(), NoticeEvent::Cancelled, None)),
    }
}

/// The notification `task` owes now: its checkpoint's, unless delivered or given up.
pub fn due(task: &Task) -> Option<Notice> {
    current(task).filter(|n| !task.notices.sent.contains(&n.key))
}

/// What a delivery's outcome did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Delivery {
    /// Delivered: never sent again.
    Sent,
    /// Failed; tried again on a later tick (the attempts so far).
    WillRetry(u32),
    /// Failed [`MAX_ATTEMPTS`] times: given up, never sent again.
    GaveUp,
}

/// Records the outcome of delivering `key` in `log`.
pub fn record(log: &mut NoticeLog, key: &str, outcome: Result<(), String>) -> Delivery {
    let attempts = match &log.failing {
        Some(f) if f.key == key => f.attempts,
        _ => 0,
    };
    let sent = |log: &mut NoticeLog| {
        log.failing = None;
        log.sent.push(key.to_owned());
        let extra = log.sent.len().saturating_sub(SENT_KEPT);
        log.sent.drain(..extra);
    };
    match outcome {
        Ok(()) => {
            sent(log);
            Delivery::Sent
        }
        Err(_) if attempts + 1 >= MAX_ATTEMPTS => {
            sent(log);
            Delivery::GaveUp
        }
        Err(e) => {
            log.failing = Some(FailingNotice {
                key: key.to_owned(),
                attempts: attempts + 1,
                error: e.chars().take(ERROR_MAX).collect(),
            });
            Delivery::WillRetry(attempts + 1)
        }
    }
}

/// The JSON document a notification command reads on stdin (field order is key order).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NoticeDocument {
    /// Always 1 for now.
    pub schema_version: u32,
    /// `<task id>:<key>`: the same for every delivery of one checkpoint.
    pub notification_id: String,
    /// What happened.
    pub event: NoticeEvent,
    /// Why a human is needed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<&'static str>,
    /// The task id.
    pub task_id: String,
    /// The worker.
    pub worker: String,
    /// The machine that runs the task.
    pub machine: Option<String>,
    /// `owner/repo`.
    pub repo: String,
    /// The issue number.
    pub issue: u64,
    /// The issue title.
    pub title: String,
    /// The task's state.
    pub state: TaskState,
    /// The task's phase.
    pub phase: Phase,
    /// The question, blocker or reason, when there is one.
    pub text: Option<String>,
    /// Where to act: the checkpoint comment to answer, else the pull request.
    pub link: Option<String>,
    /// The pull request.
    pub pr_url: Option<String>,
    /// When the notification was made (RFC 3339).
    pub at: String,
}

/// The document of `notice` for `task` at `at`.
pub fn document(task: &Task, notice: &Notice, at: &str) -> NoticeDocument {
    let link = match notice.event {
        NoticeEvent::NeedsHuman => task.question_url.clone().or_else(|| task.pr_url.clone()),
        _ => task.pr_url.clone(),
    };
    NoticeDocument {
        schema_version: 1,
        notification_id: format!("{}:{}", task.task_id, notice.key),
        event: notice.event,
        reason: notice.reason,
        task_id: task.task_id.clone(),
        worker: task.worker.clone(),
        machine: task.machine.clone(),
        repo: task.repo.clone(),
        issue: task.issue,
        title: task.title.clone(),
        state: task.state,
        phase: task.phase,
        text: task.blocker.clone(),
        link,
        pr_url: task.pr_url.clone(),
        at: at.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::operator;
    use crate::coordinator::task::tests::task as sample;

    const HEAD: &str = "1111111111111111111111111111111111111111";

    fn keyed(t: &Task) -> Option<(String, NoticeEvent, Option<&'static str>)> {
        current(t).map(|n| (n.key, n.event, n.reason))
    }

    #[test]
    fn each_checkpoint_that_needs_a_person_or_ends_has_its_key() {
        let mut t = sample();
        assert_eq!(keyed(&t), None, "an active task in progress");
        t.wait_for_reply(
            Phase::Implement,
            "which API?",
            "acme.widget.7.question.1",
            11,
        );
        assert_eq!(
            keyed(&t),
            Some((
                "waiting:acme.widget.7.question.1".into(),
                NoticeEvent::NeedsHuman,
                Some("question")
            ))
        );
        t.wait_for_reply(
            Phase::Ci,
            "CI needs approval",
            "acme.widget.7.blocker.2",
            12,
        );
        assert_eq!(keyed(&t).map(|k| k.2), Some(Some("blocker")));
        t.occurrences.insert("pending:budget".into(), 1);
        assert_eq!(keyed(&t).map(|k| k.2), Some(Some("budget")));
        t.question_activity_id = None;
        assert_eq!(keyed(&t), None, "not published yet");

        let mut r = sample();
        r.head = Some(HEAD.into());
        r.phase = Phase::AwaitMerge;
        assert_eq!(
            keyed(&r),
            None,
            "in await_merge but never left draft on this head"
        );
        r.evidence.left_draft = Some(HEAD.into());
        assert_eq!(
            keyed(&r),
            Some((format!("ready:{HEAD}"), NoticeEvent::Ready, None))
        );

        let mut d = sample();
        d.state = TaskState::Done;
        assert_eq!(keyed(&d).map(|k| k.0), Some("done".into()));
        let mut c = sample();
        c.state = TaskState::Cancelled;
        assert_eq!(keyed(&c).map(|k| k.1), Some(NoticeEvent::Cancelled));
    }

    #[test]
    fn a_retried_task_that_fails_again_is_a_new_notification() {
        let mut t = sample();
        t.occurrences.insert("accept".into(), 1);
        t.base_sha = Some("b".repeat(40));
        t.fail("blocked");
        let first = due(&t).expect("due");
        assert_eq!(first.key, "failed:0");
        record(&mut t.notices, &first.key, Ok(()));
        assert_eq!(due(&t), None, "never twice");
        let op = operator::Operator {
            by: "alice",
            at: "t",
            reason: None,
        };
        operator::retry(&mut t, Phase::Implement, &op).expect("retry");
        t.fail("blocked again");
        assert_eq!(due(&t).map(|n| n.key), Some("failed:1".into()));
    }

    #[test]
    fn a_failing_command_is_retried_a_bounded_number_of_times() {
        let mut log = NoticeLog::default();
        for n in 1..MAX_ATTEMPTS {
            assert_eq!(
                record(&mut log, "done", Err(format!("exit {n}"))),
                Delivery::WillRetry(n)
            );
        }
        assert_eq!(
            log.failing.as_ref().map(|f| f.error.as_str()),
            Some("exit 4")
        );
        assert_eq!(
            record(&mut log, "done", Err("exit 5".into())),
            Delivery::GaveUp
        );
        assert!(log.failing.is_none() && log.sent == ["done"]);
        // Another key starts its own count.
        assert_eq!(
            record(&mut log, "cancelled", Err("x".into())),
            Delivery::WillRetry(1)
        );
        assert_eq!(record(&mut log, "cancelled", Ok(())), Delivery::Sent);
        for i in 0..(SENT_KEPT + 5) {
            record(&mut log, &format!("k{i}"), Ok(()));
        }
        assert_eq!(log.sent.len(), SENT_KEPT);
        assert_eq!(log.sent.last().map(String::as_str), Some("k36"));
    }

    #[test]
    fn the_document_links_where_to_act() {
        let mut t = sample();
        t.pr_url = Some("https://github.com/acme/widget/pull/9".into());
        t.wait_for_reply(
            Phase::Implement,
            "which API?",
            "acme.widget.7.question.1",
            11,
        );
        t.question_url = Some("https://github.com/acme/widget/issues/7#issuecomment-11".into());
        let n = due(&t).expect("due");
        let doc = document(&t, &n, "2026-12-07T12:00:00Z");
        assert_eq!(
            doc.notification_id,
            format!("{}:waiting:acme.widget.7.question.1", t.task_id)
        );
        assert_eq!(doc.link.as_deref(), t.question_url.as_deref());
        assert_eq!(doc.text.as_deref(), Some("which API?"));
        let json = serde_json::to_value(&doc).expect("json");
        assert_eq!(json["event"], "needs_human");
        assert_eq!(json["reason"], "question");
        assert_eq!(json["state"], "waiting");
    }
}
