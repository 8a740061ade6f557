//! The item page's "Coordinator" panel: where a coordinator task is, what it waits on, and
//! the current head's evidence as ✓/✗ rows a person reads at a glance.

use agent_coord_shared::coordinator::task::TaskState;
use agent_coord_shared::dashboard::model::ChecklistRow;
use agent_coord_shared::dashboard::model::CoordinatorPanel;
use agent_coord_shared::dashboard::model::MergeView;
use agent_coord_shared::serde_name::WireName;
use leptos::prelude::*;

use crate::components::widgets;
use crate::format;

/// The panel of one task checkpoint.
pub fn panel(p: &CoordinatorPanel) -> impl IntoView {
    let attention = p.attention.map(|a| {
        view! { <span class="badge attention" data-testid="coordinator-attention">{a.label()}</span> }
    });
    let pr_text =
        p.pr.map(|n| format!("#{n}"))
            .unwrap_or_else(|| format::or_dash(p.pr_url.as_deref()));
    let head = match (&p.head, &p.short_head) {
        (Some(full), Some(short)) => {
            view! { <code title=full.clone() data-testid="coordinator-head">{short.clone()}</code> }
                .into_any()
        }
        _ => view! { <span data-testid="coordinator-head">{format::DASH}</span> }.into_any(),
    };
    let heading = format::checklist_heading(p.short_head.as_deref());
    view! {
        <section class="coordinator" aria-labelledby="coordinator-heading" data-testid="coordinator-panel">
            <h2 id="coordinator-heading">"Coordinator"</h2>
            <dl class="meta">
                <dt>"Worker"</dt><dd data-testid="coordinator-worker">{p.worker.clone()}</dd>
                <dt>"Task"</dt><dd>{p.task_id.clone()} " " <span class="muted">{p.title.clone()}</span></dd>
                <dt>"State"</dt>
                <dd data-testid="coordinator-state">{widgets::badge("task", p.state.wire_name().to_owned())} {attention}</dd>
                <dt>"Phase"</dt><dd data-testid="coordinator-phase">{p.phase.wire_name()}</dd>
                <dt>"Resume phase"</dt>
                <dd data-testid="coordinator-resume-phase">{format::or_dash(p.resume_phase.map(|r| r.wire_name()))}</dd>
                <dt>{format::blocker_title(p.state)}</dt>
                <dd data-testid="coordinator-blocker">{blocker(p)}</dd>
                <dt>"Pull request"</dt>
                <dd data-testid="coordinator-pr">{widgets::safe_link(p.pr_url.clone(), pr_text)}</dd>
                <dt>"Head"</dt><dd>{head}</dd>
                <dt>"Rounds"</dt><dd data-testid="coordinator-rounds">{p.rounds}</dd>
                <dt>"Updated"</dt><dd>{format::timestamp(Some(&p.updated_at))}</dd>
            </dl>
            <h3 id="checklist-heading">{heading}</h3>
            <ul class="checklist" aria-labelledby="checklist-heading" data-testid="coordinator-checklist">
                {p.checklist.iter().map(check).collect_view()}
            </ul>
            {p.merge.as_ref().map(merge)}
        </section>
    }
}

/// The open question or blocker, and the published checkpoint comment it links to.
fn blocker(p: &CoordinatorPanel) -> AnyView {
    let link = p.question_url.clone().map(|url| {
        let text = if p.state == TaskState::Waiting {
            "Open the question"
        } else {
            "Open the blocker"
        };
        view! {
            <a href=url target="_blank" rel="noopener noreferrer" data-testid="coordinator-question-link">{text}</a>
        }
    });
    match &p.blocker {
        Some(text) => view! { <p class="blocker">{text.clone()}</p> {link} }.into_any(),
        None => view! { <span>{format::DASH}</span> {link} }.into_any(),
    }
}

/// One ✓/✗ row: the mark is decoration; the words say it for a screen reader.
fn check(row: &ChecklistRow) -> impl IntoView {
    let (mark, class) = if row.passed {
        ("✓", "check passed")
    } else {
        ("✗", "check missing")
    };
    view! {
        <li class=class data-testid="check-row" data-key=row.key.clone() data-passed=row.passed.to_string()>
            <span class="mark" aria-hidden="true">{mark}</span>
            <span class="check-label">{row.label.clone()}</span>
            <span class="sr-only">{format!(": {}", format::check_state(row))}</span>
            {row.other_head.as_ref().map(|h| view! {
                <span class="muted" data-testid="check-other-head">{format!("passed on {h}, another head")}</span>
            })}
        </li>
    }
}

/// The verified human merge.
fn merge(m: &MergeView) -> impl IntoView {
    view! {
        <h3>"Merged"</h3>
        <dl class="meta" data-testid="coordinator-merge">
            <dt>"Merged by"</dt><dd>{m.merged_by.clone()}</dd>
            <dt>"Merged at"</dt><dd>{format::timestamp(Some(&m.merged_at))}</dd>
            <dt>"Merge commit"</dt><dd><code title=m.sha.clone()>{m.short_sha.clone()}</code></dd>
            <dt>"Into"</dt><dd>{m.base.clone()}</dd>
        </dl>
    }
}
