//! The dashboard server behind `agent-coord serve`: read-only views of the coordination
//! refs, with three writes to the state (import a batch plan, request a batch stop,
//! annotate an item's attention) and one to this machine's settings (the target
//! repositories the views are scoped to).
//!
//! Stateless: every response derives from the current refs through [`cache::ModelCache`];
//! a watcher polls the refs and announces each new model version on `GET /api/stream`.
//! `routes/` holds the API by resource, `extract.rs` the write extractors, `error.rs` the
//! one error type, `guard.rs` who may talk to the server, `assets.rs` the front end.

pub(crate) mod assets;
pub(crate) mod authority;
mod beats;
pub(crate) mod cache;
pub(crate) mod conn;
mod deriver;
pub(crate) mod enrich;
pub(crate) mod error;
pub(crate) mod extract;
pub(crate) mod guard;
pub(crate) mod limits;
pub(crate) mod routes;
pub(crate) mod start;
pub(crate) mod state;
pub(crate) mod sync_loop;
#[cfg(test)]
mod tests;

use axum::body::HttpBody;
use axum::Router;
use tower_http::compression::predicate::DefaultPredicate;
use tower_http::compression::predicate::Predicate;
use tower_http::compression::CompressionLayer;

pub(crate) use state::AppState;

/// Answers larger than this go uncompressed: gzip of the whole scale-100 model (57 MB) would
/// cost a second of CPU per request, and the page never asks for it.
const COMPRESS_AT_MOST: u64 = 16 * 1024 * 1024;

/// Compresses what the default predicate would (not event streams, not images, not tiny
/// answers) unless it is huge.
#[derive(Clone, Copy)]
struct NotHuge;

impl Predicate for NotHuge {
    fn should_compress<B>(&self, response: &http::Response<B>) -> bool
    where
        B: HttpBody,
    {
        response
            .body()
            .size_hint()
            .upper()
            .is_some_and(|n| n <= COMPRESS_AT_MOST)
    }
}

/// The application: the API routes, the front end for everything else, the host guard
/// around all of it, gzip for clients that accept it, and a log line per request (at debug
/// level).
pub(crate) fn router(state: AppState) -> Router {
    routes::router()
        .fallback(assets::static_files)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            guard::host_guard,
        ))
        .layer(CompressionLayer::new().compress_when(DefaultPredicate::new().and(NotHuge)))
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .with_state(state)
}
