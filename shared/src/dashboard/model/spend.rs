//! What the fleet's lane runs cost, as the dashboard shows it: a total (runs, tokens, known
//! cost, runs of unknown cost), per batch and per worker, and per day for the chart.

use serde::Deserialize;
use serde::Serialize;

/// Lane runs added up.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpendView {
    /// Lane runs counted.
    pub runs: u64,
    /// All four token counts.
    pub tokens: u64,
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Tokens read from or written to the prompt cache.
    pub cache_tokens: u64,
    /// The known cost in US dollars (runs of unknown cost add nothing).
    pub cost_usd: f64,
    /// Runs whose cost is unknown.
    pub unpriced_runs: u64,
}

/// One key's total (a batch, a worker, a day).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpendRow {
    /// The batch id, worker session or UTC day (`YYYY-MM-DD`).
    pub key: String,
    /// Its total.
    pub spend: SpendView,
}

/// The fleet's lane spend: derived from the coordinator task checkpoints in scope.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SpendSummary {
    /// Every run.
    pub total: SpendView,
    /// By batch (`coordinator-<worker>`), costliest first.
    pub batches: Vec<SpendRow>,
    /// By worker session, costliest first.
    pub workers: Vec<SpendRow>,
    /// By the UTC day a run ended, oldest first: the last [`SPEND_DAYS`] days that had runs
    /// (runs folded out of a checkpoint's bound count in every other total, not here).
    pub days: Vec<SpendRow>,
}

impl SpendSummary {
    /// Reports whether no lane run is counted.
    pub fn is_empty(&self) -> bool {
        self.total.runs == 0
    }
}

/// How many days with runs [`SpendSummary::days`] keeps.
pub const SPEND_DAYS: usize = 30;
