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

use serde_json::json;
use serde_json::Map;
use serde_json::Value;

use super::deps;
use crate::ids::paths;
use crate::ids::BatchId;
use crate::record::is_http_url;
use crate::record::nonempty;
use crate::record::str_field;
use crate::record::ParseError;
use crate::record::Record;
use crate::snapshot::ReadError;
use crate::snapshot::Snapshot;
use crate::time;

/// The placeholder for an unknown lane name or owner.
const UNKNOWN: &str = "UNKNOWN";
/// The workspace a closeout without one belongs to.
const DEFAULT_WORKSPACE: &str = "default";
/// The `terminal` values a `lane_closed` marker may carry.
const TERMINAL_STATES: [&str; 3] = ["done", "abandoned", "superseded"];
/// Lifecycle event types other than `lane_closed`.
const ORDINARY_TYPES: [&str; 3] = ["claim.acquired", "claim.released", "phase.changed"];
/// Fields an ordinary lifecycle event must carry as fact strings.
const ORDINARY_REQUIRED: [&str; 4] = ["event_id", "batch_id", "agent_id", "at"];
/// Identity fields an ordinary lifecycle event may carry, as fact strings.
const ORDINARY_OPTIONAL: [&str; 3] = ["lane", "repo", "target"];
/// Fields a `lane_closed` must carry as fact strings under the strict contract.
const TERMINAL_REQUIRED: [&str; 6] = ["event_id", "repo", "target", "terminal", "workspace", "at"];
/// Fields a `lane_closed` may carry, as fact strings, under the strict contract.
const TERMINAL_OPTIONAL: [&str; 7] = [
    "batch_id",
    "lane",
    "agent_id",
    "branch",
    "pr_url",
    "pr_state",
    "evidence_url",
];
/// The verdict of a batch audit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Every registered lane is complete (exit 0).
    Complete,
    /// The batch was read and at least one lane has gaps (exit 1).
    Incomplete,
    /// The coordination state could not be verified (exit 2).
    Unknown,
}

impl Verdict {
    /// Returns the verdict as the report spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Complete => "complete",
            Verdict::Incomplete => "incomplete",
            Verdict::Unknown => "unknown",
        }
    }

    /// Returns the process exit code for this verdict: 0, 1 or 2.
    pub fn exit_code(self) -> u8 {
        match self {
            Verdict::Complete => 0,
            Verdict::Incomplete => 1,
            Verdict::Unknown => 2,
        }
    }
}

/// One lane's audit row.
#[derive(Debug, Clone, PartialEq, Eq)]
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
            missing: vec!["claim.acquired".to_owned(), "terminal".to_owned()],
            complete: false,
            malformed: true,
        }
    }

    fn to_json(&self) -> Value {
        json!({
            "name": self.name,
            "owner": self.owner,
            "targets": self.targets,
            "event_count": self.event_count,
            "missing": self.missing,
            "complete": self.complete,
            "malformed": self.malformed,
        })
    }
}

