//! The handle every handler and background task derives models through: the options the
//! server started with, the repository it keeps open, the target repositories in force, the
//! GitHub facts folded in, the model cache with its one deriving thread, and the version
//! announcer.
//!
//! No coordination state lives here: the cache only remembers derivations of the refs,
//! and every write goes through the store's transaction like a CLI write.

use std::sync::Arc;
use std::sync::Mutex;

use agent_coord_shared::dashboard::inputs::github_facts::GithubFacts;
use agent_coord_shared::dashboard::model::ScopeSource;
use agent_coord_shared::dashboard::scope::Scope;
use tokio::sync::watch;

use super::cache;
use super::deriver::Deriver;
use super::scope::ScopeInForce;
use crate::command_error::CommandError;
use crate::context::Context;
use crate::context::Env;
use crate::context::GlobalArgs;
use crate::serve::error::ApiError;
use crate::serve::error::ApiResult;
use crate::store::settings as saved;
use crate::store::SharedStore;
use crate::store::Store;

/// The models' handle: cheap to clone (one shared [`Inner`]).
#[derive(Clone)]
pub(crate) struct Models(Arc<Inner>);

/// What the handle shares.
struct Inner {
    globals: GlobalArgs,
    env: Env,
    /// The repository, opened by the first request that could open it, then kept.
    store: Mutex<Option<Arc<SharedStore>>>,
    cache: Arc<Mutex<cache::ModelCache>>,
    /// The one thread that derives models (see [`Deriver`]).
    deriver: Deriver,
    /// The version of the refs last published (empty before the first).
    version: watch::Sender<String>,
    /// What GitHub said at its last refresh, with its generation (0 before any).
    github: Mutex<(u64, Option<Arc<GithubFacts>>)>,
    /// The target repositories in force, once known (`--repos`, else read from the saved
    /// setting by the first request that needs them; replaced by `PUT /api/settings`).
    scope: Mutex<Option<ScopeInForce>>,
}

impl Models {
    /// Returns the handle of a server reading the repository `globals` and `env` name.
    pub(crate) fn new(globals: GlobalArgs, env: Env) -> Models {
        Models(Arc::new(Inner {
            globals,
            env,
            store: Mutex::new(None),
            cache: Arc::new(Mutex::new(cache::ModelCache::default())),
            deriver: Deriver::default(),
            version: watch::channel(String::new()).0,
            github: Mutex::new((0, None)),
            scope: Mutex::new(None),
        }))
    }

    /// Returns a context for one request (the clock read now, or as pinned).
    pub(crate) fn context(&self) -> Result<Context, CommandError> {
        Context::new(self.0.globals.clone(), self.0.env.clone())
    }

    /// Returns a read-only store on the repository the server keeps open (opening it on
    /// first use; a repository that cannot be opened yet is tried again next time).
    pub(crate) fn store(&self) -> Result<Store, CommandError> {
        let mut slot = self
            .0
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
            .0
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
            .0
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
            .0
            .scope
            .lock()
            .map_err(|_| ApiError::internal("scope poisoned"))?;
        // A concurrent PUT wins over what was read before it.
        Ok(slot.get_or_insert(found).clone())
    }

    /// Returns the current model under the scope in force (derived only when the refs, the
    /// GitHub facts or the scope moved).
    pub(crate) fn built(&self) -> ApiResult<Arc<cache::Built>> {
        let cx = self.context()?;
        let store = self.store()?;
        let scope = self.scope()?.scope;
        let (now, github, cache) = (cx.now(), self.github_facts(), self.0.cache.clone());
        self.0.deriver.run(move || {
            let mut cache = cache
                .lock()
                .map_err(|_| ApiError::internal("model cache poisoned"))?;
            Ok(cache.get(&store, now, github, &scope)?)
        })
    }

    /// Returns the serial of the model cached now, if any (see [`cache::Built::serial`]),
    /// without deriving.
    pub(crate) fn last_serial(&self) -> Option<u64> {
        self.0.cache.lock().ok().and_then(|c| c.current_serial())
    }

    /// Returns the GitHub facts' generation (0 before any) and the facts.
    fn github_facts(&self) -> (u64, Option<Arc<GithubFacts>>) {
        self.0.github.lock().map(|g| g.clone()).unwrap_or_default()
    }

    /// Folds what a GitHub refresh learned into the next model: facts that differ from the
    /// current ones are a new generation, announced as a new version.
    pub(crate) fn fold_github(&self, next: GithubFacts) {
        let changed = match self.0.github.lock() {
            Ok(mut g) if g.1.as_deref() != Some(&next) => {
                *g = (g.0 + 1, Some(Arc::new(next)));
                true
            }
            _ => false,
        };
        if changed {
            self.poll_version();
        }
    }

    /// Returns the version of the refs last published (empty before the first).
    pub(crate) fn version(&self) -> String {
        self.0.version.borrow().clone()
    }

    /// Returns a receiver of every version published from now on.
    pub(crate) fn subscribe(&self) -> watch::Receiver<String> {
        self.0.version.subscribe()
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
            tips.github = self.github_facts().0;
            let v = tips.version_for(&scope.scope);
            self.0.version.send_if_modified(|cur| {
                let changed = *cur != v;
                if changed {
                    *cur = v;
                }
                changed
            });
        }
    }
}
