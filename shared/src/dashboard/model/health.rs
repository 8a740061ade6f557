//! Health items: the telemetry signals H1…H9 and R1, their severity and category.

use serde::Deserialize;
use serde::Serialize;

use crate::serde_name::serde_name;

/// Severity of a health item.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    /// Needs fixing now (nothing emits this today).
    Critical,
    /// A telemetry bug.
    Warning,
    /// Worth knowing.
    Info,
}

impl Severity {
    /// The lowercase name used in JSON and the UI.
    pub fn as_str(self) -> &'static str {
        serde_name(&self)
    }
}

/// A health signal (reference §2.1); serialised as its name (`H1`, …, `R1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Signal {
    /// Heartbeat missing machine id.
    H1,
    /// Active claim has no matching heartbeat.
    H2,
    /// Work started but not currently processing.
    H3,
    /// Batch plan missing.
    H4,
    /// Prompt missing.
    H5,
    /// Prompt parse failed.
    H6,
    /// Prompt target mismatch.
    H7,
    /// Batch has no history events.
    H8,
    /// Batch lane has no heartbeat.
    H9,
    /// Unreadable coordination record.
    R1,
}

impl Signal {
    /// The name used in JSON and the UI.
    pub fn as_str(self) -> &'static str {
        serde_name(&self)
    }
}

/// What a health signal is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HealthCategory {
    /// Machine ownership.
    Machine,
    /// Heartbeats.
    Heartbeat,
    /// Claims.
    Claim,
    /// Batches.
    Batch,
    /// Batch history.
    History,
    /// The state branch's records.
    State,
}

impl HealthCategory {
    /// The snake_case name used in JSON and the UI.
    pub fn as_str(self) -> &'static str {
        serde_name(&self)
    }
}

/// One health signal occurrence.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HealthItem {
    /// Stable id.
    pub id: String,
    /// `H1` … `H9` (reference §2.1), or `R1` for an unreadable record.
    pub signal: Signal,
    /// The exact title.
    pub title: String,
    /// Severity.
    pub severity: Severity,
    /// What the signal is about.
    pub category: HealthCategory,
    /// The detail sentence.
    pub detail: String,
    /// Agent concerned.
    pub agent: Option<String>,
    /// Batch concerned.
    pub batch_id: Option<String>,
    /// Lane concerned.
    pub lane: Option<String>,
    /// Repository concerned.
    pub repo: Option<String>,
    /// Target concerned.
    pub target: Option<String>,
}
