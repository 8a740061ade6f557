//! Row projections: which fields of each record `status` shows, moved out of the records
//! read so a full read of a large state clones as little as possible.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use crate::record::Record;
use crate::rules::deps;
use crate::rules::deps::to_text;
use crate::rules::deps::OwnerBeat;
use crate::rules::liveness;

/// Claim fields projected when present, after the core fields.
#[rustfmt::skip]
pub(super) const CLAIM_FIELDS: [&str; 23] = [
    "batch_id", "thread_handle", "chat_handle", "host", "machine_id", "session_id",
    "session_source", "pr_url", "dashboard_url", "operator", "phase", "generation", "instance_id",
    "release_mode", "handoff_to", "handoff_note", "terminal", "pr_state", "evidence_url",
    "workspace", "closed_by", "synthetic", "synthetic_kind",
];

/// Heartbeat fields projected when present, after the core fields.
#[rustfmt::skip]
pub(super) const HEARTBEAT_FIELDS: [&str; 17] = [
    "batch_id", "branch", "thread_handle", "chat_handle", "host", "machine_id", "session_id",
    "session_source", "pr_url", "dashboard_url", "operator", "phase", "generation", "instance_id",
    "status_raw", "synthetic", "synthetic_kind",
];

/// Batch manifest fields projected when present, after `path`, `batch_id` and `lanes`.
#[rustfmt::skip]
pub(super) const BATCH_FIELDS: [&str; 12] = [
    "repo", "objective", "instructions", "launch_prompt", "operator", "dashboard_url", "status",
    "updated_at", "registered_at", "completed_at", "synthetic", "synthetic_kind",
];

/// Event fields projected when present, after `path`, `batch_id`, `type` and `at`.
#[rustfmt::skip]
pub(super) const EVENT_FIELDS: [&str; 39] = [
    "event_id", "lane", "agent_id", "repo", "target", "branch", "status", "status_raw", "message",
    "thread_handle", "chat_handle", "host", "machine_id", "session_id", "session_source", "pr_url",
    "dashboard_url", "operator", "phase", "previous_phase", "generation", "instance_id",
    "release_mode", "handoff_to", "handoff_note", "terminal", "pr_state", "evidence_url",
    "workspace", "closed_by", "reason", "from_route", "to_route", "evidence", "severity",
    "category", "kind", "synthetic", "synthetic_kind",
];

/// Returns `r[key]` moved out, or `default` when absent (Ruby's `fetch` with a default).
pub(super) fn take(r: &mut Record, key: &str, default: impl FnOnce() -> Value) -> Value {
    r.remove(key).unwrap_or_else(default)
}

pub(super) fn claim_row(path: String, mut c: Record) -> Record {
    let repo = take(&mut c, "repo", || {
        let parts: Vec<&str> = path.split('/').collect();
        Value::from(if parts.len() >= 4 {
            format!("{}/{}", parts[1], parts[2])
        } else {
            "UNKNOWN".to_owned()
        })
    });
    let target = take(&mut c, "target", || deps::file_stem(&path).into());
    let mut row = Record::new();
    row.insert("path".to_owned(), path.into());
    row.insert("repo".to_owned(), repo);
    row.insert("target".to_owned(), target);
    row.insert(
        "status".to_owned(),
        take(&mut c, "status", || "unknown".into()),
    );
    for key in ["agent_id", "branch", "expires_at"] {
        row.insert(key.to_owned(), take(&mut c, key, || "UNKNOWN".into()));
    }
    deps::move_present(&mut row, &mut c, &CLAIM_FIELDS);
    row
}

