//! The dashboard model, cached by the tip ids it was derived from.
//!
//! Nothing here is state a restart could lose: the cache only remembers work. Trees are
//! listed once per tree id and records parsed once per blob id, so a new tip re-reads
//! only the subtrees and records that changed; the model itself is re-derived from the
//! cached records (liveness moves with the clock even when no ref does, so a cached model
//! is also rebuilt once it is older than [`MAX_AGE`]).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant as StdInstant;

use agent_coord_shared::dashboard;
use agent_coord_shared::dashboard::input::parse_record;
use agent_coord_shared::dashboard::input::Inputs;
use agent_coord_shared::dashboard::input::Parsed;
use agent_coord_shared::dashboard::model::DashboardModel;
use agent_coord_shared::time::Instant;
use gix::ObjectId;
use sha2::Digest;

use crate::store::Store;
use crate::store::StoreError;

/// A cached model is re-derived (from cached records) once it is this old.
pub(crate) const MAX_AGE: Duration = Duration::from_secs(5);

/// The refs a model is derived from: the state tip and every heartbeat ref.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Tips {
    pub(crate) state: Option<ObjectId>,
    pub(crate) heartbeats: Vec<(String, ObjectId)>,
}

impl Tips {
    /// Reads the current tips.
    pub(crate) fn read(store: &Store) -> Result<Tips, StoreError> {
        let mut heartbeats = store.heartbeat_refs()?;
        heartbeats.sort();
        Ok(Tips {
            state: store.tip()?,
            heartbeats,
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
        h.finalize()
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
    /// Serialising it.
    pub(crate) json: Duration,
    /// Whether the previous model was updated rather than derived from scratch.
    pub(crate) updated: bool,
}

/// A derived model and what it was derived from.
pub(crate) struct Built {
    pub(crate) tips: Tips,
    pub(crate) inputs: Arc<Inputs>,
    pub(crate) model: Arc<DashboardModel>,
    derivation: Arc<dashboard::build::Derivation>,
    /// When the model was last derived from scratch (updates keep older liveness).
    full_at: StdInstant,
    /// The model serialised once, for `GET /api/dashboard` (shared, never copied).
    pub(crate) json: axum::body::Bytes,
    /// What deriving it cost (reported in `Server-Timing`).
    pub(crate) timing: Timing,
    built_at: StdInstant,
}

/// Parsed records and tree listings, keyed by object id.
#[derive(Default)]
pub(crate) struct ModelCache {
    /// Every record below a tree, by tree id.
    subtrees: HashMap<ObjectId, Arc<Vec<Parsed>>>,
    /// How many subtrees a clean walk of the state holds (the eviction yardstick).
    walked: usize,
    /// Parsed records by blob id (a record's content names its identity, so one blob is
    /// one record wherever it sits).
    records: HashMap<ObjectId, Parsed>,
    built: Option<Arc<Built>>,
    /// The size of the last serialised model (to size the next buffer).
    json_len: usize,
}

impl ModelCache {
    /// The model currently cached, if any.
    pub(crate) fn current(&self) -> Option<Arc<Built>> {
        self.built.clone()
    }

    /// Returns the model for the store's current tips, deriving it only when they moved
    /// (or the cached one is older than [`MAX_AGE`]); an update when only new events
    /// arrived since a recent full derivation.
    pub(crate) fn get(&mut self, store: &Store, now: Instant) -> Result<Arc<Built>, StoreError> {
        let tips = Tips::read(store)?;
        if let Some(b) = &self.built {
            if b.tips == tips && b.built_at.elapsed() < MAX_AGE {
                return Ok(b.clone());
            }
            if b.tips == tips {
                let inputs = b.inputs.clone();
                return Ok(self.derive_since(tips, inputs, now, false, StdInstant::now()));
            }
        }
        let started = StdInstant::now();
        let inputs = Arc::new(self.read_inputs(store, &tips)?);
        Ok(self.derive_since(tips, inputs, now, true, started))
    }

    /// Derives the model for `inputs`: by updating the previous one when only new events
    /// arrived since a recent full derivation (`may_update`), else from scratch.
    fn derive_since(
        &mut self,
        tips: Tips,
        inputs: Arc<Inputs>,
        now: Instant,
        may_update: bool,
        started: StdInstant,
    ) -> Arc<Built> {
        let version = tips.version();
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
            dashboard::build::update(model, &derivation, &prev_inputs, &inputs, now, &version)
                .map(|model| (model, derivation, full_at))
        });
        let updated_flag = updated.is_some();
        let (model, derivation, full_at) = match updated {
            Some(done) => done,
            None => {
                let (model, derivation) = dashboard::build::build_with(&inputs, now, &version);
                (model, Arc::new(derivation), StdInstant::now())
            }
        };
        let model_time = started.elapsed();
        let serialising = StdInstant::now();
        let previous = self.json_len;
        let mut json = Vec::with_capacity(previous + previous / 8);
        if serde_json::to_writer(&mut json, &model).is_err() {
            json.clear();
        }
        let built = Arc::new(Built {
            tips,
            inputs,
            model: Arc::new(model),
            derivation,
            full_at,
            json: json.into(),
            timing: Timing {
                model: model_time,
                json: serialising.elapsed(),
                updated: updated_flag,
            },
            built_at: StdInstant::now(),
        });
        self.json_len = built.json.len();
        self.built = Some(built.clone());
        built
    }

    /// Every record below `tree` (at `prefix`), remembered per tree id: an unchanged
    /// subtree costs one lookup, a changed one re-reads only its changed parts.
    fn subtree(
        &mut self,
        repo: &gix::Repository,
        tree: ObjectId,
        prefix: &mut String,
    ) -> Result<Arc<Vec<Parsed>>, StoreError> {
        if let Some(hit) = self.subtrees.get(&tree) {
            return Ok(hit.clone());
        }
        let entries: Vec<(String, ObjectId, bool)> = {
            let object = repo.find_tree(tree).map_err(StoreError::git)?;
            let decoded = object.decode().map_err(StoreError::git)?;
            decoded
                .entries
                .iter()
                .filter(|e| e.mode.is_tree() || e.mode.is_blob())
                .map(|e| (e.filename.to_string(), e.oid.to_owned(), e.mode.is_tree()))
                .collect()
        };
        let mut out = Vec::new();
        for (name, oid, is_tree) in entries {
            let len = prefix.len();
            prefix.push_str(&name);
            if is_tree {
                prefix.push('/');
                out.extend(self.subtree(repo, oid, prefix)?.iter().cloned());
            } else {
                let parsed = match self.records.get(&oid) {
                    Some(parsed) => parsed.clone(),
                    None => {
                        let parsed = match repo.find_object(oid) {
                            Ok(obj) => parse_record(prefix, &obj.data),
                            Err(e) => Parsed::Malformed(prefix.clone(), e.to_string()),
                        };
                        self.records.insert(oid, parsed.clone());
                        parsed
                    }
                };
                out.push(parsed);
            }
            prefix.truncate(len);
        }
        let out = Arc::new(out);
        self.subtrees.insert(tree, out.clone());
        Ok(out)
    }

    /// Adds the records under the top-level folders `only` of the tree `root`.
    fn collect(
        &mut self,
        repo: &gix::Repository,
        root: ObjectId,
        only: &[&str],
        inputs: &mut Inputs,
    ) -> Result<(), StoreError> {
        let object = repo.find_tree(root).map_err(StoreError::git)?;
        let decoded = object.decode().map_err(StoreError::git)?;
        let folders: Vec<(String, ObjectId)> = decoded
            .entries
            .iter()
            .filter(|e| e.mode.is_tree() && only.iter().any(|o| e.filename == o.as_bytes()))
            .map(|e| (e.filename.to_string(), e.oid.to_owned()))
            .collect();
        for (name, oid) in folders {
            let mut prefix = format!("{name}/");
            for parsed in self.subtree(repo, oid, &mut prefix)?.iter() {
                inputs.push(parsed.clone());
            }
        }
        Ok(())
    }

    fn read_inputs(&mut self, store: &Store, tips: &Tips) -> Result<Inputs, StoreError> {
        // Each new tip adds a few subtrees; start afresh once stale ones dominate.
        if self.subtrees.len() > 2 * self.walked + 1024 {
            self.subtrees.clear();
            self.records.clear();
        }
        let repo = &store.repo;
        let tree_of = |commit: ObjectId| -> Result<ObjectId, StoreError> {
            let c = repo.find_commit(commit).map_err(StoreError::git)?;
            Ok(c.tree_id().map_err(StoreError::git)?.detach())
        };
        let mut inputs = Inputs::default();
        if let Some(tip) = tips.state {
            let tree = tree_of(tip)?;
            self.collect(repo, tree, &["claims", "batches", "events"], &mut inputs)?;
        }
        for (_, commit) in &tips.heartbeats {
            // A heartbeat ref that is not a commit is skipped, as the CLI's reads do.
            let Ok(tree) = tree_of(*commit) else { continue };
            self.collect(repo, tree, &["heartbeats"], &mut inputs)?;
        }
        if self.walked == 0 || self.subtrees.len() < self.walked {
            self.walked = self.subtrees.len();
        }
        if self.records.len() > 4 * (inputs.len() + 256) {
            self.records.clear();
        }
        inputs.finish();
        Ok(inputs)
    }
}
