//! Events by work item and by batch, each list oldest first, and what a batch's events say
//! about its stop control: the index every build step reads events through.

use rustc_hash::FxHashMap as HashMap;

use super::rules::control_of;
use crate::dashboard::inputs::records::EventIn;
use crate::dashboard::model::ControlStatus;
use crate::time;

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
            if let Some(c) = control_of(e) {
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
    pub(crate) fn of(
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
    pub(crate) fn sort(&mut self) {
        for v in self.by_item.values_mut().chain(self.by_batch.values_mut()) {
            sort_events(v);
        }
    }

    /// The events of one item.
    pub(crate) fn of_item<'s>(&'s self, repo: &'s str, target: &'s str) -> &'s [&'a EventIn] {
        // Read through keys as short-lived as `repo` (the map is covariant in its keys).
        let by_item: &'s HashMap<(&'s str, &'s str), Vec<&'a EventIn>> = &self.by_item;
        by_item
            .get(&(repo, target))
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The control of one batch, from its events.
    pub(crate) fn control(&self, batch: &str) -> Control {
        Control::of_events(
            self.by_batch
                .get(batch)
                .map(Vec::as_slice)
                .unwrap_or_default(),
        )
    }
}

pub(crate) fn sort_events(events: &mut [&EventIn]) {
    events.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.path.cmp(&b.path)));
}
