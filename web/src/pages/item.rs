//! `/items/:owner/:repo/:target`: one work item, its coordinator task (with its lane runs
//! and their transcripts) and its custody timeline.

use agent_coord_shared::dashboard::model::item_not_found;
use agent_coord_shared::dashboard::model::ItemDetail;
use agent_coord_shared::dashboard::model::Row;
use agent_coord_shared::dashboard::model::TimelineEntry;
use leptos::prelude::*;
use leptos_router::hooks::use_params_map;

use crate::api::ApiError;
use crate::components::actions::OperatorActions;
use crate::components::coordinator;
use crate::components::past::TimeSlider;
use crate::components::widgets;
use crate::format;
use crate::live;

/// The item page.
#[component]
pub fn ItemPage() -> impl IntoView {
    // This page loads its own detail; the store needs only the headline counts.
    super::use_view(|| agent_coord_shared::dashboard::view::slice::View::Summary);
    let params = use_params_map();
    let key = Memo::new(move |_| {
        params.with(|p| {
            (
                p.get("owner").unwrap_or_default(),
                p.get("repo").unwrap_or_default(),
                p.get("target").unwrap_or_default(),
            )
        })
    });
    // Outlives each re-render of the page, so a confirmation survives the refresh it causes.
    let action_status = RwSignal::new(None::<String>);
    // The open transcript survives live refreshes the same way.
    let transcript = RwSignal::new(None::<coordinator::Opened>);
    let detail = live::document::<ItemDetail>(move || {
        let (owner, repo, target) = key.get();
        format!(
            "/api/items/{}/{}/{}",
            format::encode_segment(&owner),
            format::encode_segment(&repo),
            format::encode_segment(&target)
        )
    });
    view! {
        <section class="page item">
            <Transition fallback=|| widgets::loading("Loading work item")>
                {move || {
                    let (owner, repo, target) = key.get();
                    Suspend::new(async move {
                        match detail.await {
                            Ok(d) => page(&d, action_status, transcript).into_any(),
                            Err(e) => load_error(&owner, &repo, &target, &e).into_any(),
                        }
                    })
                }}
            </Transition>
            <TimeSlider
                commits_url=Signal::derive(move || {
                    let (owner, repo, target) = key.get();
                    format!(
                        "/api/items/{}/{}/{}/commits",
                        format::encode_segment(&owner),
                        format::encode_segment(&repo),
                        format::encode_segment(&target)
                    )
                })
                page=Signal::derive(move || {
                    let (owner, repo, target) = key.get();
                    format::item_path(&format!("{owner}/{repo}"), &target).unwrap_or_default()
                })
            />
        </section>
    }
}

/// What the page says when `owner/repo#target` did not load: "Not found" when the server
/// says the state does not name it, else the error.
fn load_error(owner: &str, repo: &str, target: &str, e: &ApiError) -> impl IntoView {
    let repo = format!("{owner}/{repo}");
    let explanation = if e.server_message() == Some(item_not_found(&repo, target).as_str()) {
        view! {
            <div class="not-found" role="status" data-testid="item-not-found">
                <strong>"Not found. "</strong>
                {format!("{repo}#{target} is not in the coordination state: no claim, heartbeat, batch lane, event or coordinator task names it.")}
            </div>
        }
        .into_any()
    } else {
        widgets::error_banner(format!("Could not load {repo}#{target}: {e}")).into_any()
    };
    view! {
        <h1 data-testid="item-title">{format!("Work item #{target}")}</h1>
        {explanation}
    }
}

fn page(
    d: &ItemDetail,
    action_status: RwSignal<Option<String>>,
    transcript: RwSignal<Option<coordinator::Opened>>,
) -> impl IntoView {
    let state = match &d.row {
        Some(r) => widgets::state_badge(r.state).into_any(),
        None => view! { <span>{format::UNKNOWN}</span> }.into_any(),
    };
    view! {
        <h1 data-testid="item-title">{format!("Work item #{}", d.target)}</h1>
        <dl class="meta">
            <dt>"Repository"</dt><dd>{d.repo.clone()}</dd>
            <dt>"Current state"</dt><dd data-testid="item-state">{state}</dd>
            <dt>"Holder"</dt><dd data-testid="item-holder">{format::or_unknown(d.holder.as_deref())}</dd>
            {d.row.as_ref().map(row_meta)}
        </dl>
        {d.row.clone().filter(|_| !crate::past::active()).map(|row| {
            let (resume, takeover) = (d.resume_prompt.clone(), d.takeover_command.clone());
            view! { <OperatorActions row=row resume=resume takeover=takeover status=action_status/> }
        })}
        {d.coordinator.as_ref().map(|p| coordinator::panel(p, &d.repo, &d.target, transcript))}
        {d.coordinator_warning.clone().map(widgets::warning_banner)}
        <h2>"Custody timeline"</h2>
        {timeline(&d.timeline)}
    }
}

