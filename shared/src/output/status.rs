//! What `status --json` prints: a head (the version, the scope read, what is degraded and
//! the `sync` summary) and the projected rows, section by section.
//!
//! The head is a type of its own so that the unscoped report, which can be megabytes,
//! can print the head and then stream its rows without collecting them.

use serde::Serialize;

use super::sync::SyncInfo;
use super::OrderedMap;
use crate::coordinator::spend::CostTotals;
use crate::record::Record;
use crate::rules::status::Scope;
use crate::rules::status::StatusReport;

/// `status --json`.
#[derive(Debug, Clone, Serialize)]
pub struct StatusDocument<'a> {
    /// Everything before the rows.
    #[serde(flatten)]
    pub head: StatusHead<'a>,
    /// Projected claims.
    pub claims: &'a [Record],
    /// Projected heartbeats.
    pub heartbeats: &'a [Record],
    /// Projected batches, each with its lanes.
    pub batches: &'a [Record],
    /// Projected events, sorted by `[at, path]`.
    pub events: &'a [Record],
    /// Projected archive records, only for `--include-archived`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archive: Option<&'a [Record]>,
}

impl<'a> StatusDocument<'a> {
    /// Returns the document of `report`, printed by `version`, with the `sync` summary
    /// when the repository has a default remote.
    pub fn new(
        report: &'a StatusReport,
        version: &'static str,
        sync: Option<&'a SyncInfo>,
    ) -> Self {
        StatusDocument {
            head: StatusHead::new(report, version, sync),
            claims: &report.claims,
            heartbeats: &report.heartbeats,
            batches: &report.batches,
            events: &report.events,
            archive: report.archive.as_deref(),
        }
    }
}

/// The head of `status --json`: every key before the rows.
#[derive(Debug, Clone, Serialize)]
pub struct StatusHead<'a> {
    /// The crate version.
    pub version: &'static str,
    /// The scope that was read.
    pub scope: StatusScope<'a>,
    /// The distinct section notes, in order.
    pub degraded: Vec<&'a str>,
    /// Why sections are incomplete, by section name.
    pub section_notes: OrderedMap<&'a str>,
    /// How the state stands against the default remote, left out without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync: Option<&'a SyncInfo>,
    /// The coordinator's lane spend in the scope (`coordinator/tasks/…` checkpoints), left
    /// out when the scope holds no coordinator task.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub costs: Option<&'a CostTotals>,
}

impl<'a> StatusHead<'a> {
    /// Returns the head of `report` (its rows are not read).
    pub fn new(
        report: &'a StatusReport,
        version: &'static str,
        sync: Option<&'a SyncInfo>,
    ) -> Self {
        StatusHead {
            version,
            scope: StatusScope::from(&report.scope),
            degraded: report.degraded(),
            section_notes: OrderedMap(
                report
                    .section_notes
                    .iter()
                    .map(|(key, note)| (*key, note.as_str()))
                    .collect(),
            ),
            sync,
            costs: None,
        }
    }
}

/// The scope of a status read, as `status --json` names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum StatusScope<'a> {
    /// Everything (`--include-archived` is not printed: the `archive` key says it).
    All,
    /// One claim and its holder.
    Target {
        /// The claim's repository, as `OWNER/REPO`.
        repo: String,
        /// The claimed target.
        target: &'a str,
    },
    /// One batch.
    Batch {
        /// The batch's id.
        batch_id: &'a str,
    },
}

impl<'a> From<&'a Scope> for StatusScope<'a> {
    fn from(scope: &'a Scope) -> Self {
        match scope {
            Scope::All { .. } => StatusScope::All,
            Scope::Target { repo, target } => StatusScope::Target {
                repo: repo.to_string(),
                target: target.as_str(),
            },
            Scope::Batch { batch } => StatusScope::Batch {
                batch_id: batch.as_str(),
            },
        }
    }
}