/// The whole audit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Audit {
    /// The batch id exactly as the user gave it.
    pub batch_id: String,
    /// The verdict.
    pub verdict: Verdict,
    /// One row per registered lane (empty when the verdict is unknown).
    pub lanes: Vec<LaneAudit>,
    /// Why the verdict is unknown; `Some` exactly when it is.
    pub reason: Option<String>,
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

    /// Returns the JSON report: `{batch_id, verdict, [reason], lanes}`.
    pub fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("batch_id".to_owned(), json!(self.batch_id));
        out.insert("verdict".to_owned(), json!(self.verdict.as_str()));
        if let Some(reason) = &self.reason {
            out.insert("reason".to_owned(), json!(reason));
        }
        let lanes = self.lanes.iter().map(LaneAudit::to_json).collect();
        out.insert("lanes".to_owned(), Value::Array(lanes));
        Value::Object(out)
    }

    /// Returns the text report: a heading line, then the reason or one line per lane.
    pub fn to_text(&self) -> String {
        let mut lines = vec![format!(
            "batch-audit {} {}",
            self.batch_id,
            self.verdict.as_str()
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
        Err(reason) => Audit::unknown(batch_id, reason),
    }
}

/// Returns the lane rows, or the reason the verdict is unknown.
fn audit_lanes(snap: &impl Snapshot, batch_id: &str) -> Result<Vec<LaneAudit>, String> {
    let id: BatchId = batch_id
        .parse()
        .map_err(|e| format!("coordination state unreadable: {e}"))?;
    let batch_path = paths::batch(&id);
    let batch = match snap.read(&batch_path) {
        Ok(Some(batch)) => batch,
        Ok(None) => return Err(format!("batch {batch_id} is not registered")),
        Err(ReadError::Malformed { path, message })
            if path == batch_path && message == ParseError::NotObject.to_string() =>
        {
            return Err(format!("batch {batch_id} state is not an object"));
        }
        Err(e) => return Err(unreadable(&e)),
    };
    let rows = lane_entries(&batch);
    if rows.is_empty() {
        return Err(format!("batch {batch_id} registers no lanes"));
    }
    let events = snap
        .list(&paths::events_dir(&id))
        .map_err(|e| unreadable(&e))?;
    let scope = Scope::new(batch_id, &batch, &rows);
    Ok(rows
        .iter()
        .map(|row| audit_lane(row, &scope, &events))
        .collect())
}

/// Returns the unknown reason for a failed read.
fn unreadable(e: &ReadError) -> String {
    let msg = e.to_string();
    let msg = msg.strip_prefix("state unreadable: ").unwrap_or(&msg);
    format!("coordination state unreadable: {msg}")
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
    let batch_id = str_field(batch, "batch_id")
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
    folders.all(|f| f == Some(first)).then(|| first.to_owned())
}

/// Reports whether `r` is a valid v2 `lane_closed` terminal marker (§8.4).
pub fn is_valid_terminal_marker(r: &Record) -> bool {
    number_is(r, "schema_version", 2.0)
        && str_field(r, "type") == Some("lane_closed")
        && str_field(r, "terminal").is_some_and(|t| TERMINAL_STATES.contains(&t))
        && nonempty(r, "event_id").is_some()
        && nonempty(r, "target").is_some()
        && str_field(r, "repo").is_some_and(is_repo_pattern)
        && nonempty(r, "workspace").is_some()
        && r.get("closed_by").is_some_and(is_valid_closed_by)
        && str_field(r, "at").is_some_and(time::is_rfc3339)
        && ["batch_id", "lane", "branch", "pr_state"]
            .iter()
            .all(|k| !r.contains_key(*k) || nonempty(r, k).is_some())
        && ["pr_url", "evidence_url"]
            .iter()
            .all(|k| !r.contains_key(*k) || str_field(r, k).is_some_and(is_http_url))
}

/// Reports whether `r[key]` is a JSON number equal to `n` (`2.0` counts as `2`).
fn number_is(r: &Record, key: &str, n: f64) -> bool {
    r.get(key).and_then(Value::as_f64) == Some(n)
}

/// Matches `^[^/]+/[^/]+$`.
fn is_repo_pattern(s: &str) -> bool {
    s.split_once('/')
        .is_some_and(|(owner, name)| !owner.is_empty() && !name.is_empty() && !name.contains('/'))
}

/// Reports whether `v` is `{agent_id, machine}` exactly, both non-empty strings.
fn is_valid_closed_by(v: &Value) -> bool {
    v.as_object().is_some_and(|o| {
        o.len() == 2 && nonempty(o, "agent_id").is_some() && nonempty(o, "machine").is_some()
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
fn facts(r: &Record, keys: &[&str]) -> bool {
    keys.iter().all(|k| is_fact(r.get(*k)))
}

/// Reports whether every one of `keys` is absent from `r` or a fact string.
fn optional_facts(r: &Record, keys: &[&str]) -> bool {
    keys.iter()
        .all(|k| !r.contains_key(*k) || is_fact(r.get(*k)))
}

/// Returns `v` when it is truthy in the predecessor's sense (present, not null, not false).
fn given<'a>(r: &'a Record, key: &str) -> Option<&'a Value> {
    r.get(key)
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
    match batch.get("lanes") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items.clone(),
        Some(Value::Object(map)) => map.iter().map(|(k, v)| json!([k, v])).collect(),
        Some(other) => vec![other.clone()],
    }
}

/// What attribution needs to know about the whole batch.
struct Scope<'a> {
    batch_id: &'a str,
    /// The declared repo (`""` when none: no repo gate).
    repo: String,
    /// On how many lanes each known owner appears.
    owners: HashMap<String, usize>,
    /// On how many lanes each target appears.
    targets: HashMap<String, usize>,
}

