//! `/machines`: agents grouped by machine.

use agent_coord_shared::dashboard::model::AgentView;
use agent_coord_shared::dashboard::model::DashboardModel;
use agent_coord_shared::dashboard::model::MachineView;
use agent_coord_shared::dashboard::view::slice::View;
use leptos::prelude::*;

use super::keyed_items;
use super::shows_view;
use super::use_view;
use super::LOADING;
use crate::components::widgets;
use crate::format;
use crate::live::use_store;

/// The machines page.
#[component]
pub fn MachinesPage() -> impl IntoView {
    use_view(|| View::Machines);
    let store = use_store();
    view! {
        <section class="page machines">
            <h1>"Machines"</h1>
            <Show when=move || shows_view(store, "machines") fallback=|| widgets::loading(LOADING)>
                <MachineCards/>
            </Show>
        </section>
    }
}

/// One machine as its card shows it: what the model says of it and its agents.
#[derive(Clone)]
struct MachineCard {
    machine: MachineView,
    /// How many agents it has, beyond those the page holds.
    all: usize,
    /// Each agent's row, with the path of the work it holds.
    agents: Vec<(AgentView, Option<String>)>,
}

impl MachineCard {
    fn new(m: &DashboardModel, machine: &MachineView) -> Self {
        let all = m
            .slice
            .as_ref()
            .and_then(|s| s.agents_by_machine.iter().find(|(id, _)| *id == machine.id))
            .map_or(machine.agents.len(), |(_, n)| *n);
        let agents = machine
            .agents
            .iter()
            .map(|a| {
                let work_path = a
                    .work_row
                    .as_ref()
                    .and_then(|id| m.rows.iter().find(|r| &r.id == id))
                    .and_then(format::row_path);
                (a.clone(), work_path)
            })
            .collect();
        Self {
            machine: machine.clone(),
            all,
            agents,
        }
    }
}

/// The machines' cards, keyed, so a card the next model also holds keeps its place.
#[component]
fn MachineCards() -> impl IntoView {
    let store = use_store();
    let cards = keyed_items(store, "machines", |m| {
        m.machines
            .iter()
            .map(|machine| (machine.id.clone(), MachineCard::new(m, machine)))
            .collect()
    });
    let empty = move || {
        store
            .model
            .with(|m| m.as_ref().is_some_and(|m| m.machines.is_empty()))
            .then(|| widgets::empty_note("No machines have reported yet."))
    };
    view! {
        {empty}
        <For each=cards key=|(key, _)| key.clone() children=|(_, card)| machine_card(card)/>
    }
}

fn machine_card(card: MachineCard) -> impl IntoView {
    let MachineCard {
        machine,
        all,
        agents,
    } = card;
    let inferred = machine
        .inferred
        .then(|| widgets::badge("source", "Inferred".to_string()));
    let summary = format!(
        "{} live · {} stale · {} dead · {} claims",
        machine.live, machine.stale, machine.dead, machine.claims
    );
    let shown = agents.len();
    let agents = agents
        .into_iter()
        .map(|(a, work_path)| agent_row(&a, work_path))
        .collect_view();
    let more = (all > shown).then(|| {
        view! {
            <p class="muted" data-testid="agents-more">
                {format!("Showing the first {shown} of {all} agents.")}
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

fn agent_row(a: &AgentView, work_path: Option<String>) -> impl IntoView {
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