fn row_meta(r: &Row) -> impl IntoView {
    let batch = match &r.batch_id {
        Some(b) => view! { <a href=format::batch_path(b)>{b.clone()}</a> }.into_any(),
        None => view! { <span>{format::DASH}</span> }.into_any(),
    };
    let pr = widgets::safe_link(r.pr_url.clone(), format::or_dash(r.pr_url.as_deref()));
    view! {
        <dt>"Work"</dt><dd>{format::work_label(r)} " " {format::or_dash(r.title.as_deref())}</dd>
        <dt>"Liveness"</dt><dd>{widgets::liveness_badge(r.liveness)}</dd>
        <dt>"Agent"</dt><dd>{format::or_unknown(r.agent.as_deref())}</dd>
        <dt>"Machine"</dt><dd>{format::or_unknown(r.machine.as_deref())}</dd>
        <dt>"Host"</dt><dd>{format::or_unknown(r.host.as_deref())}</dd>
        <dt>"Thread"</dt><dd>{format::or_dash(r.thread.as_deref())}</dd>
        <dt>"Operator"</dt><dd>{format::or_dash(r.operator.as_deref())}</dd>
        <dt>"Branch"</dt><dd>{format::or_dash(r.branch.as_deref())}</dd>
        <dt>"Pull request"</dt><dd>{pr}</dd>
        <dt>"Batch / lane"</dt><dd>{batch} " / " {format::or_dash(r.lane.as_deref())}</dd>
        <dt>"Status"</dt><dd>{format::or_dash(r.status.as_deref())}</dd>
        <dt>"Message"</dt><dd>{format::or_dash(r.message.as_deref())}</dd>
        <dt>"Blocked on"</dt><dd>{format::list_or_dash(&r.blocked_on)}</dd>
        <dt>"QA"</dt><dd>{r.qa.map(|q| q.as_str()).unwrap_or(format::DASH)}</dd>
        <dt>"Last activity"</dt>
        <dd>{format::timestamp(r.last_activity.as_deref())} " (" {widgets::age(r.last_activity.clone())} ")"</dd>
        <dt>"Warnings"</dt><dd>{format::list_or_dash(&r.warnings)}</dd>
    }
}

fn timeline(entries: &[TimelineEntry]) -> AnyView {
    if entries.is_empty() {
        return widgets::empty_note("No custody history recorded.").into_any();
    }
    let items = entries
        .iter()
        .map(|e| {
            let previous = e
                .previous_agent
                .as_ref()
                .map(|p| view! { <span class="muted">{format!("from {p}")}</span> });
            // Spans (phases, liveness runs) show where they end and how long they lasted;
            // claim entries show their CAS generation.
            let until = e.until.as_ref().map(|u| {
                let duration = e.duration().map(|d| format!(" ({d})")).unwrap_or_default();
                view! {
                    <span class="until" data-testid="timeline-until">
                        {format!("– {}{duration}", format::timestamp(Some(u)))}
                    </span>
                }
            });
            let generation = e.is_claim().then(|| {
                let g = e.generation.as_deref().unwrap_or(format::UNKNOWN);
                view! { <span class="muted" data-testid="timeline-generation">{format!("CAS generation {g}")}</span> }
            });
            view! {
                <li class=format!("timeline-entry kind-{}", widgets::css_token(e.kind.as_str())) data-testid="timeline-entry" data-kind=e.kind.as_str()>
                    <span class="time">{format::timestamp(e.at.as_deref())}</span>
                    {until}
                    <span class="label">{e.label.clone()}</span>
                    {generation}
                    <span class="who">{format::or_unknown(e.agent.as_deref())}</span>
                    {previous}
                    <span class="muted">{format::or_unknown(e.machine.as_deref())}</span>
                    <span class="muted">{format::or_dash(e.batch_id.as_deref())}</span>
                    <span class="muted">{format::or_dash(e.status.as_deref())}</span>
                </li>
            }
        })
        .collect_view();
    view! {
        <p class="muted">"Ordered oldest → newest"</p>
        <ol class="timeline" data-testid="custody-timeline">{items}</ol>
    }
    .into_any()
}
