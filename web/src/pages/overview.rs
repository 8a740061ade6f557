//! `/`: headline counts, the needs-attention queue and short lists of what matters now.

use std::sync::Arc;

use agent_coord_shared::dashboard::model::DashboardModel;
use agent_coord_shared::dashboard::model::RowState;
use agent_coord_shared::dashboard::model::Slice;
use agent_coord_shared::dashboard::view::slice::View;
use agent_coord_shared::names::WireName;
use leptos::prelude::*;

use super::row_line;
use super::section_head;
use super::use_view;
use super::with_model;
use crate::components::scope::ScopePanel;
use crate::components::widgets;
use crate::format;

/// How many entries each overview list shows.
const CAP: usize = 10;

/// The overview page.
#[component]
pub fn OverviewPage() -> impl IntoView {
    use_view(|| View::Overview);
    view! {
        <section class="page overview">
            <h1>"Overview"</h1>
            <ScopePanel/>
            {with_model("overview", overview)}
        </section>
    }
}

fn overview(m: &Arc<DashboardModel>) -> impl IntoView {
    view! {
        {counts(m)}
        <div class="grid">
            {attention(m)}
            {active_work(m)}
            {recoverable(m)}
            {batch_repairs(m)}
            {qa_gaps(m)}
            {recent_events(m)}
        </div>
    }
}

/// The totals the server counted before cutting the lists down (the page only has the
/// first few of each).
fn totals(m: &DashboardModel) -> Slice {
    m.slice.clone().unwrap_or_default()
}

fn state_count(m: &DashboardModel, state: RowState) -> usize {
    m.counts
        .rows_by_state
        .get(state.as_str())
        .copied()
        .unwrap_or_default()
}

fn counts(m: &DashboardModel) -> impl IntoView {
    let c = &m.counts;
    let mut tiles: Vec<(&str, &str, usize, String)> = vec![(
        "needs-attention",
        "Needs attention",
        c.needs_attention,
        "/#attention".into(),
    )];
    for state in [
        RowState::Running,
        RowState::Wedged,
        RowState::Dead,
        RowState::Stale,
        RowState::Blocked,
        RowState::Ready,
        RowState::Done,
    ] {
        let href = format!("/operator?state={}", state.as_str());
        tiles.push((
            state.as_str(),
            state_title(state),
            state_count(m, state),
            href,
        ));
    }
    tiles.extend([
        ("batches", "Batches", c.batches, "/batches?tier=all".into()),
        (
            "agents-live",
            "Agents live",
            c.agents_live,
            "/machines".into(),
        ),
        ("agents", "Agents total", c.agents, "/machines".into()),
        (
            "health-warnings",
            "Health warnings",
            c.health_warnings,
            "/health".into(),
        ),
        ("qa-gaps", "QA gaps", c.qa_gaps, "/#qa".into()),
    ]);
    let tiles = tiles
        .into_iter()
        .map(|(name, label, value, href)| {
            view! {
                <a class=format!("count-tile tile-{name}") href=href>
                    <span class="count-value" data-testid=format!("count-{name}")>{value}</span>
                    <span class="count-label">{label}</span>
                </a>
            }
        })
        .collect_view();
    view! { <div class="counts" aria-label="Headline counts">{tiles}</div> }
}

fn state_title(state: RowState) -> &'static str {
    match state {
        RowState::Blocked => "Blocked",
        RowState::Wedged => "Wedged",
        RowState::Dead => "Dead",
        RowState::Stale => "Stale",
        RowState::Paused => "Paused",
        RowState::Running => "Running",
        RowState::Ready => "Ready",
        RowState::Unknown => "Unknown",
        RowState::Done => "Done",
        RowState::Archived => "Archived",
    }
}

fn attention(m: &DashboardModel) -> impl IntoView {
    let items = m
        .attention
        .iter()
        .take(CAP)
        .map(|a| {
            let path = m
                .rows
                .iter()
                .find(|r| r.id == a.row_id)
                .and_then(format::row_path)
                .or_else(|| format::subject_batch_path(&a.subject))
                .or_else(|| format::subject_item_path(&a.subject));
            let detail = a
                .detail
                .clone()
                .map(|d| view! { <span class="detail" data-testid="attention-detail">{d}</span> });
            let resume = a.resume_phase.map(|p| {
                view! { <span class="muted" data-testid="attention-resume">{format!("resumes {}", p.wire_name())}</span> }
            });
            let link = a.link.clone().map(|url| {
                view! {
                    <a href=url target="_blank" rel="noopener noreferrer" data-testid="attention-link">{a.kind.link_text()}</a>
                }
            });
            view! {
                <li class="attention-item" data-testid="attention-item" data-kind=a.kind.as_str()
                    data-severity=a.kind.severity().as_str()>
                    <span class=format!("badge prio prio-{}", a.priority)>{format!("P{}", a.priority)}</span>
                    <span class="label">{a.label.clone()}</span>
                    {widgets::maybe_link(path, a.subject.clone())}
                    {detail}
                    {resume}
                    {link}
                    {widgets::age(a.last_activity.clone())}
                </li>
            }
        })
        .collect_view();
    let empty = m
        .attention
        .is_empty()
        .then(|| widgets::empty_note("Nothing needs attention."));
    view! {
        <section class="panel wide" id="attention">
            {section_head("Needs attention", totals(m).attention_total, Some("/operator"))}
            <ol class="list" data-testid="attention-list">{items}</ol>
            {empty}
        </section>
    }
}

