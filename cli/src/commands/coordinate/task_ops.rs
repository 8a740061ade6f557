//! `coordinate cancel TASK` and `coordinate retry TASK --from PHASE`: an operator's decision
//! on one task, recorded with who made it (`coordinator::operator` decides).
//!
//! A cancel is written and published first; then, when the task runs on this machine, its
//! running lanes are stopped at once and a tick of its worker posts the one comment (when
//! another coordinator process of the worker is ticking, that one does, on its next tick;
//! on another machine, that machine's next tick stops its lanes and posts it).

use agent_coord_shared::coordinator::operator::Operator;
use agent_coord_shared::coordinator::task::Phase;
use agent_coord_shared::coordinator::task::Task;
use agent_coord_shared::ids::AgentId;
use agent_coord_shared::output::coordinate_ops::TaskChange;
use agent_coord_shared::serde_name::from_serde_name;
use agent_coord_shared::serde_name::WireName;

use super::args::Common;
use super::args::Who;
use crate::command_error::CommandError;
use crate::context::Context;
use crate::coordinator::desk::operator_name;
use crate::coordinator::desk::Desk;
use crate::coordinator::tick;
use crate::output::Report;

/// Cancel a task: stop its lanes, say so once on the issue, release its claim; terminal
///
/// Nothing on GitHub is closed: the pull request, if any, stays as it is and the comment
/// says so. A done, failed or already cancelled task is refused.
#[derive(clap::Args, Debug)]
pub(crate) struct CancelArgs {
    /// The task: its id (`coordinate tasks`) or OWNER/REPO#N
    #[arg(value_name = "TASK")]
    task: String,
    #[command(flatten)]
    who: Who,
    #[command(flatten)]
    common: Common,
}

/// Run a failed or uncertain task again from PHASE (the operator's recorded decision)
///
/// The allowed phases depend on what the task still holds: `implement` once it has a
/// worktree, `checks` once it has a pushed head and a pull request, each later phase once
/// that head passed the one before. A refusal lists them. This is the only way out of
/// `uncertain` besides an authorized reply on the issue.
#[derive(clap::Args, Debug)]
pub(crate) struct RetryArgs {
    /// The task: its id (`coordinate tasks`) or OWNER/REPO#N
    #[arg(value_name = "TASK")]
    task: String,
    /// The phase to go on from (implement, checks, pr_gates_grok, …)
    #[arg(long, value_name = "PHASE")]
    from: String,
    #[command(flatten)]
    who: Who,
    #[command(flatten)]
    common: Common,
}

pub(crate) fn cmd_coordinate_cancel(
    cx: &Context,
    args: &CancelArgs,
) -> Result<Report, CommandError> {
    let (desk, cancelled, by, warnings) = on_task(cx, &args.task, &args.who, |desk, task, op| {
        desk.cancel(task, op)
    })?;
    let mut notes = vec![format!(
        "claim on {}#{} released",
        cancelled.repo, cancelled.issue
    )];
    notes.extend(finish_here(cx, &args.common, &desk, &cancelled));
    report(
        &args.common,
        "cancel",
        &cancelled,
        by.as_str(),
        notes,
        warnings,
    )
}

pub(crate) fn cmd_coordinate_retry(cx: &Context, args: &RetryArgs) -> Result<Report, CommandError> {
    let from: Phase = from_serde_name(args.from.trim()).ok_or_else(|| {
        CommandError::usage(format!(
            "--from {:?} is not a phase (one of: {})",
            args.from,
            Phase::ALL
                .iter()
                .map(|p| p.wire_name())
                .collect::<Vec<_>>()
                .join(", ")
        ))
    })?;
    let (_desk, retried, by, warnings) = on_task(cx, &args.task, &args.who, |desk, task, op| {
        desk.retry(task, from, op)
    })?;
    let on = retried
        .machine
        .as_deref()
        .map(|m| format!(" on machine {m}"))
        .unwrap_or_default();
    let notes = vec![format!(
        "the next tick of worker {}{on} goes on from {}",
        retried.worker, retried.phase
    )];
    report(
        &args.common,
        "retry",
        &retried,
        by.as_str(),
        notes,
        warnings,
    )
}

