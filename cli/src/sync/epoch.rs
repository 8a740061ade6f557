//! Epochs: restarting the state branch from one parentless commit that holds the current
//! state, so history stops growing without bound. `meta/epoch.json` names the epoch and
//! the tip it was cut from; sync replays other machines' later changes onto a newer epoch
//! and never merges an old epoch's history back in.

use agent_coord_shared::record::from_bytes;
use agent_coord_shared::record::to_bytes;
use agent_coord_shared::record::EpochMarker;
use gix::ObjectId;

use crate::store::Store;
use crate::store::StoreError;

/// Where the epoch marker lives in the state tree.
pub(crate) const EPOCH_PATH: &str = "meta/epoch.json";

/// An epoch marker (epoch 0 has none).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Epoch {
    pub(crate) number: u64,
    pub(crate) previous_tip: Option<ObjectId>,
}

/// Reads the epoch of a state commit.
pub(crate) fn of_commit(store: &Store, commit: ObjectId) -> Result<Epoch, StoreError> {
    let tree = store
        .repo
        .find_commit(commit)
        .map_err(StoreError::git)?
        .tree()
        .map_err(StoreError::git)?;
    let Some(entry) = tree
        .lookup_entry_by_path(EPOCH_PATH)
        .map_err(StoreError::git)?
    else {
        return Ok(Epoch {
            number: 0,
            previous_tip: None,
        });
    };
    let obj = store
        .repo
        .find_object(entry.object_id())
        .map_err(StoreError::git)?;
    let marker = from_bytes(&obj.data)
        .map(EpochMarker::from)
        .map_err(|e| StoreError::git(format!("{EPOCH_PATH} is unreadable: {e}")))?;
    Ok(Epoch {
        number: marker.number(),
        previous_tip: marker
            .previous_tip()
            .and_then(|h| ObjectId::from_hex(h.as_bytes()).ok()),
    })
}

/// Starts a new epoch from the local tip; returns the new root commit and its epoch.
pub(crate) fn start(store: &Store, now: &str) -> Result<(ObjectId, Epoch), StoreError> {
    let tip = store
        .tip()?
        .ok_or_else(|| StoreError::git("there is no state branch to compact yet"))?;
    let current = of_commit(store, tip)?;
    let next = Epoch {
        number: current.number.saturating_add(1),
        previous_tip: Some(tip),
    };
    let marker = EpochMarker::new(next.number, tip.to_string(), now, store.machine.to_string());
    let bytes = to_bytes(&marker);
    let tip_tree = store
        .repo
        .find_commit(tip)
        .map_err(StoreError::git)?
        .tree_id()
        .map_err(StoreError::git)?
        .detach();
    let tree = store.write_tree_bytes(tip_tree, [(EPOCH_PATH, Some(bytes.as_slice()))])?;
    let message = format!(
        "start epoch {} (compacted from {})\n\nAgent-Coord-Op: epoch\nAgent-Coord-Machine: {}\nAgent-Coord-Previous-Tip: {tip}\n",
        next.number,
        tip.to_hex_with_len(12),
        store.machine
    );
    let root = store.commit(&message, tree, &[])?;
    if !store.move_ref(&store.state_ref, Some(tip), root, "start epoch")? {
        return Err(StoreError::Contention { attempts: 1 });
    }
    Ok((root, next))
}
