//! The record-level three-way merge of a diverged state branch: every path that differs
//! between base, local and remote is reconciled by shared's rules (remote wins clashes,
//! events union, lost claims and conflicts recorded) and written as one merge commit.

use std::collections::BTreeMap;
use std::collections::BTreeSet;

use agent_coord_shared::record::from_bytes;
use agent_coord_shared::record::Record;
use agent_coord_shared::rules::reconcile;
use agent_coord_shared::rules::reconcile::PathChange;
use agent_coord_shared::rules::Ctx;
use gix::ObjectId;

use super::SyncReport;
use crate::store::Store;
use crate::store::StoreError;

/// Returns `path → blob id` of every blob in a commit's tree.
fn blobs_of(
    store: &Store,
    commit: Option<ObjectId>,
) -> Result<BTreeMap<String, ObjectId>, StoreError> {
    let Some(commit) = commit else {
        return Ok(BTreeMap::new());
    };
    let snap = store.snapshot()?;
    let tree = store
        .repo
        .find_commit(commit)
        .map_err(StoreError::git)?
        .tree_id()
        .map_err(StoreError::git)?
        .detach();
    Ok(snap.blobs_below(tree, "")?.into_iter().collect())
}

fn read_record(store: &Store, id: Option<&ObjectId>) -> Result<Option<Record>, StoreError> {
    let Some(id) = id else { return Ok(None) };
    let obj = store.repo.find_object(*id).map_err(StoreError::git)?;
    // An unparseable side cannot be merged record by record; treat it as an opaque value.
    Ok(Some(from_bytes(&obj.data).unwrap_or_else(|e| {
        let mut r = Record::new();
        r.insert(
            "unparseable".into(),
            serde_json::Value::String(format!("{id}: {e}")),
        );
        r
    })))
}

/// Writes the record-level merge of `local`'s changes (since `base`) onto `remote` as a
/// commit with `parents`; `remote` wins clashes.
pub(super) fn merge(
    store: &Store,
    base: Option<ObjectId>,
    local: ObjectId,
    remote: ObjectId,
    parents: &[ObjectId],
    report: &mut SyncReport,
    ctx: &Ctx,
) -> Result<ObjectId, StoreError> {
    let (b, l, r) = (
        blobs_of(store, base)?,
        blobs_of(store, Some(local))?,
        blobs_of(store, Some(remote))?,
    );
    let paths: BTreeSet<&String> = b.keys().chain(l.keys()).chain(r.keys()).collect();
    let mut changes = Vec::new();
    for path in paths {
        let (bb, lb, rb) = (b.get(path), l.get(path), r.get(path));
        if lb == rb || (lb == bb && rb == bb) {
            if lb == rb && lb != bb {
                report.remote_changes += 1;
            }
            continue;
        }
        changes.push(PathChange {
            path: path.clone(),
            base: read_record(store, bb)?,
            local: read_record(store, lb)?,
            remote: read_record(store, rb)?,
        });
    }
    let merged = reconcile::reconcile(changes, ctx);
    if merged.writes.is_empty() && parents == [remote] {
        // A replay onto a newer epoch that changes nothing: the remote tip is the result.
        report.remote_changes += merged.remote_taken;
        return Ok(remote);
    }
    report.local_changes += merged.local_applied;
    report.remote_changes += merged.remote_taken;
    report
        .lost_claims
        .extend(merged.lost_claims.iter().cloned());
    report.conflicts.extend(merged.conflicts.iter().cloned());
    let bytes: Vec<(String, Option<Vec<u8>>)> = merged
        .writes
        .iter()
        .map(|(p, r)| {
            (
                p.clone(),
                r.as_ref().map(agent_coord_shared::record::to_bytes),
            )
        })
        .collect();
    let remote_tree = store
        .repo
        .find_commit(remote)
        .map_err(StoreError::git)?
        .tree_id()
        .map_err(StoreError::git)?
        .detach();
    let tree = store.write_tree_bytes(
        remote_tree,
        bytes.iter().map(|(p, b)| (p.as_str(), b.as_deref())),
    )?;
    let message = format!(
        "sync: merge {} local and {} remote changes\n\nAgent-Coord-Op: sync-merge\nAgent-Coord-Machine: {}\nAgent-Coord-Lost-Claims: {}\nAgent-Coord-Conflicts: {}\n",
        merged.local_applied,
        merged.remote_taken,
        store.machine,
        merged.lost_claims.len(),
        merged.conflicts.len(),
    );
    store.commit(&message, tree, parents)
}