impl<'a> Scope<'a> {
    fn new(batch_id: &'a str, batch: &Record, rows: &[Value]) -> Self {
        let mut owners = HashMap::new();
        let mut targets = HashMap::new();
        for lane in rows.iter().filter_map(Value::as_object) {
            let owner = deps::lane_owner(lane).into_owned();
            if owner != UNKNOWN {
                *owners.entry(owner).or_insert(0) += 1;
            }
            let distinct: BTreeSet<String> = deps::lane_targets(lane).into_iter().collect();
            for target in distinct {
                *targets.entry(target).or_insert(0) += 1;
            }
        }
        Scope {
            batch_id,
            repo: loose_string(batch.get("repo")),
            owners,
            targets,
        }
    }

    fn lane(&self, lane: &Record) -> Lane<'a> {
        let targets = deps::lane_targets(lane);
        let unique_targets = targets
            .iter()
            .filter(|t| self.targets.get(*t).copied().unwrap_or(0) <= 1)
            .cloned()
            .collect();
        let owner = deps::lane_owner(lane).into_owned();
        let owner_unique = owner != UNKNOWN && self.owners.get(&owner).copied().unwrap_or(0) <= 1;
        Lane {
            batch_id: self.batch_id,
            name: deps::lane_name(lane).into_owned(),
            owner,
            targets,
            unique_targets,
            owner_unique,
        }
    }

    /// Returns the events that pass the repo gate and belong to `lane` (§7.2).
    fn attributed<'e>(&self, lane: &Lane, events: &'e [(String, Record)]) -> Vec<&'e Record> {
        events
            .iter()
            .map(|(_, event)| event)
            .filter(|event| self.repo.is_empty() || loose_string(event.get("repo")) == self.repo)
            .filter(|event| lane.attributes(event))
            .collect()
    }
}

/// One lane as attribution and lineage see it.
struct Lane<'a> {
    batch_id: &'a str,
    name: String,
    owner: String,
    targets: Vec<String>,
    /// Targets that appear on no other lane of the batch.
    unique_targets: Vec<String>,
    /// Whether the owner is known and owns no other lane.
    owner_unique: bool,
}

impl Lane<'_> {
    /// Reports whether `event` belongs to this lane: explicit lane, unique target, or
    /// unique owner whose event target is absent or one of this lane's.
    fn attributes(&self, event: &Record) -> bool {
        let explicit = self.name != UNKNOWN
            && !self.name.is_empty()
            && loose_string(event.get("lane")) == self.name;
        let target = loose_string(event.get("target"));
        let by_owner = self.owner_unique
            && loose_string(event.get("agent_id")) == self.owner
            && (target.is_empty() || self.targets.contains(&target));
        explicit || self.unique_targets.contains(&target) || by_owner
    }

    fn has_target(&self, event: &Record) -> bool {
        str_field(event, "target").is_some_and(|t| self.targets.iter().any(|x| x == t))
    }

    /// Reports whether an ordinary lifecycle event carries this lane's identity facts.
    fn identity_facts(&self, event: &Record) -> bool {
        number_is(event, "schema_version", 1.0)
            && facts(event, &ORDINARY_REQUIRED)
            && optional_facts(event, &ORDINARY_OPTIONAL)
            && str_field(event, "batch_id") == Some(self.batch_id)
            && (!event.contains_key("lane") || str_field(event, "lane") == Some(self.name.as_str()))
            && (!event.contains_key("target") || self.has_target(event))
            && str_field(event, "at").is_some_and(time::is_rfc3339)
    }

    /// Reports whether a `claim.acquired` validly admits its agent to the lane.
    fn admits(&self, event: &Record) -> bool {
        if !self.identity_facts(event) || !payload_valid(event, "claim.acquired") {
            return false;
        }
        if str_field(event, "agent_id") == Some(self.owner.as_str()) {
            return true;
        }
        if self.owner == UNKNOWN || !self.has_target(event) {
            return false;
        }
        // A takeover names its lane, or its target identifies exactly one lane.
        event.contains_key("lane")
            || str_field(event, "target")
                .is_some_and(|t| self.unique_targets.iter().any(|u| u == t))
    }

    /// Reports whether a `lane_closed` is attributed to this lane and closed by an agent
    /// authorized at its position (`authorized_here`).
    fn terminal_attributed(&self, event: &Record, authorized_here: bool) -> bool {
        let closer = closer_of(event);
        (!event.contains_key("batch_id") || str_field(event, "batch_id") == Some(self.batch_id))
            && (!event.contains_key("lane") || str_field(event, "lane") == Some(self.name.as_str()))
            && self.has_target(event)
            && authorized_here
            && (!event.contains_key("agent_id") || str_field(event, "agent_id") == closer)
    }
}

