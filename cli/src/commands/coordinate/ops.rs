//! The operator's `coordinate` subcommands: which there are, the flags they share, and the
//! dispatch to each.

use super::explain;
use super::hold;
use super::task_ops;
use super::tasks;
use crate::command_error::CommandError;
use crate::context::Context;
use crate::output::Report;

/// An operator's command on the coordinator.
#[derive(clap::Subcommand, Debug)]
pub(crate) enum Action {
    /// List every task: phase, state, what it waits for, age, rounds, cost, pull request, disk use
    Tasks(tasks::TasksArgs),
    /// Say why an issue is or is not a task, in the order admission decides
    Explain(explain::ExplainArgs),
    /// Stop a task for good: its lanes, one comment on the issue, its claim released
    Cancel(task_ops::CancelArgs),
    /// Run a failed or uncertain task again from a phase that is safe for it
    Retry(task_ops::RetryArgs),
    /// Start no new lanes and admit no new issues (a worker, a repository, or all)
    Pause(hold::HoldArgs),
    /// Lift the pauses and drains of exactly that scope
    Resume(hold::HoldArgs),
    /// Admit no new issues while the admitted tasks go on to their end
    Drain(hold::HoldArgs),
}

pub(crate) fn run(cx: &Context, action: &Action) -> Result<Report, CommandError> {
    match action {
        Action::Tasks(a) => tasks::cmd_coordinate_tasks(cx, a),
        Action::Explain(a) => explain::cmd_coordinate_explain(cx, a),
        Action::Cancel(a) => task_ops::cmd_coordinate_cancel(cx, a),
        Action::Retry(a) => task_ops::cmd_coordinate_retry(cx, a),
        Action::Pause(a) => hold::cmd_coordinate_hold(cx, a, hold::Verb::Pause),
        Action::Resume(a) => hold::cmd_coordinate_hold(cx, a, hold::Verb::Resume),
        Action::Drain(a) => hold::cmd_coordinate_hold(cx, a, hold::Verb::Drain),
    }
}
