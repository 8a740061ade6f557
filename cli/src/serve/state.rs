//! What the router shares: one handle per concern, each cheap to clone. Handlers take the
//! handles they use; middleware, extractors and background tasks take theirs through
//! axum's `FromRef` (or are handed them at start), never this whole state.

use std::path::PathBuf;
use std::sync::Arc;

use agent_coord_shared::dashboard::derive::freshness::SyncView;
use axum::extract::FromRef;
use tokio::sync::watch;

use super::background::enrich::Enrichment;
use super::background::sync_loop;
use super::http::guard::Access;
use super::http::limits::Limits;
use super::http::streams::OpenStreams;
use super::model::models::Models;
use crate::context::Env;
use crate::context::GlobalArgs;

/// The router's state.
#[derive(Clone)]
pub(crate) struct AppState {
    /// The models, and the repository they are derived from.
    pub(crate) models: Models,
    /// Who may talk to the server.
    pub(crate) access: Access,
    /// The connection, body, stream and timeout limits.
    pub(crate) limits: Limits,
    /// The event streams open now.
    pub(crate) streams: OpenStreams,
    /// How the GitHub enrichment is doing (the refresher writes it).
    pub(crate) github: Arc<Enrichment>,
    /// The server's own syncing with the remote (`--sync-every`), as last observed.
    pub(crate) sync: watch::Sender<SyncView>,
    /// The coordinator configuration `--coordinator-config` (or its variable) named, where
    /// lane transcripts' workspace roots are read (`None`: the default location).
    pub(crate) coordinator_config: Option<PathBuf>,
}

impl AppState {
    /// Returns the state of a server with the default limits (tests drive it in process).
    #[cfg(test)]
    pub(crate) fn new(globals: GlobalArgs, env: Env, allowed_hosts: Vec<String>) -> AppState {
        AppState::with_limits(globals, env, allowed_hosts, Limits::default())
    }

    /// Returns the state of a server with `limits`.
    pub(crate) fn with_limits(
        globals: GlobalArgs,
        env: Env,
        allowed_hosts: Vec<String>,
        limits: Limits,
    ) -> AppState {
        AppState {
            models: Models::new(globals, env),
            access: Access::new(allowed_hosts),
            limits,
            streams: OpenStreams::default(),
            github: Arc::default(),
            sync: watch::channel(sync_loop::initial(0)).0,
            coordinator_config: None,
        }
    }
}

impl FromRef<AppState> for Models {
    fn from_ref(s: &AppState) -> Models {
        s.models.clone()
    }
}

impl FromRef<AppState> for Access {
    fn from_ref(s: &AppState) -> Access {
        s.access.clone()
    }
}

impl FromRef<AppState> for Limits {
    fn from_ref(s: &AppState) -> Limits {
        s.limits.clone()
    }
}
