//! Work items: one per repo and target, with the claim, heartbeats, batch lanes and events
//! that speak about it (reference §1.2).

use std::collections::BTreeMap;

use rustc_hash::FxHashMap as HashMap;

use super::event_index::EventIndex;
use super::github_rules;
use super::rules;
use super::sources::BatchSrc;
use super::sources::LaneSrc;
use crate::dashboard::inputs::github_facts::GithubFacts;
use crate::dashboard::inputs::github_facts::RepoFacts;
use crate::dashboard::inputs::github_wanted::wanted;
use crate::dashboard::inputs::records::ClaimIn;
use crate::dashboard::inputs::records::EventIn;
use crate::dashboard::inputs::records::HeartbeatIn;
use crate::dashboard::inputs::records::Inputs;
use crate::rules::liveness::Liveness;
use crate::time::Instant;

/// One work item (repo + target) with everything known about it.
#[derive(Debug, Default)]
pub(crate) struct Item<'a> {
    pub(crate) claim: Option<&'a ClaimIn>,
    pub(crate) heartbeats: Vec<&'a HeartbeatIn>,
    /// The claim holder's heartbeat, wherever it points.
    pub(crate) holder_beat: Option<&'a HeartbeatIn>,
    /// `(batch index, lane index)` of the lanes scheduling it.
    pub(crate) signals: Vec<(usize, usize)>,
    /// Its events, oldest first.
    pub(crate) events: Vec<&'a EventIn>,
    /// What GitHub said about its repository, once GitHub answered.
    pub(crate) github: Option<&'a RepoFacts>,
    /// Only GitHub knows it: an open item with no coordination record.
    pub(crate) github_only: bool,
}

/// Items by `(repo, target)`.
pub(crate) type Items<'a> = BTreeMap<(String, String), Item<'a>>;

/// Collects every item, and the lanes that name no item (no target repository is known).
pub(crate) fn collect<'a>(
    inputs: &'a Inputs,
    active_claims: &[&'a ClaimIn],
    srcs: &[BatchSrc],
    index: &EventIndex<'a>,
) -> (Items<'a>, Vec<(usize, usize)>) {
    let mut items = Items::new();
    for c in active_claims {
        items
            .entry((c.repo.clone(), c.target.clone()))
            .or_default()
            .claim = Some(c);
    }
    for item in items.values_mut() {
        item.holder_beat = item.claim.and_then(|c| inputs.heartbeat_of(&c.agent));
    }
    for h in &inputs.heartbeats {
        if let (Some(r), Some(t)) = (&h.repo, &h.target) {
            items
                .entry((r.clone(), t.clone()))
                .or_default()
                .heartbeats
                .push(h);
        }
    }
    let mut lane_rows = Vec::new();
    for (bi, b) in srcs.iter().enumerate() {
        for (li, lane) in b.lanes.iter().enumerate() {
            for t in &lane.targets {
                if let Some(repo) = b.repo_of(t) {
                    items
                        .entry((repo, t.clone()))
                        .or_default()
                        .signals
                        .push((bi, li));
                }
            }
            if !placed(b, lane) {
                lane_rows.push((bi, li));
            }
        }
    }
    for ((r, t), evs) in &index.by_item {
        let key = ((*r).to_owned(), (*t).to_owned());
        match items.get_mut(&key) {
            Some(item) => item.events = evs.clone(),
            None => {
                let item = Item {
                    events: evs.clone(),
                    ..Item::default()
                };
                if item.exists() {
                    items.insert(key, item);
                }
            }
        }
    }
    if let Some(facts) = inputs.github.as_deref() {
        for ((repo, _), item) in items.iter_mut() {
            item.github = facts.repos.get(repo);
        }
        add_github_only(&mut items, facts, inputs);
    }
    (items, lane_rows)
}

/// Whether a lane names an item: a target whose repository is known. A lane that does not
/// gets a row of its own.
pub(crate) fn placed(b: &BatchSrc, lane: &LaneSrc) -> bool {
    lane.targets.iter().any(|t| b.repo_of(t).is_some())
}

/// The lanes of batch `bi` that name no item, as `(batch index, lane index)`.
pub(crate) fn lane_rows_of(bi: usize, b: &BatchSrc) -> impl Iterator<Item = (usize, usize)> + '_ {
    b.lanes
        .iter()
        .enumerate()
        .filter(|(_, lane)| !placed(b, lane))
        .map(move |(li, _)| (bi, li))
}

/// Adds the open items only GitHub knows that are ready for a batch: assigned to nobody,
/// held by no claim (an item with a claim is already an item), and not a pull request the
/// fleet works on for another item (its row is that item's).
fn add_github_only<'a>(items: &mut Items<'a>, facts: &'a GithubFacts, inputs: &Inputs) {
    let wanted = wanted(inputs);
    for (repo, repo_facts) in &facts.repos {
        let fleet = wanted.get(repo);
        for gh in repo_facts.items.values() {
            if !github_rules::is_ready_for_batch(gh, false)
                || (gh.pull && fleet.is_some_and(|w| w.works_on(gh)))
            {
                continue;
            }
            items
                .entry((repo.clone(), gh.number.to_string()))
                .or_insert_with(|| Item {
                    github: Some(repo_facts),
                    github_only: true,
                    ..Item::default()
                });
        }
    }
}

