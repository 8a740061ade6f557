//! Universal Find (reference dashboard §10): one query over jobs (operator rows), batches
//! and machines with the operator-row search forms of [`super::row_search`], and what Enter
//! opens — the unique exact match (jobs, then batches, then machines), else the only
//! result, else nothing.

use serde::Deserialize;
use serde::Serialize;

use super::row_labels::item_label;
use crate::dashboard::model::BatchView;
use crate::dashboard::model::DashboardModel;
use crate::dashboard::model::MachineView;
use crate::dashboard::model::Row;
use crate::dashboard::view::row_search;
use crate::dashboard::view::row_search::Query;
use crate::serde_name::WireName;

/// The most results Find lists; the rest are counted.
pub const MAX_RESULTS: usize = 24;

/// What Find shows before anything is typed.
pub const EMPTY_TEXT: &str =
    "Type to search jobs, batches, machines, chats, branches, hosts, or GitHub items.";

/// What a result is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindKind {
    /// An operator row.
    Job,
    /// A batch.
    Batch,
    /// A machine.
    Machine,
}

/// The name the results list shows.
impl WireName for FindKind {}

/// Where a result leads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FindTarget {
    /// The item page of `repo#target`.
    Item {
        /// `owner/repo`.
        repo: String,
        /// The number.
        target: String,
    },
    /// A batch page.
    Batch(String),
    /// A machine on the machines page.
    Machine(String),
}

/// One result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindResult {
    /// Job, batch or machine.
    pub kind: FindKind,
    /// A stable id (row id, batch id, machine id).
    pub id: String,
    /// What it is called (`PR #7 Fix the login`, a batch title, a machine id).
    pub label: String,
    /// Where it is (repository, holder, machine, …).
    pub context: String,
    /// Where opening it leads, if anywhere.
    pub target: Option<FindTarget>,
}

/// What a query found (`GET /api/find?q=` answers it: Find runs on the server, over the
/// whole model, since the page holds only one view of it).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Found {
    /// The first [`MAX_RESULTS`] results: jobs, then batches, then machines.
    pub results: Vec<FindResult>,
    /// How many more matched.
    pub more: usize,
    /// What Enter opens.
    pub open: Option<FindResult>,
}

/// The text shown when nothing matched.
pub fn no_match_text(raw: &str) -> String {
    format!("No matches for \"{}\"", raw.trim())
}

/// The text shown under a truncated list.
pub fn more_text(more: usize) -> String {
    format!("{more} more matches. Refine your search to narrow the results.")
}

fn label_of(row: &Row) -> String {
    let work = if row.target.is_empty() {
        format!("Lane {}", row.lane.as_deref().unwrap_or("UNKNOWN"))
    } else {
        item_label(row)
    };
    match &row.title {
        Some(t) => format!("{work} {t}"),
        None => work,
    }
}

fn job(row: &Row) -> FindResult {
    let mut context = vec![row.repo.clone(), row.state.as_str().to_owned()];
    context.extend(
        [
            &row.agent,
            &row.machine,
            &row.host,
            &row.thread,
            &row.branch,
        ]
        .into_iter()
        .flatten()
        .cloned(),
    );
    let target = if row.id.starts_with("target:") && !row.target.is_empty() {
        Some(FindTarget::Item {
            repo: row.repo.clone(),
            target: row.target.clone(),
        })
    } else {
        row.batch_id.clone().map(FindTarget::Batch)
    };
    FindResult {
        kind: FindKind::Job,
        id: row.id.clone(),
        label: label_of(row),
        context: context.join(" · "),
        target,
    }
}

fn batch(b: &BatchView) -> FindResult {
    let context = [Some(b.id.as_str()), b.repo.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" · ");
    FindResult {
        kind: FindKind::Batch,
        id: b.id.clone(),
        label: b.title.clone(),
        context,
        target: Some(FindTarget::Batch(b.id.clone())),
    }
}

fn machine(m: &MachineView) -> FindResult {
    FindResult {
        kind: FindKind::Machine,
        id: m.id.clone(),
        label: m.id.clone(),
        context: format!("{} agents · {} live", m.agents.len(), m.live),
        target: Some(FindTarget::Machine(m.id.clone())),
    }
}

