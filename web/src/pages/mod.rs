//! One module per route.

pub mod batch;
pub mod batches;
pub mod health;
pub mod import;
pub mod item;
pub mod machines;
pub mod operator;
pub mod overview;

use std::sync::Arc;

use agent_coord_shared::dashboard::model::DashboardModel;
use agent_coord_shared::dashboard::model::Row;
use leptos::prelude::*;

use crate::components::widgets;
use crate::format;
use crate::live::use_store;

/// The loading text every model-backed page shows first.
pub const LOADING: &str = "Loading coordination dashboard";

/// Renders `render(model)` once the model is loaded (and again on every new version).
pub fn with_model<V, F>(render: F) -> impl IntoView
where
    V: IntoView + 'static,
    F: Fn(&Arc<DashboardModel>) -> V + Send + Sync + 'static,
{
    let store = use_store();
    move || match store.model.get() {
        Some(model) => render(&model).into_any(),
        None => widgets::loading(LOADING).into_any(),
    }
}

/// A compact one-line summary of a row: state, work link, repo, holder, age.
pub fn row_line(row: &Row) -> impl IntoView {
    let label = format::work_label(row);
    let title = row.title.clone().unwrap_or_default();
    view! {
        <li class="row-line">
            {widgets::state_badge(row.state)}
            {widgets::maybe_link(format::row_path(row), label)}
            <span class="muted">{row.repo.clone()}</span>
            <span class="title">{title}</span>
            <span class="who">{format::or_unknown(row.agent.as_deref())}</span>
            {widgets::age(row.last_activity.clone())}
        </li>
    }
}

/// A section heading with a count and an optional "see all" link.
pub fn section_head(title: &'static str, count: usize, all: Option<&'static str>) -> impl IntoView {
    view! {
        <div class="section-head">
            <h2>{title} <span class="count-pill">{count}</span></h2>
            {all.map(|href| view! { <a class="see-all" href=href>"See all"</a> })}
        </div>
    }
}
