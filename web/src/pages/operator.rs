//! `/operator?q=&state=&page=`: the dense, searchable, paginated table of every row.

use std::sync::Arc;

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
            // The table is built again only when an answer arrives: typing changes the URL's
            // query, which only marks the last answer busy until the new one comes.
            {move || match store.model.get() {
                Some(m) if slice_view(&m) == Some("operator") => {
                    table(&m, &q.get_untracked(), &state.get_untracked(), busy).into_any()
                }
                _ => widgets::loading(LOADING).into_any(),
            }}
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

fn table(m: &Arc<DashboardModel>, q: &str, state: &str, busy: Memo<bool>) -> impl IntoView {
    let sel = m.slice.clone().unwrap_or_default();
    let rows = m.rows.iter().map(row_view).collect_view();
    let (q1, s1) = (q.to_string(), state.to_string());
    let pager = widgets::pager(sel.page, sel.pages, move |p| href(&q1, &s1, p));
    let summary = format!(
        "Showing {}–{} of {} rows ({} match the search, {} in total)",
        if m.rows.is_empty() { 0 } else { sel.first + 1 },
        sel.first + m.rows.len(),
        sel.selected,
        sel.matched,
        sel.rows_total
    );
    let empty = m
        .rows
        .is_empty()
        .then(|| widgets::empty_note("No rows match."));
    view! {
        {chips(&sel, q, state)}
        <p class="muted" data-testid="operator-summary">{summary}</p>
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
                <tbody>{rows}</tbody>
            </table>
        </div>
        {empty}
        {pager}
    }
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
