//! Row projections: which fields of each record `status` shows, moved out of the records
//! read so a full read of a large state clones as little as possible.

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::Value;

use crate::record::field as f;
use crate::record::field::Field;
use crate::record::Heartbeat;
use crate::record::Record;
use crate::rules::deps;
use crate::rules::deps::to_text;
use crate::rules::deps::OwnerBeat;
use crate::rules::liveness;
use crate::serde_name::WireName;

/// Claim fields projected when present, after the core fields.
#[rustfmt::skip]
pub(super) const CLAIM_FIELDS: [Field; 23] = [
    f::BATCH_ID, f::THREAD_HANDLE, f::CHAT_HANDLE, f::HOST, f::MACHINE_ID, f::SESSION_ID,
    f::SESSION_SOURCE, f::PR_URL, f::DASHBOARD_URL, f::OPERATOR, f::PHASE, f::GENERATION,
    f::INSTANCE_ID, f::RELEASE_MODE, f::HANDOFF_TO, f::HANDOFF_NOTE, f::TERMINAL, f::PR_STATE,
    f::EVIDENCE_URL, f::WORKSPACE, f::CLOSED_BY, f::SYNTHETIC, f::SYNTHETIC_KIND,
];

/// Heartbeat fields projected when present, after the core fields: the lane fields a beat
/// carries.
pub(super) const HEARTBEAT_FIELDS: [Field; 17] = Heartbeat::CARRIED;

/// Batch manifest fields projected when present, after `path`, `batch_id` and `lanes`.
#[rustfmt::skip]
pub(super) const BATCH_FIELDS: [Field; 12] = [
    f::REPO, f::OBJECTIVE, f::INSTRUCTIONS, f::LAUNCH_PROMPT, f::OPERATOR, f::DASHBOARD_URL,
    f::STATUS, f::UPDATED_AT, f::REGISTERED_AT, f::COMPLETED_AT, f::SYNTHETIC, f::SYNTHETIC_KIND,
];

/// Event fields projected when present, after `path`, `batch_id`, `type` and `at`.
#[rustfmt::skip]
pub(super) const EVENT_FIELDS: [Field; 39] = [
    f::EVENT_ID, f::LANE, f::AGENT_ID, f::REPO, f::TARGET, f::BRANCH, f::STATUS, f::STATUS_RAW,
    f::MESSAGE, f::THREAD_HANDLE, f::CHAT_HANDLE, f::HOST, f::MACHINE_ID, f::SESSION_ID,
    f::SESSION_SOURCE, f::PR_URL, f::DASHBOARD_URL, f::OPERATOR, f::PHASE, f::PREVIOUS_PHASE,
    f::GENERATION, f::INSTANCE_ID, f::RELEASE_MODE, f::HANDOFF_TO, f::HANDOFF_NOTE, f::TERMINAL,
    f::PR_STATE, f::EVIDENCE_URL, f::WORKSPACE, f::CLOSED_BY, f::REASON, f::FROM_ROUTE, f::TO_ROUTE,
    f::EVIDENCE, f::SEVERITY, f::CATEGORY, f::KIND, f::SYNTHETIC, f::SYNTHETIC_KIND,
];

/// Returns `r[key]` moved out, or `default` when absent (Ruby's `fetch` with a default).
pub(super) fn take(r: &mut Record, key: Field, default: impl FnOnce() -> Value) -> Value {
    key.take(r).unwrap_or_else(default)
}

pub(super) fn claim_row(path: String, mut c: Record) -> Record {
    let repo = take(&mut c, f::REPO, || {
        let parts: Vec<&str> = path.split('/').collect();
        Value::from(if parts.len() >= 4 {
            format!("{}/{}", parts[1], parts[2])
        } else {
            "UNKNOWN".to_owned()
        })
    });
    let target = take(&mut c, f::TARGET, || deps::file_stem(&path).into());
    let mut row = Record::new();
    row.insert("path".to_owned(), path.into());
    f::REPO.set(&mut row, repo);
    f::TARGET.set(&mut row, target);
    f::STATUS.set(&mut row, take(&mut c, f::STATUS, || "unknown".into()));
    for key in [f::AGENT_ID, f::BRANCH, f::EXPIRES_AT] {
        key.set(&mut row, take(&mut c, key, || "UNKNOWN".into()));
    }
    deps::move_present(&mut row, &mut c, &CLAIM_FIELDS);
    row
}

