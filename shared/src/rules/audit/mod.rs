//! `batch-audit`: whether every registered lane of a batch has a verified lifecycle trail.
//!
//! This module owns event attribution (which events belong to which lane), the lineage
//! replay that decides which agents are authorized on a lane, the strict `lane_closed`
//! contract and its conflict semantics, and the audit report with its text and JSON forms.
//! Terminal closeout reuses the lineage through [`lineage_authorized`], and GC reuses the
//! terminal-marker check through [`is_valid_terminal_marker`]. Everything fails closed:
//! missing or malformed facts never count as evidence.

use std::collections::BTreeSet;
use std::collections::HashMap;

use serde_json::Value;

use super::deps;
use crate::ids::paths;
use crate::ids::BatchId;
use crate::ids::IdError;
use crate::record::field as f;
use crate::record::field::Field;
use crate::record::is_http_url;
use crate::record::EventKind;
use crate::record::ParseError;
use crate::record::Payload;
use crate::record::Record;
use crate::record::LANE_CLOSED;
use crate::serde_name::WireName;
use crate::snapshot::ReadError;
use crate::snapshot::Snapshot;
use crate::time;

/// The placeholder for an unknown lane name or owner.
const UNKNOWN: &str = "UNKNOWN";
/// The workspace a closeout without one belongs to.
const DEFAULT_WORKSPACE: &str = "default";
/// The `terminal` values a `lane_closed` marker may carry.
const TERMINAL_STATES: [&str; 3] = ["done", "abandoned", "superseded"];
/// Fields an ordinary lifecycle event must carry as fact strings.
const ORDINARY_REQUIRED: [Field; 4] = [f::EVENT_ID, f::BATCH_ID, f::AGENT_ID, f::AT];
/// Identity fields an ordinary lifecycle event may carry, as fact strings.
const ORDINARY_OPTIONAL: [Field; 3] = [f::LANE, f::REPO, f::TARGET];
/// Fields a `lane_closed` must carry as fact strings under the strict contract.
const TERMINAL_REQUIRED: [Field; 6] = [
    f::EVENT_ID,
    f::REPO,
    f::TARGET,
    f::TERMINAL,
    f::WORKSPACE,
    f::AT,
];
/// Fields a `lane_closed` may carry, as fact strings, under the strict contract.
const TERMINAL_OPTIONAL: [Field; 7] = [
    f::BATCH_ID,
    f::LANE,
    f::AGENT_ID,
    f::BRANCH,
    f::PR_URL,
    f::PR_STATE,
    f::EVIDENCE_URL,
];
/// The verdict of a batch audit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Every registered lane is complete (exit 0).
    Complete,
    /// The batch was read and at least one lane has gaps (exit 1).
    Incomplete,
    /// The coordination state could not be verified (exit 2).
    Unknown,
}

/// The verdict as the report spells it.
impl WireName for Verdict {}

impl Verdict {
    /// Returns the process exit code for this verdict: 0, 1 or 2.
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Complete => 0,
            Verdict::Incomplete => 1,
            Verdict::Unknown => 2,
        }
    }
}

/// One lane's audit row, as the JSON report lists it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct LaneAudit {
    /// The lane name (`name`, legacy `id`), `UNKNOWN` when absent.
    pub name: String,
    /// The lane owner (`owner`, legacy `agent_id`), `UNKNOWN` when absent or empty.
    pub owner: String,
    /// The lane's non-empty targets, as declared.
    pub targets: Vec<String>,
    /// How many events were attributed to the lane.
    pub event_count: usize,
    /// The missing signals, in order: `claim.acquired`, `terminal`, `lifecycle`.
    pub missing: Vec<String>,
    /// Whether nothing is missing.
    pub complete: bool,
    /// Whether the lane entry was not an object.
    pub malformed: bool,
}

impl LaneAudit {
    /// Returns the row reported for a lane entry that is not an object.
    fn malformed() -> Self {
        LaneAudit {
            name: UNKNOWN.to_owned(),
            owner: UNKNOWN.to_owned(),
            targets: Vec::new(),
            event_count: 0,
            missing: vec![EventKind::ClaimAcquired.to_string(), "terminal".to_owned()],
            complete: false,
            malformed: true,
        }
    }
}

/// The whole audit; serialised, the JSON report `{batch_id, verdict, [reason], lanes}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Audit {
    /// The batch id exactly as the user gave it.
    pub batch_id: String,
    /// The verdict.
    pub verdict: Verdict,
    /// Why the verdict is unknown; `Some` exactly when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// One row per registered lane (empty when the verdict is unknown).
    pub lanes: Vec<LaneAudit>,
}

impl Audit {
    fn unknown(batch_id: &str, reason: String) -> Self {
        Audit {
            batch_id: batch_id.to_owned(),
            verdict: Verdict::Unknown,
            lanes: Vec::new(),
            reason: Some(reason),
        }
    }

