//! Coordinator tasks on the dashboard (DESIGN §6 "State"): which task checkpoints the
//! attention queue lists and how, and the item page's panel with the head's evidence as a
//! checklist, the lane runs with their cost, and a vendor's usage-limit pause.
//!
//! Only the attention entries reach the overview model; the panel is built for the one item
//! a page asks for.

use std::sync::Arc;

use super::spend::spend_view;
use crate::coordinator::controls::Controls;
use crate::coordinator::controls::Scope;
use crate::coordinator::operator;
use crate::coordinator::task::Evidence;
use crate::coordinator::task::LaneRun;
use crate::coordinator::task::Phase;
use crate::coordinator::task::Spend;
use crate::coordinator::task::Task;
use crate::coordinator::task::TaskState;
use crate::coordinator::task::TASKS_DIR;
use crate::dashboard::inputs::tasks::TaskIn;
use crate::dashboard::model::Attention;
use crate::dashboard::model::AttentionKind;
use crate::dashboard::model::ChecklistRow;
use crate::dashboard::model::CoordinatorPanel;
use crate::dashboard::model::LaneRunView;
use crate::dashboard::model::MergeView;
use crate::dashboard::model::OperatorCommand;
use crate::dashboard::model::PauseView;
use crate::record::is_http_url;
use crate::time;

/// How many characters of a commit id the page shows.
const SHORT_SHA: usize = 7;

/// Decides whether a task needs a person: it waits on a reply to its published question or
/// blocker, its lane outcome is uncertain, or its pull request is Ready and waits for a
/// human merge. A failed task is shown on its item page only (nobody can resume it), and an
/// active task in any other phase, or a done one, needs nobody.
pub fn attention_kind(task: &Task) -> Option<AttentionKind> {
    match task.state {
        TaskState::Waiting => Some(AttentionKind::TaskWaitingReply),
        TaskState::Uncertain => Some(AttentionKind::TaskNeedsOperator),
        TaskState::Active if task.phase == Phase::AwaitMerge => {
            Some(AttentionKind::TaskAwaitingMerge)
        }
        TaskState::Active | TaskState::Failed | TaskState::Done | TaskState::Cancelled => None,
    }
}

/// The attention entry of a task that needs a person: the question or blocker to read and
/// the checkpoint comment to answer it on (with the phase a reply resumes), or the pull
/// request to merge.
pub fn attention(task: &Task) -> Option<Attention> {
    let kind = attention_kind(task)?;
    let (detail, link) = match kind {
        AttentionKind::TaskAwaitingMerge => (None, task.pr_url.as_deref()),
        _ => (text(task.blocker.as_deref()), task.question_url.as_deref()),
    };
    Some(Attention {
        row_id: format!("target:{}#{}", task.repo, task.issue),
        kind,
        priority: kind.priority(),
        label: kind.label().to_owned(),
        subject: format!("{}#{}", task.repo, task.issue),
        last_activity: Some(timestamp(&task.updated_at)),
        detail,
        link: url(link),
        resume_phase: task
            .resume_phase
            .filter(|_| kind == AttentionKind::TaskWaitingReply),
    })
}

/// The attention entries of every task that needs a person (in path order).
pub fn attention_entries(tasks: &[Arc<TaskIn>]) -> impl Iterator<Item = Attention> + '_ {
    tasks.iter().filter_map(|t| attention(&t.task))
}

/// What a person reads for an evidence key of [`Evidence::checklist`] (an unknown key reads
/// as itself).
pub fn checklist_label(key: &str) -> &str {
    match key {
        "checks" => "Checks on head",
        "grok_quality" => "Grok quality",
        "grok_logic" => "Grok logic",
        "codex_quality" => "Codex quality",
        "codex_logic" => "Codex logic",
        "ci" => "GitHub CI",
        "readiness" => "Readiness",
        "formal_approval" => "Formal approval",
        "ready_comment" => "Ready evidence comment",
        "left_draft" => "Left draft",
        other => other,
    }
}

