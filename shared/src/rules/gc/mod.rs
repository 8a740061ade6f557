//! Retention (`gc`): archive finished records (claims, heartbeats, batches, and
//! annotations whose snooze is over), compact finished event trails, and delete archives
//! past their retention, as one plan over one snapshot.
//!
//! Eligibility is decided per family first; a synthetic record's shorter window only
//! shortens the wait. Archives use the published envelope contract (`archived_record`,
//! `compacted_events`) so readers of archives keep working. Heartbeats can only leave
//! this machine's own heartbeat ref: other machines' refs have one writer each.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use serde_json::Value;
use sha2::Digest;
use sha2::Sha256;

use super::audit::is_valid_terminal_marker;
use super::liveness;
use super::liveness::Liveness;
use super::vocab;
use super::Plan;
use super::RuleError;
use crate::ids::AgentId;
use crate::record::field as f;
use crate::record::field::Field;
use crate::record::Archive;
use crate::record::Archived;
use crate::record::Event;
use crate::record::Record;
use crate::record::ARCHIVED_RECORD;
use crate::record::COMPACTED_EVENTS;
use crate::snapshot::Snapshot;
use crate::time;
use crate::time::Instant;

/// The largest envelope gc writes (serialized JSON bytes).
pub const MAX_ENVELOPE_BYTES: usize = 1_048_576;

/// The families `--prefix` can select.
pub const FAMILIES: [&str; 5] = ["claims", "heartbeats", "batches", "events", "annotations"];

pub mod machines;
mod policy;
pub use policy::Policy;
pub use policy::PolicyError;
pub use policy::Window;

/// State gc cannot proceed from: a record it must date or an archive it must write is not
/// in the shape the retention contract needs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GcError {
    /// A finished record has none of the record-time fields.
    #[error("gc record is missing a retention timestamp at {path}")]
    MissingTimestamp {
        /// The record's path.
        path: String,
    },
    /// A record's retention timestamp does not read.
    #[error("gc record has invalid retention timestamp at {path}: {value}")]
    InvalidTimestamp {
        /// The record's path.
        path: String,
        /// The timestamp as stored (JSON).
        value: Value,
    },
    /// An archive record outside every family.
    #[error("archive record has unknown family at {path}")]
    UnknownArchiveFamily {
        /// The archive's path.
        path: String,
    },
    /// An archive record whose `delete_after` does not read.
    #[error("archive record has invalid delete_after at {path}")]
    InvalidDeleteAfter {
        /// The archive's path.
        path: String,
    },
    /// An envelope larger than [`MAX_ENVELOPE_BYTES`].
    #[error("gc archive envelope exceeds {MAX_ENVELOPE_BYTES} bytes at {path}")]
    EnvelopeTooLarge {
        /// Where the envelope would go.
        path: String,
    },
    /// A compaction whose destination holds a different archive.
    #[error("event compaction destination conflict at {path}")]
    CompactionConflict {
        /// The destination.
        path: String,
    },
}

/// One planned retention action; serialised, a `gc --json` row.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Action {
    /// `archive`, `replace_archive`, `compact` or `delete`.
    pub action: &'static str,
    /// The record archived or deleted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source_path: Option<String>,
    /// The events a compaction consumes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub source_paths: Vec<String>,
    /// Where the envelope goes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub archive_path: Option<String>,
    /// Why.
    pub reason: &'static str,
    /// When the record became eligible.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub eligible_at: Option<String>,
}

impl Action {
    /// Returns the `gc` text line.
    pub fn to_line(&self) -> String {
        let source = self
            .source_path
            .clone()
            .unwrap_or_else(|| self.source_paths.join(","));
        let dest = self
            .archive_path
            .as_ref()
            .map(|a| format!(" -> {a}"))
            .unwrap_or_default();
        format!("- {} {source}{dest} ({})", self.action, self.reason)
    }

    fn sort_key(&self) -> String {
        self.source_path
            .clone()
            .or_else(|| self.source_paths.first().cloned())
            .or_else(|| self.archive_path.clone())
            .unwrap_or_default()
    }
}

