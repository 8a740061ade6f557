//! What every phase does to the task it advances: save a transition with its event, send the
//! task back or park it on a question or blocker, save a published effect, and find the
//! exact head the worktree is on.

use super::*;

/// Saves the task with an event saying what changed.
pub(super) fn commit(
    engine: &mut Engine<'_>,
    task: &mut Task,
    kind: &'static str,
    message: String,
    previous: Option<Phase>,
) -> Result<(), Halt> {
    task.updated_at = engine.ledger.now();
    let note = Note {
        kind,
        message: engine.secrets.scrub(&message),
        previous_phase: previous
            .filter(|p| *p != task.phase)
            .map(|p| p.wire_name().to_owned()),
    };
    engine.ledger.save(task, &[], Some(note))?;
    Ok(())
}

/// The exact clean signed head the worktree is on, or `None` after sending the task back
/// to publish what the worktree holds.
pub(super) fn current_head(
    engine: &mut Engine<'_>,
    task: &mut Task,
) -> Result<Option<String>, Halt> {
    let dir = engine.setup.worktree(task);
    let clean = git::is_clean(&dir).map_err(|e| git_halt(engine, task, e))?;
    let head = git::head(&dir).map_err(|e| git_halt(engine, task, e))?;
    if clean && task.head.as_deref() == Some(head.as_str()) {
        return Ok(Some(head));
    }
    let previous = task.phase;
    task.phase = Phase::Publish;
    commit(
        engine,
        task,
        "coordinator.phase",
        "worktree differs from the published head".into(),
        Some(previous),
    )?;
    Ok(None)
}

/// Moves the task to `phase` with a saved reason; `true` to keep going.
pub(super) fn back_to(
    engine: &mut Engine<'_>,
    task: &mut Task,
    phase: Phase,
    why: &str,
) -> Result<bool, Halt> {
    let previous = task.phase;
    task.phase = phase;
    commit(
        engine,
        task,
        "coordinator.phase",
        why.to_owned(),
        Some(previous),
    )?;
    Ok(true)
}

/// Marks the task waiting on `resume` (persisted first, so no model re-runs), then
/// publishes the checkpoint comment.
pub(super) fn park(
    engine: &mut Engine<'_>,
    task: &mut Task,
    resume: Phase,
    kind: &'static str,
    text: String,
) -> Result<(), Halt> {
    task.pending = None;
    task.state = TaskState::Waiting;
    task.resume_phase = Some(resume);
    task.question_activity_id = None;
    task.question_comment_id = None;
    task.blocker = Some(engine.secrets.clean(&text, redact::COMMENT_MAX));
    task.occurrences
        .entry(format!("pending:{kind}"))
        .or_insert(0);
    commit(
        engine,
        task,
        "coordinator.waiting",
        format!("{kind}: {text}"),
        None,
    )?;
    Ok(())
}

/// Saves the task with the completed activity of a GitHub effect and its event.
pub(super) fn save_published(
    engine: &mut Engine<'_>,
    task: &mut Task,
    posted: &super::effects::Posted,
    message: String,
) -> Result<(), Halt> {
    task.updated_at = engine.ledger.now();
    engine.ledger.save(
        task,
        &[&posted.activity],
        Some(Note {
            kind: "coordinator.published",
            message,
            previous_phase: None,
        }),
    )?;
    Ok(())
}

pub(super) fn auth(engine: &Engine<'_>) -> git::GitAuth {
    git::GitAuth {
        token: Some(engine.token.expose().to_owned()),
    }
}

pub(super) fn git_halt(engine: &Engine<'_>, task: &Task, e: git::GitError) -> Halt {
    Halt::Retry {
        task: task.task_id.clone(),
        message: engine.secrets.scrub(&e.to_string()),
    }
}

/// The exact clean signed head whose checks passed, or `None` after sending the task back
/// (to publish what the worktree holds, or to run the checks on this head).
pub(super) fn checked_head(
    engine: &mut Engine<'_>,
    task: &mut Task,
) -> Result<Option<String>, Halt> {
    let Some(head) = current_head(engine, task)? else {
        return Ok(None);
    };
    if task.evidence.checks_passed.as_deref() != Some(head.as_str()) {
        back_to(
            engine,
            task,
            Phase::Checks,
            "no passing checks on this head",
        )?;
        return Ok(None);
    }
    Ok(Some(head))
}

/// Fails the task for good with `reason` and saves it with a `coordinator.failed` event
/// saying `message`; `true` to keep going (a failed task publishes its final comment).
pub(super) fn fail(
    engine: &mut Engine<'_>,
    task: &mut Task,
    reason: &str,
    message: String,
    from: Phase,
) -> Result<bool, Halt> {
    task.fail(reason);
    commit(engine, task, "coordinator.failed", message, Some(from))?;
    Ok(true)
}
