//! Universal Find (Ctrl-K or ⌘-K, or the top bar's button): a dialog that searches jobs,
//! batches and machines with shared's `dashboard::view::find`, usable by keyboard alone — type,
//! ↑/↓/Home/End move through the results, Enter opens the highlighted one (else the exact
//! match), Escape closes.

use agent_coord_shared::dashboard::view::find;
use agent_coord_shared::dashboard::view::find::FindResult;
use agent_coord_shared::dashboard::view::find::FindTarget;
use agent_coord_shared::dashboard::view::find::Found;
use leptos::ev;
use leptos::html;
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::use_navigate;

use crate::api;
use crate::format;
use crate::live::use_store;

/// Where a result leads.
fn href(result: &FindResult) -> Option<String> {
    match result.target.as_ref()? {
        FindTarget::Item { repo, target } => format::item_path(repo, target),
        FindTarget::Batch(id) => Some(format::batch_path(id)),
        FindTarget::Machine(id) => Some(format!("/machines?machine={}", format::encode_query(id))),
    }
}

/// The Find button and dialog.
#[component]
pub fn Find() -> impl IntoView {
    let store = use_store();
    let open = RwSignal::new(false);
    let query = RwSignal::new(String::new());
    let active = RwSignal::new(None::<usize>);
    let input = NodeRef::<html::Input>::new();
    // The server searches the whole model (the page holds one view of it); the newest
    // query's answer wins, and a new model version asks again.
    let found = RwSignal::new(Found::default());
    // The query `found` answers, and an Enter pressed before the answer to the text typed
    // arrived (it opens that answer's match when it comes).
    let answered = RwSignal::new(String::new());
    let enter_pending = RwSignal::new(false);
    let seq = StoredValue::new(0u64);
    Effect::new(move |_| {
        let q = query.get();
        store.version.track();
        seq.update_value(|n| *n += 1);
        let mine = seq.get_value();
        if q.trim().is_empty() {
            found.set(Found::default());
            answered.set(q);
            return;
        }
        spawn_local(async move {
            let url = format!("/api/find?q={}", format::encode_query(&q));
            if let Ok(answer) = api::get_json::<Found>(&url).await {
                if seq.try_get_value() == Some(mine) {
                    found.try_set(answer);
                    answered.try_set(q);
                }
            }
        });
    });
    // Every opening starts a new search.
    let show = move || {
        query.set(String::new());
        active.set(None);
        open.set(true);
    };
    let handle = window_event_listener(ev::keydown, move |e| {
        if (e.ctrl_key() || e.meta_key()) && e.key().eq_ignore_ascii_case("k") {
            e.prevent_default();
            show();
        }
    });
    on_cleanup(move || handle.remove());
    // Focus the field whenever the dialog opens (the node exists only while it is open).
    Effect::new(move |_| {
        if open.get() {
            if let Some(el) = input.get() {
                let _ = el.focus();
            }
        }
    });
    let navigate = use_navigate();
    let go = move |result: &FindResult| {
        if let Some(path) = href(result) {
            open.set(false);
            query.set(String::new());
            active.set(None);
            navigate(&path, Default::default());
        }
    };
    let go_key = go.clone();
    let go_later = go.clone();
    // An Enter that came before its answer opens the answer's match once it is here.
    Effect::new(move |_| {
        let q = answered.get();
        if enter_pending.get_untracked() && q == query.get_untracked() {
            enter_pending.set(false);
            if let Some(r) = found.with_untracked(|f| f.open.clone()) {
                go_later(&r);
            }
        }
    });
    let on_key = move |e: ev::KeyboardEvent| {
        let n = found.with_untracked(|f| f.results.len());
        let moved = match e.key().as_str() {
            "Escape" => {
                open.set(false);
                None
            }
            "ArrowDown" => Some(
                active
                    .get_untracked()
                    .map_or(0, |i| (i + 1).min(n.saturating_sub(1))),
            ),
            "ArrowUp" => Some(active.get_untracked().map_or(0, |i| i.saturating_sub(1))),
            "Home" => Some(0),
            "End" => Some(n.saturating_sub(1)),
            "Enter" => {
                e.prevent_default();
                let current = answered.with_untracked(|a| *a == query.get_untracked());
                match active.get_untracked() {
                    Some(i) => {
                        if let Some(r) = found.with_untracked(|f| f.results.get(i).cloned()) {
                            go_key(&r);
                        }
                    }
                    None if !current => enter_pending.set(true),
                    None => {
                        if let Some(r) = found.with_untracked(|f| f.open.clone()) {
                            go_key(&r);
                        }
                    }
                }
                None
            }
            _ => None,
        };
        if let Some(i) = moved {
            e.prevent_default();
            active.set((n > 0).then_some(i));
        }
    };
    let results = move || {
        let f = found.get();
        let q = query.get();
        if q.trim().is_empty() {
            return view! { <p class="muted" data-testid="find-empty">{find::EMPTY_TEXT}</p> }
                .into_any();
        }
        if f.results.is_empty() {
            return view! { <p class="muted" data-testid="find-empty">{find::no_match_text(&q)}</p> }
                .into_any();
        }
        let more = (f.more > 0).then(
            || view! { <p class="muted" data-testid="find-more">{find::more_text(f.more)}</p> },
        );
        let items = f
            .results
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let go = go.clone();
                let result = r.clone();
                view! {
                    <li
                        role="option"
                        id=format!("find-result-{i}")
                        class:active=move || active.get() == Some(i)
                        aria-selected=move || (active.get() == Some(i)).to_string()
                        data-testid="find-result"
                        data-kind=r.kind.as_str()
                        data-id=r.id.clone()
                        on:mousedown=move |e| {
                            e.prevent_default();
                            go(&result);
                        }
                    >
                        <span class="badge">{r.kind.as_str()}</span>
                        " "
                        <span class="label">{r.label.clone()}</span>
                        " "
                        <span class="muted">{r.context.clone()}</span>
                    </li>
                }
            })
            .collect_view();
        view! {
            <ul class="find-results" role="listbox" id="find-results" aria-label="Find results">{items}</ul>
            {more}
        }
        .into_any()
    };
    view! {
        <button class="find-open" data-testid="find-open" title="Find (Ctrl-K)" on:click=move |_| show()>
            "Find anything… "
            <kbd>"Ctrl K"</kbd>
        </button>
        <Show when=move || open.get()>
            <div class="find-scrim" on:mousedown=move |_| open.set(false)></div>
            <div class="find-dialog" role="dialog" aria-modal="true" aria-label="Find" data-testid="find-dialog">
                <input
                    node_ref=input
                    type="search"
                    data-testid="find-input"
                    placeholder="Find anything…"
                    aria-label="Find anything"
                    aria-controls="find-results"
                    aria-activedescendant=move || active.get().map(|i| format!("find-result-{i}")).unwrap_or_default()
                    prop:value=move || query.get()
                    on:input=move |e| {
                        query.set(event_target_value(&e));
                        active.set(None);
                    }
                    on:keydown=on_key.clone()
                />
                {results.clone()}
            </div>
        </Show>
    }
}
