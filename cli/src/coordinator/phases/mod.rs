//! Advancing one task. `advance` is the one entry the tick calls: a waiting task goes to
//! `waiting` (its checkpoint published once, then an authorized reply resumes it), a failed
//! or uncertain one publishes its final comment once, and an active one takes one phase step
//! after another, each in the module that owns the phase:
//!
//! | phase | module |
//! |---|---|
//! | accept, checkout | `start` |
//! | implement, inner review | `implement` |
//! | publish (signed commit, push, draft pull request), checks | `publish` |
//! | PR gates (Grok, then Codex) | `gates` |
//! | CI | `ci_phase` |
//! | Ready, formal approval, leaving draft | `ready` |
//! | the human merge | `merge` |
//!
//! A phase module exposes only its phases' entry functions; what several phases share has a
//! module of its own: `checkpoint` (saving a transition, parking, the head the worktree is
//! on), `lanes` (running lanes and routing their outcome), `pr_state` (the pull request's
//! head and CI as GitHub reports them). Every transition is saved (one commit, with an event)
//! before the next effect starts, so a crash resumes where it stopped.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

use agent_coord_shared::coordinator::config;
use agent_coord_shared::coordinator::config::LaneSlot;
use agent_coord_shared::coordinator::naming;
use agent_coord_shared::coordinator::operator;
use agent_coord_shared::coordinator::protocol;
use agent_coord_shared::coordinator::protocol::Findings;
use agent_coord_shared::coordinator::protocol::HumanReply;
use agent_coord_shared::coordinator::protocol::ImplementPrompt;
use agent_coord_shared::coordinator::protocol::ProcessEnd;
use agent_coord_shared::coordinator::protocol::ReviewFocus;
use agent_coord_shared::coordinator::protocol::ReviewPrompt;
use agent_coord_shared::coordinator::redact;
use agent_coord_shared::coordinator::reply;
use agent_coord_shared::coordinator::task::Next;
use agent_coord_shared::coordinator::task::PendingLane;
use agent_coord_shared::coordinator::task::Phase;
use agent_coord_shared::coordinator::task::Task;
use agent_coord_shared::coordinator::task::TaskState;
use agent_coord_shared::serde_name::WireName;

use super::accounts;
use super::git;
mod checkpoint;
mod ci_phase;
mod gates;
mod implement;
mod lanes;
mod merge;
mod pr_state;
mod publish;
mod ready;
mod start;
mod waiting;

use super::effects;
use super::engine::Engine;
use super::engine::Halt;
use super::ledger::Note;
use crate::process;

/// Check output captured per stream; its tail (where failures are) is what gets routed.
const CHECK_CAPTURE: usize = 1 << 20;

/// Steps one task may take in one tick (a guard: every phase either moves on or waits).
const MAX_STEPS: usize = 64;

/// The comment kinds of published checkpoints.
const QUESTION: &str = "question";
const BLOCKER: &str = "blocker";
const FAILED: &str = "failed";
const CANCELLED: &str = "cancelled";
/// Set while the task waits on an identity-change blocker: a reply to it rebinds.
const REPIN: &str = "pending:repin";
/// Set while the task waits on a budget question: a reply to it restarts the budget.
const BUDGET: &str = "pending:budget";

/// Advances `task` until it waits, ends, or the tick is interrupted.
/// Rebuilds the worktree of a task this machine took over, before it advances.
pub(super) fn adopt_worktree(engine: &mut Engine<'_>, task: &mut Task) -> Result<(), Halt> {
    start::adopt(engine, task)
}

