//! The accept loop and each connection's life: HTTP/1.1 through hyper with its header-read
//! timeout (which also closes connections idle between requests), the connection cap of
//! [`limits::admit`] (closing the oldest idle connection, or refusing, with a notice on
//! stderr), the peer address for the guards, and the graceful stop.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use std::time::Instant;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::Router;
use http_body_util::BodyExt as _;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use hyper_util::rt::TokioTimer;
use tokio::net::TcpListener;
use tokio::net::TcpStream;
use tokio::sync::watch;
use tokio::sync::Notify;
use tower::ServiceExt as _;

use super::limits;
use super::limits::Admission;
use super::limits::Limits;

/// How long a stop waits for requests in progress before closing their connections.
const STOP_GRACE: Duration = Duration::from_secs(2);
/// At most one cap notice per this long.
const NOTICE_EVERY: Duration = Duration::from_secs(10);

/// One open connection, as the accept loop tracks it.
struct Slot {
    peer: SocketAddr,
    /// Requests in progress (their responses not yet sent in full).
    busy: Arc<AtomicUsize>,
    /// Told when the connection is to be closed for a newcomer.
    evict: Arc<Notify>,
}

/// The open connections, by id (ids grow with accept order).
#[derive(Default)]
struct Registry {
    slots: Mutex<BTreeMap<u64, Slot>>,
}

impl Registry {
    /// Decides about a new connection `id` ([`limits::admit`]): tells the idle connection
    /// it evicts to close, and registers the newcomer unless it is refused. `None` when the
    /// registry is poisoned.
    fn admit(&self, id: u64, slot: Slot, limits: &Limits) -> Option<Admission> {
        let mut slots = self.slots.lock().ok()?;
        let open: Vec<limits::Open> = slots
            .iter()
            .map(|(id, s)| limits::Open {
                id: *id,
                peer: s.peer.ip(),
                busy: s.busy.load(Ordering::SeqCst) > 0,
            })
            .collect();
        let admission = limits::admit(&open, slot.peer.ip(), limits);
        if let Admission::Evict(victim) = admission {
            if let Some(v) = slots.get(&victim) {
                v.evict.notify_one();
            }
        }
        if admission != Admission::Refuse {
            slots.insert(id, slot);
        }
        Some(admission)
    }

    /// Asks the oldest connection not in a request to close; `false` when there is none.
    fn evict_oldest_idle(&self) -> bool {
        let Ok(slots) = self.slots.lock() else {
            return false;
        };
        // Ids grow with each accepted connection: the first idle one is the oldest.
        match slots.values().find(|s| s.busy.load(Ordering::SeqCst) == 0) {
            Some(victim) => {
                victim.evict.notify_one();
                true
            }
            None => false,
        }
    }

