//! The application: the API routes, the front end for everything else, the host guard
//! around all of it, gzip for clients that accept it, and a log line per request (at debug
//! level).

use axum::body::HttpBody;
use axum::Router;
use tower_http::compression::predicate::DefaultPredicate;
use tower_http::compression::predicate::Predicate;
use tower_http::compression::CompressionLayer;

use super::assets;
use super::http::guard;
use super::routes;
use super::state::AppState;

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

/// Returns the application over `state`.
pub(crate) fn router(state: AppState) -> Router {
    routes::router()
        .fallback(assets::static_files)
        .layer(axum::middleware::from_fn_with_state(
            state.access.clone(),
            guard::host_guard,
        ))
        .layer(CompressionLayer::new().compress_when(DefaultPredicate::new().and(NotHuge)))
        .layer(tower_http::trace::TraceLayer::new_for_http())
        .with_state(state)
}
