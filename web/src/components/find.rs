//! Universal Find (Ctrl-K or ⌘-K, or the top bar's button): a dialog that searches jobs,
//! batches and machines with shared's `dashboard::view::find`, usable by keyboard alone — type,
//! ↑/↓/Home/End move through the results, Enter opens the highlighted one (else the exact
//! match), Escape closes.

use agent_coord_shared::dashboard::view::find;
use agent_coord_shared::dashboard::view::find::FindResult;
use agent_coord_shared::dashboard::view::find::FindTarget;
use agent_coord_shared::dashboard::view::find::Found;
use agent_coord_shared::serde_name::WireName;
use leptos::ev;
use leptos::html;
use leptos::prelude::*;
use leptos_router::hooks::use_navigate;

use crate::api;
use crate::format;
use crate::live;

/// The server's answer and the query it answers.
type Answer = (String, Found);

/// Where a result leads.
fn href(result: &FindResult) -> Option<String> {
    match result.target.as_ref()? {
        FindTarget::Item { repo, target } => format::item_path(repo, target),
        FindTarget::Batch(id) => Some(format::batch_path(id)),
        FindTarget::Machine(id) => Some(format!("/machines?machine={}", format::encode_query(id))),
    }
}

/// What the dialog holds while it is open.
#[derive(Clone, Copy)]
struct FindState {
    open: RwSignal<bool>,
    /// The text typed.
    query: RwSignal<String>,
    /// The highlighted result, once the keyboard moved to one.
    active: RwSignal<Option<usize>>,
    /// The newest answer; it may answer an older query until the newest one's arrives.
    answer: Memo<Answer>,
    /// An Enter pressed before the answer to the text typed arrived: it opens that answer's
    /// match when it comes.
    enter_pending: RwSignal<bool>,
}

impl FindState {
    /// Opens the dialog on a new, empty search.
    fn show(self) {
        self.query.set(String::new());
        self.active.set(None);
        self.open.set(true);
    }

    /// Whether the answer shown is the one to the text typed.
    fn current(self) -> bool {
        self.answer
            .with_untracked(|(q, _)| *q == self.query.get_untracked())
    }
}

/// The server's search over the whole model (the page holds one view of it): asked again
/// for every query and every new model version. A failed search keeps the last answer.
fn answers(query: RwSignal<String>) -> Memo<Answer> {
    let answers = live::resource(move || {
        let q = query.get();
        async move {
            if q.trim().is_empty() {
                return (q, Ok(Found::default()));
            }
            let url = format!("/api/find?q={}", format::encode_query(&q));
            let found = api::get_json::<Found>(&url).await;
            (q, found)
        }
    });
    Memo::new(move |previous: Option<&Answer>| match answers.get() {
        Some((q, Ok(found))) => (q, found),
        _ => previous.cloned().unwrap_or_default(),
    })
}

/// The Find button and dialog.
#[component]
pub fn Find() -> impl IntoView {
    let query = RwSignal::new(String::new());
    let state = FindState {
        open: RwSignal::new(false),
        query,
        active: RwSignal::new(None),
        answer: answers(query),
        enter_pending: RwSignal::new(false),
    };
    let handle = window_event_listener(ev::keydown, move |e| {
        if (e.ctrl_key() || e.meta_key()) && e.key().eq_ignore_ascii_case("k") {
            e.prevent_default();
            state.show();
        }
    });
    on_cleanup(move || handle.remove());
    let navigate = use_navigate();
    let go = move |result: &FindResult| {
        if let Some(path) = href(result) {
            state.open.set(false);
            state.query.set(String::new());
            state.active.set(None);
            navigate(&path, Default::default());
        }
    };
    open_when_answered(state, go.clone());
    view! {
        <button class="find-open" data-testid="find-open" title="Find (Ctrl-K)" on:click=move |_| state.show()>
            "Find anything… "
            <kbd>"Ctrl K"</kbd>
        </button>
        <Show when=move || state.open.get()>
            <div class="find-scrim" on:mousedown=move |_| state.open.set(false)></div>
            <div class="find-dialog" role="dialog" aria-modal="true" aria-label="Find" data-testid="find-dialog">
                <FindInput state=state go=go.clone()/>
                <FindResults state=state go=go.clone()/>
            </div>
        </Show>
    }
}

/// Opens the match of an answer that an early Enter waited for, once it is here.
fn open_when_answered(state: FindState, go: impl Fn(&FindResult) + 'static) {
    Effect::new(move |_| {
        state.answer.track();
        if state.enter_pending.get_untracked() && state.current() {
            state.enter_pending.set(false);
            if let Some(r) = state.answer.with_untracked(|(_, f)| f.open.clone()) {
                go(&r);
            }
        }
    });
}

