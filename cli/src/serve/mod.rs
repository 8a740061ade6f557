//! The dashboard server behind `agent-coord serve`: read-only views of the coordination
//! refs, with exactly two writes to the state (import a batch plan, request a batch stop)
//! and one to this machine's settings (the target repositories the views are scoped to).
//!
//! Stateless: every response derives from the current refs through [`cache::ModelCache`];
//! a watcher polls the refs and announces each new model version on `GET /api/stream`.
//! `routes/` holds the API by resource, `extract.rs` the write extractors, `error.rs` the
//! one error type, `guard.rs` who may talk to the server, `assets.rs` the front end.

pub(crate) mod assets;
pub(crate) mod authority;
pub(crate) mod cache;
pub(crate) mod conn;
pub(crate) mod error;
pub(crate) mod extract;
pub(crate) mod guard;
pub(crate) mod limits;
pub(crate) mod routes;
pub(crate) mod start;
pub(crate) mod state;
#[cfg(test)]
mod tests;

use axum::Router;

pub(crate) use state::AppState;

/// The application: the API routes, the front end for everything else, the host guard
/// around all of it, and a log line per request (at debug level).
pub(crate) fn router(state: AppState) -> Router {
    routes::router()
        .fallback(assets::static_files)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::host_guard,
        ))
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .with_state(state)
}
