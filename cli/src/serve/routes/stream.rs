//! `GET /api/stream`: server-sent `version` events, one each time the refs move (the
//! watcher in `model::watcher` polls them), and `sync` events, one per sync the server ran.
//! Open streams are capped in all and per peer on another machine
//! (`http::streams`); past the cap the answer is 429, and the page polls instead.

use std::convert::Infallible;
use std::net::IpAddr;
use std::net::SocketAddr;
use std::time::Duration;

use axum::extract::ConnectInfo;
use axum::extract::State;
use axum::response::sse::Event;
use axum::response::sse::KeepAlive;
use axum::response::sse::Sse;
use axum::routing::get;
use axum::Extension;
use axum::Router;
use tokio_stream::wrappers::WatchStream;
use tokio_stream::StreamExt;

use crate::serve::error::ApiResult;
use crate::serve::state::AppState;

/// The stream route.
pub(crate) fn router() -> Router<AppState> {
    Router::new().route("/api/stream", get(stream_show))
}

async fn stream_show(
    State(s): State<AppState>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
) -> ApiResult<Sse<impl tokio_stream::Stream<Item = Result<Event, Infallible>>>> {
    let peer = peer.map_or(IpAddr::from([127, 0, 0, 1]), |c| c.0 .0.ip());
    let place = s.streams.take(peer, &s.limits)?;
    let versions = WatchStream::new(s.models.subscribe())
        .filter(|v| !v.is_empty())
        .map(|v| Event::default().event("version").data(v));
    // The server's own syncing (`--sync-every`), so the page's "synced 12s ago" stays true.
    let syncs = WatchStream::new(s.sync.subscribe())
        .filter(|view| view.every_secs > 0)
        .map(|view| {
            let data = serde_json::to_string(&view).unwrap_or_default();
            Event::default().event("sync").data(data)
        });
    let events = versions.merge(syncs).map(move |event| {
        place.hold();
        Ok(event)
    });
    Ok(Sse::new(events).keep_alive(KeepAlive::new().interval(Duration::from_secs(15))))
}
