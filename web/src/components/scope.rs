//! The saved target repositories: which repositories the dashboard shows, what it left out
//! (the model's notices), and, for a client on the machine running the dashboard, a field to
//! change them (`PUT /api/settings`). A viewer on another machine sees them read-only.

use leptos::prelude::*;
use leptos::task::spawn_local;
use serde::Deserialize;
use serde_json::json;

use crate::api;
use crate::live;
use crate::live::use_store;

/// What `/api/settings` answers.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Settings {
    target_repos: Vec<String>,
    #[serde(default)]
    editable: bool,
}

/// The scope panel.
#[component]
pub fn ScopePanel() -> impl IntoView {
    let store = use_store();
    let settings = live::detail::<Settings>(|| Some("/api/settings".to_string()));
    let draft = RwSignal::new(None::<String>);
    let pending = RwSignal::new(false);
    let error = RwSignal::new(None::<String>);
    let save = move || {
        let text = draft.get_untracked().unwrap_or_default();
        pending.set(true);
        error.set(None);
        spawn_local(async move {
            let body = json!({ "targetRepos": text });
            let outcome = api::put_json::<Settings>("/api/settings", &body).await;
            pending.try_set(false);
            match outcome {
                Ok(saved) => {
                    settings.try_set(Some(Ok(saved)));
                    draft.try_set(None);
                    live::refresh(store);
                }
                Err(e) => {
                    error.try_set(Some(e));
                }
            }
        });
    };
    let shown = move || match settings.get() {
        None => view! { <span class="muted">"Loading"</span> }.into_any(),
        Some(Err(e)) => view! { <span class="result err">{e}</span> }.into_any(),
        Some(Ok(s)) if s.target_repos.is_empty() => {
            view! { <span data-testid="scope-repos">"All repositories"</span> }.into_any()
        }
        Some(Ok(s)) => {
            view! { <span data-testid="scope-repos">{s.target_repos.join(", ")}</span> }.into_any()
        }
    };
    let editor = move || {
        let s = settings.get().and_then(Result::ok)?;
        if !s.editable {
            return Some(
                view! {
                    <p class="muted" data-testid="scope-read-only">
                        "Read-only: change them from the machine running the dashboard."
                    </p>
                }
                .into_any(),
            );
        }
        let current = s.target_repos.join(", ");
        Some(
            view! {
                <form class="scope-form" on:submit=move |ev| { ev.prevent_default(); save(); }>
                    <label for="scope-input">"Show only (owner/repo, comma-separated)"</label>
                    <input
                        id="scope-input"
                        class="search"
                        data-testid="scope-input"
                        placeholder="acme/app, acme/api"
                        prop:value=move || draft.get().unwrap_or_else(|| current.clone())
                        on:input=move |ev| draft.set(Some(event_target_value(&ev)))
                    />
                    <button class="primary" type="submit" data-testid="scope-save" disabled=move || pending.get()>
                        "Save"
                    </button>
                </form>
            }
            .into_any(),
        )
    };
    let notices = move || {
        store.model.with(|m| {
            m.as_ref()
                .map(|m| m.notices.clone())
                .unwrap_or_default()
                .into_iter()
                .map(|n| view! { <li data-testid="scope-notice">{n}</li> })
                .collect_view()
        })
    };
    view! {
        <section class="panel wide scope" aria-label="Target repositories" data-testid="scope-panel">
            <h2>"Target repositories"</h2>
            <p>{shown}</p>
            {editor}
            {move || error.get().map(|e| view! { <p class="result err" role="alert" data-testid="scope-error">{e}</p> })}
            <ul class="list muted">{notices}</ul>
        </section>
    }
}
