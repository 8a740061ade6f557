//! `GET /api/stream`: server-sent `version` events, one each time the refs move (the
//! watcher in `serve::start` polls them).

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::State;
use axum::response::sse::Event;
use axum::response::sse::KeepAlive;
use axum::response::sse::Sse;
use axum::routing::get;
use axum::Router;
use tokio_stream::wrappers::WatchStream;
use tokio_stream::StreamExt;

use crate::serve::state::AppState;

/// The stream route.
pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/api/stream", get(stream_show))
}

async fn stream_show(
    State(s): State<AppState>,
) -> Sse<impl tokio_stream::Stream<Item = Result<Event, Infallible>>> {
    let events = WatchStream::new(s.version.subscribe())
        .filter(|v| !v.is_empty())
        .map(|v| Ok(Event::default().event("version").data(v)));
    Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}
