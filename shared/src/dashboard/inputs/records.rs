//! Records as the dashboard reads them: field aliases resolved (reference §7.2), display-
//! unsafe values dropped, timestamps parsed once.
//!
//! Each file is parsed once, into its record kind ([`Claim`], [`Heartbeat`], [`Manifest`],
//! [`Event`], a coordinator [`TaskIn`]); the `*In` values are built from those. Canonical fields are read through
//! [`crate::record::field`]; the predecessors' aliases (`thread_name`, `prUrl`, …) are not
//! fields of ours and are read by their spelling from the same record.
//!
//! The server caches these by blob id, so a new tip only normalises the records that
//! changed.

use std::sync::Arc;

use serde_json::Value;

use super::annotations;
use super::tasks;
use crate::coordinator::controls::Controls;
use crate::coordinator::controls::CONTROLS_PATH;
use crate::dashboard::inputs::tasks::TaskIn;
use crate::dashboard::model::Annotation;
use crate::record::field as f;
use crate::record::field::Field;
use crate::record::scalar_string;
use crate::record::Claim;
use crate::record::Event;
use crate::record::Heartbeat;
use crate::record::Lane;
use crate::record::Manifest;
use crate::record::Record;
use crate::rules::newest_beat;
use crate::time;
use crate::time::Instant;

/// A lane's name: ours is `lane`; predecessors wrote `lane_name` or `lane_id` (preferred).
const LANE_ALIASES: [&str; 3] = ["lane_name", "lane_id", f::LANE.name()];

/// Reports whether a value is a placeholder (`UNKNOWN agent`, blank, …) to treat as absent.
pub fn is_placeholder(s: &str) -> bool {
    let t = s.trim().to_lowercase();
    if t.is_empty() {
        return true;
    }
    let Some(rest) = t.strip_prefix("unknown") else {
        return false;
    };
    let rest = rest.trim();
    rest.is_empty()
        || [
            "agent", "batch", "branch", "host", "lane", "machine", "operator", "repo", "target",
            "thread", "title", "url",
        ]
        .contains(&rest)
}

/// The first present, non-placeholder string among `keys`.
pub fn field(r: &Record, keys: &[&str]) -> Option<String> {
    keys.iter().find_map(|k| {
        r.get(*k)
            .and_then(scalar_string)
            .map(|s| s.trim().to_owned())
            .filter(|s| !is_placeholder(s))
    })
}

/// The value of one canonical field, as [`field`] reads it.
fn one(r: &Record, key: Field) -> Option<String> {
    field(r, &[key.name()])
}

fn instant(r: &Record, keys: &[&str]) -> (Option<Instant>, Option<String>) {
    let raw = keys
        .iter()
        .find_map(|k| r.get(*k).and_then(Value::as_str).map(str::to_owned));
    (raw.as_deref().and_then(time::parse), raw)
}

fn list(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(items)) => items.iter().filter_map(scalar_string).collect(),
        Some(Value::Null) | None => Vec::new(),
        Some(other) => scalar_string(other).into_iter().collect(),
    }
}

/// Operator metadata shared by claims, heartbeats, lanes and events.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Meta {
    /// `machine_id | machine | hostname` (never `host`).
    pub machine: Option<String>,
    /// `thread_handle | thread_name | thread`.
    pub thread: Option<String>,
    /// `host | host_app`.
    pub host: Option<String>,
    /// `operator | operator_id`.
    pub operator: Option<String>,
    /// `branch`.
    pub branch: Option<String>,
    /// `pr_url | prUrl | pull_request_url`, http(s) only.
    pub pr_url: Option<String>,
    /// The claim's fencing `generation` (claims and the events that acquire them).
    pub generation: Option<String>,
}

impl Meta {
    fn of(r: &Record) -> Meta {
        Meta {
            machine: field(r, &[f::MACHINE_ID.name(), f::MACHINE.name(), "hostname"]),
            thread: field(r, &[f::THREAD_HANDLE.name(), "thread_name", "thread"]),
            host: field(r, &[f::HOST.name(), "host_app"]),
            operator: field(r, &[f::OPERATOR.name(), "operator_id"]),
            branch: one(r, f::BRANCH),
            pr_url: field(r, &[f::PR_URL.name(), "prUrl", "pull_request_url"])
                .filter(|u| crate::record::is_http_url(u)),
            generation: one(r, f::GENERATION),
        }
    }
}