/// The retention plan: actions to report and the writes that carry them out.
#[derive(Debug, Clone, PartialEq)]
pub struct GcOutcome {
    /// The actions, sorted by source path.
    pub actions: Vec<Action>,
}

/// Returns the instant `n` days before `now` (a window's cutoff); [`Policy::check`] has
/// made sure it exists, and the earliest record time stands in for one that does not.
fn cutoff(now: Instant, n: i64) -> Instant {
    time::days_before(now, n).unwrap_or_else(time::earliest)
}

/// Returns an archive's `delete_after`; [`Policy::check`] has made sure it is writable.
fn keep_until(now: Instant, policy: &Policy) -> String {
    time::format(time::days_after(now, policy.archive_days).unwrap_or_else(time::latest))
}

/// Returns the first present of the record-time fields (`updated_at, at, released_at,
/// completed_at, expires_at`), checked.
fn record_time(path: &str, r: &Record) -> Result<Instant, RuleError> {
    let raw = [
        f::UPDATED_AT,
        f::AT,
        f::RELEASED_AT,
        f::COMPLETED_AT,
        f::EXPIRES_AT,
    ]
    .into_iter()
    .find_map(|k| k.present(r))
    .ok_or_else(|| GcError::MissingTimestamp {
        path: path.to_owned(),
    })?;
    raw.as_str().and_then(time::parse).ok_or_else(|| {
        GcError::InvalidTimestamp {
            path: path.to_owned(),
            value: raw.clone(),
        }
        .into()
    })
}

/// Returns the error for a text timestamp at `path` that does not read.
fn invalid_timestamp(path: &str, raw: &str) -> GcError {
    GcError::InvalidTimestamp {
        path: path.to_owned(),
        value: Value::from(raw),
    }
}

fn is_synthetic(r: &Record) -> bool {
    f::SYNTHETIC.get(r) == Some(&Value::Bool(true))
}

/// Returns how many days a record waits once eligible.
fn window(policy: &Policy, r: &Record) -> i64 {
    if is_synthetic(r) {
        policy.synthetic_hot_days.min(policy.hot_days)
    } else {
        policy.hot_days
    }
}

/// Returns `(reason, eligible_at)` when a hot record's family says it is finished.
fn finished(
    family: &str,
    path: &str,
    r: &Record,
    now: Instant,
) -> Result<Option<(&'static str, Instant)>, RuleError> {
    let status = f::STATUS.text(r);
    let terminal_claim = f::TERMINAL
        .text(r)
        .is_some_and(|t| ["done", "abandoned", "superseded"].contains(&t));
    match family {
        "claims" if status == Some("released") || terminal_claim => {
            Ok(Some(("terminal_claim", record_time(path, r)?)))
        }
        "heartbeats" if status.is_some_and(|s| vocab::TERMINAL.contains(&s)) => {
            Ok(Some(("terminal_heartbeat", record_time(path, r)?)))
        }
        "heartbeats" if liveness::of_record(r, now) == Liveness::Dead => {
            let ts = |k: Field| k.text(r).and_then(time::parse);
            let at = match (ts(f::UPDATED_AT), ts(f::EXPIRES_AT)) {
                (Some(u), Some(e)) if e > u => u + (e - u) * liveness::DEAD_AFTER_TTL_MULTIPLIER,
                _ => record_time(path, r)?,
            };
            Ok(Some(("dead_heartbeat", at)))
        }
        // A snooze hides nothing once its `until` has passed; a dismissal is for good.
        "annotations" if f::KIND.text(r) == Some("snooze") => {
            let raw = r.get("until").and_then(Value::as_str).unwrap_or_default();
            let until = time::parse(raw).ok_or_else(|| invalid_timestamp(path, raw))?;
            Ok((until <= now).then_some(("expired_snooze", until)))
        }
        "batches" if status == Some("completed") => {
            let at = match f::COMPLETED_AT.text(r) {
                Some(raw) => time::parse(raw).ok_or_else(|| invalid_timestamp(path, raw))?,
                None => record_time(path, r)?,
            };
            Ok(Some(("completed_batch", at)))
        }
        _ => Ok(None),
    }
}

