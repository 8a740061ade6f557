//! What every handler shares: the options the server started with, the repository it
//! keeps open, the model cache and the version announcer.
//!
//! No coordination state lives here: the cache only remembers derivations of the refs,
//! and every write goes through the store's transaction like a CLI write.

use std::collections::HashMap;
use std::net::IpAddr;
use std::ops::Deref;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::OnceLock;

use agent_coord_shared::dashboard::derive::freshness::SyncView;
use agent_coord_shared::dashboard::scope::Scope;
use tokio::sync::watch;

use super::cache;
use super::deriver;
use super::enrich;
use super::error::ApiError;
use super::error::ApiResult;
use super::guard;
use super::limits::Limits;
use crate::command_error::CommandError;
use crate::context::Context;
use crate::context::Env;
use crate::context::GlobalArgs;
use crate::store::settings as saved;
use crate::store::SharedStore;
use crate::store::Store;

/// The handlers' state: cheap to clone (one shared [`Shared`]).
#[derive(Clone)]
pub(crate) struct AppState(Arc<Shared>);

/// Everything a request handler needs.
pub(crate) struct Shared {
    pub(crate) globals: GlobalArgs,
    pub(crate) env: Env,
    /// The repository, opened by the first request that could open it, then kept.
    store: Mutex<Option<Arc<SharedStore>>>,
    pub(crate) cache: Arc<Mutex<cache::ModelCache>>,
    /// The one thread that derives models (see [`deriver`]).
    deriver: deriver::Deriver,
    pub(crate) allowed_hosts: Vec<String>,
    /// The port the server listens on, once bound (a Host naming another port is refused).
    pub(crate) bound_port: OnceLock<u16>,
    pub(crate) version: watch::Sender<String>,
    /// The server's own syncing with the remote (`--sync-every`), as last observed.
    pub(crate) sync: watch::Sender<SyncView>,
    /// The connection, stream and timeout limits.
    pub(crate) limits: Limits,
    /// The event streams open now, in all and by peer.
    pub(crate) streams: Mutex<HashMap<IpAddr, usize>>,
    /// The machine's interface addresses (a function so tests can pretend).
    pub(crate) local_addrs: fn() -> Vec<IpAddr>,
    /// What GitHub said at its last refresh (the refresher writes it).
    pub(crate) github: enrich::Enrichment,
    /// The target repositories in force, once known (`--repos`, else read from the saved
    /// setting by the first request that needs them; replaced by `PUT /api/settings`).
    scope: Mutex<Option<ScopeInForce>>,
}

/// Where the scope in force came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum ScopeSource {
    /// `serve --repos` (for this run).
    CommandLine,
    /// This machine's saved setting.
    Saved,
    /// Nothing saved and no `--repos`: every repository is shown.
    Unset,
}

/// The target repositories in force and where they came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScopeInForce {
    pub(crate) scope: Scope,
    pub(crate) source: ScopeSource,
}

impl Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
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
        AppState(Arc::new(Shared {
            globals,
            env,
            store: Mutex::new(None),
            cache: Arc::new(Mutex::new(cache::ModelCache::default())),
            deriver: deriver::Deriver::default(),
            allowed_hosts,
            bound_port: OnceLock::new(),
            version: watch::channel(String::new()).0,
            sync: watch::channel(super::sync_loop::initial(0)).0,
            limits,
            streams: Mutex::new(HashMap::new()),
            local_addrs: guard::local_addresses,
            github: enrich::Enrichment::default(),
            scope: Mutex::new(None),
        }))
    }
}

impl Shared {
    /// Returns a context for one request (the clock read now, or as pinned).
    pub(crate) fn context(&self) -> Result<Context, CommandError> {
        Context::new(self.globals.clone(), self.env.clone())
    }

    /// Returns a read-only store on the repository the server keeps open (opening it on
    /// first use; a repository that cannot be opened yet is tried again next time).
    pub(crate) fn store(&self) -> Result<Store, CommandError> {
        let mut slot = self
            .store
            .lock()
            .map_err(|_| CommandError::operational("repository handle poisoned"))?;
        if let Some(shared) = slot.as_ref() {
            return Ok(shared.local());
        }
        let (store, _) = self.context()?.open_store(false)?;
        let shared = Arc::new(store.share());
        let local = shared.local();
        *slot = Some(shared);
        Ok(local)
    }

    /// Puts `scope` in force (from `--repos`, or a saved `PUT /api/settings`); the next
    /// model is derived under it.
    pub(crate) fn set_scope(&self, scope: ScopeInForce) -> ApiResult<()> {
        *self
            .scope
            .lock()
            .map_err(|_| ApiError::internal("scope poisoned"))? = Some(scope);
        Ok(())
    }

    /// Returns the target repositories in force: `--repos` or the last saved change, else
    /// this machine's saved setting (read once), else every repository. A saved setting that
    /// cannot be used is a 500 on every request until it is repaired or replaced.
    pub(crate) fn scope(&self) -> ApiResult<ScopeInForce> {
        if let Some(s) = self
            .scope
            .lock()
            .map_err(|_| ApiError::internal("scope poisoned"))?
            .clone()
        {
            return Ok(s);
        }
        let store = self.store()?;
        let found = match saved::saved_target_repos(&store) {
            Ok(Some(repos)) => ScopeInForce {
                scope: Scope::of(&repos),
                source: ScopeSource::Saved,
            },
            Ok(None) => ScopeInForce {
                scope: Scope::all(),
                source: ScopeSource::Unset,
            },
            Err(e) => return Err(ApiError::internal(e.to_string())),
        };
        let mut slot = self
            .scope
            .lock()
            .map_err(|_| ApiError::internal("scope poisoned"))?;
        // A concurrent PUT wins over what was read before it.
        Ok(slot.get_or_insert(found).clone())
    }

    /// Returns the current model under the scope in force (derived only when the refs or
    /// the scope moved).
    pub(crate) fn built(&self) -> ApiResult<Arc<cache::Built>> {
        let cx = self.context()?;
        let store = self.store()?;
        let scope = self.scope()?.scope;
        let (now, github, cache) = (cx.now(), self.github.facts(), self.cache.clone());
        self.deriver.run(move || {
            let mut cache = cache
                .lock()
                .map_err(|_| ApiError::internal("model cache poisoned"))?;
            Ok(cache.get(&store, now, github, &scope)?)
        })
    }

    /// Returns the model currently cached, if any (without deriving).
    /// The serial of the model cached now, if any (see [`cache::Built::serial`]).
    pub(crate) fn last_serial(&self) -> Option<u64> {
        self.cache.lock().ok().and_then(|c| c.current_serial())
    }

    /// Reads the refs and publishes their version if it changed.
    pub(crate) fn poll_version(&self) {
        if let Ok(store) = self.store() {
            self.publish_version(&store);
        }
    }

    /// Reads the refs through `store` and publishes their version if it changed.
    pub(crate) fn publish_version(&self, store: &Store) {
        let Ok(scope) = self.scope() else { return };
        if let Ok(mut tips) = cache::Tips::read(store) {
            tips.github = self.github.facts().0;
            let v = tips.version_for(&scope.scope);
            self.version.send_if_modified(|cur| {
                let changed = *cur != v;
                if changed {
                    *cur = v;
                }
                changed
            });
        }
    }
}

/// Runs `f` on a blocking thread (store reads and writes are synchronous).
pub(crate) async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> ApiResult<T> + Send + 'static,
) -> ApiResult<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| ApiError::internal(format!("request handler failed: {e}")))?
}
