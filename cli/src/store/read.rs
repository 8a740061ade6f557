//! Reading a consistent snapshot: the state branch tip tree plus every machine's
//! heartbeat ref, with parsed records cached by blob id.
//!
//! A heartbeat may exist on several machines' refs (an agent that moved); readers take
//! the copy with the newest `updated_at`. Which heartbeat refs a decision consulted is
//! remembered so the write can fence on them.

use std::cell::Cell;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::collections::HashMap;

use agent_coord_shared::record::from_bytes;
use agent_coord_shared::record::ParseError;
use agent_coord_shared::record::Record;
use agent_coord_shared::rules::liveness;
use agent_coord_shared::rules::newest_beat;
use agent_coord_shared::snapshot::ReadError;
use agent_coord_shared::snapshot::Snapshot;
use gix::ObjectId;

use super::tree;
use super::Store;
use super::StoreError;

/// One machine's heartbeat ref as seen by a snapshot.
pub(crate) struct HeartbeatRef {
    pub(crate) name: String,
    pub(crate) commit: ObjectId,
    pub(crate) tree: ObjectId,
}

/// A consistent view of the state at one set of tips.
pub(crate) struct TipSnapshot<'s> {
    store: &'s Store,
    /// The state branch tip this snapshot was read at.
    pub(crate) tip: Option<ObjectId>,
    /// The tip's tree.
    pub(crate) tree: Option<ObjectId>,
    /// Every heartbeat ref at snapshot time, with its commit.
    heartbeat_tips: Vec<(String, ObjectId)>,
    /// The heartbeat refs with their trees, read on first use: a write that consults no
    /// heartbeat (a claim of a free target) reads no heartbeat commit.
    heartbeats: std::cell::OnceCell<Vec<HeartbeatRef>>,
    cache: RefCell<HashMap<ObjectId, Result<Record, ParseError>>>,
    consulted_heartbeats: Cell<bool>,
    /// Whether a read failed in the store itself (not a malformed record): an object the
    /// tree names could not be found, say, because another process's repack moved it just
    /// then.
    store_failed: Cell<bool>,
}

/// Reads the blob `id` and parses it as the record at `path`.
fn parse_object(repo: &gix::Repository, path: &str, id: ObjectId) -> Result<Record, ReadError> {
    let obj = repo.find_object(id).map_err(|e| {
        if repo.has_object(id) {
            ReadError::Store(format!("{path}: {e}"))
        } else {
            ReadError::Store(format!(
                "{path}: its object {id} is missing from the repository (pruned or damaged); \
                 `agent-coord sync` restores it when another clone has it"
            ))
        }
    })?;
    from_bytes(&obj.data).map_err(|e| ReadError::Malformed {
        path: path.to_owned(),
        message: e.to_string(),
    })
}

impl<'s> TipSnapshot<'s> {
    pub(crate) fn new(
        store: &'s Store,
        tip: Option<ObjectId>,
        heartbeat_tips: Vec<(String, ObjectId)>,
    ) -> Result<Self, StoreError> {
        let tree = tip
            .map(|commit| tree::of_commit(&store.repo, commit).map_err(StoreError::git))
            .transpose()?;
        Ok(TipSnapshot {
            store,
            tip,
            tree,
            heartbeat_tips,
            heartbeats: std::cell::OnceCell::new(),
            cache: RefCell::default(),
            consulted_heartbeats: Cell::new(false),
            store_failed: Cell::new(false),
        })
    }

    /// Returns every heartbeat ref of the snapshot with its tree (read now if not yet).
    pub(crate) fn heartbeats(&self) -> &[HeartbeatRef] {
        self.heartbeats.get_or_init(|| {
            // A heartbeat ref that is not a commit (pushed by a broken client) is ignored
            // rather than making every read on every machine fail.
            self.heartbeat_tips
                .iter()
                .filter_map(|(name, commit)| {
                    Some(HeartbeatRef {
                        tree: tree::of_commit(&self.store.repo, *commit).ok()?,
                        name: name.clone(),
                        commit: *commit,
                    })
                })
                .collect()
        })
    }

    /// Reports whether a decision read any heartbeat (so the write must fence on them).
    pub(crate) fn consulted_heartbeats(&self) -> bool {
        self.consulted_heartbeats.get()
    }

    /// Reports whether a read of this snapshot failed in the store (rather than finding a
    /// malformed record): a decision that failed after one may succeed on a fresh snapshot.
    pub(crate) fn store_failed(&self) -> bool {
        self.store_failed.get()
    }

    /// `read`, remembering a failure of the store itself. Every store error a read makes
    /// passes through here.
    fn noted<T>(&self, read: Result<T, ReadError>) -> Result<T, ReadError> {
        if let Err(ReadError::Store(_)) = read {
            self.store_failed.set(true);
        }
        read
    }

