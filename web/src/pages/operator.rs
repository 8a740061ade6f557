//! `/operator?q=&state=&page=`: the dense, searchable, paginated table of every row.

use agent_coord_shared::dashboard::model::DashboardModel;
use agent_coord_shared::dashboard::model::Row;
use agent_coord_shared::dashboard::model::RowState;
use agent_coord_shared::dashboard::model::Slice;
use agent_coord_shared::dashboard::view::slice::View;
use agent_coord_shared::record::is_http_url;
use leptos::prelude::*;
use leptos_router::hooks::use_navigate;
use leptos_router::hooks::use_query_map;
use leptos_router::NavigateOptions;

use super::keyed_items;
use super::shows_view;
use super::slice_view;
use super::use_view;
use super::LOADING;
use crate::components::prompt;
use crate::components::prompt::PromptPanel;
use crate::components::widgets;
use crate::format;
use crate::live::use_store;

/// The operator page.
#[component]
pub fn OperatorPage() -> impl IntoView {
    let store = use_store();
    let query = use_query_map();
    let q = Memo::new(move |_| query.with(|m| m.get("q").unwrap_or_default()));
    let state = Memo::new(move |_| query.with(|m| m.get("state").unwrap_or_default()));
    let page = Memo::new(move |_| query.with(|m| format::page_number(m.get("page").as_deref())));
    // The server searches, filters and pages the rows; this page renders what it sends.
    let wanted = Memo::new(move |_| {
        View::Operator {
            q: q.get(),
            state: RowState::parse(&state.get()),
            page: page.get(),
        }
        .query()
    });
    use_view(move || View::Operator {
        q: q.get(),
        state: RowState::parse(&state.get()),
        page: page.get(),
    });
    // Until the answer to a new search arrives, the last one stays, marked busy.
    let busy = Memo::new(move |_| {
        store.model.with(|m| {
            m.as_ref()
                .and_then(|m| m.slice.as_ref())
                .is_none_or(|s| s.query != wanted.get())
        })
    });
    let navigate = use_navigate();
    let on_input = move |ev| {
        let text = event_target_value(&ev);
        let href = format!(
            "/operator{}",
            format::query_string(&[("q", &text), ("state", &state.get_untracked())])
        );
        let options = NavigateOptions {
            replace: true,
            scroll: false,
            ..Default::default()
        };
        navigate(&href, options);
    };
    view! {
        <section class="page operator">
            <h1>"Operator"</h1>
            <input
                class="search"
                type="search"
                data-testid="operator-search"
                aria-label="Search rows"
                placeholder="Search: 123, #123, PR #123, issue #123, repo#123, URL, branch, agent, machine, thread"
                prop:value=move || q.get()
                on:input=on_input
            />
            <Show when=move || shows_view(store, "operator") fallback=|| widgets::loading(LOADING)>
                <OperatorTable q=q state=state busy=busy/>
            </Show>
            <PromptPanel/>
        </section>
    }
}

fn href(q: &str, state: &str, page: usize) -> String {
    let page = if page > 1 {
        page.to_string()
    } else {
        String::new()
    };
    format!(
        "/operator{}",
        format::query_string(&[("q", q), ("state", state), ("page", &page)])
    )
}

