//! The full build: the [`DashboardModel`] from normalised records and a clock.
//!
//! A build runs the same steps in order, each in its own module:
//! 1. batch and lane sources ([`super::sources`]);
//! 2. work items, one per repo and target ([`super::items`]);
//! 3. a row (and QA records) per item and per lane no item backs ([`super::operator_rows`]);
//! 4. batch views over those rows ([`super::batch_views`]);
//! 5. health signals ([`super::signals`]) and machines ([`super::machine_groups`]);
//! 6. attention, counts and recent events around it all ([`super::assemble`]).
//!
//! [`super::update`] re-derives only what new events can change, with the same steps.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap as HashMap;

use super::assemble;
use super::batch_views;
use super::event_index::sort_events;
use super::event_index::Control;
use super::event_index::EventIndex;
use super::event_index::EventLists;
use super::items;
use super::machine_groups;
use super::machine_groups::MachineOf;
use super::operator_rows;
use super::signals;
use super::sources;
use super::sources::BatchSrc;
use crate::dashboard::inputs::records::EventIn;
use crate::dashboard::inputs::records::HeartbeatIn;
use crate::dashboard::inputs::records::Inputs;
use crate::dashboard::model::DashboardModel;
use crate::time::Instant;

/// What a build keeps besides the model so that the next tip can update it instead of
/// deriving everything again.
#[derive(Debug, Clone, Default)]
pub struct Derivation {
    pub(crate) srcs: Vec<BatchSrc>,
    pub(crate) resolved: BTreeMap<String, MachineOf>,
    /// Lanes no work item backs, as `(batch index, lane index)`: they get rows of their own.
    pub(crate) lane_rows: Vec<(usize, usize)>,
    /// Every event by item and batch (an update reads the few it needs from here).
    pub(crate) events: EventLists,
}

/// Builds the dashboard model.
pub fn build(inputs: &Inputs, now: Instant, version: &str) -> DashboardModel {
    build_with(inputs, now, version).0
}

/// Builds the model and what a later [`update`] needs.
pub fn build_with(inputs: &Inputs, now: Instant, version: &str) -> (DashboardModel, Derivation) {
    let hb_by_agent: HashMap<&str, &HeartbeatIn> = inputs
        .heartbeats
        .iter()
        .map(|h| (h.agent.as_str(), h.as_ref()))
        .collect();
    let active_claims = sources::active_claims(inputs);
    let srcs = sources::batches(inputs, &hb_by_agent, &active_claims, now);

    let mut events: Vec<&EventIn> = inputs.events.iter().map(AsRef::as_ref).collect();
    sort_events(&mut events);
    let index = EventIndex::of(events.iter().copied(), |_, _| true, |_| true);
    let (items, lane_rows) = items::collect(inputs, &active_claims, &srcs, &index);
    // Batch controls first: rows need them for attention.
    let controls: Vec<Control> = srcs.iter().map(|b| index.control(&b.id)).collect();

    let mut rows = operator_rows::RowSet::default();
    for ((repo, target), item) in &items {
        rows.push_item(repo, target, item, &srcs, &controls, now);
    }
    for (bi, li) in &lane_rows {
        rows.push_lane(&srcs, (*bi, *li), &controls, now);
    }
    let rows = rows.sorted();

    let batches = batch_views::batch_views(&srcs, &controls, &rows, &index.by_batch, None);
    let resolved = machine_groups::machine_of_agents(inputs, &active_claims, &events);
    let machines = machine_groups::machines(inputs, &active_claims, &resolved, now);
    let health = signals::health(
        inputs,
        &srcs,
        &rows.rows,
        &index.by_batch,
        &resolved,
        &signals::Pass::All,
    );
    let model = assemble::assemble(
        inputs,
        now,
        version,
        assemble::Parts {
            rows,
            batches,
            machines,
            health,
        },
    );
    let derivation = Derivation {
        srcs,
        resolved,
        lane_rows,
        events: EventLists::of(&inputs.events),
    };
    (model, derivation)
}
