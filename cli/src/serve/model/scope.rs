//! The target repositories in force and where they came from: `serve --repos`, this
//! machine's saved setting, or neither (every repository is shown).

use agent_coord_shared::dashboard::scope::Scope;

/// Where the scope in force came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ScopeSource {
    /// `serve --repos` (for this run).
    CommandLine,
    /// This machine's saved setting.
    Saved,
    /// Nothing saved and no `--repos`: every repository is shown.
    Unset,
}

/// The target repositories in force and where they came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScopeInForce {
    pub(crate) scope: Scope,
    pub(crate) source: ScopeSource,
}
