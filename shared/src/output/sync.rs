//! What `sync --json` prints, and the `sync` object `status --json` and `doctor --json`
//! carry.

use serde::Serialize;

use crate::rules::reconcile::Conflict;
use crate::rules::reconcile::LostClaim;

/// `sync --json`.
#[derive(Debug, Clone, Serialize)]
pub struct SyncAnswer<'a> {
    /// The remote synced with.
    pub remote: &'a str,
    /// How the state branch ended (`pushed`, `fast_forward`, `up_to_date`, …).
    pub result: &'static str,
    /// The state branch's tip afterwards.
    pub tip: Option<String>,
    /// Records changed here that the remote did not have.
    pub local_changes: usize,
    /// Records changed on the remote.
    pub remote_changes: usize,
    /// Claims this machine lost to the remote.
    pub lost_claims: Vec<LostClaimRow<'a>>,
    /// Records both sides changed differently.
    pub conflicts: &'a [Conflict],
    /// Whether this machine's heartbeat ref was pushed.
    pub heartbeat_pushed: bool,
    /// How many fetch–merge–push rounds it took.
    pub rounds: u32,
}

/// A lost claim as `sync --json` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct LostClaimRow<'a> {
    /// The claim's path.
    pub path: &'a str,
    /// The target, as `repo#target`.
    pub target: &'a str,
    /// Who held it here.
    pub local_holder: &'a str,
    /// Who holds it on the remote (`null`: released there).
    pub remote_holder: Option<&'a str>,
}

impl<'a> From<&'a LostClaim> for LostClaimRow<'a> {
    fn from(l: &'a LostClaim) -> Self {
        LostClaimRow {
            path: &l.path,
            target: &l.label,
            local_holder: &l.local_holder,
            remote_holder: l.remote_holder.as_deref(),
        }
    }
}

/// How this repository stands against its default remote (as last fetched).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SyncInfo {
    /// The default remote.
    pub remote: String,
    /// Local commits the remote lacks, when known.
    pub ahead: Option<usize>,
    /// Remote commits not here, when known.
    pub behind: Option<usize>,
    /// When this machine last synced with it.
    pub last_synced: Option<String>,
}

impl SyncInfo {
    /// Returns the one-line text form of `status` and `doctor`.
    pub fn line(&self) -> String {
        let n = |v: Option<usize>| v.map_or("?".to_owned(), |v| v.to_string());
        format!(
            "sync: {} ahead, {} behind {} (as last fetched); last synced {}",
            n(self.ahead),
            n(self.behind),
            self.remote,
            self.last_synced.as_deref().unwrap_or("never")
        )
    }
}