    /// The store failed: `e` as a read error, noted.
    fn store_err(&self, e: impl std::fmt::Display) -> ReadError {
        self.store_failed.set(true);
        ReadError::Store(e.to_string())
    }

    /// Parses a blob without caching it (bulk reads see each record once).
    fn parse_uncached(&self, path: &str, id: ObjectId) -> Result<Record, ReadError> {
        self.noted(parse_object(&self.store.repo, path, id))
    }

    /// Parses a blob, caching it by blob id (point reads may repeat within a decision).
    fn parse_blob(&self, path: &str, id: ObjectId) -> Result<Record, ReadError> {
        let malformed = |e: ParseError| ReadError::Malformed {
            path: path.to_owned(),
            message: e.to_string(),
        };
        if let Some(hit) = self.cache.borrow().get(&id) {
            return hit.clone().map_err(malformed);
        }
        let obj = self
            .store
            .repo
            .find_object(id)
            .map_err(|e| self.store_err(e))?;
        let parsed = from_bytes(&obj.data);
        self.cache.borrow_mut().insert(id, parsed.clone());
        parsed.map_err(malformed)
    }

    /// Returns the blob id at `path` in `tree`, if there is a blob there.
    fn blob_at(&self, tree: ObjectId, path: &str) -> Result<Option<ObjectId>, ReadError> {
        tree::blob_at(&self.store.repo, tree, path).map_err(|e| self.store_err(e))
    }

    /// Returns `(path, blob id)` of every blob below the folder `prefix` of `tree`, sorted.
    pub(crate) fn blobs_below(
        &self,
        tree: ObjectId,
        prefix: &str,
    ) -> Result<Vec<(String, ObjectId)>, ReadError> {
        tree::blobs_below(&self.store.repo, tree, prefix).map_err(|e| self.store_err(e))
    }

    /// Returns the raw bytes of a blob.
    pub(crate) fn blob_bytes(&self, id: ObjectId) -> Result<Vec<u8>, ReadError> {
        tree::blob(&self.store.repo, id).map_err(|e| self.store_err(e))
    }

    /// Returns every heartbeat path with all its copies (one per machine ref holding it).
    fn heartbeat_copies(
        &self,
        prefix_or_path: &str,
        exact: bool,
    ) -> Result<BTreeMap<String, Vec<ObjectId>>, ReadError> {
        self.consulted_heartbeats.set(true);
        let mut copies: BTreeMap<String, Vec<ObjectId>> = BTreeMap::new();
        for hb in self.heartbeats() {
            if exact {
                if let Some(id) = self.blob_at(hb.tree, prefix_or_path)? {
                    copies
                        .entry(prefix_or_path.to_owned())
                        .or_default()
                        .push(id);
                }
            } else {
                for (path, id) in self.blobs_below(hb.tree, prefix_or_path)? {
                    copies.entry(path).or_default().push(id);
                }
            }
        }
        // This machine's own ref and its copy fetched back from a remote usually hold the
        // same blob: that is one copy, not two.
        for ids in copies.values_mut() {
            ids.sort();
            ids.dedup();
        }
        Ok(copies)
    }

    /// The heartbeat at `path` as the heartbeat refs of `machine` hold it (its own ref and
    /// any copy fetched from a remote; the newest copy counts), `None` when that machine has
    /// none: what one machine last said, whatever other machines beat for the same agent.
    pub(crate) fn beat_on_machine(
        &self,
        machine: &str,
        path: &str,
    ) -> Result<Option<Record>, ReadError> {
        self.consulted_heartbeats.set(true);
        let mut ids = Vec::new();
        for hb in self.heartbeats() {
            if hb.name.rsplit('/').next() != Some(machine) {
                continue;
            }
            if let Some(id) = self.blob_at(hb.tree, path)? {
                ids.push(id);
            }
        }
        ids.sort();
        ids.dedup();
        if ids.is_empty() {
            return Ok(None);
        }
        self.newest(path, &ids, true).map(Some)
    }

    /// Picks the copy of a heartbeat that counts (shared's `newest_beat` rule).
    fn newest(&self, path: &str, ids: &[ObjectId], cached: bool) -> Result<Record, ReadError> {
        let copies = ids.iter().map(|id| {
            if cached {
                self.parse_blob(path, *id)
            } else {
                self.parse_uncached(path, *id)
            }
        });
        newest_beat::newest_readable(copies, liveness::updated_at)
            .unwrap_or_else(|| Err(ReadError::Store(format!("no copy of {path}"))))
    }

    fn is_heartbeat_path(path: &str) -> bool {
        path == "heartbeats" || path.starts_with("heartbeats/")
    }
}

