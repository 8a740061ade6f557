//! `status`: the read-only report of claims, heartbeats, batches and events, in three scopes.
//!
//! Unscoped status lists everything (and the archive on request); target scope reads one
//! claim and its holder's heartbeat; batch scope reads one manifest, its events, its lane
//! owners' heartbeats and the lanes it depends on. Any unreadable record fails the whole
//! report, except an owner's heartbeat in a scoped read, which degrades to a section note.
//! Rows are projected by moving fields out of the records read, so the full read of a large
//! state clones as little as possible.

use std::borrow::Cow;
use std::collections::HashMap;
use std::collections::HashSet;
use std::fmt::Write as _;

use serde_json::Map;
use serde_json::Value;

use crate::ids::paths;
use crate::ids::AgentId;
use crate::ids::BatchId;
use crate::ids::IdError;
use crate::ids::RepoSlug;
use crate::ids::Target;
use crate::record::Record;
use crate::rules::deps;
use crate::rules::deps::to_text;
use crate::rules::deps::OwnerBeat;
use crate::rules::liveness;
use crate::snapshot::ReadError;
use crate::snapshot::Snapshot;
use crate::time::Instant;

/// Claim fields projected when present, after the core fields.
#[rustfmt::skip]
const CLAIM_FIELDS: [&str; 23] = [
    "batch_id", "thread_handle", "chat_handle", "host", "machine_id", "session_id",
    "session_source", "pr_url", "dashboard_url", "operator", "phase", "generation", "instance_id",
    "release_mode", "handoff_to", "handoff_note", "terminal", "pr_state", "evidence_url",
    "workspace", "closed_by", "synthetic", "synthetic_kind",
];

/// Heartbeat fields projected when present, after the core fields.
#[rustfmt::skip]
const HEARTBEAT_FIELDS: [&str; 17] = [
    "batch_id", "branch", "thread_handle", "chat_handle", "host", "machine_id", "session_id",
    "session_source", "pr_url", "dashboard_url", "operator", "phase", "generation", "instance_id",
    "status_raw", "synthetic", "synthetic_kind",
];

/// Batch manifest fields projected when present, after `path`, `batch_id` and `lanes`.
#[rustfmt::skip]
const BATCH_FIELDS: [&str; 12] = [
    "repo", "objective", "instructions", "launch_prompt", "operator", "dashboard_url", "status",
    "updated_at", "registered_at", "completed_at", "synthetic", "synthetic_kind",
];

/// Event fields projected when present, after `path`, `batch_id`, `type` and `at`.
#[rustfmt::skip]
const EVENT_FIELDS: [&str; 39] = [
    "event_id", "lane", "agent_id", "repo", "target", "branch", "status", "status_raw", "message",
    "thread_handle", "chat_handle", "host", "machine_id", "session_id", "session_source", "pr_url",
    "dashboard_url", "operator", "phase", "previous_phase", "generation", "instance_id",
    "release_mode", "handoff_to", "handoff_note", "terminal", "pr_state", "evidence_url",
    "workspace", "closed_by", "reason", "from_route", "to_route", "evidence", "severity",
    "category", "kind", "synthetic", "synthetic_kind",
];

/// Which records a status read covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Every claim, heartbeat, batch and event (`status`).
    All {
        /// Whether to list the archive too (`--include-archived`).
        include_archived: bool,
    },
    /// One claim and its holder's heartbeat (`status --repo R --target T`).
    Target {
        /// The claim's repository.
        repo: RepoSlug,
        /// The claimed target.
        target: Target,
    },
    /// One batch, its events, lane owners and dependencies (`status --batch-id ID`).
    Batch {
        /// The batch.
        batch: BatchId,
    },
}

/// Why the status flags do not make a scope (exit 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScopeError {
    /// Both a batch and a target were asked for.
    #[error("--batch-id cannot be combined with --repo or --target")]
    Combined,
    /// `--target` without `--repo`.
    #[error("missing required --repo")]
    MissingRepo,
    /// `--repo` without `--target`.
    #[error("missing required --target")]
    MissingTarget,
    /// `--include-archived` with a scope.
    #[error("--include-archived is only valid for unscoped status")]
    ArchivedScoped,
    /// An invalid repo, target or batch id.
    #[error(transparent)]
    Invalid(#[from] IdError),
}

impl Scope {
    /// Returns the scope the `status` flags ask for, checked in the predecessor's order.
    pub fn from_flags(
        repo: Option<&str>,
        target: Option<&str>,
        batch_id: Option<&str>,
        include_archived: bool,
    ) -> Result<Scope, ScopeError> {
        let scope = match (repo, target, batch_id) {
            (None, None, None) => return Ok(Scope::All { include_archived }),
            (Some(_), _, Some(_)) | (_, Some(_), Some(_)) => return Err(ScopeError::Combined),
            (None, None, Some(batch)) => Scope::Batch {
                batch: batch.parse()?,
            },
            (repo, target, None) => {
                let repo = repo
                    .filter(|s| !s.is_empty())
                    .ok_or(ScopeError::MissingRepo)?;
                let target = target
                    .filter(|s| !s.is_empty())
                    .ok_or(ScopeError::MissingTarget)?;
                Scope::Target {
                    repo: RepoSlug::parse_as(repo, "target repo")?,
                    target: target.parse()?,
                }
            }
        };
        if include_archived {
            return Err(ScopeError::ArchivedScoped);
        }
        Ok(scope)
    }

    fn to_json(&self) -> Value {
        let mut out = Map::new();
        match self {
            Scope::All { .. } => {
                out.insert("kind".to_owned(), "all".into());
            }
            Scope::Target { repo, target } => {
                out.insert("kind".to_owned(), "target".into());
                out.insert("repo".to_owned(), repo.to_string().into());
                out.insert("target".to_owned(), target.as_str().into());
            }
            Scope::Batch { batch } => {
                out.insert("kind".to_owned(), "batch".into());
                out.insert("batch_id".to_owned(), batch.as_str().into());
            }
        }
        Value::Object(out)
    }
}

/// A status report: the JSON payload of `status --json` and its text rendering.
#[derive(Debug, Clone, PartialEq)]
pub struct StatusReport {
    /// The scope that was read.
    pub scope: Scope,
    /// Why sections are incomplete, by section name, in the order they were noted.
    pub section_notes: Vec<(&'static str, String)>,
    /// Projected claims, by path.
    pub claims: Vec<Record>,
    /// Projected heartbeats (by path unscoped; in read order when scoped).
    pub heartbeats: Vec<Record>,
    /// Projected batches, each with its projected lanes.
    pub batches: Vec<Record>,
    /// Projected events, sorted by `[at, path]`.
    pub events: Vec<Record>,
    /// Projected archive records, only for `--include-archived`.
    pub archive: Option<Vec<Record>>,
}

impl StatusReport {
    /// Returns the distinct section notes, in order: the payload's `degraded`.
    pub fn degraded(&self) -> Vec<&str> {
        let mut seen = HashSet::new();
        self.section_notes
            .iter()
            .map(|(_, note)| note.as_str())
            .filter(|note| seen.insert(*note))
            .collect()
    }

