//! Badges, safe links, ages, filter chips and pagers.

use agent_coord_shared::dashboard::model::LivenessView;
use agent_coord_shared::dashboard::model::RowState;
use agent_coord_shared::record::is_http_url;
use leptos::prelude::*;

use crate::format;
use crate::live::use_store;

/// A row-state badge.
pub fn state_badge(state: RowState) -> impl IntoView {
    let name = state.as_str();
    view! { <span class=format!("badge state-{name}")>{name}</span> }
}

/// A liveness badge (`live`, `stale`, `dead`, `unknown`, `no-heartbeat`), `—` without one.
pub fn liveness_badge(liveness: Option<LivenessView>) -> impl IntoView {
    let text = format::or_dash(liveness.map(LivenessView::as_str));
    let class = format!("badge live-{}", css_token(&text));
    view! { <span class=class>{text}</span> }
}

/// A neutral badge with a modifier class.
pub fn badge(kind: &str, text: String) -> impl IntoView {
    let class = format!("badge {kind}-{}", css_token(&text));
    view! { <span class=class>{text}</span> }
}

/// A CSS-safe token derived from a value (lowercase letters, digits and dashes).
pub fn css_token(value: &str) -> String {
    value
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

/// The age of a timestamp, kept current by the store's clock.
pub fn age(at: Option<String>) -> impl IntoView {
    let store = use_store();
    let title = format::timestamp(at.as_deref());
    view! {
        <span class="age" title=title>
            {move || format::age(store.now_ms.get(), at.as_deref())}
        </span>
    }
}

/// An external link when `url` is http(s), else the text alone.
pub fn safe_link(url: Option<String>, text: String) -> AnyView {
    match url {
        Some(u) if is_http_url(&u) => view! {
            <a href=u target="_blank" rel="noopener noreferrer">{text}</a>
        }
        .into_any(),
        _ => view! { <span>{text}</span> }.into_any(),
    }
}

/// An in-app link when there is a path, else the text alone.
pub fn maybe_link(path: Option<String>, text: String) -> AnyView {
    match path {
        Some(p) => view! { <a href=p>{text}</a> }.into_any(),
        None => view! { <span>{text}</span> }.into_any(),
    }
}

/// One filter chip linking to `href`, pressed when `active`.
pub fn chip(label: String, count: Option<usize>, href: String, active: bool) -> impl IntoView {
    let class = if active { "chip active" } else { "chip" };
    view! {
        <a class=class href=href aria-pressed=if active { "true" } else { "false" }>
            {label}
            {count.map(|c| view! { <span class="chip-count">{c}</span> })}
        </a>
    }
}

/// Previous/next links around "Page X of Y", hidden when there is one page.
pub fn pager(page: usize, pages: usize, href: impl Fn(usize) -> String) -> Option<AnyView> {
    if pages <= 1 {
        return None;
    }
    let page = page.clamp(1, pages);
    let prev = (page > 1).then(|| href(page - 1));
    let next = (page < pages).then(|| href(page + 1));
    Some(
        view! {
            <nav class="pager" aria-label="Pagination">
                {prev.map(|h| view! { <a href=h rel="prev">"← Previous"</a> })}
                <span data-testid="pager-status">{format!("Page {page} of {pages}")}</span>
                {next.map(|h| view! { <a href=h rel="next">"Next →"</a> })}
            </nav>
        }
        .into_any(),
    )
}

/// The text a list shows when it is empty.
pub fn empty_note(text: &'static str) -> impl IntoView {
    view! { <p class="empty">{text}</p> }
}

/// The "Loading …" placeholder.
pub fn loading(what: &'static str) -> impl IntoView {
    view! {
        <div class="loading" role="status" aria-live="polite">{what}</div>
    }
}

/// A "Loading …" placeholder with a text of its own.
pub fn loading_text(what: String) -> impl IntoView {
    view! {
        <div class="loading" role="status" aria-live="polite">{what}</div>
    }
}

/// A warning banner: something could not be read, the rest of the page stands.
pub fn warning_banner(message: String) -> impl IntoView {
    view! {
        <div class="warning-banner" role="status" data-testid="warning-banner">{message}</div>
    }
}

/// The one notice of an empty coordination state: how to start.
pub fn setup_notice(message: String) -> impl IntoView {
    view! {
        <div class="setup-notice" role="status" data-testid="setup-notice">{message}</div>
    }
}

/// The degraded-source banner (reference §4.6): a source the dashboard reads besides the
/// state branch (GitHub) is unreachable, refuses the token or is rate-limited; the page
/// still shows the coordination state. Links the diagnostics.
pub fn source_banner(headline: String) -> impl IntoView {
    view! {
        <div class="warning-banner source-banner" role="alert" data-testid="source-banner">
            {headline} " " <a href="/api/doctor">"Details"</a>
        </div>
    }
}

/// "Batch plan saved: <id>" with a link to the batch, or why saving it failed.
pub fn saved_plan<E: std::fmt::Display>(
    testid: &'static str,
    result: &Result<String, E>,
) -> AnyView {
    match result {
        Ok(id) => view! {
            <p class="result ok" data-testid=testid role="status">
                {format!("Batch plan saved: {id}")} " "
                <a href=format::batch_path(id)>"Open batch"</a>
            </p>
        }
        .into_any(),
        Err(e) => view! {
            <p class="result err" data-testid=testid role="alert">{e.to_string()}</p>
        }
        .into_any(),
    }
}

/// An error banner.
pub fn error_banner(message: String) -> impl IntoView {
    view! {
        <div class="error-banner" role="alert" data-testid="error-banner">{message}</div>
    }
}
