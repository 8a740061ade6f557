//! `/batches/:id`: one batch, its lanes, prompt, events, timeline chart and stop control.

use agent_coord_shared::dashboard::model::BatchDetail;
use agent_coord_shared::dashboard::model::BatchView;
use agent_coord_shared::dashboard::model::EventView;
use agent_coord_shared::dashboard::model::LaneView;
use agent_coord_shared::dashboard::model::StopBody;
use agent_coord_shared::dashboard::model::StopRequested;
use leptos::prelude::*;
use leptos::task::spawn_local;
use leptos_router::hooks::use_params_map;
use leptos_router::hooks::use_query_map;

use super::batches::source_badge;
use crate::api;
use crate::api::ApiError;
use crate::clipboard;
use crate::components::chart;
use crate::components::past::TimeSlider;
use crate::components::widgets;
use crate::format;
use crate::live;

/// The reason a dashboard stop request records unless the operator writes one.
pub const DEFAULT_STOP_REASON: &str =
    "Stop requested from dashboard so this batch can be restarted.";

/// The state of the stop form.
#[derive(Clone, Copy)]
struct StopForm {
    reason: RwSignal<String>,
    pending: RwSignal<bool>,
    result: RwSignal<Option<Result<(), ApiError>>>,
}

/// The batch page.
#[component]
pub fn BatchPage() -> impl IntoView {
    // This page loads its own detail; the store needs only the headline counts.
    super::use_view(|| agent_coord_shared::dashboard::view::slice::View::Summary);
    let params = use_params_map();
    let query = use_query_map();
    let id = Memo::new(move |_| params.with(|p| p.get("id").unwrap_or_default()));
    let full = Memo::new(move |_| query.with(|q| q.get("history").as_deref() == Some("full")));
    let detail = live::document::<BatchDetail>(move || {
        let history = if full.get() { "?history=full" } else { "" };
        format!(
            "/api/batches/{}{history}",
            format::encode_segment(&id.get())
        )
    });
    let form = StopForm {
        reason: RwSignal::new(DEFAULT_STOP_REASON.to_string()),
        pending: RwSignal::new(false),
        result: RwSignal::new(None),
    };
    let copied = RwSignal::new(None::<bool>);
    Effect::new(move |_| {
        id.track();
        form.result.set(None);
        copied.set(None);
    });
    view! {
        <section class="page batch">
            <Transition fallback=|| widgets::loading("Loading batch")>
                {move || Suspend::new(async move {
                    match detail.await {
                        Ok(d) => page(&d, form, copied).into_any(),
                        Err(e) => view! {
                            <h1 data-testid="batch-title">{id.get_untracked()}</h1>
                            {widgets::error_banner(format!("Could not load batch {}: {e}", id.get_untracked()))}
                        }
                        .into_any(),
                    }
                })}
            </Transition>
            <TimeSlider
                commits_url=Signal::derive(move || format!("/api/batches/{}/commits", format::encode_segment(&id.get())))
                page=Signal::derive(move || format::batch_path(&id.get()))
            />
        </section>
    }
}

fn page(d: &BatchDetail, form: StopForm, copied: RwSignal<Option<bool>>) -> impl IntoView {
    let b = &d.batch;
    view! {
        <h1 data-testid="batch-title">{b.title.clone()}</h1>
        {summary(b)}
        {(!crate::past::active()).then(|| stop_control(b.id.clone(), form))}
        <h2>"Lanes"</h2>
        {lanes(&b.lanes)}
        <h2>"Launch prompt"</h2>
        {prompt(b.launch_prompt.clone(), copied)}
        <h2>"Timeline"</h2>
        {chart::event_timeline(&d.events).unwrap_or_else(|| widgets::empty_note("No timed events.").into_any())}
        <h2>"Event history"</h2>
        {history_notice(d)}
        {events(&d.events)}
    }
}

/// What the history window left out, with a link to everything.
fn history_notice(d: &BatchDetail) -> Option<impl IntoView> {
    let notice = d.history_notice.clone()?;
    let href = format!("{}?history=full", format::batch_path(&d.batch.id));
    Some(view! {
        <p class="muted" data-testid="history-notice">
            {notice} " " <a href=href data-testid="history-full">"Show the full history"</a>
        </p>
    })
}

fn summary(b: &BatchView) -> impl IntoView {
    let audit = format!(
        "{} lanes · {} done · {} closed · {} active · {} blocked · {} dead",
        b.audit.lanes, b.audit.done, b.audit.closed, b.audit.active, b.audit.blocked, b.audit.dead
    );
    let q = &b.qa;
    let qa = format!(
        "{} QA records · {} passed · {} failed · {} missing · {} requested · {} in progress · {} unknown",
        q.total, q.passed, q.failed, q.missing, q.requested, q.in_progress, q.unknown
    );
    let repairs = if b.repairs.is_empty() {
        view! { <span>{format::DASH}</span> }.into_any()
    } else {
        b.repairs
            .iter()
            .map(|r| widgets::badge("repair", r.as_str().to_owned()))
            .collect_view()
            .into_any()
    };
    view! {
        <dl class="meta">
            <dt>"Batch id"</dt><dd data-testid="batch-id">{b.id.clone()}</dd>
            <dt>"Source"</dt><dd>{source_badge(b.source)}</dd>
            <dt>"Repository"</dt><dd>{format::or_unknown(b.repo.as_deref())}</dd>
            <dt>"Objective"</dt><dd>{format::or_dash(b.objective.as_deref())}</dd>
            <dt>"Tier"</dt><dd>{widgets::badge("tier", b.tier.as_str().to_string())}</dd>
            <dt>"Control"</dt>
            <dd data-testid="batch-control">{b.control.as_str()}</dd>
            <dt>"Stop requested"</dt><dd>{format::timestamp(b.stop_requested_at.as_deref())}</dd>
            <dt>"Created"</dt>
            <dd>{format::timestamp(b.created_at.as_deref())} " on " {format::or_unknown(b.created_by_machine.as_deref())}</dd>
            <dt>"Audit"</dt><dd>{audit}</dd>
            <dt>"QA"</dt><dd>{qa}</dd>
            <dt>"Repairs"</dt><dd>{repairs}</dd>
        </dl>
    }
}