/// A claim.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimIn {
    /// Record path.
    pub path: String,
    /// `owner/repo` (field, else from the path).
    pub repo: String,
    /// Target (field, else the file name).
    pub target: String,
    /// Holder (`unattributed` when absent).
    pub agent: String,
    /// `active`, `released` or `unknown`.
    pub status: String,
    /// `updated_at`, else `claimed_at`.
    pub updated_at: Option<Instant>,
    /// `batch_id`.
    pub batch_id: Option<String>,
    /// `lane_name | lane_id | lane`.
    pub lane: Option<String>,
    /// Metadata.
    pub meta: Meta,
}

impl ClaimIn {
    /// Normalises the claim at `path` (`claims/<owner>/<repo>/<target>.json`).
    pub fn from_claim(path: &str, r: &Claim) -> ClaimIn {
        let parts: Vec<&str> = path.trim_end_matches(".json").split('/').collect();
        let path_repo = (parts.len() >= 4).then(|| format!("{}/{}", parts[1], parts[2]));
        let status = match one(r, f::STATUS).map(|s| s.to_lowercase()).as_deref() {
            Some("active") => "active",
            Some("released") => "released",
            _ => "unknown",
        };
        let (updated, _) = instant(r, &[f::UPDATED_AT.name()]);
        let (claimed, _) = instant(r, &[f::CLAIMED_AT.name()]);
        ClaimIn {
            path: path.to_owned(),
            repo: one(r, f::REPO)
                .or(path_repo)
                .unwrap_or_else(|| "UNKNOWN".into()),
            target: one(r, f::TARGET)
                .or_else(|| parts.last().map(|s| (*s).to_owned()))
                .unwrap_or_default(),
            agent: one(r, f::AGENT_ID).unwrap_or_else(|| "unattributed".into()),
            status: status.into(),
            updated_at: updated.or(claimed),
            batch_id: one(r, f::BATCH_ID),
            lane: field(r, &LANE_ALIASES),
            meta: Meta::of(r),
        }
    }
}

/// A heartbeat.
#[derive(Debug, Clone, PartialEq)]
pub struct HeartbeatIn {
    /// Agent id (field, else the file name).
    pub agent: String,
    /// `owner/repo`.
    pub repo: Option<String>,
    /// Target.
    pub target: Option<String>,
    /// Batch.
    pub batch_id: Option<String>,
    /// Lane.
    pub lane: Option<String>,
    /// `status`, else `phase`, else `unknown`.
    pub status: String,
    /// `updated_at`.
    pub updated_at: Option<Instant>,
    /// `expires_at`.
    pub expires_at: Option<Instant>,
    /// Metadata.
    pub meta: Meta,
}

impl HeartbeatIn {
    /// Normalises the heartbeat at `path` (`heartbeats/<agent>.json`).
    pub fn from_heartbeat(path: &str, r: &Heartbeat) -> HeartbeatIn {
        let base = path
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .trim_end_matches(".json");
        HeartbeatIn {
            agent: one(r, f::AGENT_ID).unwrap_or_else(|| base.to_owned()),
            repo: one(r, f::REPO),
            target: one(r, f::TARGET),
            batch_id: one(r, f::BATCH_ID),
            lane: field(r, &LANE_ALIASES),
            status: field(r, &[f::STATUS.name(), f::PHASE.name()])
                .unwrap_or_else(|| "unknown".into()),
            updated_at: instant(r, &[f::UPDATED_AT.name()]).0,
            expires_at: instant(r, &[f::EXPIRES_AT.name()]).0,
            meta: Meta::of(r),
        }
    }

    /// Liveness at `now`.
    pub fn liveness(&self, now: Instant) -> crate::rules::liveness::Liveness {
        crate::rules::liveness::of_times(self.updated_at, self.expires_at, now)
    }
}

/// A manifest target.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetIn {
    /// `pull_request`, `issue` or `unknown`.
    pub kind: String,
    /// Number.
    pub target: String,
    /// Title.
    pub title: Option<String>,
    /// URL.
    pub url: Option<String>,
    /// Repository when it differs from the batch's.
    pub repo: Option<String>,
}