    /// Returns the note of `section`, if it has one.
    pub fn note(&self, section: &str) -> Option<&str> {
        self.section_notes
            .iter()
            .find(|(key, _)| *key == section)
            .map(|(_, note)| note.as_str())
    }

    /// Returns the JSON payload of `status --json`.
    pub fn to_json(&self, version: &str) -> Value {
        self.clone().into_json(version)
    }

    /// Returns the JSON payload of `status --json`, moving the rows instead of copying them.
    pub fn into_json(self, version: &str) -> Value {
        let rows = |rows: Vec<Record>| Value::Array(rows.into_iter().map(Value::Object).collect());
        let mut out = Map::new();
        out.insert("version".to_owned(), version.into());
        out.insert("scope".to_owned(), self.scope.to_json());
        let degraded = self.degraded().into_iter().map(Value::from).collect();
        out.insert("degraded".to_owned(), Value::Array(degraded));
        let notes = self
            .section_notes
            .into_iter()
            .map(|(key, note)| (key.to_owned(), Value::String(note)))
            .collect();
        out.insert("section_notes".to_owned(), Value::Object(notes));
        out.insert("claims".to_owned(), rows(self.claims));
        out.insert("heartbeats".to_owned(), rows(self.heartbeats));
        out.insert("batches".to_owned(), rows(self.batches));
        out.insert("events".to_owned(), rows(self.events));
        if let Some(archive) = self.archive {
            out.insert("archive".to_owned(), rows(archive));
        }
        Value::Object(out)
    }

    /// Returns the text rendering of `status`, one line per row, ending in a newline.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.section(&mut out, "claims", &self.claims, |out, c| {
            let f = |k| field(c, k);
            let _ = writeln!(
                out,
                "- {}#{} {} {} branch {} expires {}",
                f("repo"),
                f("target"),
                f("status"),
                f("agent_id"),
                f("branch"),
                f("expires_at")
            );
        });
        self.section(&mut out, "heartbeats", &self.heartbeats, |out, h| {
            let f = |k| field(h, k);
            let _ = writeln!(
                out,
                "- {} {} {} {} updated {}",
                f("agent_id"),
                f("status"),
                f("liveness"),
                f("target"),
                f("updated_at")
            );
        });
        self.section(&mut out, "batches", &self.batches, render_batch);
        self.section(&mut out, "events", &self.events, render_event);
        if let Some(archive) = &self.archive {
            out.push_str("archive\n");
            if archive.is_empty() {
                out.push_str("- none\n");
            }
            for row in archive {
                render_archive(&mut out, row);
            }
        }
        let degraded = self.degraded();
        if !degraded.is_empty() {
            out.push_str("degraded\n");
            for note in degraded {
                let _ = writeln!(out, "- {note}");
            }
        }
        out
    }

    fn section(
        &self,
        out: &mut String,
        name: &str,
        rows: &[Record],
        row: impl Fn(&mut String, &Record),
    ) {
        out.push_str(name);
        out.push('\n');
        if rows.is_empty() {
            let _ = writeln!(out, "- {}", self.note(name).unwrap_or("none"));
        }
        for r in rows {
            row(out, r);
        }
    }
}

/// Returns a row's field as text (absent: empty).
fn field<'a>(row: &'a Record, key: &str) -> Cow<'a, str> {
    row.get(key).map_or(Cow::Borrowed(""), to_text)
}

/// Returns a row's field as text, or `default` when absent.
fn field_or<'a>(row: &'a Record, key: &str, default: &'a str) -> Cow<'a, str> {
    row.get(key).map_or(Cow::Borrowed(default), to_text)
}

/// Renders a list field: non-empty items joined by `,`, or `-`.
fn list_text(row: &Record, key: &str) -> String {
    let items: Vec<Cow<'_, str>> = match row.get(key) {
        Some(Value::Array(items)) => items
            .iter()
            .map(to_text)
            .filter(|s| !s.is_empty())
            .collect(),
        Some(one) => Some(to_text(one))
            .filter(|s| !s.is_empty())
            .into_iter()
            .collect(),
        None => Vec::new(),
    };
    if items.is_empty() {
        "-".to_owned()
    } else {
        items.join(",")
    }
}

fn render_batch(out: &mut String, batch: &Record) {
    let _ = writeln!(out, "- {}", field(batch, "batch_id"));
    let lanes = match batch.get("lanes") {
        Some(Value::Array(lanes)) if !lanes.is_empty() => lanes,
        _ => {
            out.push_str("  - lanes -\n");
            return;
        }
    };
    for lane in lanes.iter().filter_map(Value::as_object) {
        let _ = writeln!(
            out,
            "  - lane {} owner {} targets {} status {} {} deps {} blocked_on {}",
            field(lane, "name"),
            field(lane, "owner"),
            list_text(lane, "targets"),
            field(lane, "status"),
            field(lane, "liveness"),
            list_text(lane, "deps"),
            list_text(lane, "blocked_on"),
        );
    }
}

fn render_event(out: &mut String, event: &Record) {
    let phase = event
        .get("phase")
        .or_else(|| event.get("status"))
        .map_or(Cow::Borrowed("-"), to_text);
    let _ = write!(
        out,
        "- {} {} {} {} by {} at {}",
        field(event, "batch_id"),
        field_or(event, "lane", "-"),
        field(event, "type"),
        phase,
        field_or(event, "agent_id", "-"),
        field(event, "at"),
    );
    let message = field(event, "message");
    if !message.is_empty() {
        let _ = write!(out, " {message}");
    }
    out.push('\n');
}

fn render_archive(out: &mut String, row: &Record) {
    let source = match row
        .get("source_path")
        .filter(|v| !matches!(v, Value::Bool(false)))
    {
        Some(path) => to_text(path).into_owned(),
        None => match row.get("source_paths") {
            Some(Value::Array(paths)) => paths.iter().map(to_text).collect::<Vec<_>>().join(","),
            Some(one) => to_text(one).into_owned(),
            None => String::new(),
        },
    };
    let _ = writeln!(
        out,
        "- {} {} source {source} delete_after {}",
        field(row, "path"),
        field(row, "record_family"),
        field(row, "delete_after"),
    );
}

/// Builds the status report for `scope` at `now`.
pub fn status(
    snap: &impl Snapshot,
    scope: &Scope,
    now: Instant,
) -> Result<StatusReport, ReadError> {
    match scope {
        Scope::All { include_archived } => all_scope(snap, *include_archived, now),
        Scope::Target { repo, target } => target_scope(snap, repo, target, now),
        Scope::Batch { batch } => batch_scope(snap, batch, now),
    }
}

