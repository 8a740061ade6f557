//! Assembles the [`DashboardModel`] from normalised records and a clock.
//!
//! A build runs the same steps in order, each in its own module:
//! 1. batch and lane sources ([`super::sources`]);
//! 2. work items, one per repo and target ([`items`]);
//! 3. a row (and QA records) per item and per lane no item backs ([`rows`]);
//! 4. batch views over those rows ([`views`]);
//! 5. health signals ([`super::health`]) and machines ([`super::machines`]);
//! 6. attention, counts and recent events around it all ([`assemble`]).
//!
//! [`update`] re-derives only what new events can change, with the same steps.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap as HashMap;

use super::input::EventIn;
use super::input::HeartbeatIn;
use super::input::Inputs;
use super::machines::MachineOf;
use super::model::ControlStatus;
use super::model::DashboardModel;
use super::sources;
use super::sources::BatchSrc;
use crate::time;
use crate::time::Instant;

mod assemble;
mod items;
mod rows;
mod update;
mod views;

pub use assemble::event_view;
pub use update::update;
pub use update::update_with;

/// What a build keeps besides the model so that the next tip can update it instead of
/// deriving everything again.
#[derive(Debug, Clone, Default)]
pub struct Derivation {
    pub(crate) srcs: Vec<BatchSrc>,
    pub(crate) resolved: BTreeMap<String, MachineOf>,
    /// Lanes no work item backs, as `(batch index, lane index)`: they get rows of their own.
    pub(crate) lane_rows: Vec<(usize, usize)>,
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

    let mut rows = rows::RowSet::default();
    for ((repo, target), item) in &items {
        rows.push_item(repo, target, item, &srcs, &controls, now);
    }
    for (bi, li) in &lane_rows {
        rows.push_lane(&srcs, (*bi, *li), &controls, now);
    }
    let rows = rows.sorted();

    let batches = views::batch_views(&srcs, &controls, &rows, &index.by_batch, None);
    let resolved = super::machines::machine_of_agents(inputs, &active_claims, &events);
    let machines = super::machines::machines(inputs, &active_claims, &resolved, now);
    let health = super::health::health(
        inputs,
        &srcs,
        &rows.rows,
        &index.by_batch,
        &resolved,
        &super::health::Scope::All,
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
    };
    (model, derivation)
}

/// A batch's stop control and when a stop was requested.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Control {
    pub(crate) status: ControlStatus,
    pub(crate) requested_at: Option<String>,
}

impl Default for Control {
    fn default() -> Self {
        Control {
            status: ControlStatus::Running,
            requested_at: None,
        }
    }
}

impl Control {
    /// What a batch's events (oldest first) say about its control; the last word wins.
    fn of_events(evs: &[&EventIn]) -> Control {
        let mut control = Control::default();
        for e in evs {
            if let Some(c) = super::derive::control_of(e) {
                control.status = c;
                if c == ControlStatus::StopRequested {
                    control.requested_at = e.at.map(time::format).or_else(|| e.at_raw.clone());
                }
            }
        }
        control
    }
}

/// Events by work item and by batch, each list oldest first.
#[derive(Debug, Default)]
pub(crate) struct EventIndex<'a> {
    pub(crate) by_item: HashMap<(&'a str, &'a str), Vec<&'a EventIn>>,
    pub(crate) by_batch: HashMap<&'a str, Vec<&'a EventIn>>,
}

impl<'a> EventIndex<'a> {
    /// Indexes `events` (kept in the order given) for the items and batches wanted.
    fn of(
        events: impl IntoIterator<Item = &'a EventIn>,
        item: impl Fn(&str, &str) -> bool,
        batch: impl Fn(&str) -> bool,
    ) -> Self {
        let mut index = EventIndex::default();
        for e in events {
            if let (Some(r), Some(t)) = (&e.repo, &e.target) {
                if item(r, t) {
                    index.by_item.entry((r, t)).or_default().push(e);
                }
            }
            if let Some(b) = &e.batch_id {
                if batch(b) {
                    index.by_batch.entry(b).or_default().push(e);
                }
            }
        }
        index
    }

    /// Sorts every list oldest first.
    fn sort(&mut self) {
        for v in self.by_item.values_mut().chain(self.by_batch.values_mut()) {
            sort_events(v);
        }
    }

    /// The events of one item.
    fn of_item<'s>(&'s self, repo: &'s str, target: &'s str) -> &'s [&'a EventIn] {
        // Read through keys as short-lived as `repo` (the map is covariant in its keys).
        let by_item: &'s HashMap<(&'s str, &'s str), Vec<&'a EventIn>> = &self.by_item;
        by_item
            .get(&(repo, target))
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The control of one batch, from its events.
    fn control(&self, batch: &str) -> Control {
        Control::of_events(
            self.by_batch
                .get(batch)
                .map(Vec::as_slice)
                .unwrap_or_default(),
        )
    }
}

fn sort_events(events: &mut [&EventIn]) {
    events.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.path.cmp(&b.path)));
}

/// Sorts targets numerically when they are numbers, after them by text.
fn numeric_key(target: &str) -> (u8, u64, String) {
    match target.parse::<u64>() {
        Ok(n) => (0, n, String::new()),
        Err(_) => (1, 0, target.to_owned()),
    }
}

fn fmt(t: Option<Instant>) -> Option<String> {
    t.map(time::format)
}

#[cfg(test)]
mod incremental;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_archive;
#[cfg(test)]
mod tests_warnings;