/// Below this many records a listing is parsed on the calling thread.
const PARALLEL_THRESHOLD: usize = 512;
/// Records per unit of work handed to a parsing thread.
const CHUNK: usize = 128;

/// Reads, parses and maps `entries` on worker threads (one per core), calling `f` in order.
fn parse_parallel<T: Send>(
    repo: &gix::Repository,
    entries: &[(String, ObjectId)],
    map: &(dyn Fn(String, Record) -> T + Sync),
    f: &mut dyn FnMut(T),
) -> Result<(), ReadError> {
    let chunks: Vec<&[(String, ObjectId)]> = entries.chunks(CHUNK).collect();
    let work = |repo: &gix::Repository, i: usize| -> Result<Vec<T>, ReadError> {
        chunks[i]
            .iter()
            .map(|(path, id)| {
                let record = parse_object(repo, path, *id)?;
                Ok(map(path.clone(), record))
            })
            .collect()
    };
    super::parallel::in_order(repo, chunks.len(), &work, &mut |parsed| {
        parsed?.into_iter().for_each(&mut *f);
        Ok(())
    })
}

impl Snapshot for TipSnapshot<'_> {
    fn for_each(&self, prefix: &str, f: &mut dyn FnMut(String, Record)) -> Result<(), ReadError> {
        self.for_each_map(prefix, &|path, record| (path, record), &mut |(
            path,
            record,
        )| {
            f(path, record)
        })
    }

    fn for_each_map<T: Send>(
        &self,
        prefix: &str,
        map: &(dyn Fn(String, Record) -> T + Sync),
        f: &mut dyn FnMut(T),
    ) -> Result<(), ReadError> {
        if Self::is_heartbeat_path(prefix) {
            let copies = self.heartbeat_copies(prefix, false)?;
            if copies.len() >= PARALLEL_THRESHOLD && copies.values().all(|ids| ids.len() == 1) {
                // One copy per agent (the usual case): nothing to choose between, so read in
                // parallel like any other family.
                let entries: Vec<(String, ObjectId)> = copies
                    .into_iter()
                    .filter(|(p, _)| p.ends_with(".json"))
                    .filter_map(|(p, ids)| ids.first().map(|id| (p, *id)))
                    .collect();
                return self.noted(parse_parallel(&self.store.repo, &entries, map, f));
            }
            for (path, record) in self.list(prefix)? {
                f(map(path, record));
            }
            return Ok(());
        }
        let Some(tree) = self.tree else { return Ok(()) };
        let mut entries = self.blobs_below(tree, prefix)?;
        entries.retain(|(p, _)| p.ends_with(".json"));
        if entries.len() >= PARALLEL_THRESHOLD {
            return self.noted(parse_parallel(&self.store.repo, &entries, map, f));
        }
        for (path, id) in entries {
            // Bulk reads are not cached: each record is parsed once and handed over.
            let record = self.parse_uncached(&path, id)?;
            f(map(path, record));
        }
        Ok(())
    }

    fn is_file(&self, path: &str) -> Result<bool, ReadError> {
        let Some(tree) = self.tree else {
            return Ok(false);
        };
        Ok(self.blob_at(tree, path)?.is_some())
    }

    fn read(&self, path: &str) -> Result<Option<Record>, ReadError> {
        if Self::is_heartbeat_path(path) {
            let copies = self.heartbeat_copies(path, true)?;
            return copies
                .get(path)
                .map(|ids| self.newest(path, ids, true))
                .transpose();
        }
        let Some(tree) = self.tree else {
            return Ok(None);
        };
        match self.blob_at(tree, path)? {
            Some(id) => self.parse_blob(path, id).map(Some),
            None => Ok(None),
        }
    }

    fn paths(&self, prefix: &str) -> Result<Vec<String>, ReadError> {
        if Self::is_heartbeat_path(prefix) {
            return Ok(self.list(prefix)?.into_iter().map(|(p, _)| p).collect());
        }
        let Some(tree) = self.tree else {
            return Ok(Vec::new());
        };
        let mut entries = self.blobs_below(tree, prefix)?;
        entries.retain(|(p, _)| p.ends_with(".json"));
        Ok(entries.into_iter().map(|(p, _)| p).collect())
    }

    fn list(&self, prefix: &str) -> Result<Vec<(String, Record)>, ReadError> {
        if Self::is_heartbeat_path(prefix) {
            let copies = self.heartbeat_copies(prefix, false)?;
            return copies
                .iter()
                .filter(|(p, _)| p.ends_with(".json"))
                .map(|(p, ids)| Ok((p.clone(), self.newest(p, ids, false)?)))
                .collect();
        }
        let mut out = Vec::new();
        self.for_each(prefix, &mut |path, record| out.push((path, record)))?;
        Ok(out)
    }
}
