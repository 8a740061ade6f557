//! What a GitHub refresher should ask for: the repositories the coordination records
//! mention, and in each the items, branches and pull requests they name (reference §7.5).

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use super::github_facts::is_repo_name;
use super::github_facts::pull_number;
use super::github_facts::GhItem;
use super::records::Inputs;
use super::records::Meta;
use crate::time::Instant;

/// Returns the repositories to enrich: for now every repository the coordination state
/// mentions (claims, heartbeats, manifests and their targets, events), sorted.
pub fn enrichment_repos(inputs: &Inputs) -> Vec<String> {
    wanted(inputs).into_keys().collect()
}

/// What the state mentions in one repository: the numbers of its items, the branches agents
/// work on, the pull requests their URLs name, and the oldest record time (closed items
/// updated before it cannot have been closed by the fleet).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Wanted {
    /// Item numbers (claims, heartbeats, lane targets, events).
    pub numbers: BTreeSet<u64>,
    /// Work branches.
    pub branches: BTreeSet<String>,
    /// Pull requests named by a `pr_url`.
    pub pulls: BTreeSet<u64>,
    /// The oldest record time.
    pub since: Option<Instant>,
}

impl Wanted {
    fn note(&mut self, target: Option<&str>, meta: &Meta, repo: &str, at: Option<Instant>) {
        if let Some(n) = target.and_then(|t| t.trim().parse::<u64>().ok()) {
            self.numbers.insert(n);
        }
        if let Some(b) = &meta.branch {
            self.branches.insert(b.clone());
        }
        if let Some(n) = meta.pr_url.as_deref().and_then(|u| pull_number(u, repo)) {
            self.pulls.insert(n);
        }
        if let Some(t) = at {
            self.since = Some(self.since.map_or(t, |s| s.min(t)));
        }
    }

    /// Reports whether the fleet works on `pr` (named, on a known branch, or closing an
    /// item the state mentions): its open row is the issue's, and its CI is worth asking.
    pub fn works_on(&self, pr: &GhItem) -> bool {
        self.numbers.contains(&pr.number)
            || self.pulls.contains(&pr.number)
            || pr
                .head_branch
                .as_ref()
                .is_some_and(|b| self.branches.contains(b))
            || pr.closes.iter().any(|n| self.numbers.contains(n))
    }
}

/// Returns what the state mentions, by repository (only `owner/repo` names).
pub fn wanted(inputs: &Inputs) -> BTreeMap<String, Wanted> {
    let mut out: BTreeMap<String, Wanted> = BTreeMap::new();
    let mut note = |repo: &str, target: Option<&str>, meta: &Meta, at: Option<Instant>| {
        if is_repo_name(repo) {
            out.entry(repo.to_owned())
                .or_default()
                .note(target, meta, repo, at);
        }
    };
    for c in &inputs.claims {
        note(&c.repo, Some(&c.target), &c.meta, c.updated_at);
    }
    for h in &inputs.heartbeats {
        if let Some(r) = &h.repo {
            note(r, h.target.as_deref(), &h.meta, h.updated_at);
        }
    }
    for m in &inputs.manifests {
        for t in &m.targets {
            if let Some(r) = t.repo.as_ref().or(m.repo.as_ref()) {
                note(r, Some(&t.target), &Meta::default(), m.updated_at);
            }
        }
        if let Some(r) = &m.repo {
            for l in &m.lanes {
                note(r, None, &l.meta, m.updated_at);
                for t in &l.targets {
                    note(r, Some(t), &Meta::default(), None);
                }
            }
        }
    }
    for e in &inputs.events {
        if let Some(r) = &e.repo {
            note(r, e.target.as_deref(), &e.meta, e.at);
        }
    }
    out
}
