//! The predecessor state root's file forms and how they map onto stored records, both
//! ways, for `import` and `export` (telemetry contract "History Events", dashboard
//! reference §7.1).
//!
//! A `.json` file holds one record. Under `events/` and `history/` a file may also be
//! JSONL (`<name>.jsonl`, one object per line, blank lines skipped) or a `.json` file whose
//! value is an array of objects (the predecessor dashboard appends its stop requests to
//! `events/batches/<id>.jsonl`). Each line or element is one stored record, so the state
//! stays one record per blob. It belongs to the batch its own `batch_id` names, under the
//! event layout every other write uses: `events/<batch>/<file>:<n>.json`, `<file>` the
//! file's path with `/` written `:` and `n` the 1-based physical line or element index,
//! zero-padded to six digits (`events/b1/events:batches.jsonl:000003.json`). A line with no
//! usable batch id stays in a folder named like the file, at `<file>/<n>.json`. Either
//! name says where the record came from, so export writes the file back: lines at their
//! original line numbers (the dashboard's `<path>:<line>` event identities stay stable),
//! elements in order. Imported names never hold `:` (their segments are
//! [`is_repo_part`](crate::ids::is_repo_part)), so a source path reads back unambiguously.

use crate::ids::is_segment;
use crate::ids::BatchId;
use crate::record::field as f;
use crate::record::from_bytes;
use crate::record::Record;

/// Why a file of a state root cannot be imported or a stored folder cannot be exported.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileError {
    /// A line of a JSONL file is not a JSON object (`line` is 1-based).
    #[error("{path}:{line} is not a JSON object record: {message}")]
    Line {
        /// The file's path in the root.
        path: String,
        /// The physical line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A whole file is not a JSON object (or, for events, an array of them).
    #[error("{path} {message}")]
    File {
        /// The file's path in the root.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// Reports whether files below `path` may use the event file forms (JSONL and arrays).
pub fn is_event_path(path: &str) -> bool {
    path.starts_with("events/") || path.starts_with("history/")
}

/// Returns the stored path of line or element `n` (1-based) of the file at `path` that
/// belongs to no batch.
pub fn item_path(path: &str, n: usize) -> String {
    format!("{path}/{n:06}.json")
}

/// Returns the stored path of line or element `n` (1-based) of the file at `path`: in the
/// events folder of the batch the record names, else [`item_path`].
pub fn attributed_path(path: &str, n: usize, record: &Record) -> String {
    let name = format!("{}:{n:06}", path.replace('/', ":"));
    match f::BATCH_ID.text(record).map(str::parse::<BatchId>) {
        Some(Ok(batch)) if is_segment(&name) => crate::ids::paths::event(&batch, &name),
        _ => item_path(path, n),
    }
}

/// Returns the records a file of the root becomes, each with its stored path.
///
/// `path` is the file's path relative to the root, with safe segments (the caller walks
/// the folder); files that are not `.json` or (for events) `.jsonl` are not records.
pub fn split_file(path: &str, bytes: &[u8]) -> Result<Vec<(String, Record)>, FileError> {
    let file_err = |message: String| FileError::File {
        path: path.to_owned(),
        message,
    };
    if is_event_path(path) && path.ends_with(".jsonl") {
        let text =
            std::str::from_utf8(bytes).map_err(|e| file_err(format!("is not UTF-8: {e}")))?;
        let mut out = Vec::new();
        for (i, line) in text.split('\n').enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let record = from_bytes(line.as_bytes()).map_err(|e| FileError::Line {
                path: path.to_owned(),
                line: i + 1,
                message: e.to_string(),
            })?;
            out.push((attributed_path(path, i + 1, &record), record));
        }
        return Ok(out);
    }
    if is_event_path(path) {
        if let Ok(serde_json::Value::Array(items)) = serde_json::from_slice(bytes) {
            return items
                .into_iter()
                .enumerate()
                .map(|(i, item)| match item {
                    serde_json::Value::Object(record) => {
                        Ok((attributed_path(path, i + 1, &record), record))
                    }
                    _ => Err(file_err(format!("element {} is not a JSON object", i + 1))),
                })
                .collect();
        }
    }
    let record =
        from_bytes(bytes).map_err(|e| file_err(format!("is not a JSON object record: {e}")))?;
    Ok(vec![(path.to_owned(), record)])
}

/// Reports whether a folder name in the root would read as a stored file form (and so
/// cannot be imported as a folder without aliasing one).
pub fn is_container_name(name: &str) -> bool {
    name.ends_with(".json") || name.ends_with(".jsonl")
}

/// Splits a stored path into the file it came from and its item number, when it is a line
/// or element of one (either form of [`split_file`]).
fn container_item(path: &str) -> Option<(String, usize)> {
    let (dir, file) = path.rsplit_once('/')?;
    let stem = file.strip_suffix(".json")?;
    let in_batch_folder = dir
        .strip_prefix("events/")
        .is_some_and(|batch| !batch.contains('/'));
    let (source, n) = match stem.rsplit_once(':') {
        Some((encoded, n)) if in_batch_folder => (encoded.replace(':', "/"), n),
        _ => (dir.to_owned(), stem),
    };
    let valid = is_event_path(&source) && is_container_name(&source) && n.len() >= 6;
    let n: usize = n.parse().ok().filter(|n| *n > 0 && valid)?;
    Some((source, n))
}

/// Returns the files of a state root from stored `(path, bytes)` blobs, folding every
/// JSONL or array folder back into its file; other blobs are written as stored.
pub fn join_files(blobs: Vec<(String, Vec<u8>)>) -> Result<Vec<(String, Vec<u8>)>, FileError> {
    use std::collections::BTreeMap;
    let mut out = Vec::new();
    let mut containers: BTreeMap<String, BTreeMap<usize, Record>> = BTreeMap::new();
    for (path, bytes) in blobs {
        let Some((file, n)) = container_item(&path) else {
            out.push((path, bytes));
            continue;
        };
        let items = containers.entry(file).or_default();
        if items.contains_key(&n) {
            // Two records claim one line (a state not made by import): keep both.
            out.push((path, bytes));
            continue;
        }
        let record = from_bytes(&bytes).map_err(|e| FileError::File {
            path: path.clone(),
            message: format!("is not a JSON object record: {e}"),
        })?;
        items.insert(n, record);
    }
    for (dir, items) in containers {
        let mut bytes = Vec::new();
        if dir.ends_with(".jsonl") {
            let mut line = 1;
            for (n, record) in &items {
                while line < *n {
                    bytes.push(b'\n');
                    line += 1;
                }
                bytes.extend(serde_json::to_vec(record).unwrap_or_default());
                bytes.push(b'\n');
                line += 1;
            }
        } else {
            let items: Vec<&Record> = items.values().collect();
            bytes = serde_json::to_vec_pretty(&items).unwrap_or_default();
            bytes.push(b'\n');
        }
        out.push((dir, bytes));
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests;
