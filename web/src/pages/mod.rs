//! One module per route.

pub mod batch;
pub mod batches;
pub mod health;
pub mod import;
pub mod item;
pub mod lanes;
pub mod machines;
pub mod operator;
pub mod overview;

use agent_coord_shared::dashboard::model::DashboardModel;
use agent_coord_shared::dashboard::model::Row;
use agent_coord_shared::dashboard::view::slice::View;
use leptos::prelude::*;

use crate::components::widgets;
use crate::format;
use crate::live::use_store;
use crate::live::Store;

/// The loading text every model-backed page shows first.
pub const LOADING: &str = "Loading coordination dashboard";

/// Asks the store for `view` (and again whenever it changes, e.g. with the page's query).
pub fn use_view(view: impl Fn() -> View + Send + Sync + 'static) {
    let store = use_store();
    Effect::new(move |_| {
        let query = view().query();
        if store.view.get_untracked() != query {
            store.view.set(query);
        }
    });
}

/// Whether the store holds the model of the view named `name`.
pub fn shows_view(store: Store, name: &str) -> bool {
    store
        .model
        .with(|m| m.as_ref().is_some_and(|m| slice_view(m) == Some(name)))
}

/// The key `<For>` gives an item of the model: the model it came from (its version and the
/// time it was generated) and the item's own id. An item keeps its place on the page while
/// the models that carry it are the same one, and is drawn again from a new one.
pub type ItemKey = (String, String, String);

/// The items `pick` takes, with their ids, from the store's model of the view named `name`
/// (none from another view's model), keyed for `<For>`.
pub fn keyed_items<T>(
    store: Store,
    name: &'static str,
    pick: impl Fn(&DashboardModel) -> Vec<(String, T)> + Send + Sync + 'static,
) -> impl Fn() -> Vec<(ItemKey, T)> + Send + Sync + 'static {
    move || {
        store.model.with(|m| match m {
            Some(m) if slice_view(m) == Some(name) => pick(m)
                .into_iter()
                .map(|(id, item)| ((m.version.clone(), m.generated_at.clone(), id), item))
                .collect(),
            _ => Vec::new(),
        })
    }
}

/// The name of the view a model was cut for.
pub fn slice_view(model: &DashboardModel) -> Option<&str> {
    model.slice.as_ref().map(|s| s.view.as_str())
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
