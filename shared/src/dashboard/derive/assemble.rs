//! The last step every build shares: the attention queue (rows' entries and coordinator
//! tasks'), counts, recent events and warnings around rows, batch views, machines and health.

use std::cmp::Ordering;

use super::operator_rows::RowSet;
use super::spend;
use super::task_rules;
use crate::dashboard::inputs::records::malformed_warning;
use crate::dashboard::inputs::records::EventIn;
use crate::dashboard::inputs::records::Inputs;
use crate::dashboard::model::hidden;
use crate::dashboard::model::Annotation;
use crate::dashboard::model::Attention;
use crate::dashboard::model::BatchTier;
use crate::dashboard::model::BatchView;
use crate::dashboard::model::Counts;
use crate::dashboard::model::DashboardModel;
use crate::dashboard::model::EventView;
use crate::dashboard::model::HealthItem;
use crate::dashboard::model::MachineView;
use crate::dashboard::model::Row;
use crate::dashboard::model::RowState;
use crate::dashboard::model::Severity;
use crate::dashboard::model::RECENT_EVENTS;
use crate::dashboard::model::SETUP_NOTICE;
use crate::record::is_http_url;
use crate::time;
use crate::time::Instant;

/// What the earlier steps derived, sorted.
pub(crate) struct Parts {
    pub(crate) rows: RowSet,
    pub(crate) batches: Vec<BatchView>,
    pub(crate) machines: Vec<MachineView>,
    pub(crate) health: Vec<HealthItem>,
}

/// Puts the model together.
pub(crate) fn assemble(
    inputs: &Inputs,
    now: Instant,
    version: &str,
    parts: Parts,
) -> DashboardModel {
    let Parts {
        rows: RowSet { rows, qa },
        batches,
        machines,
        health,
    } = parts;
    let attention = attention(&rows, inputs, now);
    let mut counts = Counts {
        rows: rows.len(),
        needs_attention: attention.len(),
        batches: batches.len(),
        batches_blocked: batches
            .iter()
            .filter(|b| b.tier == BatchTier::Blocked)
            .count(),
        batch_repairs: batches.iter().filter(|b| !b.repairs.is_empty()).count(),
        agents: machines.iter().map(|m| m.agents.len()).sum(),
        agents_live: machines.iter().map(|m| m.live).sum(),
        machines: machines.iter().filter(|m| m.id != "unassigned").count(),
        health_warnings: health
            .iter()
            .filter(|h| h.severity == Severity::Warning)
            .count(),
        health_notices: health
            .iter()
            .filter(|h| h.severity == Severity::Info)
            .count(),
        qa_gaps: qa.iter().filter(|q| q.status.is_gap()).count(),
        malformed: inputs.malformed.len(),
        ..Counts::default()
    };
    let mut by_state = [0usize; RowState::ALL.len()];
    for r in &rows {
        by_state[r.state.index()] += 1;
    }
    for (state, n) in RowState::ALL.iter().zip(by_state) {
        counts.rows_by_state.insert(state.as_str().to_owned(), n);
    }
    DashboardModel {
        version: version.to_owned(),
        generated_at: time::format(now),
        counts,
        attention,
        rows,
        batches,
        machines,
        health,
        qa,
        recent_events: recent_events(inputs).into_iter().map(event_view).collect(),
        warnings: inputs
            .malformed
            .iter()
            .map(|(p, m)| malformed_warning(p, m))
            .collect(),
        slice: None,
        setup: inputs.is_empty().then(|| SETUP_NOTICE.to_owned()),
        source_status: inputs.github.iter().map(|g| g.status.clone()).collect(),
        notices: inputs.notices.clone(),
        target_repos: inputs.target_repos.clone(),
        annotations: inputs
            .annotations
            .iter()
            .map(|a| Annotation {
                active: a.is_active(now),
                ..Annotation::clone(a)
            })
            .collect(),
        spend: spend::summary(&inputs.tasks),
        holds: inputs
            .controls
            .as_ref()
            .map(|c| c.holds.clone())
            .unwrap_or_default(),
        past: None,
        restored: None,
    }
}

/// The attention queue, rows' and coordinator tasks' entries together: by priority, then
/// oldest activity first; items an operator dismissed, or snoozed until later than `now`,
/// are left out.
fn attention(rows: &[Row], inputs: &Inputs, now: Instant) -> Vec<Attention> {
    let hidden = hidden(inputs.annotations.iter().map(AsRef::as_ref), now);
    let mut attention: Vec<Attention> = rows
        .iter()
        .filter_map(|r| {
            r.attention.map(|kind| Attention {
                row_id: r.id.clone(),
                kind,
                priority: kind.priority(),
                label: kind.label().to_owned(),
                subject: if r.target.is_empty() {
                    format!(
                        "{}:{}",
                        r.batch_id.as_deref().unwrap_or("UNKNOWN"),
                        r.lane.as_deref().unwrap_or("UNKNOWN")
                    )
                } else {
                    format!("{}#{}", r.repo, r.target)
                },
                last_activity: r.last_activity.clone(),
                detail: None,
                link: pull_request(r),
                resume_phase: None,
            })
        })
        .chain(task_rules::attention_entries(&inputs.tasks))
        .filter(|a| !hidden.contains(&a.row_id))
        .collect();
    attention.sort_by(|a, b| {
        a.priority
            .cmp(&b.priority)
            .then_with(|| a.last_activity.cmp(&b.last_activity))
            .then_with(|| a.row_id.cmp(&b.row_id))
            .then_with(|| a.kind.cmp(&b.kind))
    });
    attention
}

/// A row's pull request, to act on from its attention entry: GitHub's implementation PR
/// of the issue, the row's own item when it is a PR, else the claim's or heartbeat's
/// `pr_url` (http(s) only, as every model URL).
fn pull_request(r: &Row) -> Option<String> {
    let gh = r.github.as_ref();
    gh.and_then(|g| g.implementation_pr.as_ref()?.url.clone())
        .or_else(|| gh.filter(|g| g.kind == "pull_request")?.url.clone())
        .or_else(|| r.pr_url.clone())
        .filter(|u| is_http_url(u))
}

/// The newest [`RECENT_EVENTS`] events, newest first, without sorting them all.
fn recent_events(inputs: &Inputs) -> Vec<&EventIn> {
    let mut recent: Vec<&EventIn> = Vec::with_capacity(RECENT_EVENTS + 1);
    let newer = |a: &EventIn, b: &EventIn| a.at.cmp(&b.at).then_with(|| a.path.cmp(&b.path));
    for e in &inputs.events {
        if recent.len() == RECENT_EVENTS
            && recent
                .last()
                .is_some_and(|last| newer(e, last) != Ordering::Greater)
        {
            continue;
        }
        let at = recent
            .iter()
            .position(|r| newer(e, r) == Ordering::Greater)
            .unwrap_or(recent.len());
        recent.insert(at, e);
        recent.truncate(RECENT_EVENTS);
    }
    recent
}

/// The event as the UI shows it.
pub fn event_view(e: &EventIn) -> EventView {
    EventView {
        id: e.id.clone(),
        kind: e.kind.clone(),
        batch_id: e.batch_id.clone(),
        lane: e.lane.clone(),
        agent: e.agent.clone(),
        repo: e.repo.clone(),
        target: e.target.clone(),
        status: e.status.clone(),
        message: e.message.clone(),
        at: e.at.map(time::format).or_else(|| e.at_raw.clone()),
        machine: e.meta.machine.clone(),
    }
}
