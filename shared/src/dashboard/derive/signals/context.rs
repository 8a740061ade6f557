//! What every health signal reads and writes: which subjects the pass derives ([`Pass`]),
//! the records and derived rows it reads ([`Cx`]), and one [`HealthItem`] with its id.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use rustc_hash::FxHashMap as HashMap;
use rustc_hash::FxHashSet as HashSet;

use crate::dashboard::derive::machine_groups::MachineOf;
use crate::dashboard::inputs::records::Inputs;
use crate::dashboard::model::HealthCategory;
use crate::dashboard::model::HealthItem;
use crate::dashboard::model::Row;
use crate::dashboard::model::Severity;
use crate::dashboard::model::Signal;

/// Which subjects a health pass derives (all, or only the items and batches an update touched).
pub(crate) enum Pass<'a> {
    /// Everything.
    All,
    /// Only these items (repo, target) and batches.
    Only {
        keys: &'a HashSet<(&'a str, &'a str)>,
        batches: &'a BTreeSet<String>,
    },
}

impl Pass<'_> {
    pub(crate) fn item(&self, repo: &str, target: &str) -> bool {
        match self {
            Pass::All => true,
            Pass::Only { keys, .. } => keys.contains(&(repo, target)),
        }
    }
    pub(crate) fn batch(&self, id: &str) -> bool {
        match self {
            Pass::All => true,
            Pass::Only { batches, .. } => batches.contains(id),
        }
    }
    pub(crate) fn all(&self) -> bool {
        matches!(self, Pass::All)
    }
}

/// What the signals read: the records, the derived batches and rows, and the pass.
pub(crate) struct Cx<'c> {
    pub(crate) inputs: &'c Inputs,
    pub(crate) rows: &'c [Row],
    pub(crate) row_of: HashMap<&'c str, &'c Row>,
    pub(crate) machines: &'c BTreeMap<String, MachineOf>,
    pub(crate) pass: &'c Pass<'c>,
}

impl Cx<'_> {
    /// Whether the item is not done (an item without a row counts as operational).
    pub(crate) fn operational(&self, repo: &str, target: &str) -> bool {
        self.row_of
            .get(format!("target:{repo}#{target}").as_str())
            .is_none_or(|r| !r.state.is_terminal())
    }
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
pub(crate) struct Subject<'a> {
    pub(crate) agent: Option<&'a str>,
    pub(crate) batch: Option<&'a str>,
    pub(crate) lane: Option<&'a str>,
    pub(crate) repo: Option<&'a str>,
    pub(crate) target: Option<&'a str>,
}

/// One health item; its id joins category, severity, subject and title.
pub(crate) fn item(
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