fn batch_text(b: &BatchView) -> String {
    let mut parts: Vec<&str> = vec![&b.id, &b.title, &b.path];
    parts.extend(
        [&b.repo, &b.objective, &b.created_by_machine]
            .into_iter()
            .flatten()
            .map(String::as_str),
    );
    for l in &b.lanes {
        parts.push(&l.name);
        parts.push(&l.status);
        parts.extend(l.owner.as_deref());
        parts.extend(l.note.as_deref());
        parts.extend(l.targets.iter().map(String::as_str));
    }
    parts.join(" ").to_lowercase()
}

fn machine_text(m: &MachineView) -> String {
    let mut parts: Vec<&str> = vec![&m.id];
    for a in &m.agents {
        parts.push(&a.id);
        parts.extend(
            [&a.host, &a.thread, &a.work, &a.batch_id, &a.status]
                .into_iter()
                .flatten()
                .map(String::as_str),
        );
    }
    parts.join(" ").to_lowercase()
}

/// The number a numeric query names, with the repository when it names one.
fn numbered(q: &Query) -> Option<(Option<&str>, &str)> {
    match q {
        Query::Number(n) | Query::Pr(n) | Query::Issue(n) => Some((None, n)),
        Query::RepoNumber { repo, number } => Some((Some(repo), number)),
        Query::All | Query::Text(_) => None,
    }
}

fn batch_matches(b: &BatchView, q: &Query) -> bool {
    match q {
        Query::All => false,
        Query::Text(t) => batch_text(b).contains(t.as_str()),
        _ => numbered(q).is_some_and(|(repo, n)| {
            let repo_ok = repo.is_none_or(|r| {
                b.repo.as_deref().is_some_and(|br| {
                    br.eq_ignore_ascii_case(r) || br.to_lowercase().ends_with(&format!("/{r}"))
                })
            });
            repo_ok && b.lanes.iter().any(|l| l.targets.iter().any(|t| t == n))
        }),
    }
}

fn machine_matches(m: &MachineView, q: &Query) -> bool {
    match q {
        Query::Text(t) => machine_text(m).contains(t.as_str()),
        _ => false,
    }
}

/// Whether the whole query names this row exactly: its number (`7`, `PR #7`, `app#7`, its
/// URL), its thread, branch, agent, machine or PR URL.
fn job_is_exact(row: &Row, q: &Query) -> bool {
    match q {
        Query::Text(t) => [
            &row.thread,
            &row.branch,
            &row.agent,
            &row.machine,
            &row.pr_url,
        ]
        .into_iter()
        .flatten()
        .any(|v| v.to_lowercase() == *t),
        Query::All => false,
        _ => row_search::matches(row, q),
    }
}

fn batch_is_exact(b: &BatchView, q: &Query) -> bool {
    match q {
        Query::Text(t) => b.id.to_lowercase() == *t || b.title.to_lowercase() == *t,
        _ => false,
    }
}

fn machine_is_exact(m: &MachineView, q: &Query) -> bool {
    matches!(q, Query::Text(t) if m.id.to_lowercase() == *t)
}

fn unique<T>(mut it: impl Iterator<Item = T>) -> Option<T> {
    let first = it.next()?;
    it.next().is_none().then_some(first)
}

/// Finds `raw` in the model.
pub fn find(model: &DashboardModel, raw: &str) -> Found {
    let q = row_search::parse_query(raw);
    if q == Query::All {
        return Found::default();
    }
    let jobs: Vec<&Row> = model
        .rows
        .iter()
        .filter(|r| row_search::matches(r, &q))
        .collect();
    let batches: Vec<&BatchView> = model
        .batches
        .iter()
        .filter(|b| batch_matches(b, &q))
        .collect();
    let machines: Vec<&MachineView> = model
        .machines
        .iter()
        .filter(|m| machine_matches(m, &q))
        .collect();
    let open = unique(jobs.iter().filter(|r| job_is_exact(r, &q)))
        .map(|r| job(r))
        .or_else(|| unique(batches.iter().filter(|b| batch_is_exact(b, &q))).map(|b| batch(b)))
        .or_else(|| {
            unique(machines.iter().filter(|m| machine_is_exact(m, &q))).map(|m| machine(m))
        });
    let total = jobs.len() + batches.len() + machines.len();
    let results: Vec<FindResult> = jobs
        .into_iter()
        .map(job)
        .chain(batches.into_iter().map(batch))
        .chain(machines.into_iter().map(machine))
        .take(MAX_RESULTS)
        .collect();
    let open = open.or_else(|| {
        if total == 1 {
            results.first().cloned()
        } else {
            None
        }
    });
    Found {
        more: total - results.len(),
        results,
        open,
    }
}

#[cfg(test)]
mod tests;