/// A manifest lane.
#[derive(Debug, Clone, PartialEq)]
pub struct LaneIn {
    /// Name.
    pub name: String,
    /// Owner agent (`None` when unassigned).
    pub owner: Option<String>,
    /// Targets.
    pub targets: Vec<String>,
    /// Dependencies.
    pub depends_on: Vec<String>,
    /// Status (`unknown` when absent).
    pub status: String,
    /// Carries a `lane_closed` terminal stamp.
    pub closed: bool,
    /// Metadata.
    pub meta: Meta,
}

/// A saved batch manifest.
#[derive(Debug, Clone, PartialEq)]
pub struct ManifestIn {
    /// Record path.
    pub path: String,
    /// Batch id.
    pub id: String,
    /// Repository.
    pub repo: Option<String>,
    /// Objective.
    pub objective: Option<String>,
    /// Targets.
    pub targets: Vec<TargetIn>,
    /// Lanes.
    pub lanes: Vec<LaneIn>,
    /// `created_at | registered_at`.
    pub created_at: Option<String>,
    /// `updated_at`, else creation.
    pub updated_at: Option<Instant>,
    /// `created_by_machine`.
    pub created_by_machine: Option<String>,
    /// The launch prompt.
    pub launch_prompt: Option<String>,
    /// A structured blocker was recorded.
    pub has_blocker: bool,
}

fn normalize_kind(raw: Option<String>) -> String {
    match raw.map(|s| s.to_lowercase()).as_deref() {
        Some("pull_request" | "pull-request" | "pull request" | "pr") => "pull_request".into(),
        Some("issue") => "issue".into(),
        _ => "unknown".into(),
    }
}

impl ManifestIn {
    /// Normalises the manifest at `path` (`batches/<id>.json`).
    pub fn from_manifest(path: &str, r: &Manifest) -> ManifestIn {
        let base = path
            .rsplit('/')
            .next()
            .unwrap_or_default()
            .trim_end_matches(".json");
        let targets = match f::TARGETS.get(r) {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(|t| match t {
                    Value::Object(o) => Some(TargetIn {
                        kind: normalize_kind(one(o, f::TYPE)),
                        target: field(o, &[f::TARGET.name(), "number", f::ID.name()])?,
                        title: one(o, f::TITLE),
                        url: one(o, f::URL).filter(|u| crate::record::is_http_url(u)),
                        repo: one(o, f::REPO),
                    }),
                    other => scalar_string(other).map(|n| TargetIn {
                        kind: "unknown".into(),
                        target: n,
                        title: None,
                        url: None,
                        repo: None,
                    }),
                })
                .collect(),
            _ => Vec::new(),
        };
        let lanes = match f::LANES.get(r) {
            Some(Value::Array(items)) => items
                .iter()
                .filter_map(Value::as_object)
                .map(|l| {
                    let mut targets = list(f::TARGETS.get(l));
                    if targets.is_empty() {
                        targets = list(f::TARGET.get(l));
                    }
                    LaneIn {
                        name: field(l, &[f::NAME.name(), f::ID.name()])
                            .unwrap_or_else(|| "UNKNOWN".into()),
                        owner: field(l, &[f::OWNER.name(), f::AGENT_ID.name()])
                            .filter(|o| o != "unassigned"),
                        targets,
                        depends_on: list(f::DEPENDS_ON.get(l)),
                        status: one(l, f::STATUS).unwrap_or_else(|| "unknown".into()),
                        closed: Lane::is_closed(l),
                        meta: Meta::of(l),
                    }
                })
                .collect(),
            _ => Vec::new(),
        };
        let created = field(r, &[f::CREATED_AT.name(), f::REGISTERED_AT.name()]);
        ManifestIn {
            path: path.to_owned(),
            id: one(r, f::BATCH_ID).unwrap_or_else(|| base.to_owned()),
            repo: one(r, f::REPO),
            objective: one(r, f::OBJECTIVE),
            targets,
            lanes,
            updated_at: instant(r, &[f::UPDATED_AT.name()])
                .0
                .or_else(|| created.as_deref().and_then(time::parse)),
            created_at: created,
            created_by_machine: one(r, f::CREATED_BY_MACHINE),
            launch_prompt: f::LAUNCH_PROMPT
                .text(r)
                .filter(|p| !p.trim().is_empty())
                .map(str::to_owned),
            has_blocker: f::BLOCKER.get(r).is_some_and(Value::is_object),
        }
    }
}

