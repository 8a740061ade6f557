//! Publishing this machine's heartbeat ref alone, when the state branch is contended.
//!
//! A heartbeat ref has one writer (its machine), so pushing it never races another
//! machine: only the state branch does. A heartbeat whose full sync keeps losing the
//! branch race is still published this way; the branch waits for the next sync.

use super::SyncError;
use crate::git_subprocess::Git;
use crate::git_subprocess::GitError;
use crate::git_subprocess::PushUpdate;
use crate::store::ref_target;
use crate::store::tracking_heartbeat_prefix;
use crate::store::Store;

/// Pushes this machine's heartbeat ref to `remote` with a lease on the remote's current
/// value; returns whether there was anything to push.
pub(crate) fn publish_heartbeat(store: &Store, remote: &str) -> Result<bool, SyncError> {
    let remote_err = |source| SyncError::Remote {
        remote: remote.to_owned(),
        source,
    };
    let own_ref = store.heartbeat_ref();
    let Some(own) = ref_target(&store.repo, &own_ref)? else {
        return Ok(false);
    };
    let git = Git::new(store.repo.git_dir());
    let current = git
        .ls_remote(remote, &[&own_ref])
        .map_err(remote_err)?
        .into_iter()
        .find(|(name, _)| *name == own_ref)
        .map(|(_, id)| id);
    if current.as_deref() == Some(own.to_string().as_str()) {
        return Ok(false);
    }
    let update = PushUpdate {
        refname: own_ref.clone(),
        new: own.to_string(),
        expected: current,
    };
    let results = git.push(remote, &[update]).map_err(remote_err)?;
    match results.iter().find(|r| r.refname == own_ref) {
        Some(r) if r.accepted() => {
            let tracking = format!("{}{}", tracking_heartbeat_prefix(remote), store.machine);
            store.set_ref(&tracking, own, "sync: pushed heartbeat")?;
            Ok(true)
        }
        other => Err(SyncError::Remote {
            remote: remote.to_owned(),
            source: GitError::Failed {
                command: "push".into(),
                message: other.map_or_else(
                    || format!("{own_ref}: no answer from the remote"),
                    |r| format!("{} {}", r.refname, r.summary),
                ),
            },
        }),
    }
}
