//! The handle every handler and background task derives models through: the options the
//! server started with, the repository it keeps open, the target repositories in force, the
//! GitHub facts folded in, the model cache with its one deriving thread, and the version
//! announcer.
//!
//! No coordination state lives here: the cache only remembers derivations of the refs,
//! and every write goes through the store's transaction like a CLI write.

use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use std::time::Instant as StdInstant;

use agent_coord_shared::dashboard::inputs::github_facts::GithubFacts;
use agent_coord_shared::dashboard::model::DashboardModel;
use agent_coord_shared::dashboard::model::ScopeSource;
use agent_coord_shared::dashboard::scope::Scope;
use agent_coord_shared::time::Instant;
use tokio::sync::watch;

use super::cache;
use super::deriver::Deriver;
use super::scope::ScopeInForce;
use super::snapshot;
use crate::command_error::CommandError;
use crate::context::Context;
use crate::context::Env;
use crate::context::GlobalArgs;
use crate::past;
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
    /// The model last derived and the scope it was derived under: a request whose refs have
    /// not moved takes it without waiting for the derivation thread (see [`Models::built`]).
    latest: Mutex<Option<(Scope, Arc<cache::Built>)>>,
    /// The models of the past (`?at=`) last asked for, newest last, at most [`PAST_KEPT`];
    /// derived through a cache of their own, so the live model's records stay cached.
    past: Mutex<Vec<(PastKey, Arc<cache::Built>)>>,
    past_cache: Arc<Mutex<cache::ModelCache>>,
    /// The model the last run saved, restored at start ([`Models::restore`]) and served to
    /// views until the first derivation of this run is done ([`Models::warm_up`]).
    restored: Mutex<Option<Arc<DashboardModel>>>,
    /// When this run saves its model for the next start.
    saver: snapshot::Saver,
    /// Whether this run started from a restored model.
    restored_at_start: AtomicBool,
    /// The serial of the live model derived last (0: none yet); see [`Models::last_serial`].
    serial: AtomicU64,
    /// When the server started: [`Inner::asked_at`] counts from it.
    started: StdInstant,
    /// Milliseconds after `started` of the last request for a model (the refresher keeps
    /// the model's liveness current only while someone asks or a stream is open).
    asked_at: AtomicU64,
}

/// A model whose refs have not moved is served as it is for this long after its derivation:
/// [`cache::MAX_AGE`], plus the time the refresher may take to derive its successor.
const SERVE_AS_IS: Duration = Duration::from_secs(cache::MAX_AGE.as_secs() + 5);

/// How many models of the past are kept (a time slider steps between a few).
const PAST_KEPT: usize = 4;

/// What makes a model of the past: the refs as they stood, the clock and the scope.
type PastKey = (
    Option<gix::ObjectId>,
    Vec<(String, gix::ObjectId)>,
    Instant,
    Scope,
);

/// What `/api/dashboard` serves: a derived model, or the last run's while this run derives.
pub(crate) enum Served {
    Built(Arc<cache::Built>),
    Restored(Arc<DashboardModel>),
}

/// A model of an earlier moment and the clock it was read with.
pub(crate) struct Then {
    pub(crate) built: Arc<cache::Built>,
    pub(crate) clock: Instant,
}

