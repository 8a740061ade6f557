//! `/operator?q=&state=&page=`: the dense, searchable, paginated table of every row.

use std::sync::Arc;

use agent_coord_shared::dashboard::model::DashboardModel;
use agent_coord_shared::dashboard::model::Row;
use agent_coord_shared::dashboard::model::RowState;
use agent_coord_shared::record::is_http_url;
use leptos::prelude::*;
use leptos_router::hooks::use_navigate;
use leptos_router::hooks::use_query_map;
use leptos_router::NavigateOptions;

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
    let selection = Memo::new(move |_| {
        let wanted = RowState::parse(&state.get());
        let q = q.get();
        store
            .model
            .with(|m| m.as_ref().map(|m| format::select_rows(&m.rows, &q, wanted)))
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
            {move || {
                let model = store.model.get();
                match (model, selection.get()) {
                    (Some(m), Some(sel)) => table(&m, &sel, &q.get(), &state.get(), page.get()).into_any(),
                    _ => widgets::loading(LOADING).into_any(),
                }
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

fn table(
    m: &Arc<DashboardModel>,
    sel: &format::Selection,
    q: &str,
    state: &str,
    page: usize,
) -> impl IntoView {
    let pages = format::page_count(sel.rows.len(), format::ROWS_PER_PAGE);
    let range = format::page_range(sel.rows.len(), format::ROWS_PER_PAGE, page);
    let rows = sel.rows[range.clone()]
        .iter()
        .filter_map(|i| m.rows.get(*i))
        .map(row_view)
        .collect_view();
    let (q1, s1) = (q.to_string(), state.to_string());
    let pager = widgets::pager(page, pages, move |p| href(&q1, &s1, p));
    let summary = format!(
        "Showing {}–{} of {} rows ({} match the search, {} in total)",
        if sel.rows.is_empty() {
            0
        } else {
            range.start + 1
        },
        range.end,
        sel.rows.len(),
        sel.matched,
        m.rows.len()
    );
    let empty = sel
        .rows
        .is_empty()
        .then(|| widgets::empty_note("No rows match."));
    view! {
        {chips(sel, q, state)}
        <p class="muted" data-testid="operator-summary">{summary}</p>
        <div class="table-wrap">
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

fn chips(sel: &format::Selection, q: &str, state: &str) -> impl IntoView {
    let all = widgets::chip(
        "All".into(),
        Some(sel.matched),
        href(q, "", 1),
        state.is_empty(),
    );
    let by_state = sel
        .by_state
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
            <td class="cell-state">
                {widgets::state_badge(row.state)}
                {widgets::liveness_badge(row.liveness)}
                {widgets::age(row.last_activity.clone())}
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
