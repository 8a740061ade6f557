//! The saved target repositories: which repositories the dashboard shows, what it left out
//! (the model's notices), and, for a client on the machine running the dashboard, a field to
//! change them (`PUT /api/settings`). A viewer on another machine sees them read-only.

use agent_coord_shared::dashboard::model::SettingsBody;
use agent_coord_shared::dashboard::model::TargetRepos;
use leptos::prelude::*;
use serde::Deserialize;

use crate::api;
use crate::api::ApiError;
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
    // The operator's edit of the field, until it is saved.
    let draft = RwSignal::new(None::<String>);
    let save = Action::new_local(move |text: &String| {
        let text = text.clone();
        async move {
            let body = SettingsBody {
                target_repos: Some(TargetRepos::Text(text)),
            };
            let outcome = api::put_json::<Settings>("/api/settings", &body).await;
            if outcome.is_ok() {
                draft.try_set(None);
                live::refresh(store);
            }
            outcome
        }
    });
    let settings = live::resource(move || {
        save.version().track();
        async move { api::get_json::<Settings>("/api/settings").await }
    });
    let error = move || {
        let failed = save.value().get()?.err()?;
        (!save.pending().get()).then(|| {
            view! { <p class="result err" role="alert" data-testid="scope-error">{failed.to_string()}</p> }
        })
    };
    view! {
        <section class="panel wide scope" aria-label="Target repositories" data-testid="scope-panel">
            <h2>"Target repositories"</h2>
            <Transition fallback=|| view! { <p><span class="muted">"Loading"</span></p> }>
                {move || Suspend::new(async move {
                    match settings.await {
                        Ok(s) => view! { {saved_repos(&s)} {editor(s, draft, save)} }.into_any(),
                        Err(e) => view! { <p><span class="result err">{e.to_string()}</span></p> }.into_any(),
                    }
                })}
            </Transition>
            {error}
            <ScopeNotices/>
        </section>
    }
}

/// The repositories the dashboard shows, "All repositories" when none are set.
fn saved_repos(s: &Settings) -> impl IntoView {
    let text = if s.target_repos.is_empty() {
        "All repositories".to_string()
    } else {
        s.target_repos.join(", ")
    };
    view! { <p><span data-testid="scope-repos">{text}</span></p> }
}

/// The field that changes the repositories, or why this viewer cannot.
fn editor(
    s: Settings,
    draft: RwSignal<Option<String>>,
    save: Action<String, SaveOutcome>,
) -> AnyView {
    if crate::past::active() {
        return view! {
            <p class="muted" data-testid="scope-read-only">
                "Read-only: this page shows the past; change them from now."
            </p>
        }
        .into_any();
    }
    if !s.editable {
        return view! {
            <p class="muted" data-testid="scope-read-only">
                "Read-only: change them from the machine running the dashboard."
            </p>
        }
        .into_any();
    }
    let current = s.target_repos.join(", ");
    let submit = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        save.dispatch_local(draft.get_untracked().unwrap_or_default());
    };
    view! {
        <form class="scope-form" on:submit=submit>
            <label for="scope-input">"Show only (owner/repo, comma-separated)"</label>
            <input
                id="scope-input"
                class="search"
                data-testid="scope-input"
                placeholder="acme/app, acme/api"
                prop:value=move || draft.get().unwrap_or_else(|| current.clone())
                on:input=move |ev| draft.set(Some(event_target_value(&ev)))
            />
            <button class="primary" type="submit" data-testid="scope-save" disabled=move || save.pending().get()>
                "Save"
            </button>
        </form>
    }
    .into_any()
}

/// What saving the repositories answers: the settings now in force.
type SaveOutcome = Result<Settings, ApiError>;

/// The model's notices: what the scope left out.
#[component]
fn ScopeNotices() -> impl IntoView {
    let store = use_store();
    let notices = move || {
        store
            .model
            .with(|m| m.as_ref().map(|m| m.notices.clone()).unwrap_or_default())
    };
    view! {
        <ul class="list muted">
            <For
                each=move || notices().into_iter().enumerate()
                key=|n| n.clone()
                children=|(_, notice)| view! { <li data-testid="scope-notice">{notice}</li> }
            />
        </ul>
    }
}
