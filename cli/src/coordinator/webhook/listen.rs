//! The webhook listener on its own thread and tokio runtime, beside the synchronous
//! `--follow` loop: binds the address (or fails the command at once), then accepts
//! connections under a cap, each served by hyper with a header-read timeout, one request
//! per connection, and a bound on its whole life. Stops when dropped.

use std::convert::Infallible;
use std::io::Write as _;
use std::net::SocketAddr;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use hyper_util::rt::TokioTimer;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::sync::Semaphore;
use tower::ServiceExt as _;

use super::addr;
use super::router;
use super::router::Hooks;
use crate::command_error::CommandError;

/// Connections served at once; more are closed at accept (GitHub retries nothing, and the
/// next poll covers what they would have woken).
const MAX_CONNECTIONS: usize = 32;
/// How long a client may take to send its request headers.
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest a connection lives, request and answer included.
const CONNECTION_LIFE: Duration = Duration::from_secs(30);

/// A running listener; dropping it stops it.
pub(crate) struct Listener {
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Binds `at` and serves `hooks` there on a thread of its own; says on stderr where it
/// listens, and that it listens beyond this machine when `at` is not loopback.
pub(crate) fn start(at: SocketAddr, hooks: Hooks) -> Result<Listener, CommandError> {
    let (bound_tx, bound_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = oneshot::channel();
    let thread = std::thread::Builder::new()
        .name("webhook-listener".into())
        .spawn(move || {
            let runtime = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(r) => r,
                Err(e) => {
                    let _ = bound_tx.send(Err(format!("cannot start its runtime: {e}")));
                    return;
                }
            };
            runtime.block_on(async move {
                let listener = match TcpListener::bind(at).await {
                    Ok(l) => l,
                    Err(e) => {
                        let _ = bound_tx.send(Err(format!("cannot listen on {at}: {e}")));
                        return;
                    }
                };
                let addr = listener.local_addr().unwrap_or(at);
                let _ = bound_tx.send(Ok(addr));
                serve(listener, router::router(hooks), stop_rx).await;
            });
        })
        .map_err(|e| {
            CommandError::operational(format!("cannot start the webhook listener: {e}"))
        })?;
    let addr = match bound_rx.recv() {
        Ok(Ok(addr)) => addr,
        Ok(Err(why)) => {
            let _ = thread.join();
            return Err(CommandError::operational(format!(
                "webhook listener: {why}"
            )));
        }
        Err(_) => {
            let _ = thread.join();
            return Err(CommandError::operational(
                "the webhook listener stopped before it was bound",
            ));
        }
    };
    let mut err = std::io::stderr().lock();
    let _ = writeln!(
        err,
        "webhook: listening on http://{addr}{} for GitHub deliveries",
        router::PATH
    );
    if !addr::is_loopback(&addr) {
        let _ = writeln!(
            err,
            "webhook: notice: {addr} is reachable from other machines, as --listen named it; every delivery must carry the secret's signature"
        );
    }
    drop(err);
    Ok(Listener {
        stop: Some(stop_tx),
        thread: Some(thread),
    })
}

/// Accepts connections until `stop`, at most [`MAX_CONNECTIONS`] at once.
async fn serve(listener: TcpListener, app: Router, mut stop: oneshot::Receiver<()>) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = &mut stop => return,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!(error = %e, "webhook accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(slot) = slots.clone().try_acquire_owned() else {
            drop(stream);
            continue;
        };
        let app = app.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |mut req: hyper::Request<Incoming>| {
                req.extensions_mut().insert(ConnectInfo(peer));
                let app = app.clone();
                async move {
                    let resp = match app.oneshot(req.map(Body::new)).await {
                        Ok(resp) => resp,
                        Err(never) => match never {},
                    };
                    Ok::<_, Infallible>(resp)
                }
            });
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .keep_alive(false);
            let conn = builder.serve_connection(TokioIo::new(stream), service);
            let _ = tokio::time::timeout(CONNECTION_LIFE, conn).await;
            drop(slot);
        });
    }
}
