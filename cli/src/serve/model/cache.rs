//! The dashboard model, cached by the tip ids it was derived from.
//!
//! Nothing here is state a restart could lose: the cache only remembers work. Records are
//! read through the store's tree cache, so a new tip re-reads only the subtrees and
//! records that changed, and the heartbeats that count are chosen again only when a
//! heartbeat ref moved; the model itself is re-derived from the cached records (liveness
//! moves with the clock even when no ref does, so a cached model is also rebuilt once it
//! is older than [`MAX_AGE`]: by the server's refresher, off the request path, while
//! anyone is looking; see `models::Models::refresh_if_old`).
//!
//! The whole model is serialised only when `GET /api/dashboard` asks for all of it
//! ([`Built::json`]); a page's view serialises only its slice.

use std::sync::Arc;
use std::sync::OnceLock;
use std::time::Duration;
use std::time::Instant as StdInstant;

use agent_coord_shared::coordinator::controls::CONTROLS_DIR;
use agent_coord_shared::coordinator::task::TASKS_DIR;
use agent_coord_shared::dashboard;
use agent_coord_shared::dashboard::inputs::annotations::ANNOTATIONS_DIR;
use agent_coord_shared::dashboard::inputs::github_facts::GithubFacts;
use agent_coord_shared::dashboard::inputs::records::parse_record;
use agent_coord_shared::dashboard::inputs::records::Inputs;
use agent_coord_shared::dashboard::inputs::records::Parsed;
use agent_coord_shared::dashboard::model::DashboardModel;
use agent_coord_shared::dashboard::model::PastView;
use agent_coord_shared::dashboard::scope;
use agent_coord_shared::dashboard::scope::Scope;
use agent_coord_shared::time::Instant;
use gix::ObjectId;
use sha2::Digest;

use super::beats::Beats;
use crate::store::tree;
use crate::store::tree::Parse;
use crate::store::tree::Roots;
use crate::store::tree::TreeCache;
use crate::store::Store;
use crate::store::StoreError;

/// A cached model is re-derived (from cached records) once it is this old.
pub(crate) const MAX_AGE: Duration = Duration::from_secs(5);

/// The refs a model is derived from: the state tip and every heartbeat ref.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tips {
    pub(crate) state: Option<ObjectId>,
    pub(crate) heartbeats: Vec<(String, ObjectId)>,
    /// The generation of the GitHub facts folded in (0: none yet).
    pub(crate) github: u64,
}

impl Tips {
    /// Reads the current tips.
    pub(crate) fn read(store: &Store) -> Result<Tips, StoreError> {
        let mut heartbeats = store.heartbeat_refs()?;
        heartbeats.sort();
        Ok(Tips {
            state: store.tip()?,
            heartbeats,
            github: 0,
        })
    }

    /// A short id that changes whenever any ref moves.
    pub(crate) fn version(&self) -> String {
        let mut h = sha2::Sha256::new();
        h.update(self.state.map(|s| s.to_string()).unwrap_or_default());
        for (name, id) in &self.heartbeats {
            h.update(b"\n");
            h.update(name.as_bytes());
            h.update(id.to_string());
        }
        if self.github != 0 {
            // New GitHub facts are a new version, so the stream announces the enrichment.
            h.update(format!("\ngithub {}", self.github));
        }
        h.finalize()
            .iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect()
    }

    /// The version of the model these tips give under `scope`: [`Tips::version`] when
    /// every repository is shown, else one that also changes with the scope (so an open page
    /// learns of a new scope from the stream as it does of new refs).
    pub(crate) fn version_for(&self, scope: &Scope) -> String {
        let version = self.version();
        if scope.is_all() {
            return version;
        }
        sha2::Sha256::digest(format!("{version}\n{}", scope.id()).as_bytes())
            .iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// How long deriving one model took.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Timing {
    /// Reading the changed records and deriving (or updating) the model.
    pub(crate) model: Duration,
    /// Whether the previous model was updated rather than derived from scratch.
    pub(crate) updated: bool,
}

/// A derived model and what it was derived from.
pub(crate) struct Built {
    pub(crate) tips: Tips,
    pub(crate) inputs: Arc<Inputs>,
    pub(crate) model: Arc<DashboardModel>,
    derivation: Arc<dashboard::derive::Derivation>,
    /// When the model was last derived from scratch (updates keep older liveness).
    full_at: StdInstant,
    /// The whole model serialised, once the first `GET /api/dashboard` without a view
    /// asked for it (shared, never copied); see [`Built::json`].
    json: OnceLock<axum::body::Bytes>,
    /// The size of the previous model's serialised form (to size the buffer).
    json_hint: usize,
    /// What deriving it cost (reported in `Server-Timing`).
    pub(crate) timing: Timing,
    built_at: StdInstant,
    /// Counts the models this cache derived (or updated): a request compares serials to
    /// know whether it paid for this one.
    pub(crate) serial: u64,
}

impl Built {
    /// Returns the whole model serialised, serialising it on first use; the duration is
    /// `Some` when this call paid for it (a concurrent first call may pay twice; one
    /// result is kept).
    pub(crate) fn json(&self) -> (axum::body::Bytes, Option<Duration>) {
        if let Some(done) = self.json.get() {
            return (done.clone(), None);
        }
        let started = StdInstant::now();
        let mut json = Vec::with_capacity(self.json_hint + self.json_hint / 8);
        if serde_json::to_writer(&mut json, &*self.model).is_err() {
            json.clear();
        }
        let took = started.elapsed();
        (self.json.get_or_init(|| json.into()).clone(), Some(took))
    }

