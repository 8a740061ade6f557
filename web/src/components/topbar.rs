//! The top bar: brand, navigation, live indicator, model time and warnings.

use leptos::prelude::*;
use leptos_router::components::A;

use crate::components::find::Find;
use crate::format;
use crate::live::use_store;

/// The navigation targets, in order.
const NAV: [(&str, &str); 6] = [
    ("/", "Overview"),
    ("/operator", "Operator"),
    ("/batches", "Batches"),
    ("/machines", "Machines"),
    ("/health", "Health"),
    ("/import", "Import"),
];

/// The top bar.
#[component]
pub fn TopBar() -> impl IntoView {
    let store = use_store();
    let live_text = move || if store.live.get() { "live" } else { "polling" };
    let live_class = move || {
        if store.live.get() {
            "live-indicator on"
        } else {
            "live-indicator off"
        }
    };
    let generated = move || {
        store.model.with(|m| {
            m.as_ref()
                .map(|m| format::timestamp(Some(&m.generated_at)))
                .unwrap_or_else(|| format::DASH.to_string())
        })
    };
    let version = move || store.version.get().unwrap_or_default();
    let warnings = move || {
        store.model.with(|m| {
            m.as_ref()
                .map(|m| m.counts.health_warnings + m.warnings.len())
                .unwrap_or_default()
        })
    };
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
                <span class=live_class data-testid="live-indicator" title="Live updates">
                    {live_text}
                </span>
                <span class="generated" title="Model generated at">{generated}</span>
                <a class="warnings-link" href="/health" data-testid="warnings-link">
                    {move || format!("{} warnings", warnings())}
                </a>
                <small class="model-version" data-testid="model-version">{version}</small>
            </div>
        </header>
    }
}