fn active_work(m: &DashboardModel) -> impl IntoView {
    let rows: Vec<_> = m.rows.iter().filter(|r| r.is_active_work()).collect();
    let items = rows.iter().take(CAP).map(|r| row_line(r)).collect_view();
    let empty = rows
        .is_empty()
        .then(|| widgets::empty_note("No active work."));
    view! {
        <section class="panel" data-testid="active-work">
            {section_head("Active work", totals(m).active_work, Some("/operator?state=running"))}
            <ul class="list">{items}</ul>
            {empty}
        </section>
    }
}

fn recoverable(m: &DashboardModel) -> impl IntoView {
    let rows: Vec<_> = m.rows.iter().filter(|r| r.is_recoverable()).collect();
    let items = rows.iter().take(CAP).map(|r| row_line(r)).collect_view();
    let empty = rows
        .is_empty()
        .then(|| widgets::empty_note("No recoverable work."));
    view! {
        <section class="panel" data-testid="recoverable-work">
            {section_head("Recoverable work", totals(m).recoverable, Some("/operator?state=dead"))}
            <ul class="list">{items}</ul>
            {empty}
        </section>
    }
}

fn batch_repairs(m: &DashboardModel) -> impl IntoView {
    let batches: Vec<_> = m.batches.iter().filter(|b| !b.repairs.is_empty()).collect();
    let items = batches
        .iter()
        .take(CAP)
        .map(|b| {
            let repairs = b
                .repairs
                .iter()
                .map(|r| widgets::badge("repair", r.as_str().to_owned()))
                .collect_view();
            view! {
                <li class="row-line">
                    <a href=format::batch_path(&b.id)>{b.title.clone()}</a>
                    <span class="muted">{b.id.clone()}</span>
                    {repairs}
                </li>
            }
        })
        .collect_view();
    let empty = batches
        .is_empty()
        .then(|| widgets::empty_note("No batch needs repair."));
    view! {
        <section class="panel" data-testid="batch-repairs">
            {section_head("Batch repairs", totals(m).batch_repairs, Some("/batches?tier=all"))}
            <ul class="list">{items}</ul>
            {empty}
        </section>
    }
}

fn qa_gaps(m: &DashboardModel) -> impl IntoView {
    let gaps: Vec<_> = m.qa.iter().filter(|q| q.status.is_gap()).collect();
    let items = gaps
        .iter()
        .take(CAP)
        .map(|q| {
            let label = format!("{}#{}", q.repo, q.target);
            let batch = q
                .batch_id
                .as_ref()
                .map(|b| view! { <a class="muted" href=format::batch_path(b)>{b.clone()}</a> });
            view! {
                <li class="row-line">
                    {widgets::badge("qa", q.status.as_str().to_string())}
                    {widgets::maybe_link(format::item_path(&q.repo, &q.target), label)}
                    <span class="detail">{q.detail.clone()}</span>
                    {batch}
                </li>
            }
        })
        .collect_view();
    let empty = gaps
        .is_empty()
        .then(|| widgets::empty_note("No QA validation gaps."));
    view! {
        <section class="panel" id="qa" data-testid="qa-gaps">
            {section_head("QA validation gaps", totals(m).qa_gaps, None)}
            <ul class="list">{items}</ul>
            {empty}
        </section>
    }
}

fn recent_events(m: &DashboardModel) -> impl IntoView {
    let items = m
        .recent_events
        .iter()
        .take(CAP)
        .map(|e| {
            let subject = match (&e.repo, &e.target) {
                (Some(repo), Some(target)) => format!("{repo}#{target}"),
                _ => format::or_dash(e.batch_id.as_deref()),
            };
            view! {
                <li class="row-line">
                    {widgets::badge("kind", e.kind.clone())}
                    <span>{subject}</span>
                    <span class="who">{format::or_unknown(e.agent.as_deref())}</span>
                    <span class="detail">{format::or_dash(e.message.as_deref().or(e.status.as_deref()))}</span>
                    {widgets::age(e.at.clone())}
                </li>
            }
        })
        .collect_view();
    let empty = m
        .recent_events
        .is_empty()
        .then(|| widgets::empty_note("No events yet."));
    view! {
        <section class="panel wide" data-testid="recent-events">
            {section_head("Recent events", m.recent_events.len(), None)}
            <ul class="list">{items}</ul>
            {empty}
        </section>
    }
}