    /// How long ago the model was derived (or updated).
    pub(crate) fn age(&self) -> Duration {
        self.built_at.elapsed()
    }
}

/// The model last derived, and the records it was derived from (read through the store's
/// [`TreeCache`], so a new tip re-reads only what changed).
#[derive(Default)]
pub(crate) struct ModelCache {
    trees: TreeCache<Parsed>,
    /// The state tip's folders, as last listed (kept in the tree cache).
    state_roots: Roots<Parsed>,
    /// The records on the state tip last read, sorted (without heartbeats, which live on
    /// their own refs): most new tips of a live fleet move only a heartbeat ref.
    state_part: Option<(ObjectId, Inputs)>,
    /// The heartbeats chosen at the last read: most new tips move only the state branch
    /// (an event, a claim), and choosing among every heartbeat's copies again was most of
    /// such a read's cost.
    beats: Option<Beats>,
    built: Option<Arc<Built>>,
    /// The scope the cached model was derived under.
    scope: Scope,
    /// The serial of the last model derived.
    serial: u64,
    /// What every model derived is marked with: the moment, in the past cache.
    marker: Option<PastView>,
}

impl ModelCache {
    /// Returns the model for the store's current tips, deriving it only when they moved
    /// (or the cached one is older than [`MAX_AGE`]); an update when only new events,
    /// renewed heartbeats or coordinator task checkpoints arrived since a recent full
    /// derivation. `github` is the generation and the GitHub facts to fold in (a new
    /// generation derives again from the same records).
    ///
    /// A new `scope` discards the cached model: the next one is derived from scratch under it.
    pub(crate) fn get(
        &mut self,
        store: &Store,
        now: Instant,
        github: (u64, Option<Arc<GithubFacts>>),
        scope: &Scope,
    ) -> Result<Arc<Built>, StoreError> {
        let tips = Tips::read(store)?;
        self.get_for(store, tips, now, github, scope)
    }

    /// Returns the model of an earlier moment: the refs as they stood then (`tips`, from
    /// `past::Moment`), read with its clock, marked with `past` and without GitHub's facts
    /// (they are today's). A past cache of its own keeps the live cache's records.
    pub(crate) fn get_past(
        &mut self,
        store: &Store,
        tips: Tips,
        now: Instant,
        scope: &Scope,
        past: PastView,
    ) -> Result<Arc<Built>, StoreError> {
        if self
            .built
            .as_ref()
            .is_some_and(|b| b.model.past.as_ref() != Some(&past))
        {
            // Another moment's model (the same refs can stand at two times): not this one.
            self.built = None;
        }
        self.marker = Some(past);
        self.get_for(store, tips, now, (0, None), scope)
    }

    fn get_for(
        &mut self,
        store: &Store,
        mut tips: Tips,
        now: Instant,
        github: (u64, Option<Arc<GithubFacts>>),
        scope: &Scope,
    ) -> Result<Arc<Built>, StoreError> {
        if self.scope != *scope {
            self.built = None;
            self.scope = scope.clone();
        }
        tips.github = github.0;
        if let Some(b) = &self.built {
            if b.tips == tips && b.built_at.elapsed() < MAX_AGE {
                return Ok(b.clone());
            }
            if b.tips.state == tips.state && b.tips.heartbeats == tips.heartbeats {
                let inputs = if b.tips.github == tips.github {
                    b.inputs.clone()
                } else {
                    let mut inputs = (*b.inputs).clone();
                    inputs.github = github.1;
                    Arc::new(inputs)
                };
                return Ok(self.derive_since(tips, inputs, now, false, StdInstant::now()));
            }
        }
        let started = StdInstant::now();
        let inputs = self.read_inputs(store, &tips)?;
        let mut inputs = if self.scope.is_all() {
            inputs
        } else {
            scope::apply(&inputs, &self.scope)
        };
        inputs.github = github.1;
        let inputs = Arc::new(inputs);
        Ok(self.derive_since(tips, inputs, now, true, started))
    }