pub(super) fn heartbeat_row(path: String, mut h: Record, liveness: liveness::Liveness) -> Record {
    let target: Vec<Cow<'_, str>> = [f::REPO, f::TARGET]
        .iter()
        .filter_map(|k| k.get(&h))
        .filter(|v| !v.is_null())
        .map(to_text)
        .collect();
    let target = Some(target.join("#"))
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "-".to_owned());
    let agent = take(&mut h, f::AGENT_ID, || deps::file_stem(&path).into());
    let mut row = Record::new();
    row.insert("path".to_owned(), path.into());
    f::AGENT_ID.set(&mut row, agent);
    f::STATUS.set(&mut row, take(&mut h, f::STATUS, || "unknown".into()));
    row.insert("liveness".to_owned(), liveness.wire_name().into());
    f::TARGET.set(&mut row, target);
    let updated = take(&mut h, f::UPDATED_AT, || "UNKNOWN".into());
    f::UPDATED_AT.set(&mut row, updated);
    deps::move_present(&mut row, &mut h, &HEARTBEAT_FIELDS);
    row
}

pub(super) fn batch_row(
    path: String,
    mut b: Record,
    beats: &HashMap<String, OwnerBeat>,
    states: &HashMap<String, String>,
) -> Record {
    let batch_id = take(&mut b, f::BATCH_ID, || deps::file_stem(&path).into());
    let lanes = match f::LANES.take(&mut b) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(lanes)) => lanes,
        Some(one) => vec![one],
    };
    let lanes: Vec<Value> = lanes
        .into_iter()
        .map(|lane| Value::Object(deps::lane_row(lane, beats, states)))
        .collect();
    let mut row = Record::new();
    row.insert("path".to_owned(), path.into());
    f::BATCH_ID.set(&mut row, batch_id);
    f::LANES.set(&mut row, lanes);
    deps::move_present(&mut row, &mut b, &BATCH_FIELDS);
    row
}

/// Returns an event's `at` as sort text (absent: empty, so it sorts first).
pub(super) fn at_text(e: &Record) -> Cow<'_, str> {
    f::AT.get(e).map_or(Cow::Borrowed(""), to_text)
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
    let batch_id = take(&mut e, f::BATCH_ID, || {
        let parts: Vec<&str> = path.split('/').collect();
        Value::from(if parts.len() >= 3 {
            parts[1]
        } else {
            "UNKNOWN"
        })
    });
    let mut row = Record::new();
    row.insert("path".to_owned(), path.into());
    f::BATCH_ID.set(&mut row, batch_id);
    f::TYPE.set(&mut row, take(&mut e, f::TYPE, || "unknown".into()));
    f::AT.set(&mut row, take(&mut e, f::AT, || "UNKNOWN".into()));
    deps::move_present(&mut row, &mut e, &EVENT_FIELDS);
    (key, row)
}

pub(super) fn archive_row(path: String, mut a: Record) -> Record {
    let mut row = Record::new();
    row.insert("path".to_owned(), path.into());
    let fields: [(Field, Option<Value>); 7] = [
        (f::RECORD_FAMILY, Some("unknown".into())),
        (f::SOURCE_PATH, None),
        (f::SOURCE_PATHS, None),
        (f::REASON, Some("unknown".into())),
        (f::SYNTHETIC, Some(false.into())),
        (f::ARCHIVED_AT, Some("UNKNOWN".into())),
        (f::DELETE_AFTER, Some("UNKNOWN".into())),
    ];
    for (key, default) in fields {
        match key.take(&mut a).or(default) {
            None | Some(Value::Null) => {}
            Some(v) => key.set(&mut row, v),
        }
    }
    row
}
