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

use crate::ids::paths;
use crate::ids::AgentId;
use crate::ids::BatchId;
use crate::ids::IdError;
use crate::ids::RepoSlug;
use crate::ids::Target;
use crate::record::field as f;
use crate::record::Record;
use crate::rules::deps;
use crate::rules::deps::to_text;
use crate::rules::deps::OwnerBeat;
use crate::rules::liveness;
use crate::snapshot::ReadError;
use crate::snapshot::Snapshot;
use crate::time::Instant;

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
}

/// A status report: what [`StatusDocument`](crate::output::status::StatusDocument) prints
/// as `status --json`, and its text rendering.
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

/// One piece of a streamed unscoped status report, in output order; `R` is a projected
/// row as the consumer rendered it (a [`Record`] when collecting, bytes when printing).
#[derive(Debug, Clone, PartialEq)]
pub enum Part<R> {
    /// Everything before the rows: the scope and the section notes (its row lists are empty).
    Head(StatusReport),
    /// One row of a section (`claims`, `heartbeats`, `batches`, `archive`), in order.
    Row(&'static str, R),
    /// One event with its `[at, path]` order key; events arrive in path order and the
    /// consumer sorts them by the key.
    Event((String, String), R),
}

/// Streams the unscoped status report to `sink` without holding every record at once.
///
/// Claims, events and archives are projected and passed through `render` as they are
/// read, on the snapshot's worker threads where it has them; `sink` receives them in order.
pub fn stream_all<R: Send>(
    snap: &impl Snapshot,
    include_archived: bool,
    now: Instant,
    render: &(dyn Fn(Record) -> R + Sync),
    sink: &mut dyn FnMut(Part<R>),
) -> Result<(), ReadError> {
    let mut head = report(&Scope::All { include_archived });
    // Heartbeats come first: lanes need their owners' liveness.
    let mut beats = HashMap::new();
    let mut heartbeat_rows = Vec::new();
    snap.for_each("heartbeats", &mut |path, hb| {
        let liveness = liveness::of_record(&hb, now);
        let agent = f::AGENT_ID
            .get(&hb)
            .map_or_else(|| deps::file_stem(&path).into(), to_text)
            .into_owned();
        let status = deps::heartbeat_status(&hb).map(Cow::into_owned);
        // One heartbeat per agent id, as the payload names it; a later path wins a duplicate.
        beats.insert(agent, OwnerBeat::Found { status, liveness });
        heartbeat_rows.push(heartbeat_row(path, hb, liveness));
    })?;
    let batches = snap.list("batches")?;
    let index = deps::index_lanes(&batches, &beats);
    if !index.malformed_names.is_empty() {
        head.section_notes.push((
            "lanes",
            format!("malformed lane names: {}", index.malformed_names.join(", ")),
        ));
    }
    sink(Part::Head(head));
    snap.for_each_map(
        "claims",
        &|path, c| render(claim_row(path, c)),
        &mut |row| sink(Part::Row("claims", row)),
    )?;
    for row in heartbeat_rows {
        sink(Part::Row("heartbeats", render(row)));
    }
    for (path, b) in batches {
        sink(Part::Row(
            "batches",
            render(batch_row(path, b, &beats, &index.states)),
        ));
    }
    snap.for_each_map(
        "events",
        &|path, e| {
            let (key, row) = event_row(path, e);
            (key, render(row))
        },
        &mut |(key, row)| sink(Part::Event(key, row)),
    )?;
    if include_archived {
        snap.for_each_map(
            "archive",
            &|path, r| render(archive_row(path, r)),
            &mut |row| sink(Part::Row("archive", row)),
        )?;
    }
    Ok(())
}

fn all_scope(
    snap: &impl Snapshot,
    include_archived: bool,
    now: Instant,
) -> Result<StatusReport, ReadError> {
    let mut out = report(&Scope::All { include_archived });
    let mut events = Vec::new();
    let mut archive = Vec::new();
    stream_all(
        snap,
        include_archived,
        now,
        &|row| row,
        &mut |part| match part {
            Part::Head(head) => out.section_notes = head.section_notes,
            Part::Row("claims", row) => out.claims.push(row),
            Part::Row("heartbeats", row) => out.heartbeats.push(row),
            Part::Row("batches", row) => out.batches.push(row),
            Part::Row(_, row) => archive.push(row),
            Part::Event(key, row) => events.push((key, row)),
        },
    )?;
    out.events = sort_events(events);
    out.archive = include_archived.then_some(archive);
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
    let holder = f::AGENT_ID
        .get(&claim)
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
            if f::AGENT_ID.get(&hb).is_some_and(|id| to_text(id) != owner) {
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

mod render;
mod rows;

use rows::*;

#[cfg(test)]
mod tests;
