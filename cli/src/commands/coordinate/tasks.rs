//! `coordinate tasks [--worker W]`: every task with its phase, state, what it waits for,
//! age, rounds, cost, pull request and the disk its worktree takes on this machine.

use std::path::Path;

use agent_coord_shared::coordinator::config::CoordinatorConfig;
use agent_coord_shared::coordinator::controls::Controls;
use agent_coord_shared::coordinator::task::Spend;
use agent_coord_shared::coordinator::task::Task;
use agent_coord_shared::coordinator::task::TaskState;
use agent_coord_shared::coordinator::waits;
use agent_coord_shared::output::coordinate_ops::TaskLine;
use agent_coord_shared::output::coordinate_ops::TasksReport;
use agent_coord_shared::serde_name::WireName;

use super::args::Common;
use crate::command_error::CommandError;
use crate::context::Context;
use crate::coordinator::desk::Desk;
use crate::coordinator::preflight::control_dir;
use crate::output::Report;

/// List the coordinator's tasks and what each waits on
#[derive(clap::Args, Debug)]
pub(crate) struct TasksArgs {
    /// Only this worker's tasks
    #[arg(long, value_name = "ID")]
    worker: Option<String>,
    #[command(flatten)]
    common: Common,
}

pub(crate) fn cmd_coordinate_tasks(cx: &Context, args: &TasksArgs) -> Result<Report, CommandError> {
    let config = super::args::configuration(&args.common)?;
    let desk = Desk::open(cx)?;
    let (tasks, unreadable) = desk.tasks()?;
    let controls = desk.controls()?;
    let now = desk.now_time();
    let here = desk.machine();
    let lines: Vec<TaskLine> = tasks
        .iter()
        .filter(|t| args.worker.as_deref().is_none_or(|w| t.worker == w))
        .map(|t| {
            let mut spend = Spend::of(&t.lane_runs);
            spend.merge(&t.earlier_runs);
            TaskLine {
                task_id: t.task_id.clone(),
                issue: format!("{}#{}", t.repo, t.issue),
                worker: t.worker.clone(),
                machine: t.machine.clone(),
                phase: t.phase,
                state: t.state,
                waits_for: waits_for(config.as_ref(), t, &controls),
                age_seconds: age_seconds(t, now),
                rounds: t.rounds,
                runs: spend.runs,
                cost_usd: spend.cost_usd,
                pr_url: t.pr_url.clone(),
                disk_bytes: disk_use(config.as_ref(), t, &here),
            }
        })
        .collect();
    let report = if args.common.json {
        Report::json(&TasksReport {
            tasks: lines,
            holds: controls.holds,
            unreadable,
        })
    } else {
        let mut text = String::new();
        for h in &controls.holds {
            text.push_str(&format!("hold: {h}\n"));
        }
        if lines.is_empty() {
            text.push_str("no tasks\n");
        }
        for l in &lines {
            text.push_str(&line_text(l));
        }
        for u in &unreadable {
            text.push_str(&format!("unreadable task record: {u}\n"));
        }
        Report::text(text)
    };
    Ok(report)
}

/// What the task waits for, naming who may reply when it waits for a reply.
fn waits_for(
    config: Option<&CoordinatorConfig>,
    task: &Task,
    controls: &Controls,
) -> Option<String> {
    let logins = config
        .and_then(|c| c.workers.get(&task.worker))
        .map(|w| w.reply_logins.join(" or "))
        .filter(|l| !l.is_empty());
    match (task.state, logins) {
        (TaskState::Waiting, Some(logins)) => Some(format!(
            "a reply from {logins} on the issue{}",
            task.question_url
                .as_deref()
                .map(|u| format!(" ({u})"))
                .unwrap_or_default()
        )),
        _ => waits::waits_for(task, Some(controls)),
    }
}

/// One task in two lines: what it is, then what it waits on and what it took.
fn line_text(l: &TaskLine) -> String {
    let mut first = format!(
        "{}  {}  {} at {}  worker {}",
        l.task_id,
        l.issue,
        l.state.wire_name(),
        l.phase.wire_name(),
        l.worker
    );
    if let Some(m) = &l.machine {
        first.push_str(&format!(" on {m}"));
    }
    let mut second = vec![
        format!("age {}", age(l.age_seconds)),
        format!("rounds {}", l.rounds),
        format!("{} runs ${:.4}", l.runs, l.cost_usd),
    ];
    if let Some(bytes) = l.disk_bytes {
        second.push(format!("disk {}", size(bytes)));
    }
    if let Some(url) = &l.pr_url {
        second.push(url.clone());
    }
    let waits = l
        .waits_for
        .as_deref()
        .map(|w| format!("    waits for {w}\n"))
        .unwrap_or_default();
    format!("{first}\n{waits}    {}\n", second.join(", "))
}

/// A task's age in whole seconds at `now` (from its admission).
fn age_seconds(task: &Task, now: chrono::DateTime<chrono::Utc>) -> Option<i64> {
    agent_coord_shared::time::parse(&task.created_at).map(|t| (now - t).num_seconds().max(0))
}

fn age(seconds: Option<i64>) -> String {
    match seconds {
        None => "unknown".into(),
        Some(s) if s < 3600 => format!("{}m", s / 60),
        Some(s) if s < 86_400 => format!("{}h{:02}m", s / 3600, (s % 3600) / 60),
        Some(s) => format!("{}d{}h", s / 86_400, (s % 86_400) / 3600),
    }
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b < 1 << 10 => format!("{b} B"),
        b if b < 1 << 20 => format!("{:.1} KiB", b as f64 / 1024.0),
        b if b < 1 << 30 => format!("{:.1} MiB", b as f64 / 1048576.0),
        b => format!("{:.1} GiB", b as f64 / 1073741824.0),
    }
}

/// The bytes the task's worktree and control folder take, when they are on this machine.
fn disk_use(config: Option<&CoordinatorConfig>, task: &Task, here: &str) -> Option<u64> {
    if task.machine.as_deref().is_some_and(|m| m != here) {
        return None;
    }
    let worker = config?.workers.get(&task.worker)?;
    let worktree = Path::new(&worker.workspace_root).join(&task.task_id);
    let control = control_dir(worker).join(&task.task_id);
    let total = crate::coordinator::lifecycle::bytes_under(&worktree)
        + crate::coordinator::lifecycle::bytes_under(&control);
    Some(total)
}
