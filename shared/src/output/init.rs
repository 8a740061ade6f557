//! What `init --json` prints.

use serde::Serialize;

/// `init --json`: where the state lives and how it is shared.
#[derive(Debug, Clone, Serialize)]
pub struct InitAnswer<'a> {
    /// The repository's path.
    pub repository: String,
    /// The state branch's ref.
    pub state_ref: &'a str,
    /// The state branch's name.
    pub branch: &'a str,
    /// This machine's id.
    pub machine_id: String,
    /// The remote the state is shared through, when there is one.
    pub remote: Option<&'a str>,
    /// Its URL.
    pub remote_url: Option<&'a str>,
    /// Whether writes publish through the remote by default.
    pub sync_by_default: bool,
}
