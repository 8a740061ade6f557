//! The past (`?at=`): what a model of an earlier moment says about that moment, and the
//! commits that touched one batch or item (the time slider's stops; which record paths those
//! are is `inputs::paths`).

use serde::Deserialize;
use serde::Serialize;

/// The moment a model of the past shows: present only on such a model, which is read-only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PastView {
    /// The state branch commit that stood then (full hex id).
    pub commit: String,
    /// The clock the past was read with (ISO-8601 UTC): the time asked for, or the commit's.
    pub at: String,
    /// What the heartbeat history cannot tell about then (liveness unknown), a sentence each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub caveats: Vec<String>,
}

/// One commit that changed a batch's or an item's records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Touch {
    /// The commit (full hex id).
    pub commit: String,
    /// Its commit time (ISO-8601 UTC).
    pub at: String,
    /// The first line of its message.
    pub subject: String,
}

/// `GET /api/batches/{id}/commits` and `GET /api/items/{owner}/{repo}/{target}/commits`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Touches {
    /// Newest first.
    pub commits: Vec<Touch>,
    /// Whether older commits of the branch were not looked at (the walk is bounded).
    pub truncated: bool,
}