/// The rows the server sent, with their filter chips, summary and pager. Each part follows
/// the model, and links keep the query of the answer shown (not of the text being typed);
/// the rows are keyed, so a row the next answer also holds keeps its place.
#[component]
fn OperatorTable(q: Memo<String>, state: Memo<String>, busy: Memo<bool>) -> impl IntoView {
    let store = use_store();
    let with_slice = move |f: &dyn Fn(&DashboardModel, &Slice) -> AnyView| {
        store.model.with(|m| {
            let m = m.as_ref().filter(|m| slice_view(m) == Some("operator"))?;
            let sel = m.slice.clone().unwrap_or_default();
            Some(f(m, &sel))
        })
    };
    let chips = move || {
        with_slice(&|_, sel| chips(sel, &q.get_untracked(), &state.get_untracked()).into_any())
    };
    let summary = move || with_slice(&|m, sel| summary(m, sel).into_any());
    let rows = keyed_items(store, "operator", |m| {
        m.rows.iter().map(|r| (r.id.clone(), r.clone())).collect()
    });
    let empty = move || {
        with_slice(&|m, _| {
            if m.rows.is_empty() {
                widgets::empty_note("No rows match.").into_any()
            } else {
                ().into_any()
            }
        })
    };
    let pager = move || {
        with_slice(&|_, sel| {
            let (q, state) = (q.get_untracked(), state.get_untracked());
            widgets::pager(sel.page, sel.pages, move |p| href(&q, &state, p)).into_any()
        })
    };
    view! {
        {chips}
        {summary}
        <div class="table-wrap" aria-busy=move || busy.get().to_string() data-testid="operator-table">
            <table class="rows">
                <thead>
                    <tr>
                        <th><span class="visually-hidden">"Select"</span></th>
                        <th>"State"</th>
                        <th>"Work"</th>
                        <th>"Owner"</th>
                        <th>"Batch / lane"</th>
                        <th>"Status / message"</th>
                        <th>"Warnings"</th>
                    </tr>
                </thead>
                <tbody>
                    <For each=rows key=|(key, _)| key.clone() children=|(_, row)| row_view(&row)/>
                </tbody>
            </table>
        </div>
        {empty}
        {pager}
    }
}

/// "Showing a–b of n rows (…)".
fn summary(m: &DashboardModel, sel: &Slice) -> impl IntoView {
    let text = format!(
        "Showing {}–{} of {} rows ({} match the search, {} in total)",
        if m.rows.is_empty() { 0 } else { sel.first + 1 },
        sel.first + m.rows.len(),
        sel.selected,
        sel.matched,
        sel.rows_total
    );
    view! { <p class="muted" data-testid="operator-summary">{text}</p> }
}

fn chips(sel: &Slice, q: &str, state: &str) -> impl IntoView {
    let all = widgets::chip(
        "All".into(),
        Some(sel.matched),
        href(q, "", 1),
        state.is_empty(),
    );
    let by_state = sel
        .rows_by_state
        .iter()
        .map(|(s, n)| {
            let name = s.as_str();
            widgets::chip(name.into(), Some(*n), href(q, name, 1), state == name)
        })
        .collect_view();
    view! { <div class="chips" role="group" aria-label="Filter by state">{all}{by_state}</div> }
}

fn row_view(row: &Row) -> impl IntoView {
    view! {
        <tr data-testid="operator-row" data-row-id=row.id.clone() class=format!("state-row-{}", row.state.as_str())>
            {prompt::select_cell(row)}
            // The cell stays a table cell (its borders line up with the row's); the badges
            // wrap inside it.
            <td class="cell-state">
                <div class="state-stack">
                    {widgets::state_badge(row.state)}
                    {widgets::liveness_badge(row.liveness)}
                    {widgets::age(row.last_activity.clone())}
                </div>
            </td>
            <td class="cell-work">{work_cell(row)}</td>
            <td class="cell-owner">
                <div>{format::or_unknown(row.agent.as_deref())}</div>
                <div class="muted">
                    {format::or_unknown(row.machine.as_deref())} " / " {format::or_dash(row.host.as_deref())}
                </div>
            </td>
            <td class="cell-batch">{batch_cell(row)}</td>
            <td class="cell-status">
                <div>{format::or_dash(row.status.as_deref())}</div>
                <div class="muted">{format::or_dash(row.message.as_deref())}</div>
            </td>
            <td class="cell-warnings" title=row.warnings.join("\n")>{row.warnings.len()}</td>
        </tr>
    }
}

fn work_cell(row: &Row) -> impl IntoView {
    let pr = row
        .pr_url
        .clone()
        .filter(|u| is_http_url(u))
        .map(|u| widgets::safe_link(Some(u), "PR ↗".into()));
    view! {
        <div>{widgets::maybe_link(format::row_path(row), format::work_label(row))} " " {pr}</div>
        <div class="title">{format::or_dash(row.title.as_deref())}</div>
        <div class="muted">{row.repo.clone()}</div>
    }
}

fn batch_cell(row: &Row) -> AnyView {
    match &row.batch_id {
        Some(b) => view! {
            <a href=format::batch_path(b)>{b.clone()}</a>
            <div class="muted">{format::or_dash(row.lane.as_deref())}</div>
        }
        .into_any(),
        None => view! { <span>{format::DASH}</span> }.into_any(),
    }
}
