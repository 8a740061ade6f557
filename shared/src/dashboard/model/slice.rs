//! What a model cut down for one page (`GET /api/dashboard?view=…`) says about what was
//! left out: totals, per-chip counts, and where the page is.

use serde::Deserialize;
use serde::Serialize;

use super::rows::RowState;

/// What a sliced model was cut from: totals, and where the page is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Slice {
    /// The view's name (`overview`, `operator`, `batches`, `machines`, `health`, `summary`).
    pub view: String,
    /// The query that asked for it (`View::query` of the view stage), so a page can tell whether the model
    /// it holds answers what it asks now.
    pub query: String,
    /// The 1-based page shown (clamped to the last page).
    pub page: usize,
    /// How many pages the view's selection fills (at least one).
    pub pages: usize,
    /// The 0-based position of the first item shown within the selection.
    pub first: usize,
    /// How many items the view's selection holds (rows passing search and state; batches
    /// in the tier).
    pub selected: usize,
    /// Operator rows matching the search, in any state.
    pub matched: usize,
    /// All operator rows.
    pub rows_total: usize,
    /// Operator rows matching the search, per state (for the chips).
    pub rows_by_state: Vec<(RowState, usize)>,
    /// All batches.
    pub batches_total: usize,
    /// Batches per tier filter key (for the chips).
    pub batches_by_tier: Vec<(String, usize)>,
    /// Attention items in all.
    pub attention_total: usize,
    /// Rows of active work in all.
    pub active_work: usize,
    /// Rows of recoverable work in all.
    pub recoverable: usize,
    /// Batches needing repair in all.
    pub batch_repairs: usize,
    /// QA gaps in all.
    pub qa_gaps: usize,
    /// Health items per title, before the per-group cap.
    pub health_by_title: Vec<(String, usize)>,
    /// Agents per machine id, before the per-machine cap.
    pub agents_by_machine: Vec<(String, usize)>,
    /// Unreadable-record warnings in all.
    pub warnings_total: usize,
}
