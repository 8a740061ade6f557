//! Events by work item and by batch, each list oldest first, and what a batch's events say
//! about its stop control: the index every build step reads events through.

use std::sync::Arc;

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

/// Every event by work item and by batch, each list oldest first: what a build keeps so
/// that an update reads the events of the items and batches it touches without a pass over
/// every event. Events are only ever added (an update that sees one change or go derives
/// from scratch).
#[derive(Debug, Clone, Default)]
pub(crate) struct EventLists {
    /// By repository, then target.
    by_item: HashMap<String, HashMap<String, Vec<Arc<EventIn>>>>,
    by_batch: HashMap<String, Vec<Arc<EventIn>>>,
}

impl EventLists {
    /// Every event of `events`, listed.
    pub(crate) fn of(events: &[Arc<EventIn>]) -> EventLists {
        let mut lists = EventLists::default();
        for e in events {
            lists.list(e);
        }
        for v in lists.lists_mut() {
            v.sort_by(|a, b| older(a, b));
        }
        lists
    }

    /// Adds new events, keeping each list oldest first (only the lists they join are
    /// looked at again).
    pub(crate) fn add<'e>(&mut self, events: impl IntoIterator<Item = &'e Arc<EventIn>>) {
        let events: Vec<&Arc<EventIn>> = events.into_iter().collect();
        for e in &events {
            self.list(e);
        }
        let sort = |v: &mut Vec<Arc<EventIn>>| {
            if !v.is_sorted_by(|a, b| older(a, b).is_le()) {
                v.sort_by(|a, b| older(a, b));
            }
        };
        for e in events {
            if let (Some(r), Some(t)) = (&e.repo, &e.target) {
                if let Some(v) = self
                    .by_item
                    .get_mut(r.as_str())
                    .and_then(|ts| ts.get_mut(t.as_str()))
                {
                    sort(v);
                }
            }
            if let Some(v) = e
                .batch_id
                .as_ref()
                .and_then(|b| self.by_batch.get_mut(b.as_str()))
            {
                sort(v);
            }
        }
    }

    /// Appends `e` to its item's and batch's lists (unsorted).
    fn list(&mut self, e: &Arc<EventIn>) {
        if let (Some(r), Some(t)) = (&e.repo, &e.target) {
            let targets = match self.by_item.get_mut(r.as_str()) {
                Some(targets) => targets,
                None => self.by_item.entry(r.clone()).or_default(),
            };
            match targets.get_mut(t.as_str()) {
                Some(v) => v.push(e.clone()),
                None => {
                    targets.insert(t.clone(), vec![e.clone()]);
                }
            }
        }
        if let Some(b) = &e.batch_id {
            match self.by_batch.get_mut(b.as_str()) {
                Some(v) => v.push(e.clone()),
                None => {
                    self.by_batch.insert(b.clone(), vec![e.clone()]);
                }
            }
        }
    }

    fn lists_mut(&mut self) -> impl Iterator<Item = &mut Vec<Arc<EventIn>>> {
        self.by_item
            .values_mut()
            .flat_map(HashMap::values_mut)
            .chain(self.by_batch.values_mut())
    }

    /// The index of the items and batches named, each list oldest first.
    pub(crate) fn index<'a>(
        &'a self,
        items: impl IntoIterator<Item = (&'a str, &'a str)>,
        batches: impl IntoIterator<Item = &'a str>,
    ) -> EventIndex<'a> {
        let refs = |v: &'a Vec<Arc<EventIn>>| v.iter().map(AsRef::as_ref).collect::<Vec<_>>();
        let mut index = EventIndex::default();
        for (r, t) in items {
            if let Some(v) = self.by_item.get(r).and_then(|ts| ts.get(t)) {
                index.by_item.insert((r, t), refs(v));
            }
        }
        for b in batches {
            if let Some(v) = self.by_batch.get(b) {
                index.by_batch.insert(b, refs(v));
            }
        }
        index
    }
}

/// Oldest first: by time, then path.
fn older(a: &EventIn, b: &EventIn) -> std::cmp::Ordering {
    a.at.cmp(&b.at).then_with(|| a.path.cmp(&b.path))
}

pub(crate) fn sort_events(events: &mut [&EventIn]) {
    events.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.path.cmp(&b.path)));
}