/// The search field, focused when the dialog opens, and its keys.
#[component]
fn FindInput(state: FindState, go: impl Fn(&FindResult) + Clone + 'static) -> impl IntoView {
    let input = NodeRef::<html::Input>::new();
    // The node exists only while the dialog is open.
    Effect::new(move |_| {
        if let Some(el) = input.get() {
            let _ = el.focus();
        }
    });
    view! {
        <input
            node_ref=input
            type="search"
            data-testid="find-input"
            placeholder="Find anything…"
            aria-label="Find anything"
            aria-controls="find-results"
            aria-activedescendant=move || state.active.get().map(|i| format!("find-result-{i}")).unwrap_or_default()
            prop:value=move || state.query.get()
            on:input=move |e| {
                state.query.set(event_target_value(&e));
                state.active.set(None);
            }
            on:keydown=move |e| on_key(state, &e, &go)
        />
    }
}

/// Moves the highlight, opens a result on Enter, or closes on Escape.
fn on_key(state: FindState, e: &ev::KeyboardEvent, go: &impl Fn(&FindResult)) {
    let n = state.answer.with_untracked(|(_, f)| f.results.len());
    let active = state.active.get_untracked();
    let moved = match e.key().as_str() {
        "Escape" => {
            state.open.set(false);
            None
        }
        "ArrowDown" => Some(active.map_or(0, |i| (i + 1).min(n.saturating_sub(1)))),
        "ArrowUp" => Some(active.map_or(0, |i| i.saturating_sub(1))),
        "Home" => Some(0),
        "End" => Some(n.saturating_sub(1)),
        "Enter" => {
            e.prevent_default();
            let chosen = match active {
                Some(i) => state
                    .answer
                    .with_untracked(|(_, f)| f.results.get(i).cloned()),
                None if !state.current() => {
                    state.enter_pending.set(true);
                    None
                }
                None => state.answer.with_untracked(|(_, f)| f.open.clone()),
            };
            if let Some(r) = chosen {
                go(&r);
            }
            None
        }
        _ => None,
    };
    if let Some(i) = moved {
        e.prevent_default();
        state.active.set((n > 0).then_some(i));
    }
}

/// The results of the newest answer, or what to type.
#[component]
fn FindResults(
    state: FindState,
    go: impl Fn(&FindResult) + Clone + Send + Sync + 'static,
) -> impl IntoView {
    // A memo, so the list (and its keyed rows) stays while answers with results follow each
    // other.
    let note = Memo::new(move |_| {
        let q = state.query.get();
        if q.trim().is_empty() {
            return Some(find::EMPTY_TEXT.to_string());
        }
        let empty = state.answer.with(|(_, f)| f.results.is_empty());
        empty.then(|| find::no_match_text(&q))
    });
    let results = move || {
        state
            .answer
            .with(|(_, f)| f.results.iter().cloned().enumerate().collect::<Vec<_>>())
    };
    let more = move || state.answer.with(|(_, f)| f.more);
    move || match note.get() {
        Some(text) => view! { <p class="muted" data-testid="find-empty">{text}</p> }.into_any(),
        None => {
            let go = go.clone();
            view! {
                <ul class="find-results" role="listbox" id="find-results" aria-label="Find results">
                    <For
                        each=results
                        key=|(i, r)| (*i, r.kind.wire_name(), r.id.clone())
                        children=move |(i, r)| result_item(state, i, r, go.clone())
                    />
                </ul>
                {move || {
                    let more = more();
                    (more > 0).then(|| view! { <p class="muted" data-testid="find-more">{find::more_text(more)}</p> })
                }}
            }
            .into_any()
        }
    }
}

/// One result: its kind, label and context; a click opens it.
fn result_item(
    state: FindState,
    i: usize,
    r: FindResult,
    go: impl Fn(&FindResult) + 'static,
) -> impl IntoView {
    let kind = r.kind.wire_name();
    let (id, label, context) = (r.id.clone(), r.label.clone(), r.context.clone());
    view! {
        <li
            role="option"
            id=format!("find-result-{i}")
            class:active=move || state.active.get() == Some(i)
            aria-selected=move || (state.active.get() == Some(i)).to_string()
            data-testid="find-result"
            data-kind=kind
            data-id=id
            on:mousedown=move |e| {
                e.prevent_default();
                go(&r);
            }
        >
            <span class="badge">{kind}</span>
            " "
            <span class="label">{label}</span>
            " "
            <span class="muted">{context}</span>
        </li>
    }
}