    /// Waits (at most [`STOP_GRACE`]) for the connections to finish their requests.
    async fn drain(&self) {
        let deadline = Instant::now() + STOP_GRACE;
        while Instant::now() < deadline && self.slots.lock().is_ok_and(|s| !s.is_empty()) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Counts a request in progress for as long as it lives (its response body included).
struct Busy(Arc<AtomicUsize>);

impl Busy {
    fn new(counter: Arc<AtomicUsize>) -> Busy {
        counter.fetch_add(1, Ordering::SeqCst);
        Busy(counter)
    }

    /// Does nothing: a closure that calls it owns the guard.
    fn hold(&self) {}
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Removes a connection from the registry when its task ends.
struct Leave(Arc<Registry>, u64);

impl Drop for Leave {
    fn drop(&mut self) {
        if let Ok(mut slots) = self.0.slots.lock() {
            slots.remove(&self.1);
        }
    }
}

/// When the cap was last reported, and what happened since.
#[derive(Default)]
struct CapNotice {
    last: Option<Instant>,
    evicted: usize,
    refused: usize,
}

impl CapNotice {
    /// Counts one decision at the cap and prints a notice when one is due.
    fn note(&mut self, admission: Admission, limits: &Limits) {
        match admission {
            Admission::Admit => return,
            Admission::Evict(_) => self.evicted += 1,
            Admission::Refuse => self.refused += 1,
        }
        if self.last.is_some_and(|t| t.elapsed() < NOTICE_EVERY) {
            return;
        }
        self.last = Some(Instant::now());
        let line = format!(
            "notice: connection cap reached ({} open at most, {} per remote peer; from the file-descriptor limit): closed {} idle connection(s) for newcomers, refused {} while every slot was busy",
            limits.connections, limits.connections_per_remote, self.evicted, self.refused
        );
        tracing::warn!("{line}");
        // Like the banner: a closed stderr must not take the server down.
        let _ = writeln!(std::io::stderr(), "{line}");
        self.evicted = 0;
        self.refused = 0;
    }
}

/// Serves `app` on `listener` until `stop` turns true, then gives requests in progress
/// [`STOP_GRACE`] to finish.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    mut stop: watch::Receiver<bool>,
) {
    let registry = Arc::new(Registry::default());
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let builder = Arc::new(builder);
    let mut notice = CapNotice::default();
    let mut next_id = 0u64;
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.wait_for(|s| *s) => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                accept_failed(&e, &registry, &mut notice, &limits).await;
                continue;
            }
        };
        next_id += 1;
        let id = next_id;
        let (busy, evict) = (Arc::new(AtomicUsize::new(0)), Arc::new(Notify::new()));
        let slot = Slot {
            peer,
            busy: busy.clone(),
            evict: evict.clone(),
        };
        let Some(admission) = registry.admit(id, slot, &limits) else {
            break;
        };
        notice.note(admission, &limits);
        if admission == Admission::Refuse {
            drop(stream);
            continue;
        }
        let leave = Leave(registry.clone(), id);
        tokio::spawn(connection(
            stream,
            peer,
            app.clone(),
            builder.clone(),
            (busy, evict),
            stop.clone(),
            leave,
        ));
    }
    registry.drain().await;
}

/// Recovers from a failed accept. Out of descriptors before the cap (the process holds
/// other files too): closes the oldest idle connection so the next accept succeeds, instead
/// of waiting for a timeout to free one. Any other error (a connection reset before
/// accept): waits a little rather than spin.
async fn accept_failed(
    e: &std::io::Error,
    registry: &Registry,
    notice: &mut CapNotice,
    limits: &Limits,
) {
    let out_of_files = matches!(
        e.raw_os_error(),
        Some(code) if code == nix::libc::EMFILE || code == nix::libc::ENFILE
    );
    if out_of_files && registry.evict_oldest_idle() {
        notice.note(Admission::Evict(0), limits);
        tokio::time::sleep(Duration::from_millis(5)).await;
    } else {
        tracing::warn!(error = %e, "accept failed");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Serves one connection until it closes, is evicted (while idle) or the server stops.
async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    app: Router,
    builder: Arc<hyper::server::conn::http1::Builder>,
    (busy, evict): (Arc<AtomicUsize>, Arc<Notify>),
    mut stop: watch::Receiver<bool>,
    _leave: Leave,
) {
    let counter = busy.clone();
    let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
        let in_progress = Busy::new(counter.clone());
        req.extensions_mut().insert(ConnectInfo(peer));
        let app = app.clone();
        async move {
            let resp = match app.oneshot(req.map(Body::new)).await {
                Ok(resp) => resp,
                Err(never) => match never {},
            };
            // The request counts as in progress until its body has been sent in full
            // (or the connection dropped it).
            Ok::<_, Infallible>(resp.map(|body| {
                Body::new(body.map_frame(move |frame| {
                    in_progress.hold();
                    frame
                }))
            }))
        }
    });
    let conn = builder.serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    let mut stopping = false;
    loop {
        tokio::select! {
            _ = conn.as_mut() => return,
            () = evict.notified() => {
                if busy.load(Ordering::SeqCst) == 0 {
                    return;
                }
                // It took a request since it was chosen: finish that, then close.
                conn.as_mut().graceful_shutdown();
            }
            _ = stop.wait_for(|s| *s), if !stopping => {
                stopping = true;
                conn.as_mut().graceful_shutdown();
            }
        }
    }
}
