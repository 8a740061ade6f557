//! `/machines`: agents grouped by machine.

use std::sync::Arc;

use agent_coord_shared::dashboard::model::AgentView;
use agent_coord_shared::dashboard::model::DashboardModel;
use agent_coord_shared::dashboard::model::MachineView;
use agent_coord_shared::dashboard::view::slice::View;
use leptos::prelude::*;

use super::use_view;
use super::with_model;
use crate::components::widgets;
use crate::format;

/// The machines page.
#[component]
pub fn MachinesPage() -> impl IntoView {
    use_view(|| View::Machines);
    view! {
        <section class="page machines">
            <h1>"Machines"</h1>
            {with_model("machines", machines)}
        </section>
    }
}

fn machines(m: &Arc<DashboardModel>) -> AnyView {
    if m.machines.is_empty() {
        return widgets::empty_note("No machines have reported yet.").into_any();
    }
    m.machines
        .iter()
        .map(|machine| machine_card(m, machine))
        .collect_view()
        .into_any()
}

fn machine_card(m: &DashboardModel, machine: &MachineView) -> impl IntoView {
    let inferred = machine
        .inferred
        .then(|| widgets::badge("source", "Inferred".to_string()));
    let summary = format!(
        "{} live · {} stale · {} dead · {} claims",
        machine.live, machine.stale, machine.dead, machine.claims
    );
    let agents = machine
        .agents
        .iter()
        .map(|a| agent_row(m, a))
        .collect_view();
    let all = m
        .slice
        .as_ref()
        .and_then(|s| s.agents_by_machine.iter().find(|(id, _)| *id == machine.id))
        .map_or(machine.agents.len(), |(_, n)| *n);
    let more = (all > machine.agents.len()).then(|| {
        view! {
            <p class="muted" data-testid="agents-more">
                {format!("Showing the first {} of {all} agents.", machine.agents.len())}
            </p>
        }
    });
    view! {
        <article class="card machine" data-testid="machine-card" data-machine-id=machine.id.clone()>
            <header>
                <h2>{machine.id.clone()}</h2>
                {inferred}
                <span class="muted">{summary}</span>
            </header>
            <div class="table-wrap">
                <table class="rows">
                    <thead>
                        <tr>
                            <th>"Agent"</th><th>"Liveness"</th><th>"Heartbeat"</th><th>"Status"</th>
                            <th>"Host"</th><th>"Thread"</th><th>"Claims"</th><th>"Work"</th><th>"Batch"</th>
                        </tr>
                    </thead>
                    <tbody>{agents}</tbody>
                </table>
            </div>
            {more}
        </article>
    }
}

fn agent_row(m: &DashboardModel, a: &AgentView) -> impl IntoView {
    let work_path = a
        .work_row
        .as_ref()
        .and_then(|id| m.rows.iter().find(|r| &r.id == id))
        .and_then(format::row_path);
    let batch = match &a.batch_id {
        Some(b) => view! { <a href=format::batch_path(b)>{b.clone()}</a> }.into_any(),
        None => view! { <span>{format::DASH}</span> }.into_any(),
    };
    view! {
        <tr data-testid="agent-row" data-agent-id=a.id.clone()>
            <td>{a.id.clone()}</td>
            <td>{widgets::liveness_badge(Some(a.liveness))}</td>
            <td>{widgets::age(a.heartbeat_at.clone())}</td>
            <td>{format::or_dash(a.status.as_deref())}</td>
            <td>{format::or_unknown(a.host.as_deref())}</td>
            <td>{format::or_dash(a.thread.as_deref())}</td>
            <td>{a.claims}</td>
            <td>{widgets::maybe_link(work_path, format::or_dash(a.work.as_deref()))}</td>
            <td>{batch}</td>
        </tr>
    }
}
