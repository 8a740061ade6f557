//! The dashboard server behind `agent-coord serve`: read-only views of the coordination
//! refs, with three writes to the state (import a batch plan, request a batch stop,
//! annotate an item's attention) and one to this machine's settings (the target
//! repositories the views are scoped to).
//!
//! Stateless: every response derives from the current refs through `model/` (the cache,
//! the deriving thread, the ref watcher that announces each new model version on
//! `GET /api/stream`). `http/` holds the connections, the guards, the limits and the write
//! extractors; `background/` the interval sync and the GitHub enrichment; `routes/` the API
//! by resource; `router.rs` puts them together over `state.rs`'s handles; `error.rs` is the
//! one error type and `assets.rs` the front end.

pub(crate) mod assets;
pub(crate) mod background;
pub(crate) mod error;
pub(crate) mod http;
pub(crate) mod model;
pub(crate) mod router;
pub(crate) mod routes;
pub(crate) mod start;
pub(crate) mod state;
#[cfg(test)]
mod tests;
