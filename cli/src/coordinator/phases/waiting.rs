//! A task that waits on a human: its question or blocker published once, the first
//! authorized reply after it found and resumed on, and the final comment of a failed or
//! uncertain task.

use super::*;

/// A waiting task: publish its checkpoint if not yet published, else look for an
/// authorized reply after it. `true` when it resumed.
pub(super) fn waiting(engine: &mut Engine<'_>, task: &mut Task) -> Result<bool, Halt> {
    if task.question_comment_id.is_none() {
        publish_checkpoint(engine, task)?;
        return Ok(false);
    }
    if !task.reply_eligible() {
        return Ok(false);
    }
    match authorized_reply(engine, task)? {
        Some(reply) => resume_on(engine, task, &reply),
        None => {
            engine.observe(
                Some(&task.task_id),
                format!(
                    "waiting for an authorized reply to resume {}",
                    task.resume_phase
                        .as_ref()
                        .map(Phase::wire_name)
                        .unwrap_or("?")
                ),
            );
            Ok(false)
        }
    }
}

/// Posts the waiting task's question or blocker comment and saves the task as waiting
/// for a reply to it.
fn publish_checkpoint(engine: &mut Engine<'_>, task: &mut Task) -> Result<(), Halt> {
    let kind = if task.occurrences.contains_key("pending:question") {
        QUESTION
    } else {
        BLOCKER
    };
    let text = task.blocker.clone().unwrap_or_default();
    let logins = engine.setup.worker.reply_logins.clone();
    let resume = task.resume_phase.as_ref().map(Phase::wire_name);
    let posted = effects::comment(engine, task, kind, |id| match kind {
        QUESTION => naming::question_comment(&text, &logins, id),
        _ => naming::blocker_comment(&text, resume, &logins, id),
    })?;
    task.occurrences.remove("pending:question");
    task.occurrences.remove("pending:blocker");
    let resume = task.resume_phase.unwrap_or(Phase::Implement);
    task.wait_for_reply(resume, &text, &posted.activity.activity_id, posted.id);
    task.question_url = Some(posted.url.clone());
    checkpoint::save_published(
        engine,
        task,
        &posted,
        format!("{kind} published: {}", posted.url),
    )?;
    engine.observe(
        Some(&task.task_id),
        format!(
            "waiting for an authorized reply to resume {}: {text}",
            resume
        ),
    );
    Ok(())
}

/// Returns the first authorized reply after the task's checkpoint, saying why each
/// other comment after it does not count.
fn authorized_reply(
    engine: &mut Engine<'_>,
    task: &Task,
) -> Result<Option<reply::IssueComment>, Halt> {
    let comments = engine
        .gh
        .issue_comments(&task.repo, task.issue)
        .map_err(|e| effects::github_halt(engine, task, "list comments", e))?;
    let after = task.question_comment_id.unwrap_or(u64::MAX);
    let scan = reply::scan_replies(&comments, &engine.setup.worker.reply_logins, after);
    for ignored in &scan.ignored {
        engine.observe(
            Some(&task.task_id),
            format!(
                "ignored comment {} by {}: {}",
                ignored.id, ignored.author, ignored.why
            ),
        );
    }
    Ok(scan.reply)
}

/// Resumes the task on an authorized reply (rebinding its pinned identity only when the
/// reply answers the identity-change blocker). `true` when it resumed.
fn resume_on(
    engine: &mut Engine<'_>,
    task: &mut Task,
    reply: &reply::IssueComment,
) -> Result<bool, Halt> {
    let text = engine.secrets.clean(&reply.body, redact::COMMENT_MAX);
    let author = reply.author.clone();
    let resumed = task.resume_phase;
    if !task.resume(&author, &text) {
        return Ok(false);
    }
    if task.occurrences.remove(BUDGET).is_some() {
        task.continue_budget();
    }
    // Only a reply to the identity-change blocker rebinds the task, never any other.
    if task.occurrences.remove(REPIN).is_some() && engine.setup.pin_changes(task).is_some() {
        if let Some(current) = engine.setup.pin_of(&task.repo) {
            task.pinned = serde_json::to_value(current).unwrap_or_default();
        }
    }
    checkpoint::commit(
        engine,
        task,
        "coordinator.resumed",
        format!(
            "reply by {author} resumes {}",
            resumed.as_ref().map(Phase::wire_name).unwrap_or("?")
        ),
        None,
    )?;
    engine.observe(
        Some(&task.task_id),
        format!("authorized reply by {author}: resuming {}", task.phase),
    );
    Ok(true)
}

pub(super) fn publish_failure(engine: &mut Engine<'_>, task: &mut Task) -> Result<(), Halt> {
    if publish_final(engine, task, FAILED)? {
        let reason = task.blocker.clone().unwrap_or_default();
        engine.observe(Some(&task.task_id), format!("failed: {reason}"));
    }
    Ok(())
}

pub(super) fn publish_uncertain(engine: &mut Engine<'_>, task: &mut Task) -> Result<(), Halt> {
    publish_final(engine, task, "uncertain").map(|_| ())
}

/// A cancelled task on the machine that runs it: its running lanes stopped (their whole
/// process groups), then the one comment saying so posted (an open intent is resumed).
pub(super) fn finish_cancelled(engine: &mut Engine<'_>, task: &mut Task) -> Result<(), Halt> {
    if let Some(pending) = task.pending.clone() {
        let here = engine.ledger.machine();
        if let Some(launch) = pending.launch.as_ref().filter(|l| l.machine == here) {
            let stopped = crate::lanes::supervisor::stop(&launch.nonce);
            super::super::running::remove(
                &super::super::preflight::control_dir(engine.setup.worker),
                &launch.nonce,
            );
            engine.observe(
                Some(&task.task_id),
                format!(
                    "cancelled: stopped its running lanes {} ({stopped} processes)",
                    pending.slot
                ),
            );
        }
        task.pending = None;
        checkpoint::commit(
            engine,
            task,
            "coordinator.lanes_stopped",
            format!("lanes {} stopped: the task was cancelled", pending.slot),
            None,
        )?;
    }
    if publish_final(engine, task, CANCELLED)? {
        engine.observe(
            Some(&task.task_id),
            format!(
                "{}; the cancellation is posted on the issue",
                task.blocker.clone().unwrap_or_default()
            ),
        );
    }
    Ok(())
}

/// Publishes the final comment of a failed, uncertain or cancelled task once (an open
/// intent is resumed; an ending before an operator's retry does not count); `true` when it
/// was posted now.
fn publish_final(engine: &mut Engine<'_>, task: &mut Task, kind: &str) -> Result<bool, Halt> {
    let current = task.occurrence(kind);
    let mark = task.occurrence(&operator::retried_mark(kind));
    let id = naming::activity_id(&task.task_id, kind, current.max(1));
    let open = current <= mark
        || engine
            .ledger
            .activity(&task.task_id, &id)?
            .is_some_and(|a| {
                a.status == agent_coord_shared::coordinator::task::ActivityStatus::Intent
            });
    if !open {
        return Ok(false);
    }
    let reason = task.blocker.clone().unwrap_or_default();
    let pr = task.pr;
    let posted = effects::comment(engine, task, kind, |id| match kind {
        CANCELLED => naming::cancelled_comment(&reason, pr, id),
        _ => naming::blocker_comment(&reason, None, &[], id),
    })?;
    checkpoint::save_published(
        engine,
        task,
        &posted,
        format!("{kind} published: {}", posted.url),
    )?;
    Ok(true)
}