    /// Returns the text report: a heading line, then the reason or one line per lane.
    pub fn to_text(&self) -> String {
        let mut lines = vec![format!(
            "batch-audit {} {}",
            self.batch_id,
            self.verdict.wire_name()
        )];
        if let Some(reason) = &self.reason {
            lines.push(format!("- {reason}"));
        } else if self.lanes.is_empty() {
            lines.push("- no lanes registered".to_owned());
        } else {
            for lane in &self.lanes {
                let state = if lane.complete {
                    "complete".to_owned()
                } else {
                    format!("incomplete missing {}", lane.missing.join(", "))
                };
                lines.push(format!("- lane {} owner {} {state}", lane.name, lane.owner));
            }
        }
        let mut text = lines.join("\n");
        text.push('\n');
        text
    }
}

/// Audits a batch read from `snap`: reads `batches/<id>.json` and lists `events/<id>`.
///
/// `batch_id` is the raw user input: an unsafe id (one that fails `ids::is_segment`) is
/// unknown with the reason `coordination state unreadable: invalid batch-id: <id>`, and
/// nothing is read.
pub fn audit(snap: &impl Snapshot, batch_id: &str) -> Audit {
    match audit_lanes(snap, batch_id) {
        Ok(lanes) => {
            let verdict = if lanes.iter().all(|lane| lane.complete) {
                Verdict::Complete
            } else {
                Verdict::Incomplete
            };
            Audit {
                batch_id: batch_id.to_owned(),
                verdict,
                lanes,
                reason: None,
            }
        }
        Err(reason) => Audit::unknown(batch_id, reason.to_string()),
    }
}

/// Why an audit's verdict is unknown; its text is the report's `reason`.
#[derive(Debug, thiserror::Error)]
enum UnknownReason {
    /// The batch id is not a usable id (nothing is read).
    #[error("coordination state unreadable: {0}")]
    InvalidId(IdError),
    /// No manifest for the batch.
    #[error("batch {0} is not registered")]
    NotRegistered(String),
    /// The manifest is not a JSON object.
    #[error("batch {0} state is not an object")]
    NotAnObject(String),
    /// The manifest registers no lanes.
    #[error("batch {0} registers no lanes")]
    NoLanes(String),
    /// The manifest or an event cannot be read.
    #[error("coordination state unreadable: {}", without_prefix(.0))]
    Unreadable(ReadError),
}

/// Returns a read error's text without its own `state unreadable: ` lead.
fn without_prefix(e: &ReadError) -> String {
    let msg = e.to_string();
    msg.strip_prefix("state unreadable: ")
        .map_or_else(|| msg.clone(), str::to_owned)
}

/// Returns the lane rows, or the reason the verdict is unknown.
fn audit_lanes(snap: &impl Snapshot, batch_id: &str) -> Result<Vec<LaneAudit>, UnknownReason> {
    let id: BatchId = batch_id.parse().map_err(UnknownReason::InvalidId)?;
    let batch_path = paths::batch(&id);
    let batch = match snap.read(&batch_path) {
        Ok(Some(batch)) => batch,
        Ok(None) => return Err(UnknownReason::NotRegistered(batch_id.to_owned())),
        Err(ReadError::Malformed { path, message })
            if path == batch_path && message == ParseError::NotObject.to_string() =>
        {
            return Err(UnknownReason::NotAnObject(batch_id.to_owned()));
        }
        Err(e) => return Err(UnknownReason::Unreadable(e)),
    };
    let rows = lane_entries(&batch);
    if rows.is_empty() {
        return Err(UnknownReason::NoLanes(batch_id.to_owned()));
    }
    let events = snap
        .list(&paths::events_dir(&id))
        .map_err(UnknownReason::Unreadable)?;
    let scope = Scope::new(batch_id, &batch, &rows);
    Ok(rows
        .iter()
        .map(|row| audit_lane(row, &scope, &events))
        .collect())
}

fn audit_lane(row: &Value, scope: &Scope, events: &[(String, Record)]) -> LaneAudit {
    let Some(record) = row.as_object() else {
        return LaneAudit::malformed();
    };
    let lane = scope.lane(record);
    let lane_events = scope.attributed(&lane, events);
    let missing = missing_signals(&lane_events, &lane);
    LaneAudit {
        name: lane.name,
        owner: lane.owner,
        targets: lane.targets,
        event_count: lane_events.len(),
        complete: missing.is_empty(),
        missing,
        malformed: false,
    }
}

/// Returns the set of agents authorized on `lane_name` of `batch` after replaying the
/// lane's lifecycle events (§7.3), or `None` when the lineage cannot authorize anyone.
///
/// `events` are the `(path, record)` pairs of the batch's events folder; attribution and
/// the repo gate are applied here. `None` means: no lane (or more than one) has that name,
/// the lineage is unordered, an ordinary lifecycle event in it is invalid, or its
/// `lane_closed` events are invalid or conflict with each other. So terminal closeout
/// (§5.5 step 2) may admit the current claimant exactly when the returned set contains it.
/// The batch id the events must carry is the manifest's `batch_id`, else the folder name
/// in the event paths (`events/<batch-id>/…`).
pub fn lineage_authorized(
    batch: &Record,
    lane_name: &str,
    events: &[(String, Record)],
) -> Option<BTreeSet<String>> {
    let batch_id = f::BATCH_ID
        .text(batch)
        .map(str::to_owned)
        .or_else(|| events_folder(events))
        .unwrap_or_default();
    let rows = lane_entries(batch);
    let mut named = rows
        .iter()
        .filter_map(Value::as_object)
        .filter(|lane| deps::lane_name(lane) == lane_name);
    let record = named.next()?;
    if named.next().is_some() {
        return None;
    }
    let scope = Scope::new(&batch_id, batch, &rows);
    let lane = scope.lane(record);
    let lane_events = scope.attributed(&lane, events);
    let lineage = Lineage::replay(&lane_events, &lane);
    let trusted =
        lineage.ordered && lineage.ordinary_valid && terminals_valid(&lane_events, &lane, &lineage);
    trusted.then_some(lineage.authorized)
}

