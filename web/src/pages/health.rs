//! `/health`: health signals grouped by title, and unreadable records.

use agent_coord_shared::dashboard::model::DashboardModel;
use agent_coord_shared::dashboard::model::HealthItem;
use agent_coord_shared::dashboard::view::slice::View;
use leptos::prelude::*;

use super::keyed_items;
use super::shows_view;
use super::use_view;
use super::LOADING;
use crate::components::widgets;
use crate::format;
use crate::live::use_store;

/// What the page says when there is nothing to report.
pub const NO_ISSUES: &str = "No coordination health issues found.";

/// The health page.
#[component]
pub fn HealthPage() -> impl IntoView {
    use_view(|| View::Health);
    let store = use_store();
    view! {
        <section class="page health">
            <h1>"Health"</h1>
            <Show when=move || shows_view(store, "health") fallback=|| widgets::loading(LOADING)>
                <HealthReport/>
            </Show>
        </section>
    }
}

/// The signals grouped by title (keyed, so a group the next model also holds keeps its
/// place), and the unreadable records.
#[component]
fn HealthReport() -> impl IntoView {
    let store = use_store();
    let groups = keyed_items(store, "health", |m| {
        let totals = m
            .slice
            .as_ref()
            .map(|s| s.health_by_title.clone())
            .unwrap_or_default();
        group(&m.health)
            .into_iter()
            .map(|(title, items)| {
                let all = totals
                    .iter()
                    .find(|(t, _)| *t == title)
                    .map_or(items.len(), |(_, n)| *n);
                let items: Vec<HealthItem> = items.into_iter().cloned().collect();
                (title.clone(), (title, items, all))
            })
            .collect()
    });
    let empty = move || {
        store
            .model
            .with(|m| {
                m.as_ref()
                    .is_some_and(|m| m.health.is_empty() && m.warnings.is_empty())
            })
            .then(|| view! { <p class="empty" data-testid="health-empty">{NO_ISSUES}</p> })
    };
    let warnings = move || store.model.with(|m| m.as_ref().and_then(|m| unreadable(m)));
    view! {
        {empty}
        <For
            each=groups
            key=|(key, _)| key.clone()
            children=|(_, (title, items, all))| group_view(title, &items, all)
        />
        {warnings}
    }
}

/// The records the model could not read, when there are some.
fn unreadable(m: &DashboardModel) -> Option<impl IntoView> {
    if m.warnings.is_empty() {
        return None;
    }
    let total = m
        .slice
        .as_ref()
        .map_or(m.warnings.len(), |s| s.warnings_total);
    let items = m
        .warnings
        .iter()
        .map(|w| view! { <li data-testid="model-warning">{w.clone()}</li> })
        .collect_view();
    Some(view! {
        <section class="panel">
            <h2>"Unreadable records " <span class="count-pill">{total}</span></h2>
            <ul class="list">{items}</ul>
        </section>
    })
}

/// Groups items by title, keeping first-appearance order.
fn group(items: &[HealthItem]) -> Vec<(String, Vec<&HealthItem>)> {
    let mut groups: Vec<(String, Vec<&HealthItem>)> = Vec::new();
    for item in items {
        match groups.iter_mut().find(|(t, _)| *t == item.title) {
            Some((_, list)) => list.push(item),
            None => groups.push((item.title.clone(), vec![item])),
        }
    }
    groups
}

fn group_view(title: String, items: &[HealthItem], all: usize) -> impl IntoView {
    let list = items.iter().map(item_view).collect_view();
    let more = (all > items.len()).then(|| {
        view! {
            <p class="muted" data-testid="health-more">
                {format!("Showing the first {} of {all}.", items.len())}
            </p>
        }
    });
    view! {
        <section class="panel health-group">
            <h2>{title} " " <span class="count-pill">{all}</span></h2>
            <ul class="list">{list}</ul>
            {more}
        </section>
    }
}

fn item_view(item: &HealthItem) -> impl IntoView {
    let mut meta: Vec<String> = Vec::new();
    if let Some(a) = &item.agent {
        meta.push(format!("agent {a}"));
    }
    if let Some(b) = &item.batch_id {
        meta.push(format!("batch {b}"));
    }
    if let Some(l) = &item.lane {
        meta.push(format!("lane {l}"));
    }
    if let Some(r) = &item.repo {
        meta.push(format!("repo {r}"));
    }
    if let Some(t) = &item.target {
        meta.push(format!("target #{t}"));
    }
    let meta = if meta.is_empty() {
        format::DASH.to_string()
    } else {
        meta.join(" · ")
    };
    view! {
        <li class="health-item" data-testid="health-item" data-signal=item.signal.as_str()>
            {widgets::badge("severity", item.severity.as_str().to_string())}
            <span class="signal">{item.signal.as_str()}</span>
            <span class="detail">{item.detail.clone()}</span>
            <span class="muted">{meta}</span>
        </li>
    }
}