/// An event.
#[derive(Debug, Clone, PartialEq)]
pub struct EventIn {
    /// Record path (the tie-breaker for equal times).
    pub path: String,
    /// `event_id | id`, else the path.
    pub id: String,
    /// `type | event_type | name`, default `unknown`.
    pub kind: String,
    /// Batch (field, else the `events/<batch>/` folder).
    pub batch_id: Option<String>,
    /// Lane.
    pub lane: Option<String>,
    /// Agent.
    pub agent: Option<String>,
    /// Repository.
    pub repo: Option<String>,
    /// Target.
    pub target: Option<String>,
    /// `status | phase | terminal`.
    pub status: Option<String>,
    /// Free text.
    pub message: Option<String>,
    /// `timestamp | at | created_at | updated_at`.
    pub at: Option<Instant>,
    /// The timestamp as written.
    pub at_raw: Option<String>,
    /// Metadata.
    pub meta: Meta,
}

impl EventIn {
    /// Normalises the event at `path` (`events/<batch>/<id>.json`).
    pub fn from_event(path: &str, r: &Event) -> EventIn {
        let folder_batch = path.strip_prefix("events/").and_then(|rest| {
            let (batch, file) = rest.split_once('/')?;
            (!file.contains('/')).then(|| batch.to_owned())
        });
        let at_keys = [
            "timestamp",
            f::AT.name(),
            f::CREATED_AT.name(),
            f::UPDATED_AT.name(),
        ];
        let (at, at_raw) = instant(r, &at_keys);
        EventIn {
            path: path.to_owned(),
            id: field(r, &[f::EVENT_ID.name(), f::ID.name()]).unwrap_or_else(|| path.to_owned()),
            kind: field(r, &[f::TYPE.name(), "event_type", f::NAME.name()])
                .unwrap_or_else(|| "unknown".into()),
            batch_id: one(r, f::BATCH_ID).or(folder_batch),
            lane: field(r, &LANE_ALIASES),
            agent: one(r, f::AGENT_ID),
            repo: one(r, f::REPO),
            target: one(r, f::TARGET),
            status: field(r, &[f::STATUS.name(), f::PHASE.name(), f::TERMINAL.name()]),
            message: one(r, f::MESSAGE),
            at,
            at_raw,
            meta: Meta::of(r),
        }
    }

    /// `status`, else the type.
    pub fn status_or_type(&self) -> &str {
        self.status.as_deref().unwrap_or(&self.kind)
    }
}

/// Everything the dashboard is derived from.
#[derive(Debug, Clone, Default)]
pub struct Inputs {
    /// Claims (every status; released ones are dropped by the build).
    pub claims: Vec<Arc<ClaimIn>>,
    /// Heartbeats (the newest copy per agent).
    pub heartbeats: Vec<Arc<HeartbeatIn>>,
    /// Manifests.
    pub manifests: Vec<Arc<ManifestIn>>,
    /// Events.
    pub events: Vec<Arc<EventIn>>,
    /// Coordinator task checkpoints.
    pub tasks: Vec<Arc<TaskIn>>,
    /// Operators' annotations (dismissals and snoozes).
    pub annotations: Vec<Arc<Annotation>>,
    /// The coordinator operators' holds (pauses, drains), when recorded.
    pub controls: Option<Arc<Controls>>,
    /// Records that could not be read: `(path, message)`; under a scope, a record of
    /// unknown repository is only described (`an unscoped events record`, no message).
    pub malformed: Vec<(String, String)>,
    /// What GitHub said at its last refresh; `None` builds from the git state alone.
    pub github: Option<Arc<crate::dashboard::inputs::github_facts::GithubFacts>>,
    /// What a scope left out, one notice per kind ([`crate::dashboard::scope::apply`]).
    pub notices: Vec<String>,
    /// The repositories a scope shows (empty: every one).
    pub target_repos: Vec<String>,
}

