//! The heartbeat fence of a write whose decision read heartbeats (a takeover): the commit
//! goes through only if no heartbeat ref the decision could have read moved meanwhile.
//!
//! Refs that existed are fenced with their value (`MustExistAndMatch`). A ref that did not
//! exist yet — the holder machine's first beat, here or fetched from a remote — is fenced
//! as absent: a delete edit that only touches the reflog (`RefLog::Only`, so nothing is
//! deleted) and expects, if the ref exists after all, a value no ref can have. Its lock is
//! taken with the others and the ref is checked under it, so a ref created between the
//! decision and the commit is a compare-and-swap conflict and the decision runs again.

use std::collections::BTreeSet;

use agent_coord_shared::ids::MachineId;
use agent_coord_shared::record::field as f;
use agent_coord_shared::rules::Plan;
use agent_coord_shared::snapshot::Snapshot;
use gix::refs::transaction::Change;
use gix::refs::transaction::PreviousValue;
use gix::refs::transaction::RefEdit;
use gix::refs::transaction::RefLog;
use gix::refs::Target;
use gix::ObjectId;

use super::tracking_heartbeat_prefix;
use super::Store;
use super::StoreError;
use super::TipSnapshot;
use super::HEARTBEAT_PREFIX;
use super::REMOTES_PREFIX;

/// Returns an edit that fails as a conflict if `name` exists, and otherwise changes nothing.
pub(super) fn absent(name: &str, hash: gix::hash::Kind) -> Result<RefEdit, StoreError> {
    Ok(RefEdit {
        change: Change::Delete {
            // Only consulted when the ref exists: no ref points at the null id.
            expected: PreviousValue::ExistingMustMatch(Target::Object(ObjectId::null(hash))),
            log: RefLog::Only,
        },
        name: name.try_into().map_err(StoreError::git)?,
        deref: false,
    })
}

impl Store {
    /// Returns the heartbeat refs that could hold the beats of the holders whose claims
    /// `plan` replaces but that did not exist when `snap` was taken: each holder machine's
    /// own ref, and its fetched copy from every remote this repository tracks.
    pub(super) fn absent_holder_refs<T>(
        &self,
        snap: &TipSnapshot<'_>,
        plan: &Plan<T>,
    ) -> Result<Vec<String>, StoreError> {
        let mut machines = BTreeSet::new();
        for (path, _) in plan.state.iter().filter(|(p, _)| p.starts_with("claims/")) {
            let Ok(Some(previous)) = snap.read(path) else {
                continue;
            };
            // A machine id that is not a valid ref segment names no ref to fence.
            if let Some(m) = f::MACHINE_ID
                .text(&previous)
                .and_then(|m| m.parse::<MachineId>().ok())
            {
                machines.insert(m);
            }
        }
        if machines.is_empty() {
            return Ok(Vec::new());
        }
        let mut remotes: BTreeSet<String> = self
            .repo
            .remote_names()
            .iter()
            .map(|r| r.to_string())
            .collect();
        for (name, _) in self.refs_with_prefix(REMOTES_PREFIX)? {
            if let Some((remote, _)) = name
                .strip_prefix(REMOTES_PREFIX)
                .and_then(|r| r.split_once('/'))
            {
                remotes.insert(remote.to_owned());
            }
        }
        let existing: BTreeSet<&str> = snap.heartbeats().iter().map(|h| h.name.as_str()).collect();
        let mut out = Vec::new();
        for m in &machines {
            let own = std::iter::once(format!("{HEARTBEAT_PREFIX}{m}"));
            let fetched = remotes
                .iter()
                .map(|r| format!("{}{m}", tracking_heartbeat_prefix(r)));
            out.extend(
                own.chain(fetched)
                    .filter(|n| !existing.contains(n.as_str())),
            );
        }
        Ok(out)
    }
}
