//! The API, one file per resource; each exports `router()` with its routes and handlers
//! named `<resource>_<verb>`. A handler takes the state handles it uses (most only the
//! models) and runs its store work through [`blocking`].

pub(crate) mod annotations;
pub(crate) mod batch_imports;
pub(crate) mod batches;
pub(crate) mod commits;
pub(crate) mod dashboard;
pub(crate) mod doctor;
pub(crate) mod finds;
pub(crate) mod health;
pub(crate) mod items;
pub(crate) mod lanes;
pub(crate) mod settings;
pub(crate) mod stop_requests;
pub(crate) mod stream;
pub(crate) mod transcripts;

use axum::Router;

use super::error::ApiError;
use super::error::ApiResult;
use super::state::AppState;

/// Every API route.
pub(crate) fn router() -> Router<AppState> {
    Router::new()
        .merge(health::router())
        .merge(dashboard::router())
        .merge(doctor::router())
        .merge(finds::router())
        .merge(batch_imports::router())
        .merge(stop_requests::router())
        .merge(annotations::router())
        .merge(batches::router())
        .merge(items::router())
        .merge(lanes::router())
        .merge(commits::router())
        .merge(settings::router())
        .merge(stream::router())
        .merge(transcripts::router())
}

/// Runs `f` on a blocking thread (store reads and writes are synchronous).
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> ApiResult<T> + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(format!("request handler failed: {e}")))?
}