/// Returns the archive envelope of one record.
fn envelope(source: &str, reason: &str, data: &Record, now: Instant, policy: &Policy) -> Archive {
    Archive::new(
        Archived::Record {
            source_path: source.to_owned(),
            data: data.clone(),
        },
        reason,
        is_synthetic(data),
        time::format(now),
        keep_until(now, policy),
    )
}

/// Serializes `v` with keys sorted recursively and no whitespace.
pub fn canonical_json(v: &Value) -> String {
    match v {
        Value::Object(map) => {
            let sorted: BTreeMap<&String, &Value> = map.iter().collect();
            let body: Vec<String> = sorted
                .into_iter()
                .map(|(k, v)| format!("{}:{}", Value::String(k.clone()), canonical_json(v)))
                .collect();
            format!("{{{}}}", body.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(canonical_json)
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => other.to_string(),
    }
}

fn sha16(s: &str) -> String {
    Sha256::digest(s.as_bytes())
        .iter()
        .take(8)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Plans retention over `snap`. `own_heartbeats` are the agents on this machine's ref.
pub fn plan(
    snap: &impl Snapshot,
    policy: &Policy,
    families: &[&str],
    own_heartbeats: &BTreeSet<String>,
    now: Instant,
) -> Result<Plan<GcOutcome>, RuleError> {
    policy.check(now)?;
    let mut plan = Plan::nothing(
        "gc",
        GcOutcome {
            actions: Vec::new(),
        },
    );
    let archive: BTreeMap<String, Archive> = snap
        .list("archive")?
        .into_iter()
        .map(|(path, r)| (path, Archive::from(r)))
        .collect();
    let mut protected = BTreeSet::new();

    for family in FAMILIES
        .iter()
        .filter(|f| families.contains(f) && **f != "events")
    {
        for (path, record) in snap.list(family)? {
            if *family == "heartbeats" {
                let agent = path
                    .trim_start_matches("heartbeats/")
                    .trim_end_matches(".json");
                if !own_heartbeats.contains(agent) {
                    continue;
                }
            }
            let Some((reason, at)) = finished(family, &path, &record, now)? else {
                continue;
            };
            if at > cutoff(now, window(policy, &record)) {
                continue;
            }
            let archive_path = format!("archive/{path}");
            let fresh = envelope(&path, reason, &record, now, policy);
            let (action, reason) = match archive.get(&archive_path) {
                None => ("archive", reason),
                Some(old)
                    if f::RECORD_FAMILY.text(old) == Some(ARCHIVED_RECORD)
                        && f::SOURCE_PATH.text(old) == Some(path.as_str())
                        && f::DATA.get(old) == Some(&Value::Object(record.clone())) =>
                {
                    // The same envelope exists (an interrupted run): reuse it, drop the source.
                    protected.insert(archive_path.clone());
                    push_removal(&mut plan, &path);
                    plan.outcome.actions.push(Action {
                        action: "archive",
                        source_path: Some(path.clone()),
                        source_paths: Vec::new(),
                        archive_path: Some(archive_path),
                        reason,
                        eligible_at: Some(time::format(at)),
                    });
                    continue;
                }
                Some(old) if delete_after(&archive_path, old)? > now => continue,
                Some(_) => ("replace_archive", "expired_archive_replacement"),
            };
            protected.insert(archive_path.clone());
            check_size(&archive_path, &fresh)?;
            plan.state.push((archive_path.clone(), fresh.into_record()));
            push_removal(&mut plan, &path);
            plan.outcome.actions.push(Action {
                action,
                source_path: Some(path),
                source_paths: Vec::new(),
                archive_path: Some(archive_path),
                reason,
                eligible_at: Some(time::format(at)),
            });
        }
    }
    if families.contains(&"events") {
        compact_events(snap, policy, now, &archive, &mut protected, &mut plan)?;
    }
    for (path, record) in &archive {
        if protected.contains(path) {
            continue;
        }
        match record.record_family() {
            Some(ARCHIVED_RECORD | COMPACTED_EVENTS) => {}
            _ => return Err(GcError::UnknownArchiveFamily { path: path.clone() }.into()),
        }
        if delete_after(path, record)? <= now {
            plan.removals.push(path.clone());
            plan.outcome.actions.push(Action {
                action: "delete",
                source_path: Some(path.clone()),
                source_paths: Vec::new(),
                archive_path: None,
                reason: "archive_expired",
                eligible_at: None,
            });
        }
    }
    plan.outcome.actions.sort_by_key(Action::sort_key);
    plan.summary = format!("gc: {} retention actions", plan.outcome.actions.len());
    Ok(plan)
}

fn push_removal(plan: &mut Plan<GcOutcome>, path: &str) {
    match path
        .strip_prefix("heartbeats/")
        .and_then(|p| p.strip_suffix(".json"))
        .map(str::parse::<AgentId>)
    {
        Some(Ok(agent)) => plan.heartbeat_removals.push(agent),
        _ => plan.removals.push(path.to_owned()),
    }
}

fn delete_after(path: &str, r: &Record) -> Result<Instant, GcError> {
    f::DELETE_AFTER
        .text(r)
        .and_then(time::parse)
        .ok_or_else(|| GcError::InvalidDeleteAfter {
            path: path.to_owned(),
        })
}

fn check_size(archive_path: &str, envelope: &Record) -> Result<(), GcError> {
    let size = serde_json::to_vec(envelope)
        .map(|b| b.len())
        .unwrap_or(usize::MAX);
    if size > MAX_ENVELOPE_BYTES {
        return Err(GcError::EnvelopeTooLarge {
            path: archive_path.to_owned(),
        });
    }
    Ok(())
}

/// One event with what grouping and retention need.
struct Ev {
    path: String,
    data: Event,
    at: Option<Instant>,
    terminal: bool,
}

fn compact_events(
    snap: &impl Snapshot,
    policy: &Policy,
    now: Instant,
    archive: &BTreeMap<String, Archive>,
    protected: &mut BTreeSet<String>,
    plan: &mut Plan<GcOutcome>,
) -> Result<(), RuleError> {
    // Provenance (batch, repo, target) → lane → events.
    type Key = (String, String, String);
    let mut groups: BTreeMap<(Key, Option<String>), Vec<Ev>> = BTreeMap::new();
    let events = snap.list("events")?;
    let mut terminal_lanes: BTreeMap<Key, BTreeSet<String>> = BTreeMap::new();
    let mut parsed = Vec::new();
    for (path, data) in events {
        let data = Event::from(data);
        let batch = data
            .batch_id()
            .map(str::to_owned)
            .unwrap_or_else(|| path.split('/').nth(1).unwrap_or_default().to_owned());
        let key = (
            batch,
            f::REPO.text(&data).unwrap_or_default().to_owned(),
            f::TARGET.text(&data).unwrap_or_default().to_owned(),
        );
        let lane = data.lane().map(str::to_owned);
        let terminal = is_valid_terminal_marker(&data);
        if let (true, Some(l)) = (terminal, &lane) {
            terminal_lanes
                .entry(key.clone())
                .or_default()
                .insert(l.clone());
        }
        let at = data.at();
        parsed.push((
            key,
            lane,
            Ev {
                path,
                data,
                at,
                terminal,
            },
        ));
    }
    for (key, lane, ev) in parsed {
        // A lane-less event joins the sole terminal lane of its provenance, if exactly one.
        let lane = lane.or_else(|| match terminal_lanes.get(&key) {
            Some(lanes) if lanes.len() == 1 => lanes.iter().next().cloned(),
            _ => None,
        });
        groups.entry((key, lane)).or_default().push(ev);
    }
    for ((key, lane), mut evs) in groups {
        let terminals: Vec<Instant> = evs
            .iter()
            .filter(|e| e.terminal)
            .filter_map(|e| e.at)
            .collect();
        let (reason, eligible) = if let Some(latest) = terminals.iter().max() {
            ("terminal_target_events", *latest)
        } else if evs.iter().all(|e| is_synthetic(&e.data)) {
            let Some(latest) = evs.iter().filter_map(|e| e.at).max() else {
                continue;
            };
            ("synthetic_orphan_events", latest)
        } else {
            continue;
        };
        let group_window = if reason == "synthetic_orphan_events" {
            policy.synthetic_hot_days.min(policy.hot_days)
        } else {
            policy.hot_days
        };
        if eligible > cutoff(now, group_window) {
            continue;
        }
        // Every event must itself have passed its window; a fresh one defers the group.
        let all_cold = evs.iter().all(|e| {
            e.at.is_some_and(|at| at <= cutoff(now, window(policy, &e.data)))
        });
        if !all_cold {
            continue;
        }
        evs.sort_by(|a, b| (a.at, a.terminal, &a.path).cmp(&(b.at, b.terminal, &b.path)));
        let kept = retained(&evs);
        let mut source_paths: Vec<String> = evs.iter().map(|e| e.path.clone()).collect();
        source_paths.sort();
        // The name hashes what the trail is and what it holds (key order is canonical).
        let mut ident = Record::new();
        f::LANE.set(&mut ident, lane.clone());
        f::REPO.set(&mut ident, key.1.as_str());
        f::TARGET.set(&mut ident, key.2.as_str());
        let ident = canonical_json(&Value::Object(ident));
        let mut by_path: Vec<&Ev> = evs.iter().collect();
        by_path.sort_by(|a, b| a.path.cmp(&b.path));
        let content = canonical_json(&Value::Array(
            by_path
                .iter()
                .map(|e| {
                    let mut entry = Record::new();
                    f::PATH.set(&mut entry, e.path.as_str());
                    f::DATA.set(&mut entry, Value::Object(e.data.clone().into_record()));
                    Value::Object(entry)
                })
                .collect(),
        ));
        let archive_path = format!(
            "archive/events/{}/compact-{}-{}.json",
            key.0,
            sha16(&ident),
            sha16(&content)
        );
        let env = Archive::new(
            Archived::Events {
                source_paths: source_paths.clone(),
                records: kept
                    .iter()
                    .map(|e| Value::Object(e.data.clone().into_record()))
                    .collect(),
            },
            reason,
            evs.iter().all(|e| is_synthetic(&e.data)),
            time::format(now),
            keep_until(now, policy),
        );
        match archive.get(&archive_path) {
            Some(old)
                if f::SOURCE_PATHS.get(old) == f::SOURCE_PATHS.get(&env)
                    && f::RECORDS.get(old) == f::RECORDS.get(&env) => {}
            Some(_) => {
                return Err(GcError::CompactionConflict {
                    path: archive_path.clone(),
                }
                .into())
            }
            None => {
                check_size(&archive_path, &env)?;
                plan.state.push((archive_path.clone(), env.into_record()));
            }
        }
        protected.insert(archive_path.clone());
        plan.removals.extend(source_paths.iter().cloned());
        plan.outcome.actions.push(Action {
            action: "compact",
            source_path: None,
            source_paths,
            archive_path: Some(archive_path),
            reason,
            eligible_at: Some(time::format(eligible)),
        });
    }
    Ok(())
}

/// Keeps the first and last events, every terminal, and each change of phase.
fn retained(evs: &[Ev]) -> Vec<&Ev> {
    if evs.len() <= 2 {
        return evs.iter().collect();
    }
    let mut keep = BTreeSet::new();
    keep.insert(0);
    keep.insert(evs.len() - 1);
    let mut last_phase: Option<&str> = None;
    for (i, e) in evs.iter().enumerate() {
        if e.terminal {
            keep.insert(i);
        }
        if let Some(p) = e.data.phase().filter(|p| !p.is_empty()) {
            if last_phase != Some(p) {
                keep.insert(i);
            }
            last_phase = Some(p);
        }
    }
    keep.into_iter().map(|i| &evs[i]).collect()
}

#[cfg(test)]
mod tests;