fn report(scope: &Scope) -> StatusReport {
    StatusReport {
        scope: scope.clone(),
        section_notes: Vec::new(),
        claims: Vec::new(),
        heartbeats: Vec::new(),
        batches: Vec::new(),
        events: Vec::new(),
        archive: None,
    }
}

fn all_scope(
    snap: &impl Snapshot,
    include_archived: bool,
    now: Instant,
) -> Result<StatusReport, ReadError> {
    let mut out = report(&Scope::All { include_archived });
    let claims = snap.list("claims")?;
    let heartbeats = snap.list("heartbeats")?;
    let batches = snap.list("batches")?;
    let events = snap.list("events")?;
    let archive = if include_archived {
        Some(snap.list("archive")?)
    } else {
        None
    };

    // One heartbeat per agent id, as the payload names it; a later path wins a duplicate.
    let mut beats = HashMap::with_capacity(heartbeats.len());
    out.heartbeats.reserve(heartbeats.len());
    for (path, hb) in heartbeats {
        let liveness = liveness::of_record(&hb, now);
        let agent = hb
            .get("agent_id")
            .map_or_else(|| deps::file_stem(&path).into(), to_text);
        let status = deps::heartbeat_status(&hb).map(Cow::into_owned);
        beats.insert(agent.into_owned(), OwnerBeat::Found { status, liveness });
        out.heartbeats.push(heartbeat_row(path, hb, liveness));
    }
    let index = deps::index_lanes(&batches, &beats);
    if !index.malformed_names.is_empty() {
        out.section_notes.push((
            "lanes",
            format!("malformed lane names: {}", index.malformed_names.join(", ")),
        ));
    }
    out.claims = claims
        .into_iter()
        .map(|(path, c)| claim_row(path, c))
        .collect();
    out.batches = batches
        .into_iter()
        .map(|(path, b)| batch_row(path, b, &beats, &index.states))
        .collect();
    out.events = event_rows(events);
    out.archive = archive.map(|a| {
        a.into_iter()
            .map(|(path, r)| archive_row(path, r))
            .collect()
    });
    Ok(out)
}

fn target_scope(
    snap: &impl Snapshot,
    repo: &RepoSlug,
    target: &Target,
    now: Instant,
) -> Result<StatusReport, ReadError> {
    let mut out = report(&Scope::Target {
        repo: repo.clone(),
        target: target.clone(),
    });
    let path = paths::claim(repo, target);
    let claim = snap.read(&path)?;
    out.section_notes
        .push(("batches", "not checked in target scope".to_owned()));
    out.section_notes
        .push(("events", "not checked in target scope".to_owned()));
    let Some(claim) = claim else { return Ok(out) };
    let holder = claim
        .get("agent_id")
        .map_or(Cow::Borrowed(""), to_text)
        .into_owned();
    let (beat, found) = read_owner_beat(snap, &holder, now)?;
    let note = match (&beat, found) {
        (OwnerBeat::Found { liveness, .. }, Some((hb_path, hb))) => {
            out.heartbeats.push(heartbeat_row(hb_path, hb, *liveness));
            None
        }
        (OwnerBeat::Unreadable, _) => Some("holder heartbeat unreadable"),
        (OwnerBeat::Mismatched, _) => Some("holder heartbeat mismatched"),
        _ if holder.is_empty() => Some("claim holder not set"),
        _ => Some("holder heartbeat not found"),
    };
    if let Some(note) = note {
        out.section_notes.push(("heartbeats", note.to_owned()));
    }
    out.claims.push(claim_row(path, claim));
    Ok(out)
}

/// Lane-owner heartbeats read once each, in first-read order.
#[derive(Default)]
struct OwnerBeats {
    beats: HashMap<String, OwnerBeat>,
    order: Vec<String>,
    found: Vec<Record>,
}

impl OwnerBeats {
    /// Returns the status of `owner`'s heartbeat for the lane precedence, reading it once.
    fn status(
        &mut self,
        snap: &impl Snapshot,
        owner: &str,
        now: Instant,
    ) -> Result<Option<&str>, ReadError> {
        if !self.beats.contains_key(owner) {
            let (beat, found) = read_owner_beat(snap, owner, now)?;
            if let (OwnerBeat::Found { liveness, .. }, Some((path, hb))) = (&beat, found) {
                self.found.push(heartbeat_row(path, hb, *liveness));
            }
            self.order.push(owner.to_owned());
            self.beats.insert(owner.to_owned(), beat);
        }
        Ok(self.beats.get(owner).and_then(OwnerBeat::status))
    }

