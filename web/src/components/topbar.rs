//! The top bar: brand, navigation, live indicator, the target repositories in force, model
//! time, the server's last sync and warnings.

use leptos::prelude::*;
use leptos_router::components::A;

use agent_coord_shared::dashboard::derive::freshness::sync_line;

use crate::components::find::Find;

use crate::format;
use crate::live::use_store;

/// The navigation targets, in order.
const NAV: [(&str, &str); 7] = [
    ("/", "Overview"),
    ("/operator", "Operator"),
    ("/batches", "Batches"),
    ("/machines", "Machines"),
    ("/lanes", "Lanes"),
    ("/health", "Health"),
    ("/import", "Import"),
];

/// The top bar.
#[component]
pub fn TopBar() -> impl IntoView {
    let store = use_store();
    view! {
        <header class="topbar">
            <a class="brand" href="/">"Agent Coordination"</a>
            <nav class="nav" aria-label="Views">
                {NAV
                    .into_iter()
                    .map(|(href, label)| view! { <A href=href exact=true>{label}</A> })
                    .collect_view()}
            </nav>
            <Find/>
            <div class="status">
                <LiveIndicator/>
                <ScopeChip/>
                <HoldsChip/>
                <ModelTime/>
                <LastSynced/>
                <WarningsLink/>
                <small class="model-version" data-testid="model-version">
                    {move || store.version.get().unwrap_or_default()}
                </small>
            </div>
        </header>
    }
}

/// "live" while the event stream is open, else "polling"; "past" on a page of the past
/// (which does not move).
#[component]
fn LiveIndicator() -> impl IntoView {
    let store = use_store();
    if crate::past::active() {
        return view! {
            <span class="live-indicator past" data-testid="live-indicator" title="The past does not update">
                "past"
            </span>
        }
        .into_any();
    }
    let live_text = move || if store.live.get() { "live" } else { "polling" };
    let live_class = move || {
        if store.live.get() {
            "live-indicator on"
        } else {
            "live-indicator off"
        }
    };
    view! {
        <span class=live_class data-testid="live-indicator" title="Live updates">
            {live_text}
        </span>
    }
    .into_any()
}

/// The target repositories in force, when the dashboard is scoped to some.
#[component]
fn ScopeChip() -> impl IntoView {
    let store = use_store();
    move || {
        store.model.with(|m| {
            let repos = m
                .as_ref()
                .map(|m| m.target_repos.clone())
                .unwrap_or_default();
            (!repos.is_empty()).then(|| {
                let label = match repos.as_slice() {
                    [one] => one.clone(),
                    many => format!("{} repositories", many.len()),
                };
                view! {
                    <a class="scope-chip" href="/" data-testid="scope-chip" title=repos.join(", ")>
                        {label}
                    </a>
                }
            })
        })
    }
}

/// The coordinator operators' holds in force (pauses, drains), on every view: each says
/// what it holds, whom, who set it and since when.
#[component]
fn HoldsChip() -> impl IntoView {
    let store = use_store();
    move || {
        let holds: Vec<String> = store.model.with(|m| {
            m.as_ref()
                .map(|m| m.holds.iter().map(ToString::to_string).collect())
                .unwrap_or_default()
        });
        (!holds.is_empty()).then(|| {
            let title = holds.join("\n");
            let label = match holds.len() {
                1 => format!("coordinator {}", holds[0]),
                n => format!("coordinator: {n} holds"),
            };
            view! { <span class="chip hold" title=title data-testid="holds">{label}</span> }
        })
    }
}

/// When the model shown was generated.
#[component]
fn ModelTime() -> impl IntoView {
    let store = use_store();
    let generated = move || {
        store.model.with(|m| {
            m.as_ref()
                .map(|m| format::timestamp(Some(&m.generated_at)))
                .unwrap_or_else(|| format::DASH.to_string())
        })
    };
    view! { <span class="generated" title="Model generated at">{generated}</span> }
}

/// The server's last sync with the remote, once known.
#[component]
fn LastSynced() -> impl IntoView {
    let store = use_store();
    let sync = move || {
        let now = agent_coord_shared::time::from_unix_millis(store.now_ms.get() as i64)?;
        store
            .sync
            .with(|v| v.as_ref().and_then(|v| sync_line(v, now)))
    };
    move || {
        sync().map(|line| {
            let class = if line.failed {
                "last-synced failed"
            } else {
                "last-synced"
            };
            view! {
                <span class=class title=line.title data-testid="last-synced">
                    {line.text}
                </span>
            }
        })
    }
}

/// The health warnings and unreadable records, linking the health page.
#[component]
fn WarningsLink() -> impl IntoView {
    let store = use_store();
    let warnings = move || {
        store.model.with(|m| {
            m.as_ref()
                .map(|m| {
                    let unreadable = m
                        .slice
                        .as_ref()
                        .map_or(m.warnings.len(), |s| s.warnings_total);
                    m.counts.health_warnings + unreadable
                })
                .unwrap_or_default()
        })
    };
    view! {
        <a class="warnings-link" href="/health" data-testid="warnings-link">
            {move || format!("{} warnings", warnings())}
        </a>
    }
}
