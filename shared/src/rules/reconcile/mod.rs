//! Reconciling a diverged state branch: a record-level three-way merge of the paths that
//! changed since the common base, never a textual one.
//!
//! The remote side was published first, so it is the base of the merge: one-sided local
//! changes are applied on top of it, and where both sides changed a record the remote
//! version stands, except that a batch keeps lane closures made on either side and an
//! operator's annotation is the one saved last. Claims the
//! local side lost are reported (and recorded as `claim.lost` events); every other clash is
//! recorded as a `sync.conflict` event.

use serde_json::Value;

use super::deps::lane_name;
use super::Ctx;
use crate::ids::paths;
use crate::ids::BatchId;
use crate::record::field as f;
use crate::record::field::copy_all;
use crate::record::Claim;
use crate::record::EventKind;
use crate::record::Lane;
use crate::record::Record;
use crate::time;

/// The batch that holds sync events not tied to a batch of their own.
pub const SYNC_BATCH: &str = "agent-coord-sync";

/// One path that differs between the base and at least one side.
#[derive(Debug, Clone, PartialEq)]
pub struct PathChange {
    /// The record path.
    pub path: String,
    /// The record in the common base (`None`: absent).
    pub base: Option<Record>,
    /// The record on the local side.
    pub local: Option<Record>,
    /// The record on the remote side.
    pub remote: Option<Record>,
}

/// A claim the local side held that the remote side decided otherwise.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LostClaim {
    /// The claim path.
    pub path: String,
    /// `owner/repo#target`.
    pub label: String,
    /// The local holder who lost it.
    pub local_holder: String,
    /// Who holds it on the remote (`None` if the remote released or removed it).
    pub remote_holder: Option<String>,
    /// The batch of the local claim, where the `claim.lost` event goes.
    pub batch: Option<String>,
}

/// A record both sides changed differently, resolved by keeping the remote version.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Conflict {
    /// The record path.
    pub path: String,
    /// What happened, for humans.
    pub detail: String,
}

/// The outcome of a reconciliation.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reconciled {
    /// Changes to apply on top of the remote tree (`None` deletes the path).
    pub writes: Vec<(String, Option<Record>)>,
    /// How many local changes were applied.
    pub local_applied: usize,
    /// How many remote changes were taken.
    pub remote_taken: usize,
    /// Claims the local side lost.
    pub lost_claims: Vec<LostClaim>,
    /// Clashes resolved in the remote's favour.
    pub conflicts: Vec<Conflict>,
}

/// Merges the changed paths; `ctx` stamps the events the merge records.
pub fn reconcile(changes: Vec<PathChange>, ctx: &Ctx) -> Reconciled {
    let mut out = Reconciled::default();
    for change in changes {
        let local_changed = change.local != change.base;
        let remote_changed = change.remote != change.base;
        match (local_changed, remote_changed) {
            (false, false) => {}
            (true, false) => {
                out.local_applied += 1;
                out.writes.push((change.path, change.local));
            }
            (false, true) => out.remote_taken += 1,
            (true, true) if change.local == change.remote => out.remote_taken += 1,
            (true, true) => {
                out.remote_taken += 1;
                both_changed(change, &mut out);
            }
        }
    }
    record_events(&mut out, ctx);
    out
}

fn both_changed(change: PathChange, out: &mut Reconciled) {
    let PathChange {
        path,
        local,
        remote,
        ..
    } = change;
    if path.starts_with("claims/") {
        let active = |r: &Option<Record>| {
            r.clone()
                .map(Claim::from)
                .and_then(|c| c.active_holder().map(str::to_owned))
        };
        if let Some(holder) = active(&local) {
            let remote_holder = active(&remote);
            if remote_holder.as_deref() != Some(holder.as_str()) {
                let label = local
                    .as_ref()
                    .map(claim_label)
                    .unwrap_or_else(|| path.clone());
                let batch = local
                    .as_ref()
                    .and_then(|c| f::BATCH_ID.text(c))
                    .map(str::to_owned);
                out.lost_claims.push(LostClaim {
                    path,
                    label,
                    local_holder: holder,
                    remote_holder,
                    batch,
                });
            }
        }
        return;
    }
    if path.starts_with("annotations/") {
        // A presentation preference: the newer save wins, the remote's on a tie or when
        // either side cleared it; neither is a conflict worth an event.
        let saved = |r: &Option<Record>| {
            r.as_ref()
                .and_then(|r| f::UPDATED_AT.text(r))
                .and_then(time::parse)
        };
        if let (Some(l), Some(r)) = (saved(&local), saved(&remote)) {
            if l > r {
                out.local_applied += 1;
                out.writes.push((path, local));
            }
        }
        return;
    }
    if path.starts_with("batches/") {
        if let (Some(local), Some(remote)) = (&local, &remote) {
            let (merged, clashes) = merge_batch(local, remote);
            for detail in clashes {
                out.conflicts.push(Conflict {
                    path: path.clone(),
                    detail,
                });
            }
            if &merged != remote {
                out.local_applied += 1;
                out.writes.push((path, Some(merged)));
            }
            return;
        }
    }
    let detail = if path.starts_with("events/") {
        "two different events were written at the same path; the remote one is kept".to_owned()
    } else {
        "changed on both sides; the remote version is kept".to_owned()
    };
    out.conflicts.push(Conflict { path, detail });
}