/// Reports whether an ordinary lifecycle event satisfies its type's payload contract.
fn payload_valid(event: &Record, kind: &str) -> bool {
    let status_is =
        |want: &str| !event.contains_key("status") || str_field(event, "status") == Some(want);
    match kind {
        "claim.acquired" => status_is("active"),
        "claim.released" => status_is("released"),
        "phase.changed" => phase_change_valid(event),
        _ => false,
    }
}

/// Reports whether a `phase.changed` is a real transition, in the current
/// (`previous_phase`) or historical (`old_phase`/`new_phase`) shape.
fn phase_change_valid(event: &Record) -> bool {
    if !is_fact(event.get("phase"))
        || (event.contains_key("status") && !is_fact(event.get("status")))
    {
        return false;
    }
    let historical = event.contains_key("old_phase") || event.contains_key("new_phase");
    let published = event.contains_key("previous_phase");
    if historical
        && !(facts(event, &["old_phase", "new_phase"])
            && event.get("old_phase") != event.get("new_phase")
            && event.get("new_phase") == event.get("phase"))
    {
        return false;
    }
    if published
        && !(is_fact(event.get("previous_phase"))
            && event.get("previous_phase") != event.get("phase"))
    {
        return false;
    }
    historical || published
}

fn closer_of(event: &Record) -> Option<&str> {
    event
        .get("closed_by")
        .and_then(Value::as_object)
        .and_then(|c| str_field(c, "agent_id"))
}

fn type_of(event: &Record) -> Option<&str> {
    str_field(event, "type")
}

/// The result of replaying a lane's lifecycle events in `(at, event_id)` order.
struct Lineage {
    /// Whether every lifecycle event has a fact `event_id`, a valid `at`, and a unique key.
    ordered: bool,
    /// Whether every ordinary lifecycle event is valid at its position.
    ordinary_valid: bool,
    /// The agents authorized after the last event.
    authorized: BTreeSet<String>,
    /// Per lane event (same index): valid and authorized at its position.
    ok: Vec<bool>,
}

impl Lineage {
    fn replay(events: &[&Record], lane: &Lane) -> Self {
        let mut authorized = BTreeSet::new();
        if lane.owner != UNKNOWN {
            authorized.insert(lane.owner.clone());
        }
        let mut ok = vec![false; events.len()];
        let Some(order) = lifecycle_order(events) else {
            return Lineage {
                ordered: false,
                ordinary_valid: false,
                authorized,
                ok,
            };
        };
        let mut ordinary_valid = true;
        for i in order {
            let event = events[i];
            let agent = str_field(event, "agent_id");
            let valid = match type_of(event) {
                Some("claim.acquired") => {
                    let valid = lane.admits(event);
                    if let (true, Some(agent)) = (valid, agent) {
                        authorized.insert(agent.to_owned());
                    }
                    ordinary_valid &= valid;
                    valid
                }
                Some(kind @ ("claim.released" | "phase.changed")) => {
                    let valid = lane.identity_facts(event)
                        && agent.is_some_and(|a| authorized.contains(a))
                        && payload_valid(event, kind);
                    ordinary_valid &= valid;
                    valid
                }
                _ => closer_of(event).is_some_and(|c| authorized.contains(c)),
            };
            ok[i] = valid;
        }
        Lineage {
            ordered: true,
            ordinary_valid,
            authorized,
            ok,
        }
    }
}

