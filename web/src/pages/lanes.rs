//! `/lanes?hours=`: the lane timeline — per machine and concurrent lane, which task's lane ran
//! when over the last hours (6 unless asked) with its outcome, and how busy each machine and
//! vendor was. The server derives it (`GET /api/lanes/timeline`); this page draws it, loads it
//! again on every new model version, and in the past shows the window that ended then.

use agent_coord_shared::dashboard::model::LaneTimeline;
use agent_coord_shared::dashboard::model::TIMELINE_HOURS;
use agent_coord_shared::dashboard::view::slice::View;
use leptos::prelude::*;
use leptos_router::hooks::use_query_map;

use crate::components::lane_charts;
use crate::components::widgets;
use crate::format;
use crate::live;

/// The windows the page offers, in hours.
const WINDOWS: [u32; 4] = [1, 6, 24, 168];

/// The Lanes page.
#[component]
pub fn LanesPage() -> impl IntoView {
    // This page loads its own document; the store needs only the headline counts.
    super::use_view(|| View::Summary);
    let query = use_query_map();
    let hours = Memo::new(move |_| query.with(|q| q.get("hours").unwrap_or_default()));
    let timeline = live::document::<LaneTimeline>(move || {
        let asked = hours.get();
        if asked.is_empty() {
            "/api/lanes/timeline".to_owned()
        } else {
            format!("/api/lanes/timeline?hours={}", format::encode_query(&asked))
        }
    });
    view! {
        <section class="page lanes">
            <h1>"Lanes"</h1>
            <Transition fallback=|| widgets::loading("Loading the lane timeline")>
                {move || Suspend::new(async move {
                    match timeline.await {
                        Ok(t) => page(&t).into_any(),
                        Err(e) => widgets::error_banner(format!("Could not load the lane timeline: {e}")).into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

fn page(t: &LaneTimeline) -> impl IntoView {
    let windows = WINDOWS
        .iter()
        .map(|h| {
            let href = if *h == TIMELINE_HOURS {
                "/lanes".to_owned()
            } else {
                format!("/lanes?hours={h}")
            };
            widgets::chip(format::window_label(*h), None, href, *h == t.hours)
        })
        .collect_view();
    let running: u32 = t.machines.iter().map(|m| m.running).sum();
    let summary = format!(
        "{} on {} in the last {} · {running} running now",
        format::counted(t.bars.len(), "lane", "lanes"),
        format::counted(t.machines.len(), "machine", "machines"),
        format::window_label(t.hours)
    );
    let unreadable = (t.unreadable > 0).then(|| {
        widgets::warning_banner(format!(
            "Lane runs left out because their start or end time cannot be read: {}.",
            t.unreadable
        ))
    });
    let body = if t.bars.is_empty() {
        let text = format!("No lane ran in the last {}.", format::window_label(t.hours));
        view! { <p class="empty" data-testid="lanes-empty">{text}</p> }.into_any()
    } else {
        view! {
            <p class="muted" data-testid="lanes-summary">{summary}</p>
            <p class="legend">
                {["done", "no-change", "approved", "rejected", "ask", "blocked", "incomplete", "paused", "running", "unknown"]
                    .into_iter()
                    .map(|o| view! { <span class=format!("legend-item outcome-{o}")>{o}</span> })
                    .collect_view()}
            </p>
            {lane_charts::gantt(t)}
            <h2>"Utilisation per machine"</h2>
            <p class="muted">{format!(
                "Lanes running on average in each {} of the window (a lane whose outcome is unknown counts nowhere).",
                format::duration(Some(t.bucket_secs))
            )}</p>
            {lane_charts::utilisation(&t.by_machine, format::timeline_machine, "utilisation-machines", t.window_secs)}
            <h2>"Utilisation per vendor"</h2>
            {lane_charts::utilisation(&t.by_vendor, format::timeline_vendor, "utilisation-vendors", t.window_secs)}
        }
        .into_any()
    };
    view! {
        <nav class="chips" aria-label="Window" data-testid="lanes-windows">{windows}</nav>
        {unreadable}
        {body}
    }
}