/// Reports whether a claim still counts (anything but `released`).
pub(crate) fn is_active(c: &ClaimIn) -> bool {
    c.status != "released"
}

/// The batch, repository and target a heartbeat reports, when it reports all three (only
/// then does it name an inferred batch).
pub(crate) fn heartbeat_work(h: &HeartbeatIn) -> Option<(&str, &str, &str)> {
    Some((
        h.batch_id.as_deref()?,
        h.repo.as_deref()?,
        h.target.as_deref()?,
    ))
}

/// The warning about an unreadable record: `Malformed JSON in <path>: <message>`, or
/// `Malformed JSON in <description>.` when the message was withheld.
pub fn malformed_warning(path: &str, message: &str) -> String {
    if message.is_empty() {
        format!("Malformed JSON in {path}.")
    } else {
        format!("Malformed JSON in {path}: {message}")
    }
}

impl Inputs {
    /// Sorts every list by path/agent so the model is deterministic whatever the read order.
    pub fn sort(&mut self) {
        self.claims.sort_by(|a, b| a.path.cmp(&b.path));
        self.heartbeats.sort_by(|a, b| a.agent.cmp(&b.agent));
        self.manifests.sort_by(|a, b| a.path.cmp(&b.path));
        self.events.sort_by(|a, b| a.path.cmp(&b.path));
        self.tasks.sort_by(|a, b| a.path.cmp(&b.path));
        self.annotations
            .sort_by(|a, b| (&a.repo, &a.target).cmp(&(&b.repo, &b.target)));
        self.malformed.sort();
    }

    /// The number of records (unreadable ones included).
    pub fn len(&self) -> usize {
        self.claims.len()
            + self.heartbeats.len()
            + self.manifests.len()
            + self.events.len()
            + self.tasks.len()
            + self.annotations.len()
            + usize::from(self.controls.is_some())
            + self.malformed.len()
    }

    /// Reports whether there are no records at all.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The heartbeat of `agent` (heartbeats are kept one per agent, sorted by agent, by
    /// [`Inputs::finish`] and [`Inputs::sort`]).
    pub fn heartbeat_of(&self, agent: &str) -> Option<&HeartbeatIn> {
        self.heartbeats
            .binary_search_by(|h| h.agent.as_str().cmp(agent))
            .ok()
            .map(|i| self.heartbeats[i].as_ref())
    }

    /// Adds one parsed record.
    pub fn push(&mut self, parsed: Parsed) {
        match parsed {
            Parsed::Claim(c) => self.claims.push(c),
            Parsed::Heartbeat(h) => self.heartbeats.push(h),
            Parsed::Manifest(m) => self.manifests.push(m),
            Parsed::Event(e) => self.events.push(e),
            Parsed::Task(t) => self.tasks.push(t),
            Parsed::Annotation(a) => self.annotations.push(a),
            Parsed::Controls(c) => self.controls = Some(c),
            Parsed::Malformed(path, message) => self.malformed.push((path, message)),
            Parsed::Ignored => {}
        }
    }

    /// Sorts, and keeps only the newest heartbeat per agent (an agent that moved machines
    /// has a copy on each machine's ref).
    pub fn finish(&mut self) {
        self.finish_beats();
        self.sort();
    }

    /// [`Inputs::finish`] for inputs whose other lists are sorted already (a read that
    /// keeps the state branch's records sorted and adds the heartbeat refs' to them): sorts
    /// and keeps the newest heartbeat per agent, and sorts the unreadable records.
    pub fn finish_beats(&mut self) {
        // Stable: each agent's copies stay in read order for the rule's tie-break.
        self.heartbeats.sort_by(|a, b| a.agent.cmp(&b.agent));
        self.heartbeats = self
            .heartbeats
            .chunk_by(|a, b| a.agent == b.agent)
            .filter_map(|copies| newest_beat::newest(copies.iter().cloned(), |h| h.updated_at))
            .collect();
        self.malformed.sort();
    }

    /// Parses raw files (path, bytes), as a directory or a memory snapshot holds them.
    pub fn from_files<'a>(files: impl IntoIterator<Item = (&'a str, &'a [u8])>) -> Inputs {
        let mut inputs = Inputs::default();
        for (path, bytes) in files {
            inputs.push(parse_record(path, bytes));
        }
        inputs.finish();
        inputs
    }
}

