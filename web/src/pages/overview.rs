//! `/`: headline counts, the needs-attention queue, short lists of what matters now, and
//! what the coordinator's lanes cost (per batch, per worker, per day).
//! Each list is keyed, so an entry the next model also holds keeps its place.

use agent_coord_shared::dashboard::model::Attention;
use agent_coord_shared::dashboard::model::BatchView;
use agent_coord_shared::dashboard::model::DashboardModel;
use agent_coord_shared::dashboard::model::EventView;
use agent_coord_shared::dashboard::model::QaItem;
use agent_coord_shared::dashboard::model::Row;
use agent_coord_shared::dashboard::model::RowState;
use agent_coord_shared::dashboard::model::Slice;
use agent_coord_shared::dashboard::model::SpendRow;
use agent_coord_shared::dashboard::model::SpendSummary;
use agent_coord_shared::dashboard::view::slice::View;
use agent_coord_shared::serde_name::WireName;
use leptos::prelude::*;

use super::keyed_items;
use super::row_line;
use super::section_head;
use super::shows_view;
use super::use_view;
use super::LOADING;
use crate::components::chart;
use crate::components::scope::ScopePanel;
use crate::components::widgets;
use crate::format;
use crate::live::use_store;

/// How many entries each overview list shows.
const CAP: usize = 10;

/// The name of the view this page shows.
const VIEW: &str = "overview";

/// The overview page.
#[component]
pub fn OverviewPage() -> impl IntoView {
    use_view(|| View::Overview);
    let store = use_store();
    view! {
        <section class="page overview">
            <h1>"Overview"</h1>
            <ScopePanel/>
            <Show when=move || shows_view(store, VIEW) fallback=|| widgets::loading(LOADING)>
                {move || store.model.with(|m| m.as_ref().map(|m| counts(m)))}
                <div class="grid">
                    {attention()}
                    {active_work()}
                    {recoverable()}
                    {batch_repairs()}
                    {qa_gaps()}
                    {recent_events()}
                    {spend()}
                </div>
            </Show>
        </section>
    }
}

/// A list's heading, with the count `count` takes from the model.
fn head(
    title: &'static str,
    count: fn(&DashboardModel) -> usize,
    all: Option<&'static str>,
) -> impl IntoView {
    let store = use_store();
    move || {
        store
            .model
            .with(|m| m.as_ref().map(|m| section_head(title, count(m), all)))
    }
}

/// `text` while `none` says the model has nothing for a list.
fn empty(none: fn(&DashboardModel) -> bool, text: &'static str) -> impl IntoView {
    let store = use_store();
    move || {
        store
            .model
            .with(|m| m.as_ref().is_some_and(|m| none(m)))
            .then(|| widgets::empty_note(text))
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

fn attention() -> impl IntoView {
    let store = use_store();
    let items = keyed_items(store, VIEW, |m| {
        m.attention
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
                (
                    format!("{}/{}", a.row_id, a.kind.as_str()),
                    (a.clone(), path),
                )
            })
            .collect()
    });
    view! {
        <section class="panel wide" id="attention">
            {head("Needs attention", |m| totals(m).attention_total, Some("/operator"))}
            <ol class="list" data-testid="attention-list">
                <For each=items key=|(key, _)| key.clone() children=|(_, (a, path))| attention_item(&a, path)/>
            </ol>
            {empty(|m| m.attention.is_empty(), "Nothing needs attention.")}
        </section>
    }
}

/// One entry of the queue, linking `path` (its row, batch or item) when there is one.
fn attention_item(a: &Attention, path: Option<String>) -> impl IntoView {
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
}

fn active_work() -> impl IntoView {
    row_panel(RowPanel {
        testid: "active-work",
        title: "Active work",
        total: |m| totals(m).active_work,
        all: "/operator?state=running",
        shows: Row::is_active_work,
        none: "No active work.",
    })
}

fn recoverable() -> impl IntoView {
    row_panel(RowPanel {
        testid: "recoverable-work",
        title: "Recoverable work",
        total: |m| totals(m).recoverable,
        all: "/operator?state=dead",
        shows: Row::is_recoverable,
        none: "No recoverable work.",
    })
}

/// A panel of the rows `shows` picks.
struct RowPanel {
    testid: &'static str,
    title: &'static str,
    /// How many rows the server counted before cutting the list down.
    total: fn(&DashboardModel) -> usize,
    /// The operator table filtered to them.
    all: &'static str,
    shows: fn(&Row) -> bool,
    /// What the panel says without any.
    none: &'static str,
}