fn stop_control(batch_id: String, form: StopForm) -> impl IntoView {
    let on_click = move |_| request_stop(batch_id.clone(), form);
    let result = move || {
        form.result.get().map(|r| {
            let (class, text) = match r {
                Ok(()) => ("result ok", "Batch stop requested.".to_string()),
                Err(e) => ("result err", e.to_string()),
            };
            view! { <p class=class data-testid="stop-result" role="status">{text}</p> }
        })
    };
    view! {
        <div class="stop-control">
            <label>
                "Stop reason "
                <input
                    type="text"
                    class="reason"
                    prop:value=move || form.reason.get()
                    on:input=move |ev| form.reason.set(event_target_value(&ev))
                />
            </label>
            <button
                class="danger"
                data-testid="stop-button"
                disabled=move || form.pending.get()
                on:click=on_click
            >
                "Request stop"
            </button>
            {result}
        </div>
    }
}

fn request_stop(batch_id: String, form: StopForm) {
    let reason = form.reason.get_untracked();
    let reason = if reason.trim().is_empty() {
        DEFAULT_STOP_REASON.to_string()
    } else {
        reason
    };
    form.pending.set(true);
    form.result.set(None);
    spawn_local(async move {
        let body = StopBody {
            batch_id: batch_id.as_str().into(),
            reason: reason.as_str().into(),
            ..StopBody::default()
        };
        let outcome = api::post_json::<StopRequested>("/api/batches/stop", &body)
            .await
            .map(|_| ());
        form.pending.try_set(false);
        form.result.try_set(Some(outcome));
    });
}

fn lanes(lanes: &[LaneView]) -> AnyView {
    if lanes.is_empty() {
        return widgets::empty_note("No lanes.").into_any();
    }
    let rows = lanes
        .iter()
        .map(|l| {
            view! {
                <tr data-testid="lane-row">
                    <td>{l.name.clone()}</td>
                    <td>{format::or_unknown(l.owner.as_deref())}</td>
                    <td>{format::list_or_dash(&l.targets)}</td>
                    <td>{widgets::state_badge(l.state)} " " <span class="muted">{l.status.clone()}</span></td>
                    <td>{widgets::liveness_badge(Some(l.liveness))}</td>
                    <td>{format::list_or_dash(&l.depends_on)}</td>
                    <td>{format::list_or_dash(&l.blocked_on)}</td>
                    <td>{format::or_dash(l.note.as_deref())}</td>
                </tr>
            }
        })
        .collect_view();
    view! {
        <div class="table-wrap">
            <table class="rows">
                <thead>
                    <tr>
                        <th>"Lane"</th><th>"Owner"</th><th>"Targets"</th><th>"State"</th>
                        <th>"Liveness"</th><th>"Depends on"</th><th>"Blocked on"</th><th>"Note"</th>
                    </tr>
                </thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
    .into_any()
}

fn prompt(text: Option<String>, copied: RwSignal<Option<bool>>) -> AnyView {
    let Some(text) = text.filter(|t| !t.trim().is_empty()) else {
        return widgets::empty_note("No launch prompt was saved for this batch.").into_any();
    };
    let label = move || match copied.get() {
        None => "Copy prompt",
        Some(true) => "Copied ✓",
        Some(false) => "Could not copy",
    };
    let to_copy = text.clone();
    let on_click = move |_| {
        let text = to_copy.clone();
        spawn_local(async move {
            let ok = clipboard::copy(&text).await;
            copied.try_set(Some(ok));
        });
    };
    view! {
        <div class="prompt">
            <button data-testid="copy-prompt" on:click=on_click>{label}</button>
            <pre data-testid="launch-prompt">{text}</pre>
        </div>
    }
    .into_any()
}

fn events(events: &[EventView]) -> AnyView {
    if events.is_empty() {
        return widgets::empty_note("No events recorded for this batch.").into_any();
    }
    let items = events
        .iter()
        .map(|e| {
            let subject = match (&e.repo, &e.target) {
                (Some(r), Some(t)) => format!("{r}#{t}"),
                _ => format::or_dash(e.lane.as_deref()),
            };
            view! {
                <li class="row-line" data-testid="batch-event">
                    <span class="time">{format::timestamp(e.at.as_deref())}</span>
                    {widgets::badge("kind", e.kind.clone())}
                    <span>{subject}</span>
                    <span class="who">{format::or_unknown(e.agent.as_deref())}</span>
                    <span class="muted">{format::or_dash(e.status.as_deref())}</span>
                    <span class="detail">{format::or_dash(e.message.as_deref())}</span>
                </li>
            }
        })
        .collect_view();
    view! { <ol class="list events">{items}</ol> }.into_any()
}