/// Returns the batch folder shared by every event path, if there is exactly one.
fn events_folder(events: &[(String, Record)]) -> Option<String> {
    let mut folders = events.iter().map(|(path, _)| {
        path.strip_prefix("events/")?
            .split_once('/')
            .map(|(b, _)| b)
    });
    let first = folders.next()??;
    folders.all(|b| b == Some(first)).then(|| first.to_owned())
}

/// Reports whether `r` is a valid v2 `lane_closed` terminal marker (§8.4).
pub fn is_valid_terminal_marker(r: &Record) -> bool {
    number_is(r, f::SCHEMA_VERSION, 2.0)
        && f::TYPE.text(r) == Some(LANE_CLOSED)
        && f::TERMINAL
            .text(r)
            .is_some_and(|t| TERMINAL_STATES.contains(&t))
        && f::EVENT_ID.nonempty(r).is_some()
        && f::TARGET.nonempty(r).is_some()
        && f::REPO.text(r).is_some_and(is_repo_pattern)
        && f::WORKSPACE.nonempty(r).is_some()
        && f::CLOSED_BY.get(r).is_some_and(is_valid_closed_by)
        && f::AT.text(r).is_some_and(time::is_rfc3339)
        && [f::BATCH_ID, f::LANE, f::BRANCH, f::PR_STATE]
            .iter()
            .all(|k| !k.is_in(r) || k.nonempty(r).is_some())
        && [f::PR_URL, f::EVIDENCE_URL]
            .iter()
            .all(|k| !k.is_in(r) || k.text(r).is_some_and(is_http_url))
}

/// Reports whether `r[key]` is a JSON number equal to `n` (`2.0` counts as `2`).
fn number_is(r: &Record, key: Field, n: f64) -> bool {
    key.get(r).and_then(Value::as_f64) == Some(n)
}

/// Matches `^[^/]+/[^/]+$`.
fn is_repo_pattern(s: &str) -> bool {
    s.split_once('/')
        .is_some_and(|(owner, name)| !owner.is_empty() && !name.is_empty() && !name.contains('/'))
}

/// Reports whether `v` is `{agent_id, machine}` exactly, both non-empty strings.
fn is_valid_closed_by(v: &Value) -> bool {
    v.as_object().is_some_and(|o| {
        o.len() == 2 && f::AGENT_ID.nonempty(o).is_some() && f::MACHINE.nonempty(o).is_some()
    })
}

/// Reports whether `v` is a fact string: a string, non-blank after strip, and not
/// `UNKNOWN` in any case.
fn is_fact(v: Option<&Value>) -> bool {
    // Ruby's `strip` set, not Unicode whitespace: a non-breaking space is content.
    let stripped = v.and_then(Value::as_str).map(|s| {
        s.trim_matches(|c| matches!(c, '\0' | '\t' | '\n' | '\x0b' | '\x0c' | '\r' | ' '))
    });
    stripped.is_some_and(|s| !s.is_empty() && s.to_lowercase() != "unknown")
}

/// Reports whether every one of `keys` is a fact string in `r`.
fn facts(r: &Record, keys: &[Field]) -> bool {
    keys.iter().all(|k| is_fact(k.get(r)))
}

/// Reports whether every one of `keys` is absent from `r` or a fact string.
fn optional_facts(r: &Record, keys: &[Field]) -> bool {
    keys.iter().all(|k| !k.is_in(r) || is_fact(k.get(r)))
}

/// Returns `v` when it is truthy in the predecessor's sense (present, not null, not false).
fn given(r: &Record, key: Field) -> Option<&Value> {
    key.get(r)
        .filter(|v| !matches!(v, Value::Null | Value::Bool(false)))
}

/// Renders a value as the predecessor's `to_s` did for comparisons (absent or null is "").
fn loose_string(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// Returns the lane entries of a batch with Ruby `Array()` semantics: a missing value is
/// no lanes, an object is one (malformed) entry per key, any other scalar is one entry.
fn lane_entries(batch: &Record) -> Vec<Value> {
    match f::LANES.get(batch) {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.clone(),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| Value::Array(vec![k.as_str().into(), v.clone()]))
            .collect(),
        Some(other) => vec![other.clone()],
    }
}

mod lineage;

use lineage::*;

#[cfg(test)]
mod tests;