fn row_panel(panel: RowPanel) -> impl IntoView {
    let store = use_store();
    let shows = panel.shows;
    let rows = keyed_items(store, VIEW, move |m| {
        m.rows
            .iter()
            .filter(|r| shows(r))
            .take(CAP)
            .map(|r| (r.id.clone(), r.clone()))
            .collect()
    });
    let none = move || {
        store
            .model
            .with(|m| m.as_ref().is_some_and(|m| !m.rows.iter().any(shows)))
            .then(|| widgets::empty_note(panel.none))
    };
    view! {
        <section class="panel" data-testid=panel.testid>
            {head(panel.title, panel.total, Some(panel.all))}
            <ul class="list">
                <For each=rows key=|(key, _)| key.clone() children=|(_, r)| row_line(&r)/>
            </ul>
            {none}
        </section>
    }
}

fn batch_repairs() -> impl IntoView {
    let store = use_store();
    let batches = keyed_items(store, VIEW, |m| {
        m.batches
            .iter()
            .filter(|b| !b.repairs.is_empty())
            .take(CAP)
            .map(|b| (b.id.clone(), b.clone()))
            .collect()
    });
    view! {
        <section class="panel" data-testid="batch-repairs">
            {head("Batch repairs", |m| totals(m).batch_repairs, Some("/batches?tier=all"))}
            <ul class="list">
                <For each=batches key=|(key, _)| key.clone() children=|(_, b)| repair_line(&b)/>
            </ul>
            {empty(|m| m.batches.iter().all(|b| b.repairs.is_empty()), "No batch needs repair.")}
        </section>
    }
}

/// A batch and the repairs it needs.
fn repair_line(b: &BatchView) -> impl IntoView {
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
}

fn qa_gaps() -> impl IntoView {
    let store = use_store();
    let gaps = keyed_items(store, VIEW, |m| {
        m.qa.iter()
            .filter(|q| q.status.is_gap())
            .take(CAP)
            .map(|q| (q.id.clone(), q.clone()))
            .collect()
    });
    view! {
        <section class="panel" id="qa" data-testid="qa-gaps">
            {head("QA validation gaps", |m| totals(m).qa_gaps, None)}
            <ul class="list">
                <For each=gaps key=|(key, _)| key.clone() children=|(_, q)| qa_line(&q)/>
            </ul>
            {empty(|m| !m.qa.iter().any(|q| q.status.is_gap()), "No QA validation gaps.")}
        </section>
    }
}

/// A QA gap: its status, the item, what is missing and its batch.
fn qa_line(q: &QaItem) -> impl IntoView {
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
}

fn recent_events() -> impl IntoView {
    let store = use_store();
    let events = keyed_items(store, VIEW, |m| {
        m.recent_events
            .iter()
            .take(CAP)
            .map(|e| (e.id.clone(), e.clone()))
            .collect()
    });
    view! {
        <section class="panel wide" data-testid="recent-events">
            {head("Recent events", |m| m.recent_events.len(), None)}
            <ul class="list">
                <For each=events key=|(key, _)| key.clone() children=|(_, e)| event_line(&e)/>
            </ul>
            {empty(|m| m.recent_events.is_empty(), "No events yet.")}
        </section>
    }
}

/// An event: its kind, subject, agent, message and age.
fn event_line(e: &EventView) -> impl IntoView {
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
}

/// What the coordinator's lane runs cost: the total, the costliest batches and workers, and
/// a chart of the cost per day. Shown once any lane ran.
fn spend() -> impl IntoView {
    let store = use_store();
    move || {
        store.model.with(|m| {
            m.as_ref()
                .filter(|m| !m.spend.is_empty())
                .map(|m| spend_panel(&m.spend))
        })
    }
}

fn spend_panel(s: &SpendSummary) -> impl IntoView {
    view! {
        <section class="panel wide" data-testid="spend">
            <h2>"Lane spend"</h2>
            <p data-testid="spend-total">{format::spend(&s.total)}</p>
            {chart::cost_per_day(&s.days)}
            <div class="grid">
                {spend_table("By batch", "spend-batches", &s.batches, true)}
                {spend_table("By worker", "spend-workers", &s.workers, false)}
            </div>
        </section>
    }
}

fn spend_table(
    title: &'static str,
    testid: &'static str,
    rows: &[SpendRow],
    batches: bool,
) -> impl IntoView {
    let rows = rows
        .iter()
        .map(|r| {
            let key = if batches {
                view! { <a href=format::batch_path(&r.key)>{r.key.clone()}</a> }.into_any()
            } else {
                view! { <span>{r.key.clone()}</span> }.into_any()
            };
            view! {
                <tr data-testid="spend-row" data-key=r.key.clone()>
                    <td>{key}</td>
                    <td>{r.spend.runs}</td>
                    <td>{format::tokens(r.spend.tokens)}</td>
                    <td data-testid="spend-cost">{format::cost(Some(r.spend.cost_usd))}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div>
            <h3>{title}</h3>
            <table class="rows" data-testid=testid>
                <thead><tr><th>{if batches { "Batch" } else { "Worker" }}</th><th>"Runs"</th><th>"Tokens"</th><th>"Cost"</th></tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
}
