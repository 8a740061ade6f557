//! Telemetry health signals (the contract's "Dashboard Health Signals"; reference §2.1).
//!
//! One function per signal: H1–H3 are about work items ([`items`]), H4–H9 about batches
//! ([`batches`]), R1 about unreadable records. [`health`] runs them all over a [`Scope`].

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use rustc_hash::FxHashMap as HashMap;
use rustc_hash::FxHashSet as HashSet;

use super::input::EventIn;
use super::input::Inputs;
use super::machines::MachineOf;
use super::model::HealthCategory;
use super::model::HealthItem;
use super::model::Row;
use super::model::Severity;
use super::model::Signal;
use super::sources::BatchSrc;

mod batches;
mod items;

/// Which subjects a health pass derives.
pub(crate) enum Scope<'a> {
    /// Everything.
    All,
    /// Only these items (repo, target) and batches.
    Only {
        keys: &'a HashSet<(&'a str, &'a str)>,
        batches: &'a BTreeSet<String>,
    },
}

impl Scope<'_> {
    fn item(&self, repo: &str, target: &str) -> bool {
        match self {
            Scope::All => true,
            Scope::Only { keys, .. } => keys.contains(&(repo, target)),
        }
    }
    fn batch(&self, id: &str) -> bool {
        match self {
            Scope::All => true,
            Scope::Only { batches, .. } => batches.contains(id),
        }
    }
    fn all(&self) -> bool {
        matches!(self, Scope::All)
    }
}

/// What the signals read: the records, the derived batches and rows, and the scope.
struct Cx<'c> {
    inputs: &'c Inputs,
    rows: &'c [Row],
    row_of: HashMap<&'c str, &'c Row>,
    machines: &'c BTreeMap<String, MachineOf>,
    scope: &'c Scope<'c>,
}

impl Cx<'_> {
    /// Whether the item is not done (an item without a row counts as operational).
    fn operational(&self, repo: &str, target: &str) -> bool {
        self.row_of
            .get(format!("target:{repo}#{target}").as_str())
            .is_none_or(|r| !r.state.is_terminal())
    }
}

/// Derives every health item in `scope`, sorted.
pub(crate) fn health(
    inputs: &Inputs,
    srcs: &[BatchSrc],
    rows: &[Row],
    events_by_batch: &HashMap<&str, Vec<&EventIn>>,
    machines: &BTreeMap<String, MachineOf>,
    scope: &Scope<'_>,
) -> Vec<HealthItem> {
    let row_of = match scope {
        Scope::All => rows.iter().map(|r| (r.id.as_str(), r)).collect(),
        // Only the rows a scoped pass asks about: its items and its batches' targets.
        Scope::Only { keys, .. } => {
            let targets: HashSet<&str> = keys
                .iter()
                .map(|(_, t)| *t)
                .chain(
                    srcs.iter()
                        .filter(|b| scope.batch(&b.id))
                        .flat_map(|b| b.lanes.iter().flat_map(|l| &l.targets))
                        .map(String::as_str),
                )
                .collect();
            rows.iter()
                .filter(|r| targets.contains(r.target.as_str()))
                .map(|r| (r.id.as_str(), r))
                .collect()
        }
    };
    let cx = Cx {
        inputs,
        rows,
        row_of,
        machines,
        scope,
    };
    let mut out = items::h1_missing_machine(&cx);
    out.extend(items::h2_claim_without_heartbeat(&cx));
    out.extend(items::h3_started_not_processing(&cx));
    for b in srcs.iter().filter(|b| scope.batch(&b.id)) {
        out.extend(batches::h4_to_h7_plan_and_prompt(b));
        out.extend(batches::h8_no_history(
            b,
            events_by_batch.get(b.id.as_str()),
        ));
        out.extend(batches::h9_lanes_without_heartbeat(&cx, b));
    }
    out.extend(r1_unreadable(&cx));
    sort(&mut out);
    out
}

/// R1: a record that could not be read.
fn r1_unreadable(cx: &Cx<'_>) -> Vec<HealthItem> {
    if !cx.scope.all() {
        return Vec::new();
    }
    cx.inputs
        .malformed
        .iter()
        .map(|(path, message)| {
            item(
                Signal::R1,
                "Unreadable coordination record",
                Severity::Warning,
                HealthCategory::State,
                crate::dashboard::input::malformed_warning(path, message),
                Subject::default(),
            )
        })
        .collect()
}

/// Sorts health items: severity, signal, id, detail.
pub(crate) fn sort(items: &mut [HealthItem]) {
    items.sort_by(|a, b| {
        a.severity
            .cmp(&b.severity)
            .then_with(|| a.signal.cmp(&b.signal))
            .then_with(|| a.id.cmp(&b.id))
            .then_with(|| a.detail.cmp(&b.detail))
    });
}

/// What a health item is about.
#[derive(Default)]
struct Subject<'a> {
    agent: Option<&'a str>,
    batch: Option<&'a str>,
    lane: Option<&'a str>,
    repo: Option<&'a str>,
    target: Option<&'a str>,
}

/// One health item; its id joins category, severity, subject and title.
fn item(
    signal: Signal,
    title: &str,
    severity: Severity,
    category: HealthCategory,
    detail: String,
    s: Subject<'_>,
) -> HealthItem {
    let sev = severity.as_str();
    let id = [
        Some(category.as_str()),
        Some(sev),
        s.agent,
        s.repo,
        s.target,
        s.batch,
        s.lane,
        Some(title),
    ]
    .into_iter()
    .flatten()
    .filter(|p| !p.is_empty())
    .collect::<Vec<_>>()
    .join(":");
    let own = |v: Option<&str>| v.map(str::to_owned);
    HealthItem {
        id,
        signal,
        title: title.into(),
        severity,
        category,
        detail,
        agent: own(s.agent),
        batch_id: own(s.batch),
        lane: own(s.lane),
        repo: own(s.repo),
        target: own(s.target),
    }
}

#[cfg(test)]
mod tests;
