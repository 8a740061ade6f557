//! What `import --json` and `export --json` print.

use serde::Serialize;

use super::OrderedMap;

/// `import --json`.
#[derive(Debug, Clone, Serialize)]
pub struct ImportAnswer {
    /// Always `imported`.
    pub result: &'static str,
    /// Records read from the state root.
    pub records: usize,
    /// Records written (new or different).
    pub written: usize,
    /// Records already stored as they are.
    pub unchanged: usize,
    /// Files in the root that are no records.
    pub skipped_files: usize,
    /// Records read, by family.
    pub families: OrderedMap<usize>,
    /// The commit written, `null` when nothing changed.
    pub commit: Option<String>,
}

/// `export --json`.
#[derive(Debug, Clone, Serialize)]
pub struct ExportAnswer {
    /// Always `exported`.
    pub result: &'static str,
    /// Records written out.
    pub records: usize,
    /// Files written.
    pub files: usize,
    /// The directory written to.
    pub to: String,
}