/// The refresher re-derives an aging model while a request came within this long, or a
/// stream is open.
const ACTIVE: Duration = Duration::from_secs(60);

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
            latest: Mutex::new(None),
            past: Mutex::new(Vec::new()),
            past_cache: Arc::new(Mutex::new(cache::ModelCache::default())),
            restored: Mutex::new(None),
            saver: snapshot::Saver::default(),
            restored_at_start: AtomicBool::new(false),
            serial: AtomicU64::new(0),
            started: StdInstant::now(),
            asked_at: AtomicU64::new(0),
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
    /// GitHub facts or the scope moved). When only the clock moved, the model last derived is
    /// served for up to [`SERVE_AS_IS`]: the refresher ([`Models::refresh_if_old`]) derives
    /// its successor off the request path, so no page waits for a clock-only derivation.
    pub(crate) fn built(&self) -> ApiResult<Arc<cache::Built>> {
        self.0
            .asked_at
            .store(self.millis_since_start(), Ordering::Relaxed);
        self.current()
    }

    /// Returns the model the page asks for: the current one ([`Models::built`]) and the
    /// clock now, or with `at` (a commit or an RFC 3339 time) the model of that moment
    /// ([`Models::then`]).
    pub(crate) fn built_at(&self, at: Option<&str>) -> ApiResult<Then> {
        match at {
            Some(raw) => self.then(raw),
            None => Ok(Then {
                built: self.built()?,
                clock: self.context()?.now(),
            }),
        }
    }

    /// Returns the model of the moment `raw` names, as `status --at` reads it: the state
    /// commit that stood then, the heartbeats this machine's history holds for then, that
    /// clock, and no GitHub facts; marked with the moment ([`DashboardModel::past`]).
    ///
    /// [`DashboardModel::past`]: agent_coord_shared::dashboard::model::DashboardModel::past
    pub(crate) fn then(&self, raw: &str) -> ApiResult<Then> {
        let store = self.store()?;
        let scope = self.scope()?.scope;
        let moment = past::resolve(&store, raw).map_err(|mut e| {
            e.message = format!("at={}", e.message);
            e
        })?;
        let key: PastKey = (
            Some(moment.commit),
            moment.heartbeat_refs().to_vec(),
            moment.clock,
            scope.clone(),
        );
        let clock = moment.clock;
        let kept = self
            .0
            .past
            .lock()
            .map_err(|_| ApiError::internal("past models poisoned"))?
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, b)| b.clone());
        if let Some(built) = kept {
            return Ok(Then { built, clock });
        }
        let tips = cache::Tips {
            state: key.0,
            heartbeats: key.1.clone(),
            github: 0,
        };
        let cache = self.0.past_cache.clone();
        let view = moment.view();
        let built = self.0.deriver.run(move || {
            let mut cache = cache
                .lock()
                .map_err(|_| ApiError::internal("past model cache poisoned"))?;
            Ok(cache.get_past(&store, tips, clock, &scope, view)?)
        })?;
        if let Ok(mut kept) = self.0.past.lock() {
            kept.retain(|(k, _)| *k != key);
            if kept.len() >= PAST_KEPT {
                kept.remove(0);
            }
            kept.push((key, built.clone()));
        }
        Ok(Then { built, clock })
    }

    /// Returns what `/api/dashboard` serves: with `at`, the model of that moment; while a
    /// model restored from the last run stands in ([`Models::restore`]), that one, without
    /// waiting; else [`Models::built`].
    pub(crate) fn served(&self, at: Option<&str>) -> ApiResult<Served> {
        if at.is_none() {
            let restored = self
                .0
                .restored
                .lock()
                .map_err(|_| ApiError::internal("restored model poisoned"))?
                .clone();
            if let Some(model) = restored {
                self.0
                    .asked_at
                    .store(self.millis_since_start(), Ordering::Relaxed);
                return Ok(Served::Restored(model));
            }
        }
        self.built_at(at).map(|t| Served::Built(t.built))
    }

    /// Restores the model the last run saved, when it was derived from the state tip and
    /// under the scope in force now (see `snapshot`); returns whether it did. Call
    /// [`Models::warm_up`] after it: until that derivation is done, views are served the
    /// restored model.
    pub(crate) fn restore(&self) -> bool {
        let (Ok(store), Ok(scope)) = (self.store(), self.scope()) else {
            return false;
        };
        let (Ok(tips), Ok(cx)) = (cache::Tips::read(&store), self.context()) else {
            return false;
        };
        let scope_id = scope.scope.id();
        let key = snapshot::Key {
            state: tips.state,
            scope_id: &scope_id,
        };
        let Some(model) = snapshot::load(&store, &key, cx.now()) else {
            return false;
        };
        if let Ok(mut slot) = self.0.restored.lock() {
            *slot = Some(Arc::new(model));
        }
        self.0.restored_at_start.store(true, Ordering::Relaxed);
        true
    }

    /// Whether this run started from the model its last run saved ([`Models::restore`]).
    pub(crate) fn restored_at_start(&self) -> bool {
        self.0.restored_at_start.load(Ordering::Relaxed)
    }

    /// Derives this run's first model, then retires the restored one and announces the
    /// version again, so pages showing the restored model load the derived one.
    pub(crate) fn warm_up(&self) {
        if let Err(e) = self.current() {
            tracing::warn!(error = %e.message, "deriving the first model failed");
        }
        if let Ok(mut slot) = self.0.restored.lock() {
            *slot = None;
        }
        // The refs may not have moved: announce anyway (the restored version differs).
        self.0.version.send_modify(|_| ());
    }

    /// Saves the model derived last for the next start, unless the one saved already has
    /// its state tip (a graceful stop calls it, so a restart finds the state it left).
    pub(crate) fn save_latest(&self) {
        let latest = self.0.latest.lock().ok().and_then(|l| l.clone());
        let (Some((scope, built)), Ok(store)) = (latest, self.store()) else {
            return;
        };
        if built.model.past.is_none() {
            self.0
                .saver
                .save_now(&store, built.tips.state, &scope.id(), &built.model);
        }
    }

    /// Hands a model this run derived from scratch to the saver ([`snapshot::Saver`]).
    fn save_if_due(&self, built: &Arc<cache::Built>, scope: &Scope) {
        if built.timing.updated || built.model.past.is_some() {
            return;
        }
        if let Ok(store) = self.store() {
            self.0
                .saver
                .save_if_due(store, built.tips.state, scope.id(), built.model.clone());
        }
    }

    /// [`Models::built`] for a background task: the same model, but asking does not keep
    /// the refresher going (enrichment reads records, not liveness).
    pub(crate) fn current(&self) -> ApiResult<Arc<cache::Built>> {
        let store = self.store()?;
        let scope = self.scope()?.scope;
        let mut tips = cache::Tips::read(&store)?;
        tips.github = self.github_facts().0;
        if let Some(current) = self.latest_for(&tips, &scope) {
            if current.age() < SERVE_AS_IS {
                return Ok(current);
            }
        }
        self.derive(store, scope)
    }

    /// Returns the model last derived if it was derived from `tips` under `scope`; else
    /// forgets it (so the cache may update that model in place rather than copy it).
    fn latest_for(&self, tips: &cache::Tips, scope: &Scope) -> Option<Arc<cache::Built>> {
        let mut latest = self.0.latest.lock().ok()?;
        match latest.as_ref() {
            Some((s, b)) if s == scope && b.tips == *tips => Some(b.clone()),
            _ => {
                *latest = None;
                None
            }
        }
    }

    /// Derives (or returns the cache's) model for the store's refs on the derivation thread,
    /// and keeps it as the latest.
    fn derive(&self, store: Store, scope: Scope) -> ApiResult<Arc<cache::Built>> {
        let cx = self.context()?;
        let (now, github, cache) = (cx.now(), self.github_facts(), self.0.cache.clone());
        let kept = scope.clone();
        let built = self.0.deriver.run(move || {
            let mut cache = cache
                .lock()
                .map_err(|_| ApiError::internal("model cache poisoned"))?;
            Ok(cache.get(&store, now, github, &scope)?)
        })?;
        self.0.serial.store(built.serial, Ordering::Relaxed);
        self.save_if_due(&built, &kept);
        if let Ok(mut latest) = self.0.latest.lock() {
            *latest = Some((kept, built.clone()));
        }
        Ok(built)
    }

    /// Re-derives the model (for the refs as they are now) once the latest is
    /// [`cache::MAX_AGE`] old, while someone watches ([`refresh_due`]); the refresher thread
    /// calls it.
    pub(crate) fn refresh_if_old(&self) {
        let age = self
            .0
            .latest
            .lock()
            .ok()
            .and_then(|l| l.as_ref().map(|(_, b)| b.age()));
        let asked = self
            .millis_since_start()
            .saturating_sub(self.0.asked_at.load(Ordering::Relaxed));
        let watched = self.0.version.receiver_count() > 0;
        if !refresh_due(age, Duration::from_millis(asked), watched) {
            return;
        }
        let (Ok(store), Ok(scope)) = (self.store(), self.scope()) else {
            return;
        };
        if let Err(e) = self.derive(store, scope.scope) {
            tracing::warn!(error = %e.message, "refreshing the model failed");
        }
    }

    /// Milliseconds since the server started (what [`Inner::asked_at`] holds).
    fn millis_since_start(&self) -> u64 {
        u64::try_from(self.0.started.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Returns the serial of the model cached now, if any (see [`cache::Built::serial`]),
    /// without deriving.
    pub(crate) fn last_serial(&self) -> Option<u64> {
        // Read without the cache's lock, which a derivation holds for its whole length.
        Some(self.0.serial.load(Ordering::Relaxed)).filter(|s| *s != 0)
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

/// Whether the refresher derives again: the latest model (`age` old, if any) has reached
/// [`cache::MAX_AGE`], and a request came within [`ACTIVE`] (`since_asked` ago) or a stream
/// is open (`watched`).
fn refresh_due(age: Option<Duration>, since_asked: Duration, watched: bool) -> bool {
    let aging = age.is_some_and(|a| a >= cache::MAX_AGE);
    aging && (watched || since_asked <= ACTIVE)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::refresh_due;

    #[test]
    fn an_aging_model_is_refreshed_only_while_someone_watches() {
        let (old, young) = (Some(Duration::from_secs(6)), Some(Duration::from_secs(2)));
        let (recent, long_ago) = (Duration::from_secs(10), Duration::from_secs(120));
        assert!(refresh_due(old, recent, false));
        assert!(refresh_due(old, long_ago, true));
        assert!(!refresh_due(old, long_ago, false));
        assert!(!refresh_due(young, recent, true));
        assert!(!refresh_due(None, recent, true));
    }
}
