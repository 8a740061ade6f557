//! Starting the server: the runtime, the listener, the URL banner on stdout (the first
//! line; tests and scripts read it), the ref watcher behind `/api/stream`, and the
//! graceful shutdown on Ctrl-C.

use std::io::Write as _;
use std::net::SocketAddr;
use std::time::Duration;

use super::assets;
use super::router;
use super::state::AppState;
use crate::command_error::CommandError;

/// How often the watcher reads the refs.
const POLL: Duration = Duration::from_millis(250);

/// Where and how to listen.
pub(crate) struct Options<'a> {
    /// The address to bind.
    pub(crate) host: &'a str,
    /// The port (0 picks a free one).
    pub(crate) port: u16,
    /// Whether a simulated fleet is serving (the banner says so).
    pub(crate) demo: bool,
}

/// Serves `state` until Ctrl-C.
pub(crate) fn run(state: AppState, opts: &Options<'_>) -> Result<(), CommandError> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CommandError::operational(format!("cannot start the server runtime: {e}")))?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind((opts.host, opts.port))
            .await
            .map_err(|e| {
                CommandError::operational(format!(
                    "cannot listen on {}:{}: {e}",
                    opts.host, opts.port
                ))
            })?;
        let addr = listener.local_addr().map_err(|e| {
            CommandError::operational(format!("cannot read the bound address: {e}"))
        })?;
        banner(addr, opts.demo);
        tracing::info!(%addr, "dashboard listening");
        let watcher = state.clone();
        tokio::spawn(async move {
            loop {
                let s = watcher.clone();
                let _ = tokio::task::spawn_blocking(move || s.poll_version()).await;
                tokio::time::sleep(POLL).await;
            }
        });
        axum::serve(
            listener,
            router(state).into_make_service_with_connect_info::<SocketAddr>(),
        )
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| CommandError::operational(format!("server failed: {e}")))
    })
}

/// Prints the URL (and the demo line) to stdout, and the no-front-end notice to stderr.
fn banner(addr: SocketAddr, demo: bool) {
    let shown = if addr.is_ipv6() {
        format!("[{}]", addr.ip())
    } else {
        addr.ip().to_string()
    };
    // A reader that goes away (a closed pipe) must not take the server down, so write
    // errors are ignored.
    let mut banner = format!("agent-coord dashboard: http://{shown}:{}/\n", addr.port());
    if demo {
        banner.push_str("demo fleet: a temporary repository, moving every 3 s; Ctrl-C stops it\n");
    }
    let mut stdout = std::io::stdout().lock();
    let _ = stdout
        .write_all(banner.as_bytes())
        .and_then(|()| stdout.flush());
    drop(stdout);
    if !assets::bundled() {
        let _ = writeln!(
            std::io::stderr(),
            "notice: built without the web front end; serving the JSON API only (see /)"
        );
    }
}
