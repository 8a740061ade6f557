//! Scoping by saved target repositories (reference §7.3), beside the pipeline: the
//! repositories a scope shows ([`repos`]), the setting's rules ([`settings`]), the
//! repository-reference heuristic ([`refs`]), and what the dashboard shows of the state
//! under a scope ([`apply`]): records of other repositories left out with a counted notice,
//! their names redacted from the records that stay.
//!
//! An empty scope (nothing saved, no `--repos`) shows everything, exactly as without one.

pub mod apply;
pub mod refs;
pub mod repos;
pub mod settings;

pub use apply::apply;
pub use repos::Scope;
pub use repos::WriteScopeError;
pub use repos::OUTSIDE;
