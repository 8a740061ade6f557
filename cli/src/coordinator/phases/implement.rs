//! The model phases before publication: the implementer (`implement`) and the inner review
//! of its patch (`inner_review`), with their follow-up rounds.

use super::*;

fn has_patch(engine: &Engine<'_>, task: &Task) -> Result<bool, Halt> {
    if task.pr.is_some() {
        return Ok(true);
    }
    let dir = engine.setup.worktree(task);
    let clean = git::is_clean(&dir).map_err(|e| checkpoint::git_halt(engine, task, e))?;
    let head = git::head(&dir).map_err(|e| checkpoint::git_halt(engine, task, e))?;
    Ok(!clean || task.base_sha.as_deref() != Some(head.as_str()))
}

pub(super) fn implement(engine: &mut Engine<'_>, task: &mut Task) -> Result<bool, Halt> {
    if lanes::refuse_uncertain(engine, task)? {
        return Ok(true);
    }
    // A started implementer is collected in the round it started in; a held one is no
    // round: check before counting it.
    if task.pending.is_none() {
        if let Some(held) = lanes::may_start(engine, task, &[LaneSlot::GrokImplementer])? {
            return Ok(held.go_on());
        }
        task.rounds += 1;
    }
    let prompt = protocol::implement_prompt(&ImplementPrompt {
        repo: &task.repo,
        issue: task.issue,
        title: &task.title,
        body: &task.body,
        branch: &task.branch,
        findings: match (&task.carry.findings, &task.carry.check_output) {
            (Some(f), _) => Some(Findings::Review(f)),
            (None, Some(c)) => Some(Findings::Checks(c)),
            (None, None) => None,
        },
        reply: match (&task.carry.reply, &task.carry.reply_login) {
            (Some(body), Some(login)) => Some(HumanReply { login, body }),
            _ => None,
        },
        round: task.rounds,
    });
    let ran = lanes::run_lane(
        engine,
        task,
        LaneSlot::GrokImplementer,
        lanes::Answers::Implementer,
        &prompt,
    )?;
    let (end, stdout) = match ran {
        Ok(ran) => ran,
        Err(held) => return Ok(held.go_on()),
    };
    let outcome = protocol::implementer(end, &engine.secrets.scrub(&stdout));
    let has_patch = has_patch(engine, task)?;
    let next = task.apply_implementer(&outcome, has_patch);
    lanes::follow(engine, task, next, Phase::Implement, "implementer")
}

/// Where the inner reviewer of this round reads the patch.
fn diff_path(engine: &Engine<'_>, task: &Task) -> PathBuf {
    engine
        .setup
        .task_control(task)
        .join(format!("review-{}.diff", task.rounds))
}

/// Stages the worktree and writes the base→worktree diff outside it.
fn diff_artifact(engine: &Engine<'_>, task: &Task) -> Result<PathBuf, Halt> {
    let dir = engine.setup.worktree(task);
    let base = task.base_sha.clone().unwrap_or_default();
    let diff = git::staged_diff(&dir, &base).map_err(|e| checkpoint::git_halt(engine, task, e))?;
    let _ = std::fs::create_dir_all(engine.setup.task_control(task));
    let path = diff_path(engine, task);
    std::fs::write(&path, diff).map_err(|e| Halt::Retry {
        task: task.task_id.clone(),
        message: format!("cannot write the diff artifact: {e}"),
    })?;
    Ok(path)
}

pub(super) fn inner_review(engine: &mut Engine<'_>, task: &mut Task) -> Result<bool, Halt> {
    if lanes::refuse_uncertain(engine, task)? {
        return Ok(true);
    }
    // The reviewer already started reads the diff written for it: never rewrite it under it.
    let diff = match task.pending {
        Some(_) => diff_path(engine, task),
        None => diff_artifact(engine, task)?,
    };
    let diff_path = diff.to_string_lossy().into_owned();
    let prompt = lanes::review_prompt(task, &diff_path, ReviewFocus::Inner);
    let ran = lanes::run_lane(
        engine,
        task,
        LaneSlot::GrokReviewer,
        lanes::Answers::Reviewer,
        &prompt,
    )?;
    let (end, stdout) = match ran {
        Ok(ran) => ran,
        Err(held) => return Ok(held.go_on()),
    };
    let outcome = protocol::reviewer(end, &engine.secrets.scrub(&stdout));
    let next = task.apply_reviewer(&outcome);
    lanes::follow(engine, task, next, Phase::InnerReview, "inner reviewer")
}
