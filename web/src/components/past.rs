//! The past on the page: the banner that says which moment a page of the past shows (and
//! leads back to now), and the time slider of the batch and item pages, whose stops are the
//! commits that touched that batch or item (`GET …/commits`); letting go of it opens the page
//! as of the commit chosen.

use agent_coord_shared::dashboard::model::Touch;
use agent_coord_shared::dashboard::model::Touches;
use leptos::prelude::*;

use crate::api;
use crate::format;
use crate::live;
use crate::live::use_store;
use crate::past;

/// On a page of the past: which moment it shows, what the heartbeat history cannot tell
/// about it, and the way back to now.
#[component]
pub fn PastBanner() -> impl IntoView {
    let store = use_store();
    past::active().then(|| {
        let moment = move || store.model.with(|m| m.as_ref().and_then(|m| m.past.clone()));
        view! {
            <div class="past-banner" role="status" data-testid="past-banner">
                <strong>"The past, read-only. "</strong>
                {move || match moment() {
                    Some(p) => view! {
                        "As of commit "
                        <code data-testid="past-commit" title=p.commit.clone()>{short(&p.commit)}</code>
                        " at "
                        <span data-testid="past-at">{format::timestamp(Some(&p.at))}</span>
                        "."
                        <ul class="past-caveats">
                            {p.caveats.into_iter().map(|c| view! { <li data-testid="past-caveat">{c}</li> }).collect_view()}
                        </ul>
                    }
                    .into_any(),
                    None => view! { <span class="muted">{format!("Loading {}", past::at().unwrap_or_default())}</span> }.into_any(),
                }}
                " "
                <a href=past::now_href() rel="external" data-testid="past-now">"Back to now"</a>
            </div>
        }
    })
}

/// The first twelve characters of a commit id.
fn short(commit: &str) -> String {
    commit.chars().take(12).collect()
}

/// The time slider over the commits `commits_url` lists (oldest left, now at the right end);
/// `page` is the page's own path, opened `?at=` the commit chosen.
#[component]
pub fn TimeSlider(
    #[prop(into)] commits_url: Signal<String>,
    #[prop(into)] page: Signal<String>,
) -> impl IntoView {
    let touches = live::resource(move || {
        let url = commits_url.get();
        async move { api::get_json::<Touches>(&url).await }
    });
    view! {
        <Transition fallback=|| ()>
            {move || Suspend::new(async move {
                touches.await.ok().map(|t| slider(t, page.get_untracked()))
            })}
        </Transition>
    }
}

fn slider(touches: Touches, page: String) -> impl IntoView {
    // Oldest first; the position after the last commit is now.
    let stops: Vec<Touch> = touches.commits.into_iter().rev().collect();
    let now = stops.len();
    let store = use_store();
    let shown = {
        let stops = stops.clone();
        Memo::new(move |_| {
            let Some(at) = past::at() else { return now };
            // The moment as the server resolved it (a commit that did not touch this page
            // sits by its time), else as asked.
            let resolved = store
                .model
                .with(|m| m.as_ref().and_then(|m| m.past.clone()));
            match resolved {
                Some(p) => position(&stops, &p.commit, &p.at),
                None => position(&stops, &at, &at),
            }
        })
    };
    let chosen = RwSignal::new(shown.get_untracked());
    Effect::new(move |_| chosen.set(shown.get()));
    let label = {
        let stops = stops.clone();
        move || {
            let i = chosen.get();
            match stops.get(i) {
                Some(t) => format!(
                    "{} · {} · {}",
                    format::timestamp(Some(&t.at)),
                    short(&t.commit),
                    t.subject
                ),
                None => "now".to_owned(),
            }
        }
    };
    let open = {
        let stops = stops.clone();
        move |i: usize| {
            let href = match stops.get(i) {
                Some(t) => format::with_query_param(&page, "at", &t.commit),
                None => page.clone(),
            };
            if let Some(w) = web_sys::window() {
                let _ = w.location().assign(&href);
            }
        }
    };
    let on_input = move |ev| {
        if let Ok(i) = event_target_value(&ev).parse::<usize>() {
            chosen.set(i);
        }
    };
    let on_change = move |ev| {
        if let Ok(i) = event_target_value(&ev).parse::<usize>() {
            if i != shown.get_untracked() {
                open(i);
            }
        }
    };
    let count = format!(
        "{} commit{} touched it{}",
        stops.len(),
        if stops.len() == 1 { "" } else { "s" },
        if touches.truncated {
            " (the newest; older ones not shown)"
        } else {
            ""
        }
    );
    view! {
        <section class="panel time-slider" aria-label="Time slider" data-testid="time-slider">
            <h2>"History"</h2>
            <input
                type="range"
                min="0"
                max=now.to_string()
                step="1"
                prop:value=move || shown.get().to_string()
                aria-label="The moment shown"
                data-testid="time-slider-range"
                on:input=on_input
                on:change=on_change
            />
            <p class="muted" data-testid="time-slider-label">{label}</p>
            <p class="muted" data-testid="time-slider-count">{count}</p>
        </section>
    }
}

/// Where the moment (a commit id, and a time) sits among `stops` (oldest first): that
/// commit, else the last one at or before that time, else the first.
fn position(stops: &[Touch], commit: &str, at: &str) -> usize {
    if let Some(i) = stops.iter().position(|t| t.commit.starts_with(commit)) {
        return i;
    }
    let Some(when) = agent_coord_shared::time::parse(at) else {
        return 0;
    };
    stops
        .iter()
        .rposition(|t| agent_coord_shared::time::parse(&t.at).is_some_and(|t| t <= when))
        .unwrap_or(0)
}