/// The head an evidence key was recorded on, whichever head that is.
fn recorded_head<'e>(e: &'e Evidence, key: &str) -> Option<&'e str> {
    match key {
        "checks" => e.checks_passed.as_deref(),
        "grok_quality" => e.grok_quality.as_deref(),
        "grok_logic" => e.grok_logic.as_deref(),
        "codex_quality" => e.codex_quality.as_deref(),
        "codex_logic" => e.codex_logic.as_deref(),
        "ci" => e.ci_green.as_deref(),
        "readiness" => e.readiness.as_ref().map(|r| r.head.as_str()),
        "formal_approval" => e.formal_approval.as_ref().map(|a| a.head.as_str()),
        "ready_comment" => e.ready_comment.as_deref(),
        "left_draft" => e.left_draft.as_deref(),
        _ => None,
    }
}

/// The checklist of `head` in workflow order ([`Evidence::checklist`]): an item passes only
/// on exactly that head; a pass recorded on another head counts for nothing and is named.
/// Without a head nothing has passed.
pub fn checklist(evidence: &Evidence, head: Option<&str>) -> Vec<ChecklistRow> {
    evidence
        .checklist(head.unwrap_or_default())
        .into_iter()
        .map(|(key, passed)| {
            let passed = passed && head.is_some();
            let other_head = recorded_head(evidence, key)
                .filter(|h| !passed && Some(*h) != head)
                .map(short_sha);
            ChecklistRow {
                key: key.to_owned(),
                label: checklist_label(key).to_owned(),
                passed,
                other_head,
            }
        })
        .collect()
}

/// What `task` waits for now, in words (the coordinator's rule, without the operator's
/// holds, which the panel shows on their own).
pub fn waits_for(task: &Task) -> Option<String> {
    crate::coordinator::waits::waits_for(task, None)
}

/// The operator's commands that apply to `task` now (`coordinate explain`, `cancel` while
/// it has not ended, `retry --from` each safe phase of a failed or uncertain one, `pause` or
/// `resume` of its worker).
pub fn operator_commands(task: &Task, controls: Option<&Controls>) -> Vec<OperatorCommand> {
    let cmd = |label: String, command: String| OperatorCommand { label, command };
    let mut out = vec![cmd(
        "Explain".into(),
        format!(
            "agent-coord coordinate explain {}#{}",
            task.repo, task.issue
        ),
    )];
    if matches!(task.state, TaskState::Failed | TaskState::Uncertain) {
        for phase in operator::retry_phases(task) {
            out.push(cmd(
                format!("Retry from {phase}"),
                format!(
                    "agent-coord coordinate retry {} --from {phase} --reason \"…\"",
                    task.task_id
                ),
            ));
        }
    }
    if !task.state.terminal() {
        out.push(cmd(
            "Cancel".into(),
            format!(
                "agent-coord coordinate cancel {} --reason \"…\"",
                task.task_id
            ),
        ));
        let held = controls.is_some_and(|c| {
            c.holds
                .iter()
                .any(|h| h.scope == Scope::Worker(task.worker.clone()))
        });
        out.push(if held {
            cmd(
                format!("Resume worker {}", task.worker),
                format!("agent-coord coordinate resume --worker {}", task.worker),
            )
        } else {
            cmd(
                format!("Pause worker {}", task.worker),
                format!(
                    "agent-coord coordinate pause --worker {} --reason \"…\"",
                    task.worker
                ),
            )
        });
    }
    out
}

/// The item page's panel of a task, given the operator's holds.
pub fn panel_with(task: &Task, controls: Option<&Controls>) -> CoordinatorPanel {
    CoordinatorPanel {
        waits_for: crate::coordinator::waits::waits_for(task, controls),
        operator_commands: operator_commands(task, controls),
        ..panel(task)
    }
}

