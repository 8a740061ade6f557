//! The target repositories in force and where they came from: `serve --repos`, this
//! machine's saved setting, or neither (every repository is shown).

use agent_coord_shared::dashboard::model::ScopeSource;
use agent_coord_shared::dashboard::scope::Scope;

/// The target repositories in force and where they came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScopeInForce {
    pub(crate) scope: Scope,
    pub(crate) source: ScopeSource,
}