/// Runs an operator's decision on the task `name` names, decided on the fleet's latest
/// state and published after: the desk, the task as written, who ran it, and warnings.
fn on_task<'a>(
    cx: &'a Context,
    name: &str,
    who: &Who,
    decide: impl FnOnce(&Desk<'a>, &Task, &Operator<'_>) -> Result<Task, CommandError>,
) -> Result<(Desk<'a>, Task, AgentId, Vec<String>), CommandError> {
    let by = operator_name(who.operator.as_deref())?;
    let desk = Desk::open(cx)?;
    let mut warnings = sync_first(&desk);
    let task = desk.find(name)?;
    let at = desk.now();
    let op = Operator {
        by: by.as_str(),
        at: &at,
        reason: who.reason.as_deref(),
    };
    let written = decide(&desk, &task, &op)?;
    warnings.extend(desk.publish());
    Ok((desk, written, by, warnings))
}

fn sync_first(desk: &Desk<'_>) -> Vec<String> {
    match desk.sync() {
        Ok(()) => Vec::new(),
        Err(e) => vec![format!(
            "warning: deciding on this machine's state: {}",
            e.message
        )],
    }
}

/// Stops a cancelled task's lanes and posts its comment, when it runs on this machine: what
/// was done, or who will do it.
fn finish_here(cx: &Context, common: &Common, desk: &Desk<'_>, task: &Task) -> Vec<String> {
    let here = desk.machine();
    if task.machine.as_deref().is_some_and(|m| m != here) {
        return vec![format!(
            "machine {} stops its lanes and posts the comment on its next tick",
            task.machine.as_deref().unwrap_or("?")
        )];
    }
    let mut notes = Vec::new();
    if let Some(launch) = task.pending.as_ref().and_then(|p| p.launch.as_ref()) {
        let n = crate::lanes::supervisor::stop(&launch.nonce);
        notes.push(format!("stopped {n} lane processes"));
    }
    let config = match super::args::configuration(common) {
        Ok(Some(c)) if c.workers.contains_key(&task.worker) => c,
        _ => {
            notes.push(format!(
                "worker {} is not configured here: its next tick on this machine posts the comment",
                task.worker
            ));
            return notes;
        }
    };
    let stop = std::sync::atomic::AtomicBool::new(false);
    let mut verified = crate::coordinator::preflight::Verified::default();
    let only = [(task.repo.clone(), task.issue)].into_iter().collect();
    match tick::tick(
        cx,
        &config,
        &task.worker,
        &stop,
        &mut verified,
        tick::Wait::Finish(only),
    ) {
        Ok(report) => notes.extend(report.lines()),
        Err(e) => notes.push(format!(
            "{}; the worker's next tick posts the comment",
            e.message
        )),
    }
    notes
}

fn report(
    common: &Common,
    action: &'static str,
    task: &Task,
    by: &str,
    notes: Vec<String>,
    warnings: Vec<String>,
) -> Result<Report, CommandError> {
    let report = if common.json {
        Report::json(&TaskChange {
            action,
            task_id: task.task_id.clone(),
            state: task.state,
            phase: task.phase,
            by: by.to_owned(),
            notes,
        })
    } else {
        let mut text = format!(
            "{}: {} by {by}; now {} at {}\n",
            task.task_id,
            if action == "cancel" {
                "cancelled"
            } else {
                "retried"
            },
            task.state.wire_name(),
            task.phase
        );
        for n in notes {
            text.push_str(&format!("  {n}\n"));
        }
        Report::text(text)
    };
    Ok(report.with_stderr(warnings))
}