    /// Returns the `heartbeats` note: unreadable, mismatched and missing owners.
    fn note(&self) -> Option<String> {
        let owners = |want: &OwnerBeat| {
            let list: Vec<&str> = self
                .order
                .iter()
                .filter(|o| self.beats.get(*o) == Some(want))
                .map(String::as_str)
                .collect();
            (!list.is_empty()).then(|| list.join(", "))
        };
        let parts: Vec<String> = [
            ("unreadable", owners(&OwnerBeat::Unreadable)),
            ("mismatched", owners(&OwnerBeat::Mismatched)),
            ("not found", owners(&OwnerBeat::Missing)),
        ]
        .into_iter()
        .filter_map(|(what, list)| Some(format!("lane-owner heartbeats {what}: {}", list?)))
        .collect();
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// Reads an owner's heartbeat; an unknown, empty or unsafe id counts as missing, and only
/// a malformed record (not a store failure) degrades to unreadable.
///
/// A found heartbeat comes back with its path and record, for projection.
fn read_owner_beat(
    snap: &impl Snapshot,
    owner: &str,
    now: Instant,
) -> Result<(OwnerBeat, Option<(String, Record)>), ReadError> {
    if owner == deps::UNKNOWN {
        return Ok((OwnerBeat::Missing, None));
    }
    let Ok(agent) = owner.parse::<AgentId>() else {
        return Ok((OwnerBeat::Missing, None));
    };
    let path = paths::heartbeat(&agent);
    match snap.read(&path) {
        Ok(None) => Ok((OwnerBeat::Missing, None)),
        Ok(Some(hb)) => {
            if hb.get("agent_id").is_some_and(|id| to_text(id) != owner) {
                return Ok((OwnerBeat::Mismatched, None));
            }
            let status = deps::heartbeat_status(&hb).map(Cow::into_owned);
            let beat = OwnerBeat::Found {
                status,
                liveness: liveness::of_record(&hb, now),
            };
            Ok((beat, Some((path, hb))))
        }
        Err(ReadError::Malformed { .. }) => Ok((OwnerBeat::Unreadable, None)),
        Err(e) => Err(e),
    }
}

fn batch_scope(
    snap: &impl Snapshot,
    batch: &BatchId,
    now: Instant,
) -> Result<StatusReport, ReadError> {
    let mut out = report(&Scope::Batch {
        batch: batch.clone(),
    });
    out.section_notes
        .push(("claims", "not checked in batch scope".to_owned()));
    let path = paths::batch(batch);
    let manifest = snap.read(&path)?;
    let events = snap.list(&paths::events_dir(batch))?;
    out.events = event_rows(events);
    let Some(manifest) = manifest else {
        out.section_notes
            .push(("batches", "batch not found".to_owned()));
        return Ok(out);
    };

    let empty = Record::new();
    let mut owners = OwnerBeats::default();
    let mut states = HashMap::new();
    let mut malformed_names = Vec::new();
    let batch_id = deps::batch_id_of(&path, &manifest).into_owned();
    for lane in deps::lanes_of(&manifest) {
        let lane = lane.as_object().unwrap_or(&empty);
        let name = deps::lane_name(lane);
        if deps::is_malformed_lane_name(&name) {
            malformed_names.push(name.into_owned());
            continue;
        }
        let status = deps::lane_status(lane, owners.status(snap, &deps::lane_owner(lane), now)?);
        states.insert(format!("{batch_id}:{name}"), status);
    }

    let mut seen = HashSet::new();
    let refs: Vec<String> = deps::lanes_of(&manifest)
        .iter()
        .flat_map(|lane| deps::lane_deps(lane.as_object().unwrap_or(&empty)))
        .filter(|dep| seen.insert(dep.clone()))
        .collect();
    let mut dep_batches: HashMap<String, Option<Record>> = HashMap::new();
    let (mut malformed, mut unresolved) = (Vec::new(), Vec::new());
    for dep in refs {
        if states.contains_key(&dep) {
            continue;
        }
        let Some((dep_batch, dep_lane)) = deps::parse_dep_ref(&dep) else {
            malformed.push(dep);
            continue;
        };
        let Ok(dep_id) = dep_batch.parse::<BatchId>() else {
            malformed.push(dep);
            continue;
        };
        if !dep_batches.contains_key(&dep_batch) {
            let read = snap.read(&paths::batch(&dep_id))?;
            dep_batches.insert(dep_batch.clone(), read);
        }
        let Some(Some(dep_manifest)) = dep_batches.get(&dep_batch) else {
            unresolved.push(dep);
            continue;
        };
        let found = deps::lanes_of(dep_manifest)
            .iter()
            .map(|l| l.as_object().unwrap_or(&empty))
            .find(|l| {
                let name = deps::lane_name(l);
                !deps::is_malformed_lane_name(&name) && name == dep_lane
            });
        let Some(lane) = found else {
            malformed.push(dep);
            continue;
        };
        let status = deps::lane_status(lane, owners.status(snap, &deps::lane_owner(lane), now)?);
        states.insert(dep, status);
    }

    let notes = [
        ("heartbeats", owners.note()),
        ("lanes", list_note("malformed lane names", &malformed_names)),
        (
            "dependencies",
            list_note("malformed dependency refs", &malformed),
        ),
        (
            "unresolved_dependencies",
            list_note("unresolved dependency refs", &unresolved),
        ),
    ];
    out.section_notes.extend(
        notes
            .into_iter()
            .filter_map(|(key, note)| Some((key, note?))),
    );
    out.heartbeats = owners.found;
    out.batches
        .push(batch_row(path, manifest, &owners.beats, &states));
    Ok(out)
}

fn list_note(what: &str, items: &[String]) -> Option<String> {
    (!items.is_empty()).then(|| format!("{what}: {}", items.join(", ")))
}

/// Returns `r[key]` moved out, or `default` when absent (Ruby's `fetch` with a default).
fn take(r: &mut Record, key: &str, default: impl FnOnce() -> Value) -> Value {
    r.remove(key).unwrap_or_else(default)
}

fn claim_row(path: String, mut c: Record) -> Record {
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

fn heartbeat_row(path: String, mut h: Record, liveness: liveness::Liveness) -> Record {
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

fn batch_row(
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
fn at_text(e: &Record) -> Cow<'_, str> {
    e.get("at").map_or(Cow::Borrowed(""), to_text)
}

/// Projects events sorted by `[at, path]`.
fn event_rows(mut events: Vec<(String, Record)>) -> Vec<Record> {
    events.sort_by(|(pa, a), (pb, b)| at_text(a).cmp(&at_text(b)).then_with(|| pa.cmp(pb)));
    events
        .into_iter()
        .map(|(path, mut e)| {
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
            row
        })
        .collect()
}

fn archive_row(path: String, mut a: Record) -> Record {
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

#[cfg(test)]
mod tests {
    use chrono::Duration;
    use serde_json::json;

    use super::*;
    use crate::snapshot::MemorySnapshot;
    use crate::time;

    fn now() -> Instant {
        time::parse("2026-06-20T12:00:00Z").unwrap()
    }

    fn at(mins: i64) -> String {
        time::format(now() + Duration::minutes(mins))
    }

    /// A heartbeat for `agent` with `status`, live unless the times say otherwise.
    fn beat(agent: &str, status: &str) -> Value {
        json!({"schema_version": 1, "agent_id": agent, "status": status,
            "updated_at": at(-5), "expires_at": at(10)})
    }

    fn run(snap: &MemorySnapshot, scope: &Scope) -> Value {
        status(snap, scope, now()).unwrap().to_json("0.1.0")
    }

    fn target_scope_of(target: &str) -> Scope {
        Scope::from_flags(Some("acme/app"), Some(target), None, false).unwrap()
    }

    fn batch_scope_of(batch: &str) -> Scope {
        Scope::Batch {
            batch: batch.parse().unwrap(),
        }
    }

    fn lane<'a>(payload: &'a Value, name: &str) -> &'a Value {
        let lanes = payload["batches"][0]["lanes"].as_array().unwrap();
        lanes.iter().find(|l| l["name"] == name).unwrap()
    }

    #[test]
    fn unscoped_projects_each_family() {
        let mut snap = MemorySnapshot::default();
        snap.put(
            "claims/acme/app/7.json",
            &json!({"schema_version": 1, "repo": "acme/app", "target": "7", "agent_id": "w1",
                "batch_id": "b1", "status": "active", "claimed_at": at(-30), "updated_at": at(-30),
                "expires_at": at(60), "host": "codex", "released_by": "x", "pr_url": null,
                "machine_id": "m1", "generation": 2}),
        );
        snap.put("claims/acme/app/8.json", &json!({"agent_id": "w2"}));
        snap.put(
            "heartbeats/w1.json",
            &json!({"schema_version": 1, "agent_id": "w1", "repo": "acme/app", "target": "7",
                "batch_id": "b1", "status": "done", "status_raw": "completed",
                "updated_at": at(-5), "expires_at": at(10), "phase": "review"}),
        );
        snap.put(
            "heartbeats/w2.json",
            &json!({"status": "blocked", "updated_at": at(-20),
            "expires_at": at(-5)}),
        );
        snap.put(
            "batches/b1.json",
            &json!({"schema_version": 1, "batch_id": "b1", "repo": "acme/app", "objective": "ship",
            "registered_at": at(-60), "custom": true, "lanes": [
                {"name": "api", "owner": "w1", "targets": ["7"], "branch": "api-br"},
                {"name": "docs", "owner": "w2", "targets": [8], "depends_on": ["b1:api", "b0:x"]},
                {"name": "qa", "owner": "w3", "status": "in_progress", "depends_on": "b1:docs"}
            ]}),
        );
        snap.put(
            "events/b1/e1.json",
            &json!({"schema_version": 1, "event_id": "e1", "batch_id": "b1", "type": "phase",
                "lane": "api", "agent_id": "w1", "phase": "validating", "message": "running tests",
                "at": at(-3), "custom": 1}),
        );
        let payload = run(
            &snap,
            &Scope::All {
                include_archived: false,
            },
        );
        assert_eq!(payload["version"], "0.1.0");
        assert_eq!(payload["scope"], json!({"kind": "all"}));
        assert_eq!(payload["degraded"], json!([]));
        assert_eq!(payload["section_notes"], json!({}));
        assert!(payload.get("archive").is_none());
        assert_eq!(
            payload["claims"],
            json!([
                {"path": "claims/acme/app/7.json", "repo": "acme/app", "target": "7", "status": "active",
                 "agent_id": "w1", "branch": "UNKNOWN", "expires_at": at(60), "batch_id": "b1",
                 "host": "codex", "machine_id": "m1", "generation": 2},
                {"path": "claims/acme/app/8.json", "repo": "acme/app", "target": "8", "status": "unknown",
                 "agent_id": "w2", "branch": "UNKNOWN", "expires_at": "UNKNOWN"}
            ])
        );
        assert_eq!(
            payload["heartbeats"],
            json!([
                {"path": "heartbeats/w1.json", "agent_id": "w1", "status": "done", "liveness": "live",
                 "target": "acme/app#7", "updated_at": at(-5), "batch_id": "b1", "phase": "review",
                 "status_raw": "completed"},
                {"path": "heartbeats/w2.json", "agent_id": "w2", "status": "blocked", "liveness": "stale",
                 "target": "-", "updated_at": at(-20)}
            ])
        );
        assert_eq!(
            payload["batches"],
            json!([{"path": "batches/b1.json", "batch_id": "b1", "lanes": [
                {"name": "api", "owner": "w1", "targets": ["7"], "status": "done", "liveness": "live",
                 "deps": [], "blocked_on": [], "branch": "api-br"},
                {"name": "docs", "owner": "w2", "targets": ["8"], "status": "blocked", "liveness": "stale",
                 "deps": ["b1:api", "b0:x"], "blocked_on": ["b0:x"]},
                {"name": "qa", "owner": "w3", "targets": [], "status": "in_progress",
                 "liveness": "no-heartbeat", "deps": ["b1:docs"], "blocked_on": ["b1:docs"]}
            ], "repo": "acme/app", "objective": "ship", "registered_at": at(-60)}])
        );
        assert_eq!(
            payload["events"],
            json!([{"path": "events/b1/e1.json", "batch_id": "b1", "type": "phase", "at": at(-3),
                "event_id": "e1", "lane": "api", "agent_id": "w1", "message": "running tests",
                "phase": "validating"}])
        );
    }

    #[test]
    fn unscoped_events_sort_by_at_then_path() {
        let mut snap = MemorySnapshot::default();
        snap.put("events/b2/a.json", &json!({"type": "x", "at": at(2)}));
        snap.put("events/b1/z.json", &json!({"type": "x", "at": at(1)}));
        snap.put("events/b1/y.json", &json!({"type": "x", "at": at(1)}));
        snap.put("events/b3/n.json", &json!({"type": "x"}));
        snap.put("events/b0/m.json", &json!({"type": "x", "at": at(3)}));
        let payload = run(
            &snap,
            &Scope::All {
                include_archived: false,
            },
        );
        let paths: Vec<&str> = payload["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["path"].as_str().unwrap())
            .collect();
        assert_eq!(
            paths,
            [
                "events/b3/n.json",
                "events/b1/y.json",
                "events/b1/z.json",
                "events/b2/a.json",
                "events/b0/m.json"
            ]
        );
        assert_eq!(payload["events"][0]["at"], "UNKNOWN");
        assert_eq!(
            payload["events"][0]["batch_id"], "b3",
            "batch id falls back to the folder"
        );
    }

    #[test]
    fn unscoped_notes_malformed_lane_names_and_lists_archive() {
        let mut snap = MemorySnapshot::default();
        snap.put(
            "batches/b.json",
            &json!({"lanes": [{"name": "feature:login"}, {"name": "ok"}]}),
        );
        snap.put(
            "archive/claims/acme/app/1.json",
            &json!({"schema_version": 1, "record_family": "archived_record",
            "source_path": "claims/acme/app/1.json", "reason": "terminal_claim", "synthetic": false,
            "archived_at": at(0), "delete_after": at(60), "data": {}}),
        );
        snap.put(
            "archive/events/b/compact-1.json",
            &json!({"record_family": "compacted_events",
            "source_paths": ["events/b/1.json", "events/b/2.json"], "reason": null}),
        );
        let report = status(
            &snap,
            &Scope::All {
                include_archived: true,
            },
            now(),
        )
        .unwrap();
        let payload = report.to_json("v");
        assert_eq!(
            payload["degraded"],
            json!(["malformed lane names: feature:login"])
        );
        assert_eq!(
            payload["section_notes"],
            json!({"lanes": "malformed lane names: feature:login"})
        );
        assert_eq!(
            payload["archive"],
            json!([
                {"path": "archive/claims/acme/app/1.json", "record_family": "archived_record",
                 "source_path": "claims/acme/app/1.json", "reason": "terminal_claim", "synthetic": false,
                 "archived_at": at(0), "delete_after": at(60)},
                {"path": "archive/events/b/compact-1.json", "record_family": "compacted_events",
                 "source_paths": ["events/b/1.json", "events/b/2.json"], "synthetic": false,
                 "archived_at": "UNKNOWN", "delete_after": "UNKNOWN"}
            ])
        );
        let text = report.to_text();
        assert!(text.contains("archive\n- archive/claims/acme/app/1.json archived_record source claims/acme/app/1.json delete_after "), "{text}");
        assert!(
            text.contains(
                "compacted_events source events/b/1.json,events/b/2.json delete_after UNKNOWN\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn unscoped_fails_on_any_malformed_record() {
        for path in [
            "claims/acme/app/7.json",
            "heartbeats/w1.json",
            "batches/b.json",
            "events/b/e.json",
        ] {
            let mut snap = MemorySnapshot::default();
            snap.put("claims/acme/app/1.json", &json!({"agent_id": "w"}));
            snap.put_raw(path, b"{");
            let err = status(
                &snap,
                &Scope::All {
                    include_archived: false,
                },
                now(),
            )
            .unwrap_err();
            assert!(
                matches!(&err, ReadError::Malformed { path: p, .. } if p == path),
                "{path}: {err:?}"
            );
        }
    }

    #[test]
    fn target_scope_notes() {
        let claim = |agent: Value| {
            json!({"repo": "acme/app", "target": "7", "agent_id": agent, "status": "active",
            "branch": "b-7", "expires_at": at(60)})
        };
        // (claim holder, heartbeat file for w1, expected heartbeats note, heartbeat rows)
        type Case = (
            Option<Value>,
            Option<&'static [u8]>,
            Option<&'static str>,
            usize,
        );
        let cases: [Case; 8] = [
            (
                Some(json!("w1")),
                Some(br#"{"agent_id":"w1","status":"in_progress"}"#),
                None,
                1,
            ),
            (
                Some(json!("w1")),
                None,
                Some("holder heartbeat not found"),
                0,
            ),
            (
                Some(json!("w1")),
                Some(b"{"),
                Some("holder heartbeat unreadable"),
                0,
            ),
            (
                Some(json!("w1")),
                Some(br#"{"agent_id":"w9","status":"done"}"#),
                Some("holder heartbeat mismatched"),
                0,
            ),
            (Some(json!(null)), None, Some("claim holder not set"), 0),
            (
                Some(json!("bad/agent")),
                None,
                Some("holder heartbeat not found"),
                0,
            ),
            (
                Some(json!("bad..agent")),
                None,
                Some("holder heartbeat not found"),
                0,
            ),
            (None, Some(br#"{"agent_id":"w1"}"#), None, 0),
        ];
        for (holder, hb, note, rows) in cases {
            let mut snap = MemorySnapshot::default();
            if let Some(holder) = &holder {
                snap.put("claims/acme/app/7.json", &claim(holder.clone()));
            }
            if let Some(bytes) = hb {
                snap.put_raw("heartbeats/w1.json", bytes);
            }
            let payload = run(&snap, &target_scope_of("7"));
            let ctx = format!("{holder:?}");
            assert_eq!(
                payload["scope"],
                json!({"kind": "target", "repo": "acme/app", "target": "7"}),
                "{ctx}"
            );
            assert_eq!(
                payload["section_notes"]["heartbeats"].as_str(),
                note,
                "{ctx}"
            );
            assert_eq!(
                payload["heartbeats"].as_array().unwrap().len(),
                rows,
                "{ctx}"
            );
            let mut degraded = vec!["not checked in target scope"];
            degraded.extend(note);
            assert_eq!(payload["degraded"], json!(degraded), "{ctx}");
            assert_eq!(payload["batches"], json!([]), "{ctx}");
            assert_eq!(payload["events"], json!([]), "{ctx}");
            assert_eq!(
                payload["claims"].as_array().unwrap().len(),
                usize::from(holder.is_some()),
                "{ctx}"
            );
        }
    }

    #[test]
    fn target_scope_fails_on_malformed_claim() {
        let mut snap = MemorySnapshot::default();
        snap.put_raw("claims/acme/app/7.json", b"[]");
        let err = status(&snap, &target_scope_of("7"), now()).unwrap_err();
        assert!(matches!(err, ReadError::Malformed { .. }), "{err:?}");
    }

    #[test]
    fn batch_scope_reports_a_missing_batch() {
        let mut snap = MemorySnapshot::default();
        snap.put(
            "events/missing/e.json",
            &json!({"type": "note", "at": at(0)}),
        );
        let payload = run(&snap, &batch_scope_of("missing"));
        assert_eq!(
            payload["scope"],
            json!({"kind": "batch", "batch_id": "missing"})
        );
        assert_eq!(
            payload["section_notes"],
            json!({"claims": "not checked in batch scope", "batches": "batch not found"})
        );
        assert_eq!(payload["batches"], json!([]));
        assert_eq!(
            payload["events"].as_array().unwrap().len(),
            1,
            "events are listed even without a manifest"
        );
    }

    #[test]
    fn batch_scope_notes_lane_owner_heartbeats() {
        let mut snap = MemorySnapshot::default();
        snap.put("batches/b.json", &json!({"batch_id": "b", "lanes": [
            {"name": "a", "owner": "w-bad"}, {"name": "b", "owner": "w-gone"}, {"name": "c", "owner": "w-other"},
            {"name": "d"}, {"name": "e", "owner": ""}, "stray", {"name": "f", "owner": "w-ok"},
            {"name": "g", "owner": "w-bad2"}, {"name": "h", "owner": "bad/id"}
        ]}));
        snap.put_raw("heartbeats/w-bad.json", b"{");
        snap.put_raw("heartbeats/w-bad2.json", b"7");
        snap.put("heartbeats/w-other.json", &beat("someone-else", "done"));
        snap.put("heartbeats/w-ok.json", &beat("w-ok", "in_progress"));
        snap.put("heartbeats/bad/id.json", &beat("bad/id", "done"));
        let payload = run(&snap, &batch_scope_of("b"));
        assert_eq!(
            payload["section_notes"]["heartbeats"],
            "lane-owner heartbeats unreadable: w-bad, w-bad2; lane-owner heartbeats mismatched: w-other; \
             lane-owner heartbeats not found: w-gone, UNKNOWN, bad/id"
        );
        let liveness: Vec<&str> = payload["batches"][0]["lanes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["liveness"].as_str().unwrap())
            .collect();
        assert_eq!(
            liveness,
            [
                "unreadable",
                "no-heartbeat",
                "mismatched",
                "no-heartbeat",
                "no-heartbeat",
                "no-heartbeat",
                "live",
                "unreadable",
                "no-heartbeat"
            ]
        );
        assert_eq!(payload["heartbeats"].as_array().unwrap().len(), 1);
        assert_eq!(payload["heartbeats"][0]["agent_id"], "w-ok");
        assert_eq!(lane(&payload, "f")["status"], "in_progress");
        assert_eq!(lane(&payload, UNKNOWN_NAME)["owner"], "UNKNOWN");
    }

    const UNKNOWN_NAME: &str = "UNKNOWN";

    #[test]
    fn batch_scope_notes_malformed_lanes_and_dependencies() {
        let mut snap = MemorySnapshot::default();
        snap.put("batches/b.json", &json!({"batch_id": "b", "lanes": [
            {"name": "feature:login", "owner": "w9"},
            {"name": "docs", "owner": "w1", "depends_on": ["backend", "bad/batch:x", "bad..batch:x",
                "a:missing", "gone:api", "a:api", "gone:other", "b:feature:login"]}
        ]}));
        snap.put(
            "batches/a.json",
            &json!({"lanes": [{"name": "api", "owner": "w2", "status": "done"}]}),
        );
        snap.put("heartbeats/w1.json", &beat("w1", "blocked"));
        snap.put("heartbeats/w9.json", &beat("w9", "done"));
        let payload = run(&snap, &batch_scope_of("b"));
        let notes = &payload["section_notes"];
        assert_eq!(notes["lanes"], "malformed lane names: feature:login");
        assert_eq!(
            notes["dependencies"],
            "malformed dependency refs: backend, bad/batch:x, bad..batch:x, a:missing"
        );
        assert_eq!(
            notes["unresolved_dependencies"],
            "unresolved dependency refs: gone:api, gone:other, b:feature:login",
            "split at the last ':', so b:feature:login names batch b:feature"
        );
        assert_eq!(notes["heartbeats"], "lane-owner heartbeats not found: w2");
        let docs = lane(&payload, "docs");
        assert_eq!(
            docs["blocked_on"],
            json!([
                "backend",
                "bad/batch:x",
                "bad..batch:x",
                "a:missing",
                "gone:api",
                "gone:other",
                "b:feature:login"
            ]),
            "a:api is done through its manifest status"
        );
        assert_eq!(
            lane(&payload, "feature:login")["liveness"],
            "no-heartbeat",
            "a malformed lane reads no heartbeat"
        );
    }

    #[test]
    fn batch_scope_blocked_on_follows_dependency_status() {
        // (dependency heartbeat status, dependency lane terminal, blocked)
        let cases = [
            ("done", None, false),
            ("completed", None, false),
            ("ready_gates_clean", None, false),
            ("in_progress", None, true),
            ("abandoned", None, true),
            ("superseded", None, true),
            ("released", None, true),
            ("in_progress", Some("done"), false),
            ("done", Some("abandoned"), true),
        ];
        for (hb_status, terminal, blocked) in cases {
            let mut snap = MemorySnapshot::default();
            let mut dep_lane = json!({"name": "backend", "owner": "w-dep"});
            if let Some(t) = terminal {
                dep_lane["terminal"] = json!(t);
            }
            snap.put(
                "batches/batch:a.json",
                &json!({"batch_id": "batch:a", "lanes": [dep_lane]}),
            );
            snap.put("batches/b.json", &json!({"batch_id": "b", "lanes": [
                {"name": "docs", "owner": "w-docs", "targets": ["1"], "depends_on": ["batch:a:backend"]}]}));
            snap.put("heartbeats/w-docs.json", &beat("w-docs", "blocked"));
            snap.put("heartbeats/w-dep.json", &beat("w-dep", hb_status));
            let payload = run(&snap, &batch_scope_of("b"));
            let want = if blocked {
                json!(["batch:a:backend"])
            } else {
                json!([])
            };
            assert_eq!(
                lane(&payload, "docs")["blocked_on"],
                want,
                "{hb_status} {terminal:?}"
            );
            assert_eq!(lane(&payload, "docs")["status"], "blocked");
            assert_eq!(
                payload["degraded"],
                json!(["not checked in batch scope"]),
                "{hb_status}"
            );
            let agents: Vec<&str> = payload["heartbeats"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| h["agent_id"].as_str().unwrap())
                .collect();
            assert_eq!(
                agents,
                ["w-docs", "w-dep"],
                "own owners first, then dependency owners"
            );
        }
    }

    #[test]
    fn batch_scope_lane_status_precedence() {
        let mut snap = MemorySnapshot::default();
        snap.put(
            "batches/b.json",
            &json!({"lanes": [
                {"name": "t", "owner": "w1", "terminal": "superseded", "status": "done"},
                {"name": "h", "owner": "w1", "status": "done"},
                {"name": "s", "owner": "w-none", "status": "merged"},
                {"name": "u", "owner": "w-none"}
            ]}),
        );
        snap.put(
            "heartbeats/w1.json",
            &beat("w1", "waiting_on_checks_or_review"),
        );
        let payload = run(&snap, &batch_scope_of("b"));
        for (name, want) in [
            ("t", "superseded"),
            ("h", "waiting_on_checks_or_review"),
            ("s", "merged"),
            ("u", "unknown"),
        ] {
            assert_eq!(lane(&payload, name)["status"], want, "{name}");
        }
        assert_eq!(
            payload["batches"][0]["batch_id"], "b",
            "batch id falls back to the file name"
        );
    }

    #[test]
    fn batch_scope_fails_on_malformed_manifests_but_not_heartbeats() {
        let mut snap = MemorySnapshot::default();
        snap.put_raw("batches/b.json", b"{");
        assert!(matches!(
            status(&snap, &batch_scope_of("b"), now()),
            Err(ReadError::Malformed { .. })
        ));

        let mut snap = MemorySnapshot::default();
        snap.put(
            "batches/b.json",
            &json!({"lanes": [{"name": "x", "depends_on": "a:y"}]}),
        );
        snap.put_raw("batches/a.json", b"nope");
        let err = status(&snap, &batch_scope_of("b"), now()).unwrap_err();
        assert!(
            matches!(&err, ReadError::Malformed { path, .. } if path == "batches/a.json"),
            "{err:?}"
        );
    }

    /// A snapshot whose store fails on one path.
    struct FailingAt(MemorySnapshot, &'static str);

    impl Snapshot for FailingAt {
        fn read(&self, path: &str) -> Result<Option<Record>, ReadError> {
            if path == self.1 {
                return Err(ReadError::Store("disk on fire".to_owned()));
            }
            self.0.read(path)
        }
        fn list(&self, prefix: &str) -> Result<Vec<(String, Record)>, ReadError> {
            self.0.list(prefix)
        }
    }

    #[test]
    fn store_failures_on_owner_heartbeats_propagate() {
        let mut snap = MemorySnapshot::default();
        snap.put("claims/acme/app/7.json", &json!({"agent_id": "w1"}));
        snap.put(
            "batches/b.json",
            &json!({"lanes": [{"name": "x", "owner": "w1"}]}),
        );
        let snap = FailingAt(snap, "heartbeats/w1.json");
        for scope in [target_scope_of("7"), batch_scope_of("b")] {
            assert_eq!(
                status(&snap, &scope, now()).unwrap_err(),
                ReadError::Store("disk on fire".to_owned())
            );
        }
    }

    #[test]
    fn text_rendering() {
        let mut snap = MemorySnapshot::default();
        snap.put("batches/b.json", &json!({"batch_id": "b", "lanes": [
            {"name": "docs", "owner": "w-docs", "targets": ["3972", ""], "depends_on": ["b:api"]},
            {"name": "api", "owner": "w-api", "targets": []}
        ]}));
        snap.put(
            "batches/empty.json",
            &json!({"batch_id": "empty", "lanes": []}),
        );
        snap.put(
            "heartbeats/w-docs.json",
            &json!({"agent_id": "w-docs", "status": "done", "repo": "acme/app",
            "target": "3972", "updated_at": at(-1), "expires_at": at(10)}),
        );
        snap.put(
            "events/b/1.json",
            &json!({"batch_id": "b", "type": "phase", "lane": "docs", "phase": "review",
            "agent_id": "w-docs", "message": "looking good", "at": at(-2)}),
        );
        snap.put(
            "events/b/2.json",
            &json!({"batch_id": "b", "type": "note", "status": "blocked", "at": at(-1)}),
        );
        snap.put(
            "events/b/3.json",
            &json!({"batch_id": "b", "type": "ping", "message": "", "at": at(0)}),
        );
        let report = status(&snap, &batch_scope_of("b"), now()).unwrap();
        insta::assert_snapshot!(report.to_text(), @r"
        claims
        - not checked in batch scope
        heartbeats
        - w-docs done live acme/app#3972 updated 2026-06-20T11:59:00Z
        batches
        - b
          - lane docs owner w-docs targets 3972 status done live deps b:api blocked_on b:api
          - lane api owner w-api targets - status unknown no-heartbeat deps - blocked_on -
        events
        - b docs phase review by w-docs at 2026-06-20T11:58:00Z looking good
        - b - note blocked by - at 2026-06-20T11:59:00Z
        - b - ping - by - at 2026-06-20T12:00:00Z
        degraded
        - not checked in batch scope
        - lane-owner heartbeats not found: w-api
        ");

        let mut snap = MemorySnapshot::default();
        snap.put(
            "claims/acme/app/7.json",
            &json!({"repo": "acme/app", "target": "7", "agent_id": "w1",
            "status": "active", "branch": "w1/7", "expires_at": at(60)}),
        );
        snap.put(
            "batches/empty.json",
            &json!({"batch_id": "empty", "lanes": []}),
        );
        let report = status(
            &snap,
            &Scope::All {
                include_archived: false,
            },
            now(),
        )
        .unwrap();
        insta::assert_snapshot!(report.to_text(), @r"
        claims
        - acme/app#7 active w1 branch w1/7 expires 2026-06-20T13:00:00Z
        heartbeats
        - none
        batches
        - empty
          - lanes -
        events
        - none
        ");
    }

    #[test]
    fn json_payload_key_order() {
        let payload = run(&MemorySnapshot::default(), &target_scope_of("7"));
        let keys: Vec<&String> = payload.as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            [
                "version",
                "scope",
                "degraded",
                "section_notes",
                "claims",
                "heartbeats",
                "batches",
                "events"
            ]
        );
        let report = status(
            &MemorySnapshot::default(),
            &Scope::All {
                include_archived: true,
            },
            now(),
        )
        .unwrap();
        assert_eq!(report.clone().into_json("v"), report.to_json("v"));
        assert_eq!(report.to_json("v")["archive"], json!([]));
        assert_eq!(
            report.to_text().lines().skip(8).collect::<Vec<_>>(),
            ["archive", "- none"]
        );
    }

    #[test]
    fn scope_from_flags() {
        type Flag = Option<&'static str>;
        type Case = (Flag, Flag, Flag, bool, Result<&'static str, &'static str>);
        let cases: [Case; 11] = [
            (None, None, None, true, Ok("all")),
            (Some("acme/app"), Some("7"), None, false, Ok("target")),
            (None, None, Some("batch:1"), false, Ok("batch")),
            (
                Some("acme/app"),
                None,
                Some("b"),
                false,
                Err("--batch-id cannot be combined with --repo or --target"),
            ),
            (
                None,
                Some("7"),
                Some("b"),
                false,
                Err("--batch-id cannot be combined with --repo or --target"),
            ),
            (
                Some("acme/app"),
                None,
                None,
                false,
                Err("missing required --target"),
            ),
            (None, Some("7"), None, false, Err("missing required --repo")),
            (
                Some(""),
                Some("7"),
                None,
                false,
                Err("missing required --repo"),
            ),
            (
                Some("acme/."),
                Some("7"),
                None,
                false,
                Err("invalid target repo: acme/."),
            ),
            (None, None, Some("a/b"), false, Err("invalid batch-id: a/b")),
            (
                None,
                None,
                Some("b"),
                true,
                Err("--include-archived is only valid for unscoped status"),
            ),
        ];
        for (repo, target, batch, archived, want) in cases {
            let got = Scope::from_flags(repo, target, batch, archived);
            let got = got.map(|s| match s {
                Scope::All { .. } => "all",
                Scope::Target { .. } => "target",
                Scope::Batch { .. } => "batch",
            });
            assert_eq!(
                got.map_err(|e| e.to_string()),
                want.map_err(str::to_owned),
                "{repo:?} {target:?} {batch:?}"
            );
        }
    }

    #[test]
    fn unscoped_read_scales_linearly() {
        let mut snap = MemorySnapshot::default();
        for i in 0..2_000 {
            snap.put(
                &format!("heartbeats/w{i}.json"),
                &beat(&format!("w{i}"), "in_progress"),
            );
            snap.put(
                &format!("claims/acme/app/{i}.json"),
                &json!({"agent_id": format!("w{i}")}),
            );
        }
        for b in 0..500 {
            let lanes: Vec<Value> = (0..4)
                .map(|l| {
                    json!({"name": format!("l{l}"), "owner": format!("w{}", b * 4 + l),
                    "depends_on": [format!("b{}:l{l}", b.max(1) - 1)]})
                })
                .collect();
            snap.put(
                &format!("batches/b{b}.json"),
                &json!({"batch_id": format!("b{b}"), "lanes": lanes}),
            );
            for e in 0..20 {
                snap.put(
                    &format!("events/b{b}/{e}.json"),
                    &json!({"type": "phase", "at": at(-e)}),
                );
            }
        }
        let started = std::time::Instant::now();
        let report = status(
            &snap,
            &Scope::All {
                include_archived: false,
            },
            now(),
        )
        .unwrap();
        let elapsed = started.elapsed();
        assert_eq!(
            (
                report.claims.len(),
                report.heartbeats.len(),
                report.batches.len(),
                report.events.len()
            ),
            (2_000, 2_000, 500, 10_000)
        );
        assert_eq!(
            report.batches[1]["lanes"][0]["blocked_on"],
            json!(["b0:l0"])
        );
        // Generous even for a debug build; a quadratic lookup would take far longer.
        assert!(elapsed < std::time::Duration::from_secs(5), "{elapsed:?}");
        eprintln!("unscoped status over 14,500 records: {elapsed:?}");
    }
}