pub(super) fn heartbeat_row(path: String, mut h: Record, liveness: liveness::Liveness) -> Record {
    let target: Vec<Cow<'_, str>> = ["repo", "target"]
        .iter()
        .filter_map(|k| h.get(*k))
        .filter(|v| !v.is_null())
        .map(to_text)
        .collect();
    let target = Some(target.join("#"))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "-".to_owned());
    let agent = take(&mut h, "agent_id", || deps::file_stem(&path).into());
    let mut row = Record::new();
    row.insert("path".to_owned(), path.into());
    row.insert("agent_id".to_owned(), agent);
    row.insert(
        "status".to_owned(),
        take(&mut h, "status", || "unknown".into()),
    );
    row.insert("liveness".to_owned(), liveness.as_str().into());
    row.insert("target".to_owned(), target.into());
    row.insert(
        "updated_at".to_owned(),
        take(&mut h, "updated_at", || "UNKNOWN".into()),
    );
    deps::move_present(&mut row, &mut h, &HEARTBEAT_FIELDS);
    row
}

pub(super) fn batch_row(
    path: String,
    mut b: Record,
    beats: &HashMap<String, OwnerBeat>,
    states: &HashMap<String, String>,
) -> Record {
    let batch_id = take(&mut b, "batch_id", || deps::file_stem(&path).into());
    let lanes = match b.remove("lanes") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(lanes)) => lanes,
        Some(one) => vec![one],
    };
    let lanes = lanes
        .into_iter()
        .map(|lane| Value::Object(deps::lane_row(lane, beats, states)))
        .collect();
    let mut row = Record::new();
    row.insert("path".to_owned(), path.into());
    row.insert("batch_id".to_owned(), batch_id);
    row.insert("lanes".to_owned(), Value::Array(lanes));
    deps::move_present(&mut row, &mut b, &BATCH_FIELDS);
    row
}

/// Returns an event's `at` as sort text (absent: empty, so it sorts first).
pub(super) fn at_text(e: &Record) -> Cow<'_, str> {
    e.get("at").map_or(Cow::Borrowed(""), to_text)
}

/// Projects events sorted by `[at, path]`.
pub(super) fn event_rows(events: Vec<(String, Record)>) -> Vec<Record> {
    sort_events(
        events
            .into_iter()
            .map(|(path, e)| event_row(path, e))
            .collect(),
    )
}

/// Sorts projected events by `[at, path]`, the order consumers must read events in.
pub(super) fn sort_events(mut rows: Vec<((String, String), Record)>) -> Vec<Record> {
    rows.sort_by(|(a, _), (b, _)| a.cmp(b));
    rows.into_iter().map(|(_, row)| row).collect()
}

/// Projects one event, returning its sort key (`at` as stored, path) with the row.
pub(super) fn event_row(path: String, mut e: Record) -> ((String, String), Record) {
    let key = (at_text(&e).into_owned(), path.clone());
    let batch_id = take(&mut e, "batch_id", || {
        let parts: Vec<&str> = path.split('/').collect();
        Value::from(if parts.len() >= 3 {
            parts[1]
        } else {
            "UNKNOWN"
        })
    });
    let mut row = Record::new();
    row.insert("path".to_owned(), path.into());
    row.insert("batch_id".to_owned(), batch_id);
    row.insert("type".to_owned(), take(&mut e, "type", || "unknown".into()));
    row.insert("at".to_owned(), take(&mut e, "at", || "UNKNOWN".into()));
    deps::move_present(&mut row, &mut e, &EVENT_FIELDS);
    (key, row)
}

pub(super) fn archive_row(path: String, mut a: Record) -> Record {
    let mut row = Record::new();
    row.insert("path".to_owned(), path.into());
    let fields: [(&str, Option<Value>); 7] = [
        ("record_family", Some("unknown".into())),
        ("source_path", None),
        ("source_paths", None),
        ("reason", Some("unknown".into())),
        ("synthetic", Some(false.into())),
        ("archived_at", Some("UNKNOWN".into())),
        ("delete_after", Some("UNKNOWN".into())),
    ];
    for (key, default) in fields {
        match a.remove(key).or(default) {
            None | Some(Value::Null) => {}
            Some(v) => {
                row.insert(key.to_owned(), v);
            }
        }
    }
    row
}