pub(super) fn advance(
    engine: &mut Engine<'_>,
    mut task: Task,
    assigned: &BTreeSet<(String, u64)>,
) -> Result<(), Halt> {
    if config::upgrade_stored(&mut task.pinned) {
        // A checkpoint from before signing paths were digested: save it without them
        // once, whatever its state (see `config::pin`).
        checkpoint::commit(
            engine,
            &mut task,
            "coordinator.phase",
            "the pinned identity now holds digests, not the signing paths".into(),
            None,
        )?;
    }
    for _ in 0..MAX_STEPS {
        if engine.stop.load(Ordering::SeqCst) {
            return Ok(());
        }
        match task.state {
            TaskState::Done => return Ok(()),
            TaskState::Cancelled => return waiting::finish_cancelled(engine, &mut task),
            TaskState::Failed => return waiting::publish_failure(engine, &mut task),
            TaskState::Uncertain => {
                waiting::publish_uncertain(engine, &mut task)?;
                let why = task.blocker.clone().unwrap_or_default();
                engine.observe(
                    Some(&task.task_id),
                    format!("uncertain, no model starts until an operator decides: {why}"),
                );
                return Ok(());
            }
            TaskState::Waiting => {
                if !waiting::waiting(engine, &mut task)? {
                    return Ok(());
                }
            }
            TaskState::Active => {
                // Lanes already started are collected first: parking now would orphan
                // them, and a reply could then start a second model beside them.
                let changes = match task.pending {
                    Some(_) => None,
                    None => engine.setup.pin_changes(&task),
                };
                if let Some(changes) = changes {
                    let resume = task.phase;
                    task.occurrences.insert(REPIN.to_owned(), 1);
                    checkpoint::park(engine, &mut task, resume, BLOCKER, format!(
                            "the pinned execution identity changed ({}); restore the configuration, or reply to run this task with the new one",
                            changes.join(", ")
                        ))?;
                    continue;
                }
                if needs_rebuild(engine, &task) {
                    // Its worktree was removed after it ended, and an operator retried it.
                    start::adopt(engine, &mut task)?;
                    if task.state != TaskState::Active {
                        continue;
                    }
                }
                if !step(engine, &mut task, assigned)? {
                    return Ok(());
                }
            }
        }
    }
    engine.observe(
        Some(&task.task_id),
        "step limit reached; continuing next tick",
    );
    Ok(())
}

/// Whether an active task's phase needs a worktree this machine no longer has (removed
/// once the task had ended; a takeover rebuilds its own before the task advances).
fn needs_rebuild(engine: &Engine<'_>, task: &Task) -> bool {
    task.pending.is_none()
        && agent_coord_shared::coordinator::takeover::needs_worktree(task.phase)
        && !engine.setup.worktree(task).exists()
}

/// One phase step; `true` to keep going in this tick.
fn step(
    engine: &mut Engine<'_>,
    task: &mut Task,
    assigned: &BTreeSet<(String, u64)>,
) -> Result<bool, Halt> {
    match task.phase {
        Phase::Accept => start::accept(engine, task, assigned),
        Phase::Checkout => start::checkout(engine, task),
        Phase::Implement => implement::implement(engine, task),
        Phase::InnerReview => implement::inner_review(engine, task),
        Phase::Publish => publish::publish(engine, task),
        Phase::Checks => publish::checks(engine, task),
        Phase::PrGatesGrok => gates::pr_gates(engine, task, Phase::PrGatesGrok),
        Phase::PrGatesCodex => gates::pr_gates(engine, task, Phase::PrGatesCodex),
        Phase::Ci => ci_phase::ci(engine, task),
        Phase::Ready => ready::ready(engine, task),
        Phase::FormalApprove => ready::formal_approve(engine, task, assigned),
        Phase::LeaveDraft => ready::leave_draft(engine, task, assigned),
        Phase::AwaitMerge => merge::await_merge(engine, task, assigned),
        Phase::Finished => Ok(false),
    }
}

/// The first 12 characters of a SHA, for messages.
fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

/// The branches a task's push never touches: its base, `main` and `master`.
fn protected_branches(task: &Task) -> Vec<String> {
    let mut p = vec![task.base.clone(), "main".into(), "master".into()];
    p.dedup();
    p
}