fn claim_label(c: &Record) -> String {
    format!(
        "{}#{}",
        f::REPO.text(c).unwrap_or("?"),
        f::TARGET.text(c).unwrap_or("?")
    )
}

/// Merges two versions of a batch manifest: remote fields, plus lane closures from either.
///
/// Returns the merged manifest and the lanes whose closures clash (the remote's stands).
pub fn merge_batch(local: &Record, remote: &Record) -> (Record, Vec<String>) {
    let mut merged = remote.clone();
    let mut clashes = Vec::new();
    let local_lanes: Vec<&Record> = f::LANES
        .get(local)
        .and_then(Value::as_array)
        .map(|l| l.iter().filter_map(Value::as_object).collect())
        .unwrap_or_default();
    let Some(Value::Array(lanes)) = merged.get_mut(f::LANES.name()) else {
        return (merged, clashes);
    };
    for lane in lanes.iter_mut().filter_map(Value::as_object_mut) {
        let name = lane_name(lane).into_owned();
        let Some(theirs) = local_lanes.iter().find(|l| lane_name(l) == name) else {
            continue;
        };
        match (f::TERMINAL.present(lane), f::TERMINAL.present(theirs)) {
            (None, Some(_)) => copy_all(&Lane::TERMINAL, theirs, lane),
            (Some(a), Some(b)) if a != b => clashes.push(format!(
                "lane {name} was closed {a} on the remote and {b} locally; the remote closure is kept"
            )),
            _ => {}
        }
    }
    let all_closed = lanes
        .iter()
        .all(|l| l.as_object().is_some_and(Lane::is_closed));
    if all_closed && f::STATUS.text(&merged) != Some("completed") {
        f::STATUS.set(&mut merged, "completed");
        let completed_at = f::COMPLETED_AT
            .get(local)
            .cloned()
            .unwrap_or_else(|| f::UPDATED_AT.get(&merged).cloned().unwrap_or(Value::Null));
        f::COMPLETED_AT.set(&mut merged, completed_at);
    }
    (merged, clashes)
}

/// Appends `claim.lost` and `sync.conflict` events to the writes.
fn record_events(out: &mut Reconciled, ctx: &Ctx) {
    let mut events = Vec::new();
    for claim in &out.lost_claims {
        let mut fields = Record::new();
        f::AGENT_ID.set(&mut fields, claim.local_holder.as_str());
        if let Some((repo, target)) = claim.label.split_once('#') {
            f::REPO.set(&mut fields, repo);
            f::TARGET.set(&mut fields, target);
        }
        let winner = claim
            .remote_holder
            .as_deref()
            .unwrap_or("nobody (released on the remote)");
        f::MESSAGE.set(
            &mut fields,
            format!("claim on {} lost to {winner}", claim.label),
        );
        events.push((
            claim.batch.clone().unwrap_or_else(|| SYNC_BATCH.to_owned()),
            EventKind::ClaimLost,
            fields,
        ));
    }
    for conflict in &out.conflicts {
        let mut fields = Record::new();
        f::MESSAGE.set(
            &mut fields,
            format!("{}: {}", conflict.path, conflict.detail),
        );
        events.push((
            conflict_batch(&conflict.path),
            EventKind::SyncConflict,
            fields,
        ));
    }
    for (n, (batch, kind, mut fields)) in events.into_iter().enumerate() {
        let batch = batch.parse::<BatchId>().unwrap_or_else(|_| sync_batch());
        let id = time::event_id(ctx.now, ctx.nonce.wrapping_add(n as u32));
        f::SCHEMA_VERSION.set(&mut fields, 1);
        f::EVENT_ID.set(&mut fields, id.as_str());
        f::BATCH_ID.set(&mut fields, batch.as_str());
        f::TYPE.set(&mut fields, kind.as_str());
        f::AT.set(&mut fields, time::format(ctx.now));
        ctx.identity.stamp(&mut fields);
        out.writes.push((paths::event(&batch, &id), Some(fields)));
    }
}

fn sync_batch() -> BatchId {
    SYNC_BATCH
        .parse()
        .unwrap_or_else(|_| unreachable!("SYNC_BATCH is a valid batch id"))
}

/// Returns the batch a conflict at `path` belongs to.
fn conflict_batch(path: &str) -> String {
    if let Some(rest) = path.strip_prefix("events/") {
        return rest.split('/').next().unwrap_or(SYNC_BATCH).to_owned();
    }
    if let Some(file) = path.strip_prefix("batches/") {
        return file.trim_end_matches(".json").to_owned();
    }
    SYNC_BATCH.to_owned()
}

#[cfg(test)]
mod tests;
