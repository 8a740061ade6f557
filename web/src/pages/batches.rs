//! `/batches?tier=&page=`: the batches board, filtered by tier.

use agent_coord_shared::dashboard::model::BatchSource;
use agent_coord_shared::dashboard::model::BatchView;
use agent_coord_shared::dashboard::view::slice::View;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

use super::keyed_items;
use super::shows_view;
use super::use_view;
use super::LOADING;
use crate::components::widgets;
use crate::format;
use crate::format::TierFilter;
use crate::live::use_store;

/// The batches page.
#[component]
pub fn BatchesPage() -> impl IntoView {
    let store = use_store();
    let query = use_query_map();
    let tier = Memo::new(move |_| query.with(|m| TierFilter::from_key(m.get("tier").as_deref())));
    let page = Memo::new(move |_| query.with(|m| format::page_number(m.get("page").as_deref())));
    // The server filters and pages the cards; this page renders what it sends.
    use_view(move || View::Batches {
        tier: tier.get(),
        page: page.get(),
    });
    view! {
        <section class="page batches">
            <h1>"Batches"</h1>
            <Show when=move || shows_view(store, "batches") fallback=|| widgets::loading(LOADING)>
                <BatchesBoard tier=tier/>
            </Show>
        </section>
    }
}

fn href(tier: TierFilter, page: usize) -> String {
    let tier = if tier == TierFilter::Active {
        ""
    } else {
        tier.key()
    };
    let page = if page > 1 {
        page.to_string()
    } else {
        String::new()
    };
    format!(
        "/batches{}",
        format::query_string(&[("tier", tier), ("page", &page)])
    )
}

/// The tier chips, the cards the server sent (keyed, so a card the next model also holds
/// keeps its place) and the pager, each following the model.
#[component]
fn BatchesBoard(tier: Memo<TierFilter>) -> impl IntoView {
    let store = use_store();
    let slice = move || {
        store
            .model
            .with(|m| m.as_ref().and_then(|m| m.slice.clone()).unwrap_or_default())
    };
    let chips = move || {
        let (sel, tier) = (slice(), tier.get());
        TierFilter::ALL
            .into_iter()
            .map(|f| {
                let n = sel
                    .batches_by_tier
                    .iter()
                    .find(|(key, _)| key == f.key())
                    .map(|(_, n)| *n);
                widgets::chip(f.label().into(), n, href(f, 1), f == tier)
            })
            .collect_view()
    };
    let cards = keyed_items(store, "batches", |m| {
        m.batches
            .iter()
            .map(|b| (b.id.clone(), b.clone()))
            .collect()
    });
    let empty = move || {
        store
            .model
            .with(|m| m.as_ref().is_some_and(|m| m.batches.is_empty()))
            .then(|| widgets::empty_note("No batches in this view."))
    };
    let pager = move || {
        let (sel, tier) = (slice(), tier.get_untracked());
        widgets::pager(sel.page, sel.pages, move |p| href(tier, p))
    };
    view! {
        <div class="chips" role="group" aria-label="Filter by tier">{chips}</div>
        <div class="cards">
            <For each=cards key=|(key, _)| key.clone() children=|(_, b)| card(&b)/>
        </div>
        {empty}
        {pager}
    }
}

/// A "Manifest" or "Inferred" badge.
pub fn source_badge(source: BatchSource) -> impl IntoView {
    let text = match source {
        BatchSource::Manifest => "Manifest",
        BatchSource::Inferred => "Inferred",
    };
    widgets::badge("source", text.to_string())
}

fn card(b: &BatchView) -> impl IntoView {
    let repairs = b
        .repairs
        .iter()
        .map(|r| widgets::badge("repair", r.as_str().to_owned()))
        .collect_view();
    let audit = format!(
        "{}/{} lanes done · {} active · {} blocked · {} dead",
        b.audit.done, b.audit.lanes, b.audit.active, b.audit.blocked, b.audit.dead
    );
    view! {
        <article class=format!("card tier-{}", b.tier.as_str()) data-testid="batch-card" data-batch-id=b.id.clone()>
            <header>
                <a class="card-title" href=format::batch_path(&b.id)>{b.title.clone()}</a>
                {widgets::badge("tier", b.tier.as_str().to_string())}
                {source_badge(b.source)}
                {widgets::badge("control", b.control.as_str().to_string())}
            </header>
            <div class="muted">{b.id.clone()} " · " {format::or_unknown(b.repo.as_deref())}</div>
            <div>{audit}</div>
            <div class="muted">
                {format!("{} events · last ", b.event_count)}
                {widgets::age(b.last_event_at.clone())}
            </div>
            <div>{repairs}</div>
        </article>
    }
}
