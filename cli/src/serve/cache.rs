//! The dashboard model, cached by the tip ids it was derived from.
//!
//! Nothing here is state a restart could lose: the cache only remembers work. Trees are
//! listed once per tree id and records parsed once per blob id, so a new tip re-reads
//! only the subtrees and records that changed; the model itself is re-derived from the
//! cached records (liveness moves with the clock even when no ref does, so a cached model
//! is also rebuilt once it is older than [`MAX_AGE`]).

use std::collections::HashMap;
use std::collections::HashSet;
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

/// One tree's entries: (name, id, is-tree).
type Entries = Arc<Vec<(String, ObjectId, bool)>>;

/// What one read collects.
#[derive(Default)]
struct Scan {
    inputs: Inputs,
    live: HashSet<ObjectId>,
}

/// A derived model and what it was derived from.
pub(crate) struct Built {
    pub(crate) tips: Tips,
    pub(crate) inputs: Arc<Inputs>,
    pub(crate) model: Arc<DashboardModel>,
    /// The model serialised once, for `GET /api/dashboard` (shared, never copied).
    pub(crate) json: axum::body::Bytes,
    built_at: StdInstant,
}

/// Parsed records and tree listings, keyed by object id.
#[derive(Default)]
pub(crate) struct ModelCache {
    trees: HashMap<ObjectId, Entries>,
    /// Parsed records by blob id (a record's content names its identity, so one blob is
    /// one record wherever it sits).
    records: HashMap<ObjectId, Parsed>,
    built: Option<Arc<Built>>,
}

impl ModelCache {
    /// Returns the model for the store's current tips, deriving it only when they moved
    /// (or the cached one is older than [`MAX_AGE`]).
    pub(crate) fn get(&mut self, store: &Store, now: Instant) -> Result<Arc<Built>, StoreError> {
        let tips = Tips::read(store)?;
        if let Some(b) = &self.built {
            if b.tips == tips && b.built_at.elapsed() < MAX_AGE {
                return Ok(b.clone());
            }
            if b.tips == tips {
                return Ok(self.derive(tips, b.inputs.clone(), now));
            }
        }
        let inputs = Arc::new(self.read_inputs(store, &tips)?);
        Ok(self.derive(tips, inputs, now))
    }

    fn derive(&mut self, tips: Tips, inputs: Arc<Inputs>, now: Instant) -> Arc<Built> {
        let model = dashboard::build(&inputs, now, &tips.version());
        let previous = self.built.as_ref().map_or(0, |b| b.json.len());
        let mut json = Vec::with_capacity(previous + previous / 8);
        if serde_json::to_writer(&mut json, &model).is_err() {
            json.clear();
        }
        let built = Arc::new(Built {
            tips,
            inputs,
            model: Arc::new(model),
            json: json.into(),
            built_at: StdInstant::now(),
        });
        self.built = Some(built.clone());
        built
    }

    /// The entries of one tree (name, id, is-tree), decoded once per tree id.
    fn entries(&mut self, repo: &gix::Repository, tree: ObjectId) -> Result<Entries, StoreError> {
        if let Some(hit) = self.trees.get(&tree) {
            return Ok(hit.clone());
        }
        let object = repo.find_tree(tree).map_err(StoreError::git)?;
        let decoded = object.decode().map_err(StoreError::git)?;
        let entries: Entries = Arc::new(
            decoded
                .entries
                .iter()
                .filter(|e| e.mode.is_tree() || e.mode.is_blob())
                .map(|e| (e.filename.to_string(), e.oid.to_owned(), e.mode.is_tree()))
                .collect(),
        );
        self.trees.insert(tree, entries.clone());
        Ok(entries)
    }

    /// Adds every record under `tree` (at `prefix`) to `inputs`: cached records by blob id
    /// without building their paths, new ones read and parsed.
    fn collect(
        &mut self,
        repo: &gix::Repository,
        tree: ObjectId,
        prefix: &mut String,
        only: Option<&[&str]>,
        scan: &mut Scan,
    ) -> Result<(), StoreError> {
        let entries = self.entries(repo, tree)?;
        for (name, oid, is_tree) in entries.iter() {
            if only.is_some_and(|o| !o.contains(&name.as_str())) {
                continue;
            }
            let len = prefix.len();
            if *is_tree {
                prefix.push_str(name);
                prefix.push('/');
                self.collect(repo, *oid, prefix, None, scan)?;
            } else {
                scan.live.insert(*oid);
                match self.records.get(oid) {
                    Some(parsed) => scan.inputs.push(parsed.clone()),
                    None => {
                        prefix.push_str(name);
                        let parsed = match repo.find_object(*oid) {
                            Ok(obj) => parse_record(prefix, &obj.data),
                            Err(e) => Parsed::Malformed(prefix.clone(), e.to_string()),
                        };
                        self.records.insert(*oid, parsed.clone());
                        scan.inputs.push(parsed);
                    }
                }
            }
            prefix.truncate(len);
        }
        Ok(())
    }

    fn read_inputs(&mut self, store: &Store, tips: &Tips) -> Result<Inputs, StoreError> {
        let repo = &store.repo;
        let tree_of = |commit: ObjectId| -> Result<ObjectId, StoreError> {
            let c = repo.find_commit(commit).map_err(StoreError::git)?;
            Ok(c.tree_id().map_err(StoreError::git)?.detach())
        };
        let mut scan = Scan::default();
        let mut prefix = String::new();
        if let Some(tip) = tips.state {
            let tree = tree_of(tip)?;
            self.collect(
                repo,
                tree,
                &mut prefix,
                Some(&["claims", "batches", "events"]),
                &mut scan,
            )?;
        }
        for (_, commit) in &tips.heartbeats {
            // A heartbeat ref that is not a commit is skipped, as the CLI's reads do.
            let Ok(tree) = tree_of(*commit) else { continue };
            self.collect(repo, tree, &mut prefix, Some(&["heartbeats"]), &mut scan)?;
        }
        // Keep the caches to what the current tips reference.
        let live = scan.live;
        self.records.retain(|oid, _| live.contains(oid));
        if self.trees.len() > 4 * (self.records.len() + 64) {
            self.trees.clear();
        }
        let mut inputs = scan.inputs;
        inputs.finish();
        Ok(inputs)
    }
}