/// One record, normalised by kind.
#[derive(Debug, Clone)]
pub enum Parsed {
    /// `claims/…`.
    Claim(Arc<ClaimIn>),
    /// `heartbeats/…`.
    Heartbeat(Arc<HeartbeatIn>),
    /// `batches/…`.
    Manifest(Arc<ManifestIn>),
    /// `events/…`.
    Event(Arc<EventIn>),
    /// `coordinator/tasks/<owner>/<repo>/<issue>.json`.
    Task(Arc<TaskIn>),
    /// `annotations/<owner>/<repo>/<target>.json`.
    Annotation(Arc<Annotation>),
    /// `coordinator/controls/holds.json`.
    Controls(Arc<Controls>),
    /// Not a JSON object (or not a task checkpoint): `(path, message)`.
    Malformed(String, String),
    /// Another part of the tree (archive, coordinator activities, …).
    Ignored,
}

/// Parses and normalises the record at `path`.
pub fn parse_record(path: &str, bytes: &[u8]) -> Parsed {
    if tasks::is_task_path(path) {
        return match tasks::parse_task(path, bytes) {
            Ok(task) => Parsed::Task(Arc::new(task)),
            Err(e) => Parsed::Malformed(path.to_owned(), e.to_string()),
        };
    }
    if path == CONTROLS_PATH {
        return match serde_json::from_slice::<Controls>(bytes) {
            Ok(c) => Parsed::Controls(Arc::new(c)),
            Err(e) => Parsed::Malformed(path.to_owned(), e.to_string()),
        };
    }
    if annotations::is_annotation_path(path) && path.ends_with(".json") {
        return match annotations::parse(path, bytes) {
            Ok(a) => Parsed::Annotation(Arc::new(a)),
            Err(e) => Parsed::Malformed(path.to_owned(), e.to_string()),
        };
    }
    let top = path.split('/').next().unwrap_or_default();
    if !matches!(top, "claims" | "heartbeats" | "batches" | "events") || !path.ends_with(".json") {
        return Parsed::Ignored;
    }
    if top == "claims" && is_lease_path(path) {
        // A fleet-wide lane slot's lease (`coordinator::leases`), not a work item.
        return Parsed::Ignored;
    }
    let record = match crate::record::from_bytes(bytes) {
        Ok(r) => r,
        Err(e) => return Parsed::Malformed(path.to_owned(), e.to_string()),
    };
    match top {
        "claims" => Parsed::Claim(Arc::new(ClaimIn::from_claim(path, &record.into()))),
        "heartbeats" => {
            Parsed::Heartbeat(Arc::new(HeartbeatIn::from_heartbeat(path, &record.into())))
        }
        "batches" => Parsed::Manifest(Arc::new(ManifestIn::from_manifest(path, &record.into()))),
        _ => Parsed::Event(Arc::new(EventIn::from_event(path, &record.into()))),
    }
}

/// Reports whether a claim path is a repository lane slot's lease
/// (`claims/<owner>/<repo>/lane-slot-<n>.json`).
fn is_lease_path(path: &str) -> bool {
    path.rsplit('/')
        .next()
        .and_then(|f| f.strip_suffix(".json"))
        .and_then(crate::coordinator::leases::slot_of)
        .is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lane_slot_lease_is_not_a_work_item_and_the_holds_are_read() {
        let lease = br#"{"agent_id":"w1.acme.widget.7.slots","status":"active"}"#;
        assert!(matches!(
            parse_record("claims/acme/widget/lane-slot-2.json", lease),
            Parsed::Ignored
        ));
        assert!(matches!(
            parse_record("claims/acme/widget/7.json", lease),
            Parsed::Claim(_)
        ));
        let holds = br#"{"holds":[{"kind":"pause","scope":"all","by":"alice","at":"2026-12-07T10:00:00Z"}]}"#;
        let inputs = Inputs::from_files([("coordinator/controls/holds.json", &holds[..])]);
        assert_eq!(inputs.controls.map(|c| c.holds.len()), Some(1));
        assert!(matches!(
            parse_record("coordinator/controls/holds.json", b"[1]"),
            Parsed::Malformed(..)
        ));
    }
}
