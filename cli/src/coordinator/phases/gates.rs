//! Step 7, the PR gates: Grok quality and logic as fresh, independent lanes in parallel,
//! then Codex quality and logic the same way once both Grok gates approved that head. A
//! rejection is published as a COMMENT review and its findings go to a fresh implementer;
//! incomplete output is a blocker that resumes the same stage.

use agent_coord_shared::coordinator::task::Rejection;
use agent_coord_shared::serde_name::WireName;

use super::*;
use crate::github::ReviewEvent;

pub(super) fn pr_gates(
    engine: &mut Engine<'_>,
    task: &mut Task,
    stage: Phase,
) -> Result<bool, Halt> {
    if lanes::refuse_uncertain(engine, task)? {
        return Ok(true);
    }
    if let Some(rejection) = task.carry.rejection.clone() {
        return post_rejection(engine, task, rejection);
    }
    // Gates already started review the head they were started on (checked then); the
    // worktree is looked at again once they are collected.
    let started_on = task.pending.as_ref().and(task.head.clone());
    let head = match started_on {
        Some(head) => head,
        None => match checkpoint::checked_head(engine, task)? {
            Some(head) => head,
            None => return Ok(true),
        },
    };
    if stage == Phase::PrGatesCodex && !task.codex_allowed() {
        return checkpoint::back_to(
            engine,
            task,
            Phase::PrGatesGrok,
            "the Codex gates wait for both Grok approvals of this head",
        );
    }
    let gates = task.gates_to_run(stage);
    let results = if gates.is_empty() {
        Vec::new()
    } else {
        // Gates already started read the diff written for them: never rewrite it under them.
        let diff = match task.pending {
            Some(_) => head_diff_path(engine, task, &head),
            None => head_diff(engine, task, &head)?,
        };
        let diff_path = diff.to_string_lossy().into_owned();
        let lanes: Vec<(LaneSlot, String)> = gates
            .iter()
            .map(|g| (g.slot(), lanes::review_prompt(task, &diff_path, g.focus())))
            .collect();
        let ends = match lanes::run_lanes(engine, task, lanes::Answers::Reviewer, lanes)? {
            Ok(ends) => ends,
            Err(held) => return Ok(held.go_on()),
        };
        gates
            .iter()
            .zip(ends)
            .map(|(g, (end, stdout))| (*g, protocol::reviewer(end, &engine.secrets.scrub(&stdout))))
            .collect()
    };
    let next = task.apply_gates(stage, &head, &results);
    if let Some(rejection) = task.carry.rejection.clone() {
        checkpoint::commit(
            engine,
            task,
            "coordinator.phase",
            format!("PR gates rejected {head}: {}", rejection.gates.join(", ")),
            None,
        )?;
        engine.observe(
            Some(&task.task_id),
            format!(
                "{} rejected by {}",
                short(&head),
                rejection.gates.join(", ")
            ),
        );
        return post_rejection(engine, task, rejection);
    }
    lanes::follow(engine, task, next, stage, "PR gates")
}

/// Publishes a recorded rejection as a COMMENT review by the worker (never a request for
/// changes), then hands the findings to a fresh implementer.
fn post_rejection(
    engine: &mut Engine<'_>,
    task: &mut Task,
    rejection: Rejection,
) -> Result<bool, Halt> {
    let (activity, review) = effects::review(
        engine,
        task,
        "gate_review",
        &rejection.head,
        ReviewEvent::Comment,
        |id| naming::gate_review_body(&rejection.gates, &rejection.findings, &rejection.head, id),
    )?;
    let posted = effects::review_done(engine, activity, &review);
    let previous = task.phase;
    task.rejection_posted();
    task.updated_at = engine.ledger.now();
    engine.ledger.save(
        task,
        &[&posted.activity],
        Some(super::super::ledger::Note {
            kind: "coordinator.phase",
            message: format!("rejection review posted: {}", posted.url),
            previous_phase: Some(previous.wire_name().to_owned()),
        }),
    )?;
    Ok(true)
}

/// Where the PR reviewers of `head` read its diff.
fn head_diff_path(engine: &Engine<'_>, task: &Task, head: &str) -> PathBuf {
    engine
        .setup
        .task_control(task)
        .join(format!("gates-{}.diff", short(head)))
}

/// Writes the script-made base→head diff outside the worktree for the PR reviewers.
fn head_diff(engine: &Engine<'_>, task: &Task, head: &str) -> Result<PathBuf, Halt> {
    let dir = engine.setup.worktree(task);
    let base = task.base_sha.clone().unwrap_or_default();
    let diff = git::staged_diff(&dir, &base).map_err(|e| checkpoint::git_halt(engine, task, e))?;
    let _ = std::fs::create_dir_all(engine.setup.task_control(task));
    let path = head_diff_path(engine, task, head);
    std::fs::write(&path, diff).map_err(|e| Halt::Retry {
        task: task.task_id.clone(),
        message: format!("cannot write the diff artifact: {e}"),
    })?;
    Ok(path)
}