/// Gathers the items of `keys`, as [`collect`] would have, in one pass over the claims,
/// heartbeats and lanes (an update re-derives a few items of a large fleet): one item per
/// key, in the keys' order, which may not [`exist`](Item::exists).
pub(crate) fn gather<'a, 'k>(
    keys: impl IntoIterator<Item = (&'k str, &'k str)>,
    inputs: &'a Inputs,
    active_claims: &[&'a ClaimIn],
    srcs: &[BatchSrc],
    index: &EventIndex<'a>,
) -> Vec<Item<'a>> {
    let github = inputs.github.as_deref();
    let keys: Vec<(&str, &str)> = keys.into_iter().collect();
    let mut items: Vec<Item<'a>> = keys
        .iter()
        .map(|(repo, target)| Item {
            events: index.of_item(repo, target).to_vec(),
            github: github.and_then(|f| f.repos.get(*repo)),
            ..Item::default()
        })
        .collect();
    let mut by_target: HashMap<&str, Vec<usize>> = HashMap::default();
    for (i, (_, target)) in keys.iter().enumerate() {
        by_target.entry(target).or_default().push(i);
    }
    let find = |repo: &str, target: &str| {
        by_target
            .get(target)?
            .iter()
            .copied()
            .find(|i| keys[*i].0 == repo)
    };
    // The last claim wins, as in `collect`.
    for c in active_claims {
        if let Some(i) = find(&c.repo, &c.target) {
            items[i].claim = Some(c);
        }
    }
    for item in &mut items {
        item.holder_beat = item.claim.and_then(|c| inputs.heartbeat_of(&c.agent));
    }
    for h in &inputs.heartbeats {
        if let (Some(r), Some(t)) = (&h.repo, &h.target) {
            if let Some(i) = find(r, t) {
                items[i].heartbeats.push(h);
            }
        }
    }
    for (bi, b) in srcs.iter().enumerate() {
        for (li, lane) in b.lanes.iter().enumerate() {
            for t in &lane.targets {
                if !by_target.contains_key(t.as_str()) {
                    continue;
                }
                let Some(i) = b.repo_of(t).and_then(|r| find(&r, t)) else {
                    continue;
                };
                // Once per lane, however often it names the item.
                if items[i].signals.last() != Some(&(bi, li)) {
                    items[i].signals.push((bi, li));
                }
            }
        }
    }
    items
}

impl<'a> Item<'a> {
    /// Whether an item with these facts is on the dashboard at all.
    pub(crate) fn exists(&self) -> bool {
        self.claim.is_some()
            || !self.heartbeats.is_empty()
            || !self.signals.is_empty()
            || self
                .newest(|e| !rules::is_qa_type(&e.kind))
                .is_some_and(|e| !rules::event_closes_work(e.status_or_type()))
    }

    /// The newest event that `keep` accepts.
    pub(crate) fn newest(&self, keep: impl Fn(&EventIn) -> bool) -> Option<&'a EventIn> {
        self.events.iter().rev().find(|e| keep(e)).copied()
    }

    /// The newest value `f` finds in the events.
    pub(crate) fn newest_with(&self, f: impl Fn(&EventIn) -> Option<String>) -> Option<String> {
        self.events.iter().rev().find_map(|e| f(e))
    }

    /// The first lane scheduling the item, with its batch.
    pub(crate) fn first_signal<'s>(
        &self,
        srcs: &'s [BatchSrc],
    ) -> Option<(&'s BatchSrc, &'s LaneSrc)> {
        self.signals
            .first()
            .map(|(b, l)| (&srcs[*b], &srcs[*b].lanes[*l]))
    }

    /// Picks the heartbeat that speaks for the item (reference §1.2): the holder's live or
    /// stale one, any live or stale one, the holder's, the first.
    pub(crate) fn chosen_heartbeat(&self, now: Instant) -> Option<&'a HeartbeatIn> {
        let holder = self.claim.map(|c| c.agent.as_str());
        let alive = |h: &&HeartbeatIn| matches!(h.liveness(now), Liveness::Live | Liveness::Stale);
        let of_holder = |h: &&HeartbeatIn| Some(h.agent.as_str()) == holder;
        self.heartbeats
            .iter()
            .find(|h| of_holder(h) && alive(h))
            .or_else(|| self.heartbeats.iter().find(|h| alive(h)))
            .or_else(|| self.heartbeats.iter().find(|h| of_holder(h)))
            .or_else(|| self.heartbeats.first())
            .copied()
    }
}