    /// Derives the model for `inputs`: by updating the previous one when only new events,
    /// renewed heartbeats or task checkpoints arrived since a recent full derivation
    /// (`may_update`), else from scratch.
    fn derive_since(
        &mut self,
        tips: Tips,
        inputs: Arc<Inputs>,
        now: Instant,
        may_update: bool,
        started: StdInstant,
    ) -> Arc<Built> {
        let version = tips.version_for(&self.scope);
        // The last serialised size, if it was serialised (to size the next buffer).
        let json_hint = self
            .built
            .as_ref()
            .and_then(|b| b.json.get())
            .map_or(0, |j| j.len());
        let prev = self
            .built
            .take()
            .filter(|b| may_update && b.full_at.elapsed() < MAX_AGE);
        let updated = prev.and_then(|p| {
            // Usually nobody else holds the previous model: take it instead of copying it.
            let (model, derivation, prev_inputs, full_at) = match Arc::try_unwrap(p) {
                Ok(b) => (
                    Arc::try_unwrap(b.model).unwrap_or_else(|m| (*m).clone()),
                    b.derivation,
                    b.inputs,
                    b.full_at,
                ),
                Err(p) => (
                    (*p.model).clone(),
                    p.derivation.clone(),
                    p.inputs.clone(),
                    p.full_at,
                ),
            };
            // Nobody else holds the derivation either: it is brought up to date in place.
            let mut derivation = Arc::try_unwrap(derivation).unwrap_or_else(|d| (*d).clone());
            dashboard::derive::update_with(
                model,
                &mut derivation,
                &prev_inputs,
                &inputs,
                now,
                &version,
            )
            .map(|model| (model, Arc::new(derivation), full_at))
        });
        let updated_flag = updated.is_some();
        let (model, derivation, full_at) = match updated {
            Some(done) => done,
            None => {
                let (model, derivation) = dashboard::derive::build_with(&inputs, now, &version);
                (model, Arc::new(derivation), StdInstant::now())
            }
        };
        let mut model = model;
        model.past = self.marker.clone();
        let model_time = started.elapsed();
        let built = Arc::new(Built {
            tips,
            inputs,
            model: Arc::new(model),
            derivation,
            full_at,
            json: OnceLock::new(),
            json_hint,
            timing: Timing {
                model: model_time,
                updated: updated_flag,
            },
            built_at: StdInstant::now(),
            serial: self.serial + 1,
        });
        self.serial = built.serial;
        self.built = Some(built.clone());
        built
    }

    fn read_inputs(&mut self, store: &Store, tips: &Tips) -> Result<Inputs, StoreError> {
        let repo = &store.repo;
        let parse: Parse<'_, Parsed> = &|path, bytes| match bytes {
            Ok(bytes) => parse_record(path, bytes),
            Err(e) => Parsed::Malformed(path.to_owned(), e.to_string()),
        };
        let mut inputs = match (tips.state, &self.state_part) {
            // Only heartbeat refs moved: the state branch's records are the ones read last.
            (Some(tip), Some((read, part))) if *read == tip => part.clone(),
            (Some(tip), _) => {
                let mut part = Inputs::default();
                let root = tree::of_commit(repo, tip).map_err(StoreError::git)?;
                self.trees
                    .folders(
                        repo,
                        root,
                        &[
                            "claims",
                            "batches",
                            "events",
                            TASKS_DIR,
                            CONTROLS_DIR,
                            ANNOTATIONS_DIR,
                        ],
                        parse,
                        &mut |p| part.push(p.2.clone()),
                    )
                    .map_err(StoreError::git)?;
                self.state_roots = self.trees.take_roots();
                part.sort();
                self.state_part = Some((tip, part.clone()));
                part
            }
            (None, _) => {
                self.state_roots = Roots::default();
                self.state_part = None;
                Inputs::default()
            }
        };
        for parsed in self.heartbeats(repo, &tips.heartbeats, parse)?.iter() {
            inputs.push(parsed.clone());
        }
        let beats = self.beats.as_ref().map(|b| &b.roots);
        let keep: Vec<&Roots<Parsed>> = [Some(&self.state_roots), beats]
            .into_iter()
            .flatten()
            .collect();
        self.trees.trim(&keep);
        // The state branch's records were sorted when read; only the heartbeats are new.
        inputs.finish_beats();
        Ok(inputs)
    }

    /// Returns the heartbeat that counts for each heartbeat path on the refs `tips`: the
    /// previous answer when those refs have not moved, else chosen again (only for the
    /// paths whose blob moved, when the same refs list the same paths).
    fn heartbeats(
        &mut self,
        repo: &gix::Repository,
        tips: &[(String, ObjectId)],
        parse: Parse<'_, Parsed>,
    ) -> Result<Arc<Vec<Parsed>>, StoreError> {
        if let Some(chosen) = self.beats.as_ref().and_then(|b| b.at(tips)) {
            return Ok(chosen);
        }
        let beats = Beats::read(self.beats.take(), &mut self.trees, repo, tips, parse)?;
        let chosen = beats.at(tips).unwrap_or_default();
        self.beats = Some(beats);
        Ok(chosen)
    }
}
