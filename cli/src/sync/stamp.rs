//! When this repository last synced with each remote, kept beside it in the git directory
//! (`agent-coord-sync.json`): operational metadata, not coordination state.

use std::collections::BTreeMap;

use crate::store::Store;

fn path(store: &Store) -> std::path::PathBuf {
    store.repo.git_dir().join("agent-coord-sync.json")
}

fn read(store: &Store) -> BTreeMap<String, String> {
    std::fs::read(path(store))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Records that `remote` was synced just now (best-effort: a failure only loses the stamp).
pub(super) fn record(store: &Store, remote: &str) {
    let mut stamps = read(store);
    let now = agent_coord_shared::time::format(chrono::Utc::now());
    stamps.insert(remote.to_owned(), now);
    let Ok(bytes) = serde_json::to_vec_pretty(&stamps) else {
        return;
    };
    let target = path(store);
    let tmp = target.with_extension(format!("json.tmp-{}", std::process::id()));
    if std::fs::write(&tmp, bytes).is_ok() {
        let _ = std::fs::rename(&tmp, &target);
    }
}

/// Returns when `remote` was last synced, if ever.
pub(crate) fn last_synced(store: &Store, remote: &str) -> Option<String> {
    read(store).remove(remote)
}