/// Returns the indices of the lifecycle events sorted by `(at, event_id)`, or `None` when
/// one lacks a fact `event_id` or a valid `at`, or two share a key.
fn lifecycle_order(events: &[&Record]) -> Option<Vec<usize>> {
    let mut keyed = Vec::new();
    for (i, event) in events.iter().enumerate() {
        let lifecycle =
            type_of(event).is_some_and(|t| ORDINARY_TYPES.contains(&t) || t == "lane_closed");
        if !lifecycle {
            continue;
        }
        let at = str_field(event, "at")
            .filter(|at| time::is_rfc3339(at))
            .and_then(time::parse);
        let id = str_field(event, "event_id").filter(|_| is_fact(event.get("event_id")));
        keyed.push(((at?, id?), i));
    }
    keyed.sort();
    if keyed.windows(2).any(|w| w[0].0 == w[1].0) {
        return None;
    }
    Some(keyed.into_iter().map(|(_, i)| i).collect())
}

/// Returns the lane's missing signals (§7.4).
fn missing_signals(events: &[&Record], lane: &Lane) -> Vec<String> {
    let lineage = Lineage::replay(events, lane);
    let mut missing = Vec::new();
    if !events.iter().any(|e| type_of(e) == Some("claim.acquired")) {
        missing.push("claim.acquired".to_owned());
    }
    if !terminal_signal(events, lane, &lineage) {
        missing.push("terminal".to_owned());
    }
    if !lineage.ordinary_valid {
        missing.push("lifecycle".to_owned());
    }
    missing
}

/// Reports whether the lane has a valid terminal signal: valid, non-conflicting
/// `lane_closed` events, or (only when there are none) an authorized `claim.released`.
fn terminal_signal(events: &[&Record], lane: &Lane, lineage: &Lineage) -> bool {
    let any_closed = events.iter().any(|e| type_of(e) == Some("lane_closed"));
    if any_closed {
        return terminals_valid(events, lane, lineage);
    }
    events
        .iter()
        .zip(&lineage.ok)
        .any(|(e, ok)| *ok && type_of(e) == Some("claim.released"))
}

/// Reports whether every `lane_closed` among `events` passes the strict contract and
/// attribution, and none conflicts with another (vacuously true when there are none).
fn terminals_valid(events: &[&Record], lane: &Lane, lineage: &Lineage) -> bool {
    let closed: Vec<(&Record, bool)> = events
        .iter()
        .zip(&lineage.ok)
        .filter(|(e, _)| type_of(e) == Some("lane_closed"))
        .map(|(e, ok)| (*e, *ok))
        .collect();
    let all_valid = closed
        .iter()
        .all(|(e, ok)| strict_terminal_contract(e) && lane.terminal_attributed(e, *ok));
    let keys: Vec<[Value; 6]> = closed.iter().map(|(e, _)| conflict_key(e)).collect();
    all_valid && keys.windows(2).all(|w| w[0] == w[1])
}

/// Reports whether a `lane_closed` passes §8.4 plus fact strings for every field that
/// carries a fact, including the `closed_by` values.
fn strict_terminal_contract(event: &Record) -> bool {
    is_valid_terminal_marker(event)
        && facts(event, &TERMINAL_REQUIRED)
        && optional_facts(event, &TERMINAL_OPTIONAL)
        && event
            .get("closed_by")
            .and_then(Value::as_object)
            .is_some_and(|c| c.values().all(|v| is_fact(Some(v))))
}

/// Returns the conflict semantics of a closeout: `terminal`, `workspace` (default
/// `default`), `closed_by.agent_id`, `pr_url`, `pr_state`, `evidence_url`.
fn conflict_key(event: &Record) -> [Value; 6] {
    let field = |k: &str| event.get(k).cloned().unwrap_or(Value::Null);
    let workspace = given(event, "workspace")
        .cloned()
        .unwrap_or_else(|| json!(DEFAULT_WORKSPACE));
    let closer = closer_of(event).map_or(Value::Null, |c| json!(c));
    [
        field("terminal"),
        workspace,
        closer,
        field("pr_url"),
        field("pr_state"),
        field("evidence_url"),
    ]
}

#[cfg(test)]
mod tests;
