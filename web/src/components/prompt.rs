//! The PR-batch prompt: checkboxes on selectable operator rows, and the panel that turns
//! the selection into a `$pr-batch` launch prompt (shared's `dashboard::act::launch_prompt`), copies
//! it, or imports it as a batch plan in one step.
//!
//! The selection lives in context, outside the model, so it survives every refresh and
//! every page of the table: it keeps each selected row as last seen (the page only holds
//! the rows of the page shown), refreshed whenever a new model shows it again.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use agent_coord_shared::dashboard::act::launch_prompt;
use agent_coord_shared::dashboard::act::launch_prompt::Handoff;
use agent_coord_shared::dashboard::model::ImportBody;
use agent_coord_shared::dashboard::model::LaunchPrompt;
use agent_coord_shared::dashboard::model::Row;
use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::api;
use crate::api::ApiError;
use crate::clipboard;
use crate::components::widgets;
use crate::format;
use crate::live::use_store;

/// The selected rows, by id, as last seen.
#[derive(Clone, Copy)]
pub struct Selection(pub RwSignal<BTreeMap<String, Row>>);

/// Provides an empty selection to the pages below, kept current with every new model.
pub fn provide_selection() {
    let selection = RwSignal::new(BTreeMap::<String, Row>::new());
    provide_context(Selection(selection));
    let store = use_store();
    Effect::new(move |_| {
        store.model.with(|m| {
            let Some(m) = m else { return };
            let seen: Vec<&Row> = selection
                .with_untracked(|s| m.rows.iter().filter(|r| s.contains_key(&r.id)).collect());
            if !seen.is_empty() {
                selection.update(|s| {
                    for r in seen {
                        s.insert(r.id.clone(), r.clone());
                    }
                });
            }
        });
    });
}

fn use_selection() -> Selection {
    use_context::<Selection>().unwrap_or_else(|| Selection(RwSignal::new(BTreeMap::new())))
}

/// The selection cell of an operator row: a checkbox when the row is selectable.
pub fn select_cell(row: &Row) -> AnyView {
    if !row.is_selectable() {
        return view! { <td class="cell-select"></td> }.into_any();
    }
    let selection = use_selection().0;
    let label = format!("Select {} for a PR-batch prompt", format::work_label(row));
    let id = row.id.clone();
    let picked = row.clone();
    view! {
        <td class="cell-select">
            <input
                type="checkbox"
                data-testid="select-row"
                data-row-id=row.id.clone()
                aria-label=label.clone()
                title=label
                prop:checked=move || selection.with(|s| s.contains_key(&id))
                on:change=move |ev| {
                    let on = event_target_checked(&ev);
                    selection.update(|s| {
                        if on {
                            s.insert(picked.id.clone(), picked.clone());
                        } else {
                            s.remove(&picked.id);
                        }
                    });
                }
            />
        </td>
    }
    .into_any()
}

/// The panel: "PR-batch prompt · N selected", the prompt (or why there is none), a copy
/// button and "Import as batch".
#[component]
pub fn PromptPanel() -> impl IntoView {
    let store = use_store();
    let selection = use_selection().0;
    let built = Memo::new(move |_| {
        store.model.with(|m| m.is_some()).then(|| {
            selection.with(|s| {
                let rows: Vec<Row> = s.values().cloned().collect();
                let ids: BTreeSet<String> = s.keys().cloned().collect();
                launch_prompt::build(&rows, &ids)
            })
        })
    });
    let count =
        Memo::new(move |_| selection.with(|s| s.values().filter(|r| r.is_selectable()).count()));
    // Kept here, outside the prompt that is built again with every selection.
    let state = HandoffState {
        selection,
        copied: RwSignal::new(None),
        pending: RwSignal::new(false),
        imported: RwSignal::new(None),
    };
    let prompt = move || match built.get() {
        None => {
            view! { <p class="muted" data-testid="prompt-disabled">{launch_prompt::DISABLED}</p> }
                .into_any()
        }
        Some(Err(why)) => view! {
            <pre class="prompt-refusal" data-testid="prompt-text">{why.to_string()}</pre>
        }
        .into_any(),
        Some(Ok(handoff)) => handoff_view(handoff, state).into_any(),
    };
    view! {
        <details class="panel prompt-panel" data-testid="prompt-panel" open=true>
            <summary data-testid="prompt-summary">
                {move || format!("PR-batch prompt · {} selected", count.get())}
            </summary>
            <p class="muted">
                "Select ready items in the Operator table, then copy a $pr-batch handoff."
            </p>
            {move || state.imported.get().map(|r| widgets::saved_plan("prompt-import-result", &r))}
            {prompt}
        </details>
    }
}

/// What the panel remembers about the handoff it offers.
#[derive(Clone, Copy)]
struct HandoffState {
    selection: RwSignal<BTreeMap<String, Row>>,
    /// Whether the last copy succeeded, once there was one.
    copied: RwSignal<Option<bool>>,
    /// Whether an import is in flight.
    pending: RwSignal<bool>,
    /// The batch id the last import saved, or why it failed.
    imported: RwSignal<Option<Result<String, ApiError>>>,
}

/// The prompt's text with its copy and import buttons.
fn handoff_view(handoff: Handoff, state: HandoffState) -> impl IntoView {
    let (to_copy, to_import) = (handoff.text.clone(), handoff.text.clone());
    let copy = move |_| {
        let text = to_copy.clone();
        spawn_local(async move {
            let ok = clipboard::copy(&text).await;
            state.copied.try_set(Some(ok));
        });
    };
    let import = move |_| {
        let body = ImportBody::Prompt(LaunchPrompt {
            launch_prompt: to_import.clone(),
        });
        state.pending.set(true);
        state.imported.set(None);
        spawn_local(async move {
            let outcome = api::import_batch(&body).await;
            if outcome.is_ok() {
                state.selection.try_set(BTreeMap::new());
            }
            state.pending.try_set(false);
            state.imported.try_set(Some(outcome));
        });
    };
    let copy_label = move || match state.copied.get() {
        None => "Copy prompt",
        Some(true) => "Copied ✓",
        Some(false) => "Could not copy",
    };
    view! {
        <div class="actions">
            <button data-testid="prompt-copy" on:click=copy>{copy_label}</button>
            {(!crate::past::active()).then(|| view! {
                <button
                    class="primary"
                    data-testid="prompt-import"
                    disabled=move || state.pending.get()
                    on:click=import
                >
                    "Import as batch"
                </button>
            })}
            <span class="muted" data-testid="prompt-batch-id">{handoff.batch_id.clone()}</span>
        </div>
        <pre data-testid="prompt-text">{handoff.text}</pre>
    }
}
