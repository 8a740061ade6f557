//! Starting the server: the runtime, the listener, the URL banner on stdout (the first
//! line; tests and scripts read it), the background tasks (the ref watcher behind
//! `/api/stream`, the GitHub refresher, the interval sync of `--sync-every`), each handed
//! the handles it uses, and the graceful shutdown on Ctrl-C (connections are served by
//! `http/conn.rs`). A model the last run saved is restored first, and the first derivation
//! starts at once (`Models::restore`, `Models::warm_up`); a graceful stop saves the model
//! shown last (`Models::save_latest`).

use std::io::Write as _;
use std::net::SocketAddr;
use std::time::Duration;

use super::assets;
use super::background::enrich;
use super::background::sync_loop;
use super::http::conn;
use super::model::watcher;
use super::router::router;
use super::state::AppState;
use crate::command_error::CommandError;

/// Where and how to listen.
pub(crate) struct Options<'a> {
    /// The address to bind.
    pub(crate) host: &'a str,
    /// The port (0 picks a free one).
    pub(crate) port: u16,
    /// Whether a simulated fleet is serving (the banner says so).
    pub(crate) demo: bool,
    /// How often the server syncs with the remote (`None`: never).
    pub(crate) sync_every: Option<Duration>,
    /// The GitHub enrichment's refresher.
    pub(crate) github: enrich::Options,
}

/// Serves `state` until Ctrl-C.
pub(crate) fn run(state: AppState, opts: &Options<'_>) -> Result<(), CommandError> {
    // The last run's model, when it still stands, is the first view while this run derives
    // its own (at once, on a thread of its own).
    if state.models.restore() {
        let models = state.models.clone();
        std::thread::Builder::new()
            .name("model-warm-up".into())
            .spawn(move || models.warm_up())
            .map_err(|e| CommandError::operational(format!("cannot start the warm-up: {e}")))?;
    }
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
        state.access.bound(addr.port());
        banner(addr, opts.demo);
        tracing::info!(%addr, "dashboard listening");
        enrich::spawn(
            state.models.clone(),
            state.github.clone(),
            opts.github.clone(),
        );
        watcher::spawn(state.models.clone())?;
        if let Some(every) = opts.sync_every {
            state.sync.send_modify(|v| v.every_secs = every.as_secs());
            tokio::spawn(sync_loop::run(
                state.models.clone(),
                state.sync.clone(),
                every,
            ));
        }
        let (stop_tx, stop) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            let _ = tokio::signal::ctrl_c().await;
            let _ = stop_tx.send(true);
        });
        let (limits, models) = (state.limits.clone(), state.models.clone());
        conn::serve(listener, router(state), limits, stop).await;
        // What this run shows last is the next start's first view.
        let _ = tokio::task::spawn_blocking(move || models.save_latest()).await;
        Ok(())
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

/// Raises this process's soft limit on open files to its hard limit (at most 65,536) and
/// returns the limit now in force, from which the connection cap is derived.
pub(crate) fn raise_fd_limit() -> u64 {
    use nix::sys::resource::getrlimit;
    use nix::sys::resource::setrlimit;
    use nix::sys::resource::Resource;
    let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) else {
        return 1024;
    };
    let wanted = hard.min(65_536).max(soft);
    if wanted > soft && setrlimit(Resource::RLIMIT_NOFILE, wanted, hard).is_ok() {
        return wanted;
    }
    soft
}
