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

use crate::ids::paths;
use crate::ids::BatchId;
use crate::record::nonempty;
use crate::record::scalar_string;
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
        .filter(|lane| lane_name_of(lane) == lane_name);
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

/// Reports whether `s` is an http(s) URL with a host and no whitespace.
///
/// The scheme is case-insensitive. Characters outside RFC 3986 (whitespace, controls,
/// non-ASCII, `<>"{}|\^` and backtick) are rejected, as the predecessor's URI parser did.
fn is_http_url(s: &str) -> bool {
    let allowed = |c: char| c.is_ascii_alphanumeric() || "-._~:/?#[]@!$&'()*+,;=%".contains(c);
    let Some((scheme, rest)) = s.split_once("://") else {
        return false;
    };
    if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https"))
        || !s.chars().all(allowed)
    {
        return false;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    let (host, port) = if let Some(v6) = host_port.strip_prefix('[') {
        match v6.split_once(']') {
            Some((addr, tail)) => (addr, tail.strip_prefix(':').unwrap_or(tail)),
            None => return false,
        }
    } else {
        host_port.rsplit_once(':').unwrap_or((host_port, ""))
    };
    !host.is_empty() && port.bytes().all(|b| b.is_ascii_digit())
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

fn lane_name_of(lane: &Record) -> String {
    given(lane, "name")
        .or_else(|| given(lane, "id"))
        .and_then(scalar_string)
        .unwrap_or_else(|| UNKNOWN.to_owned())
}

fn lane_owner_of(lane: &Record) -> String {
    given(lane, "owner")
        .or_else(|| given(lane, "agent_id"))
        .and_then(scalar_string)
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| UNKNOWN.to_owned())
}

fn lane_targets_of(lane: &Record) -> Vec<String> {
    let values = match given(lane, "targets").or_else(|| given(lane, "target")) {
        None => Vec::new(),
        Some(Value::Array(items)) => items.iter().filter_map(scalar_string).collect(),
        Some(one) => scalar_string(one).into_iter().collect(),
    };
    values.into_iter().filter(|t| !t.is_empty()).collect()
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
            let owner = lane_owner_of(lane);
            if owner != UNKNOWN {
                *owners.entry(owner).or_insert(0) += 1;
            }
            let distinct: BTreeSet<String> = lane_targets_of(lane).into_iter().collect();
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
        let targets = lane_targets_of(lane);
        let unique_targets = targets
            .iter()
            .filter(|t| self.targets.get(*t).copied().unwrap_or(0) <= 1)
            .cloned()
            .collect();
        let owner = lane_owner_of(lane);
        let owner_unique = owner != UNKNOWN && self.owners.get(&owner).copied().unwrap_or(0) <= 1;
        Lane {
            batch_id: self.batch_id,
            name: lane_name_of(lane),
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
mod tests {
    use serde_json::json;

    use super::*;
    use crate::snapshot::MemorySnapshot;

    const REPO: &str = "acme/app";

    fn at(second: u32) -> String {
        format!("2026-07-22T00:00:{second:02}Z")
    }

    fn rec(v: Value) -> Record {
        v.as_object().unwrap().clone()
    }

    /// Returns `base` with the keys of `patch` set (a `null` in the patch removes the key).
    fn with(base: &Value, patch: Value) -> Value {
        let mut out = base.as_object().unwrap().clone();
        for (k, v) in patch.as_object().unwrap() {
            if v.is_null() {
                out.remove(k);
            } else {
                out.insert(k.clone(), v.clone());
            }
        }
        Value::Object(out)
    }

    fn lane(name: &str, owner: &str, targets: &[&str]) -> Value {
        json!({"name": name, "owner": owner, "targets": targets})
    }

    fn one_lane() -> Value {
        json!([lane("code", "a", &["1"])])
    }

    /// An ordinary lifecycle event of batch `b1` in `acme/app`.
    fn ev(kind: &str, agent: &str, target: &str, second: u32) -> Value {
        json!({
            "schema_version": 1, "event_id": format!("e{second:02}"), "batch_id": "b1",
            "type": kind, "agent_id": agent, "repo": REPO, "target": target, "at": at(second),
        })
    }

    /// A valid v2 `lane_closed` for lane `code`.
    fn closed(agent: &str, target: &str, second: u32) -> Value {
        json!({
            "schema_version": 2, "event_id": "lane_closed-5694d08a2e53ffca", "batch_id": "b1",
            "lane": "code", "type": "lane_closed", "repo": REPO, "target": target,
            "terminal": "done", "pr_url": "https://github.com/acme/app/pull/1",
            "pr_state": "merged", "workspace": "default",
            "closed_by": {"agent_id": agent, "machine": "box"}, "agent_id": agent,
            "at": at(second),
        })
    }

    fn snapshot(batch: Value, events: &[Value]) -> MemorySnapshot {
        let mut snap = MemorySnapshot::default();
        snap.put("batches/b1.json", &batch);
        for (i, event) in events.iter().enumerate() {
            snap.put(&format!("events/b1/{i:03}.json"), event);
        }
        snap
    }

    fn run(lanes: Value, events: &[Value]) -> Audit {
        audit(
            &snapshot(json!({"batch_id": "b1", "lanes": lanes}), events),
            "b1",
        )
    }

    fn run_repo(lanes: Value, events: &[Value]) -> Audit {
        let batch = json!({"batch_id": "b1", "repo": REPO, "lanes": lanes});
        audit(&snapshot(batch, events), "b1")
    }

    fn missing(audit: &Audit, lane: usize) -> Vec<&str> {
        audit.lanes[lane]
            .missing
            .iter()
            .map(String::as_str)
            .collect()
    }

    fn counts(audit: &Audit) -> Vec<usize> {
        audit.lanes.iter().map(|l| l.event_count).collect()
    }

    fn pairs(events: &[Value]) -> Vec<(String, Record)> {
        events
            .iter()
            .enumerate()
            .map(|(i, e)| (format!("events/b1/{i:03}.json"), rec(e.clone())))
            .collect()
    }

    fn set(agents: &[&str]) -> BTreeSet<String> {
        agents.iter().map(|a| (*a).to_owned()).collect()
    }

    #[test]
    fn unknown_reasons() {
        let mut unregistered = MemorySnapshot::default();
        unregistered.put("batches/other.json", &json!({"lanes": one_lane()}));
        let mut evil = MemorySnapshot::default();
        evil.put("batches/../evil.json", &json!({"lanes": one_lane()}));
        let mut broken = MemorySnapshot::default();
        broken.put_raw("batches/b1.json", b"{");
        let mut scalar = MemorySnapshot::default();
        scalar.put_raw("batches/b1.json", b"\"not-an-object\"");
        let mut broken_event = snapshot(json!({"lanes": one_lane()}), &[]);
        broken_event.put_raw("events/b1/x.json", b"[1]");
        let cases: Vec<(&str, MemorySnapshot, &str, &str)> = vec![
            (
                "unregistered",
                unregistered,
                "b1",
                "batch b1 is not registered",
            ),
            (
                "no lanes",
                snapshot(json!({"lanes": []}), &[]),
                "b1",
                "batch b1 registers no lanes",
            ),
            (
                "lanes absent",
                snapshot(json!({}), &[]),
                "b1",
                "batch b1 registers no lanes",
            ),
            (
                "lanes null",
                snapshot(json!({"lanes": null}), &[]),
                "b1",
                "batch b1 registers no lanes",
            ),
            (
                "lanes {}",
                snapshot(json!({"lanes": {}}), &[]),
                "b1",
                "batch b1 registers no lanes",
            ),
            (
                "not an object",
                scalar,
                "b1",
                "batch b1 state is not an object",
            ),
            (
                "unsafe id",
                evil,
                "../evil",
                "coordination state unreadable: invalid batch-id: ../evil",
            ),
            (
                "empty id",
                MemorySnapshot::default(),
                "",
                "coordination state unreadable: invalid batch-id: ",
            ),
            (
                "bad event",
                broken_event,
                "b1",
                "coordination state unreadable: events/b1/x.json: record is not a JSON object",
            ),
        ];
        for (name, snap, id, reason) in cases {
            let a = audit(&snap, id);
            assert_eq!(a.verdict, Verdict::Unknown, "{name}");
            assert_eq!(a.reason.as_deref(), Some(reason), "{name}");
            assert_eq!(a.batch_id, id, "{name}");
            assert!(a.lanes.is_empty(), "{name}");
        }
        let a = audit(&broken, "b1");
        let reason = a.reason.unwrap();
        assert!(
            reason.starts_with("coordination state unreadable: batches/b1.json: "),
            "{reason}"
        );
        assert!(!reason.contains("unreadable: state unreadable"), "{reason}");
    }

    #[test]
    fn attribution() {
        let shared_target = json!([lane("code", "a", &["1"]), lane("docs", "b", &["1"])]);
        let shared_owner = json!([lane("code", "a", &["1"]), lane("docs", "a", &["2"])]);
        let both_shared = json!([lane("code", "a", &["1"]), lane("docs", "a", &["1"])]);
        let note = |agent: &str, target: Option<&str>, lane: Option<&str>| {
            let mut e = json!({"schema_version": 1, "event_id": "n", "batch_id": "b1", "type": "note",
                "agent_id": agent, "repo": REPO, "at": at(0)});
            if let Some(t) = target {
                e["target"] = json!(t);
            }
            if let Some(l) = lane {
                e["lane"] = json!(l);
            }
            e
        };
        let cases: Vec<(&str, Value, Vec<Value>, Vec<usize>)> = vec![
            (
                "explicit lane beats shared target",
                shared_target.clone(),
                vec![note("z", Some("1"), Some("docs"))],
                vec![0, 1],
            ),
            (
                "unique target",
                one_lane(),
                vec![note("z", Some("1"), None)],
                vec![1],
            ),
            (
                "numeric event target",
                one_lane(),
                vec![with(&note("z", None, None), json!({"target": 1}))],
                vec![1],
            ),
            (
                "numeric lane target",
                json!([{"name": "code", "owner": "a", "targets": [7]}]),
                vec![note("z", Some("7"), None)],
                vec![1],
            ),
            (
                "legacy id/agent_id/target",
                json!([{"id": "code", "agent_id": "a", "target": "1"}]),
                vec![note("z", Some("1"), None), note("a", None, None)],
                vec![2],
            ),
            (
                "owner disambiguates shared target",
                shared_target.clone(),
                vec![note("a", Some("1"), None), note("b", None, None)],
                vec![1, 1],
            ),
            (
                "owner fallback ignores out-of-lane target",
                shared_target,
                vec![note("a", Some("99"), None)],
                vec![0, 0],
            ),
            (
                "shared owner credits own targets only",
                shared_owner,
                vec![note("a", Some("2"), None), note("a", None, None)],
                vec![0, 1],
            ),
            (
                "same target and owner credits neither",
                both_shared,
                vec![note("a", Some("1"), None), note("a", None, None)],
                vec![0, 0],
            ),
            (
                "unrelated agent without target",
                one_lane(),
                vec![note("z", None, None)],
                vec![0],
            ),
        ];
        for (name, lanes, events, want) in cases {
            assert_eq!(counts(&run(lanes, &events)), want, "{name}");
        }
    }

    #[test]
    fn repo_gate_and_empty_targets() {
        let same = ev("note", "z", "1", 0);
        let other = with(&same, json!({"repo": "other/app"}));
        let repoless = with(&same, json!({"repo": null}));
        assert_eq!(
            counts(&run_repo(
                one_lane(),
                &[same.clone(), other.clone(), repoless.clone()]
            )),
            [1]
        );
        assert_eq!(counts(&run(one_lane(), &[same, other, repoless])), [3]);

        let lanes = json!([{"name": "code", "owner": "a", "targets": ["", "1", ""]}]);
        let a = run(
            lanes,
            &[json!({"type": "note", "agent_id": "z", "target": ""})],
        );
        assert_eq!(a.lanes[0].targets, ["1"]);
        assert_eq!(a.lanes[0].event_count, 0);
    }

    #[test]
    fn lineage() {
        let acq = |agent: &str, second| ev("claim.acquired", agent, "1", second);
        let rel = |agent: &str, second| ev("claim.released", agent, "1", second);
        let phase = ev("phase.changed", "a", "1", 2);
        let cases: Vec<(&str, Value, Vec<Value>, Vec<&str>)> = vec![
            (
                "owner acquire and release",
                one_lane(),
                vec![acq("a", 1), rel("a", 2)],
                vec![],
            ),
            (
                "statuses allowed",
                one_lane(),
                vec![
                    with(&acq("a", 1), json!({"status": "active"})),
                    with(&rel("a", 2), json!({"status": "released"})),
                ],
                vec![],
            ),
            (
                "takeover by unique target",
                one_lane(),
                vec![acq("a", 1), acq("b", 2), rel("b", 3)],
                vec![],
            ),
            (
                "takeover with explicit lane on shared target",
                json!([lane("code", "a", &["1"]), lane("docs", "d", &["1"])]),
                vec![
                    acq("a", 1),
                    with(&acq("b", 2), json!({"lane": "code"})),
                    with(&rel("b", 3), json!({"lane": "code"})),
                ],
                vec![],
            ),
            (
                "equal time ordered by event id",
                one_lane(),
                vec![
                    with(&rel("b", 5), json!({"event_id": "e2"})),
                    with(&acq("b", 5), json!({"event_id": "e1"})),
                    acq("a", 1),
                ],
                vec![],
            ),
            (
                "release by unauthorized agent",
                one_lane(),
                vec![acq("a", 1), rel("c", 2)],
                vec!["terminal", "lifecycle"],
            ),
            (
                "release before admission",
                one_lane(),
                vec![rel("b", 1), acq("b", 2)],
                vec!["terminal", "lifecycle"],
            ),
            (
                "takeover into unknown owner lane",
                json!([lane("code", "UNKNOWN", &["1"])]),
                vec![
                    with(&acq("b", 1), json!({"lane": "code"})),
                    with(&rel("b", 2), json!({"lane": "code"})),
                ],
                vec!["terminal", "lifecycle"],
            ),
            (
                "takeover from other batch",
                one_lane(),
                vec![
                    acq("a", 1),
                    with(&acq("b", 2), json!({"batch_id": "b2"})),
                    rel("b", 3),
                ],
                vec!["terminal", "lifecycle"],
            ),
            (
                "duplicate (at, event_id)",
                one_lane(),
                vec![
                    acq("a", 1),
                    with(&rel("a", 2), json!({"event_id": "e01", "at": at(1)})),
                ],
                vec!["terminal", "lifecycle"],
            ),
            (
                "impossible at",
                one_lane(),
                vec![
                    acq("a", 1),
                    with(&rel("a", 2), json!({"at": "2026-02-30T00:00:00Z"})),
                ],
                vec!["terminal", "lifecycle"],
            ),
            (
                "blank event id",
                one_lane(),
                vec![with(&acq("a", 1), json!({"event_id": " \t "})), rel("a", 2)],
                vec!["terminal", "lifecycle"],
            ),
            (
                "integer target",
                one_lane(),
                vec![acq("a", 1), with(&rel("a", 2), json!({"target": 1}))],
                vec!["terminal", "lifecycle"],
            ),
            (
                "unknown agent",
                one_lane(),
                vec![acq("a", 1), rel(" uNkNoWn ", 2)],
                vec!["terminal", "lifecycle"],
            ),
            (
                "wrong schema version",
                one_lane(),
                vec![
                    with(&acq("a", 1), json!({"schema_version": 2})),
                    rel("a", 2),
                ],
                vec!["lifecycle"],
            ),
            (
                "acquired with released status",
                one_lane(),
                vec![
                    with(&acq("a", 1), json!({"status": "released"})),
                    rel("a", 2),
                ],
                vec!["lifecycle"],
            ),
            (
                "no events",
                one_lane(),
                vec![],
                vec!["claim.acquired", "terminal"],
            ),
            (
                "published phase change",
                one_lane(),
                vec![
                    acq("a", 1),
                    with(&phase, json!({"phase": "x", "previous_phase": "w"})),
                    rel("a", 3),
                ],
                vec![],
            ),
            (
                "historical phase change",
                one_lane(),
                vec![
                    acq("a", 1),
                    with(
                        &phase,
                        json!({"phase": "x", "old_phase": "w", "new_phase": "x"}),
                    ),
                    rel("a", 3),
                ],
                vec![],
            ),
            (
                "phase without transition",
                one_lane(),
                vec![
                    acq("a", 1),
                    with(&phase, json!({"phase": "x", "previous_phase": "x"})),
                    rel("a", 3),
                ],
                vec!["lifecycle"],
            ),
            (
                "phase without previous",
                one_lane(),
                vec![
                    acq("a", 1),
                    with(&phase, json!({"phase": "x"})),
                    rel("a", 3),
                ],
                vec!["lifecycle"],
            ),
            (
                "historical phase mismatch",
                one_lane(),
                vec![
                    acq("a", 1),
                    with(
                        &phase,
                        json!({"phase": "x", "old_phase": "w", "new_phase": "y"}),
                    ),
                    rel("a", 3),
                ],
                vec!["lifecycle"],
            ),
            (
                "phase integer status",
                one_lane(),
                vec![
                    acq("a", 1),
                    with(
                        &phase,
                        json!({"phase": "x", "previous_phase": "w", "status": 1}),
                    ),
                    rel("a", 3),
                ],
                vec!["lifecycle"],
            ),
        ];
        for (name, lanes, events, want) in cases {
            let a = run(lanes, &events);
            assert_eq!(missing(&a, 0), want, "{name}");
            assert_eq!(a.lanes[0].complete, want.is_empty(), "{name}");
        }
    }

    #[test]
    fn terminal() {
        let acq = |agent: &str, second| ev("claim.acquired", agent, "1", second);
        let rel = ev("claim.released", "a", "1", 3);
        let valid = closed("a", "1", 5);
        let cases: Vec<(&str, Vec<Value>, Vec<&str>)> = vec![
            (
                "valid lane_closed",
                vec![acq("a", 1), valid.clone()],
                vec![],
            ),
            (
                "takeover closer",
                vec![acq("a", 1), acq("b", 2), closed("b", "1", 5)],
                vec![],
            ),
            (
                "identical duplicates",
                vec![
                    acq("a", 1),
                    valid.clone(),
                    with(
                        &valid,
                        json!({"event_id": "copy", "at": at(6), "closed_by": {"agent_id": "a", "machine": "other"}}),
                    ),
                ],
                vec![],
            ),
            (
                "invalid lane_closed does not fall back to release",
                vec![
                    acq("a", 1),
                    rel.clone(),
                    with(&valid, json!({"terminal": "merged"})),
                ],
                vec!["terminal"],
            ),
            (
                "conflicting lane_closed",
                vec![
                    acq("a", 1),
                    valid.clone(),
                    with(
                        &valid,
                        json!({"event_id": "copy", "at": at(6), "terminal": "abandoned"}),
                    ),
                ],
                vec!["terminal"],
            ),
            (
                "conflicting workspace default",
                vec![
                    acq("a", 1),
                    valid.clone(),
                    with(
                        &valid,
                        json!({"event_id": "copy", "at": at(6), "workspace": "team"}),
                    ),
                ],
                vec!["terminal"],
            ),
            (
                "agent differs from closer",
                vec![
                    acq("a", 1),
                    acq("b", 2),
                    with(&closed("b", "1", 5), json!({"agent_id": "a"})),
                ],
                vec!["terminal"],
            ),
            (
                "unauthorized closer",
                vec![acq("a", 1), closed("c", "1", 5)],
                vec!["terminal"],
            ),
            (
                "closer before admission",
                vec![acq("a", 1), closed("b", "1", 2), acq("b", 3)],
                vec!["terminal"],
            ),
            (
                "unknown nested fact",
                vec![
                    acq("a", 1),
                    with(
                        &valid,
                        json!({"closed_by": {"agent_id": "a", "machine": " uNkNoWn "}}),
                    ),
                ],
                vec!["terminal"],
            ),
            (
                "extra closed_by key",
                vec![
                    acq("a", 1),
                    with(
                        &valid,
                        json!({"closed_by": {"agent_id": "a", "machine": "m", "x": "y"}}),
                    ),
                ],
                vec!["terminal"],
            ),
            (
                "blank optional fact",
                vec![acq("a", 1), with(&valid, json!({"pr_state": " \t "}))],
                vec!["terminal"],
            ),
            (
                "other lane",
                vec![
                    acq("a", 1),
                    rel.clone(),
                    with(&valid, json!({"lane": "docs", "target": "1"})),
                ],
                vec!["terminal"],
            ),
            (
                "other batch",
                vec![acq("a", 1), with(&valid, json!({"batch_id": "b2"}))],
                vec!["terminal"],
            ),
            ("release only", vec![acq("a", 1), rel], vec![]),
            ("lane_closed alone", vec![valid], vec!["claim.acquired"]),
        ];
        for (name, events, want) in cases {
            assert_eq!(missing(&run(one_lane(), &events), 0), want, "{name}");
        }
    }

    #[test]
    fn terminal_markers() {
        let fixture = json!({"schema_version":2,"event_id":"lane_closed-0f5a0caebfed6139",
            "batch_id":"ac-a-0712-0107","lane":"ac-a-i51","type":"lane_closed",
            "repo":"shakacode/agent-coordination","target":"51",
            "branch":"codex/ac-a-i51-terminal-lifecycle","terminal":"done",
            "pr_url":"https://github.com/shakacode/agent-coordination/pull/52","pr_state":"merged",
            "evidence_url":"https://github.com/shakacode/agent-coordination/pull/52#issuecomment-1",
            "workspace":"default","closed_by":{"agent_id":"ac-a-0712-0107-i51","machine":"codex"},
            "at":"2026-07-12T01:07:00Z"});
        let cases: Vec<(Value, bool)> = vec![
            (json!({}), true),
            (json!({"schema_version": 2.0}), true),
            (json!({"pr_url": "HtTpS://example.test"}), true),
            (
                json!({"pr_url": "https://user@example.test:8080/x?y#z"}),
                true,
            ),
            (json!({"pr_url": "http://[::1]:80/"}), true),
            (json!({"at": "1582-10-10T00:00:00.5+05:30"}), true),
            (
                json!({"lane": null, "batch_id": null, "branch": null}),
                true,
            ),
            (
                json!({"closed_by": {"agent_id": "a", "machine": " uNkNoWn "}}),
                true,
            ),
            (json!({"schema_version": "2"}), false),
            (json!({"schema_version": 1}), false),
            (json!({"type": "lane-closed"}), false),
            (json!({"terminal": "merged"}), false),
            (json!({"event_id": 123}), false),
            (json!({"target": ""}), false),
            (json!({"repo": "a/b/c"}), false),
            (json!({"repo": "ab"}), false),
            (json!({"repo": "/b"}), false),
            (json!({"workspace": ""}), false),
            (json!({"workspace": ["default"]}), false),
            (json!({"closed_by": "worker-a"}), false),
            (json!({"closed_by": {"agent_id": "a"}}), false),
            (
                json!({"closed_by": {"agent_id": "a", "machine": ""}}),
                false,
            ),
            (
                json!({"closed_by": {"agent_id": "a", "machine": "m", "x": "y"}}),
                false,
            ),
            (json!({"at": "2026-07-12T01:07:00"}), false),
            (json!({"at": "2026-02-29T00:00:00Z"}), false),
            (json!({"at": "2026-01-01T12:00:00+09:60"}), false),
            (json!({"branch": ""}), false),
            (json!({"pr_state": 3}), false),
            (json!({"lane": ""}), false),
            (json!({"evidence_url": "javascript:alert(1)"}), false),
            (
                json!({"evidence_url": "https://example.test/evidence /1"}),
                false,
            ),
            (json!({"evidence_url": 123}), false),
            (json!({"pr_url": "https://"}), false),
            (json!({"pr_url": "https://user@/x"}), false),
            (json!({"pr_url": "https://host:abc/"}), false),
            (json!({"pr_url": "ftp://example.test/"}), false),
            (json!({"pr_url": "https://exa<mple.test/"}), false),
        ];
        for (patch, want) in cases {
            let marker = rec(with(&fixture, patch.clone()));
            assert_eq!(is_valid_terminal_marker(&marker), want, "{patch}");
        }
        let mut missing_required = rec(fixture);
        missing_required.remove("workspace");
        assert!(!is_valid_terminal_marker(&missing_required));
    }

    #[test]
    fn malformed_lane_rows() {
        let lanes = json!([null, lane("code", "a", &["1"]), "docs"]);
        let events = [
            ev("claim.acquired", "a", "1", 1),
            ev("claim.released", "a", "1", 2),
        ];
        let a = run(lanes, &events);
        assert_eq!(a.verdict, Verdict::Incomplete);
        assert_eq!(a.lanes.len(), 3);
        assert_eq!(a.lanes[0], LaneAudit::malformed());
        assert_eq!(a.lanes[2], a.lanes[0]);
        assert_eq!(
            a.lanes[0].to_json(),
            json!({"name": "UNKNOWN", "owner": "UNKNOWN", "targets": [], "event_count": 0,
                "missing": ["claim.acquired", "terminal"], "complete": false, "malformed": true})
        );
        assert!(a.lanes[1].complete);
        assert!(!a.lanes[1].malformed);

        let hash_lanes = run(json!({"code": {"owner": "a"}}), &[]);
        assert_eq!(hash_lanes.lanes, [LaneAudit::malformed()]);
    }

    #[test]
    fn verdicts_and_exit_codes() {
        for (v, s, code) in [
            (Verdict::Complete, "complete", 0),
            (Verdict::Incomplete, "incomplete", 1),
            (Verdict::Unknown, "unknown", 2),
        ] {
            assert_eq!((v.as_str(), v.exit_code()), (s, code));
        }
        let two = json!([lane("code", "a", &["1"]), lane("docs", "b", &["2"])]);
        let code_done = [
            ev("claim.acquired", "a", "1", 1),
            ev("claim.released", "a", "1", 2),
        ];
        let docs_done = [
            ev("claim.acquired", "b", "2", 3),
            ev("claim.released", "b", "2", 4),
        ];
        let all: Vec<Value> = code_done.iter().chain(&docs_done).cloned().collect();
        assert_eq!(run(two.clone(), &all).verdict, Verdict::Complete);
        assert_eq!(run(two, &code_done).verdict, Verdict::Incomplete);
    }

    #[test]
    fn rendering() {
        let lanes = json!([lane("code", "a", &["1"]), lane("docs", "b", &["2"])]);
        let a = run(
            lanes,
            &[ev("claim.acquired", "a", "1", 1), closed("a", "1", 2)],
        );
        assert_eq!(
            a.to_text(),
            "batch-audit b1 incomplete\n\
             - lane code owner a complete\n\
             - lane docs owner b incomplete missing claim.acquired, terminal\n"
        );
        assert_eq!(
            serde_json::to_string(&a.to_json()).unwrap(),
            r#"{"batch_id":"b1","verdict":"incomplete","lanes":[{"name":"code","owner":"a","targets":["1"],"event_count":2,"missing":[],"complete":true,"malformed":false},{"name":"docs","owner":"b","targets":["2"],"event_count":0,"missing":["claim.acquired","terminal"],"complete":false,"malformed":false}]}"#
        );

        let u = audit(&MemorySnapshot::default(), "../evil");
        assert_eq!(
            u.to_text(),
            "batch-audit ../evil unknown\n- coordination state unreadable: invalid batch-id: ../evil\n"
        );
        assert_eq!(
            serde_json::to_string(&u.to_json()).unwrap(),
            r#"{"batch_id":"../evil","verdict":"unknown","reason":"coordination state unreadable: invalid batch-id: ../evil","lanes":[]}"#
        );
        let empty = Audit {
            batch_id: "b".into(),
            verdict: Verdict::Complete,
            lanes: vec![],
            reason: None,
        };
        assert_eq!(
            empty.to_text(),
            "batch-audit b complete\n- no lanes registered\n"
        );
    }

    #[test]
    fn lineage_authorization_for_closeout() {
        let batch = rec(json!({"batch_id": "b1", "repo": REPO, "lanes": one_lane()}));
        let acq = |agent: &str, second| ev("claim.acquired", agent, "1", second);
        let takeover = [acq("a", 1), acq("b", 2)];
        // (case, batch, lane, events, authorized agents)
        type Case<'a> = (&'a str, Record, &'a str, Vec<Value>, Option<Vec<&'a str>>);
        let cases: Vec<Case> = vec![
            ("owner only", batch.clone(), "code", vec![], Some(vec!["a"])),
            (
                "unknown owner",
                rec(json!({"batch_id": "b1", "lanes": [lane("code", "", &["1"])]})),
                "code",
                vec![],
                Some(vec![]),
            ),
            (
                "takeover",
                batch.clone(),
                "code",
                takeover.to_vec(),
                Some(vec!["a", "b"]),
            ),
            (
                "other repo ignored",
                batch.clone(),
                "code",
                vec![
                    acq("a", 1),
                    with(&acq("b", 2), json!({"repo": "other/app"})),
                ],
                Some(vec!["a"]),
            ),
            ("no such lane", batch.clone(), "docs", vec![], None),
            (
                "duplicate lane name",
                rec(
                    json!({"batch_id": "b1", "lanes": [lane("code", "a", &["1"]), lane("code", "b", &["2"])]}),
                ),
                "code",
                vec![],
                None,
            ),
            (
                "invalid ordinary event",
                batch.clone(),
                "code",
                vec![acq("a", 1), ev("claim.released", "c", "1", 2), acq("b", 3)],
                None,
            ),
            (
                "unordered",
                batch.clone(),
                "code",
                vec![acq("a", 1), with(&acq("b", 2), json!({"at": "soon"}))],
                None,
            ),
            (
                "conflicting closeouts",
                batch.clone(),
                "code",
                vec![
                    acq("a", 1),
                    acq("b", 2),
                    closed("a", "1", 3),
                    with(
                        &closed("a", "1", 4),
                        json!({"event_id": "x", "pr_state": "closed"}),
                    ),
                ],
                None,
            ),
            (
                "invalid closeout",
                batch.clone(),
                "code",
                vec![
                    acq("a", 1),
                    acq("b", 2),
                    with(&closed("b", "1", 3), json!({"closed_by": "b"})),
                ],
                None,
            ),
            (
                "valid closeout replays",
                batch,
                "code",
                vec![acq("a", 1), acq("b", 2), closed("b", "1", 3)],
                Some(vec!["a", "b"]),
            ),
        ];
        for (name, batch, lane_name, events, want) in cases {
            let got = lineage_authorized(&batch, lane_name, &pairs(&events));
            assert_eq!(got, want.map(|w| set(&w)), "{name}");
        }

        // Without a manifest batch_id, the events folder names the batch.
        let anonymous = rec(json!({"lanes": one_lane()}));
        assert_eq!(
            lineage_authorized(&anonymous, "code", &pairs(&takeover)),
            Some(set(&["a", "b"]))
        );
        let mut elsewhere = pairs(&takeover);
        elsewhere[1].0 = "events/b2/001.json".into();
        assert_eq!(lineage_authorized(&anonymous, "code", &elsewhere), None);
    }
}