/// The item page's panel of a task.
pub fn panel(task: &Task) -> CoordinatorPanel {
    let head = task.head.as_deref().filter(|h| !h.trim().is_empty());
    CoordinatorPanel {
        task_id: task.task_id.clone(),
        worker: task.worker.clone(),
        machine: task.machine.clone(),
        previous_machines: task.previous_machines.clone(),
        waits_for: waits_for(task),
        title: task.title.clone(),
        state: task.state,
        phase: task.phase,
        resume_phase: task.resume_phase,
        attention: attention_kind(task),
        blocker: text(task.blocker.as_deref()),
        question_url: url(task.question_url.as_deref()),
        pr: task.pr,
        pr_url: url(task.pr_url.as_deref()),
        head: head.map(str::to_owned),
        short_head: head.map(short_sha),
        rounds: task.rounds,
        checklist: checklist(&task.evidence, head),
        merge: task.merge.as_ref().map(|m| MergeView {
            sha: m.sha.clone(),
            short_sha: short_sha(&m.sha),
            merged_at: timestamp(&m.merged_at),
            merged_by: m.merged_by.clone(),
            base: m.base.clone(),
        }),
        updated_at: timestamp(&task.updated_at),
        lane_runs: task
            .lane_runs
            .iter()
            .enumerate()
            .map(|(i, run)| lane_run(run, task.earlier_runs.runs + i as u64 + 1))
            .collect(),
        earlier_runs: task.earlier_runs.runs,
        spend: {
            let mut all = Spend::of(&task.lane_runs);
            all.merge(&task.earlier_runs);
            spend_view(&all)
        },
        paused: task.paused.as_ref().map(|p| PauseView {
            vendor: p.vendor.clone(),
            until: timestamp(&p.until),
        }),
        operator_commands: operator_commands(task, None),
    }
}

/// Finds run `n` of a task ([`LaneRunView::n`]: counted from 1 across every run, the ones
/// folded out of the checkpoint included, which are gone).
pub fn lane_run_numbered(task: &Task, n: u64) -> Option<&LaneRun> {
    let index = n.checked_sub(task.earlier_runs.runs + 1)?;
    task.lane_runs.get(usize::try_from(index).ok()?)
}

/// One lane run as the page lists it, numbered `n`.
fn lane_run(run: &LaneRun, n: u64) -> LaneRunView {
    let (start, end) = (time::parse(&run.started_at), time::parse(&run.ended_at));
    LaneRunView {
        n,
        slot: run.slot.clone(),
        phase: run.phase,
        round: run.round,
        vendor: run.vendor.clone(),
        model: run.model.clone(),
        verdict: run.verdict,
        started_at: timestamp(&run.started_at),
        ended_at: timestamp(&run.ended_at),
        duration_secs: start
            .zip(end)
            .map(|(s, e)| (e - s).num_seconds())
            .filter(|d| *d >= 0),
        exit_code: run.exit_code,
        timed_out: run.timed_out,
        tokens: run.tokens(),
        input_tokens: run.input_tokens,
        output_tokens: run.output_tokens,
        cache_tokens: run.cache_read_tokens + run.cache_write_tokens,
        cost_usd: run.cost_usd,
        cost_source: run.cost_source,
        transcript_machine: run.transcript.as_ref().map(|t| t.machine.clone()),
        transcript_bytes: run.transcript.as_ref().map(|t| t.bytes),
    }
}

/// The coordinator section of the item `repo#target`: the panel of the task whose repo and
/// issue match, else why the record at that issue's path could not be read (`malformed` as
/// [`crate::dashboard::inputs::records::Inputs`] holds it).
pub fn item_section(
    tasks: &[Arc<TaskIn>],
    malformed: &[(String, String)],
    controls: Option<&Controls>,
    repo: &str,
    target: &str,
) -> (Option<CoordinatorPanel>, Option<String>) {
    let found = tasks
        .iter()
        .find(|t| t.task.repo == repo && t.task.issue.to_string() == target);
    if let Some(t) = found {
        return (Some(panel_with(&t.task, controls)), None);
    }
    let path = format!("{TASKS_DIR}/{repo}/{target}.json");
    let warning = malformed
        .iter()
        .find(|(p, _)| *p == path)
        .map(|(p, m)| format!("The coordinator task record {p} could not be read: {m}"));
    (None, warning)
}

fn short_sha(sha: &str) -> String {
    sha.chars().take(SHORT_SHA).collect()
}

/// A timestamp in the model's format when it parses, else as written.
fn timestamp(raw: &str) -> String {
    time::parse(raw).map_or_else(|| raw.to_owned(), time::format)
}

fn text(s: Option<&str>) -> Option<String> {
    s.map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}

fn url(s: Option<&str>) -> Option<String> {
    s.filter(|u| is_http_url(u)).map(str::to_owned)
}

#[cfg(test)]
mod tests;
