//! Writing: one optimistic transaction per command.
//!
//! Read the tips → run the pure decision → write blobs and changed trees → write the
//! commit(s) → move the refs in one gix transaction with the previous values expected.
//! If any ref moved (another process won), start over from the new tips and decide again.

use std::path::PathBuf;
use std::time::Duration;

use agent_coord_shared::record::to_bytes;
use agent_coord_shared::record::Record;
use agent_coord_shared::rules::Plan;
use gix::objs::tree::EntryKind;
use gix::objs::Kind;
use gix::objs::WriteTo;
use gix::refs::transaction::Change;
use gix::refs::transaction::LogChange;
use gix::refs::transaction::PreviousValue;
use gix::refs::transaction::RefEdit;
use gix::refs::transaction::RefLog;
use gix::refs::Target;
use gix::ObjectId;

use super::cas;
use super::fence;
use super::hook;
use super::loose;
use super::Store;
use super::StoreError;
use super::TipSnapshot;

/// How many times a write re-decides on a moved tip before giving up.
pub(crate) const MAX_ATTEMPTS: u32 = 80;

/// How many attempts may find a ref lock held before giving up (each waits for the lock
/// up to `core.filesRefLockTimeout`, so this spans longer than [`STALE_LOCK_AGE`]).
const LOCKED_ATTEMPTS: u32 = 8;

/// How many attempts may fail to read the store before the failure is reported: an object
/// another process's repack moved between a tree's read and its blob's is found on a fresh
/// snapshot (gix looks for new packs on a miss); a damaged repository fails every attempt.
const READ_ATTEMPTS: u32 = 4;

/// A ref lock file older than this was left by a writer that died: git holds a ref lock
/// for milliseconds.
pub(crate) const STALE_LOCK_AGE: Duration = Duration::from_secs(10);

/// What a committed transaction produced.
pub(crate) struct Committed<T> {
    /// The plan that was committed (or that wrote nothing).
    pub(crate) plan: Plan<T>,
    /// The new state-branch commit, if the plan changed the branch.
    pub(crate) commit: Option<ObjectId>,
}

fn update(
    name: &str,
    expected: PreviousValue,
    new: ObjectId,
    message: &str,
) -> Result<RefEdit, StoreError> {
    Ok(RefEdit {
        change: Change::Update {
            log: LogChange {
                mode: RefLog::AndReference,
                force_create_reflog: false,
                message: message.into(),
            },
            expected,
            new: Target::Object(new),
        },
        name: name.try_into().map_err(StoreError::git)?,
        deref: false,
    })
}

fn expect(tip: Option<ObjectId>) -> PreviousValue {
    match tip {
        Some(id) => PreviousValue::MustExistAndMatch(Target::Object(id)),
        None => PreviousValue::MustNotExist,
    }
}

impl Store {
    /// Runs `decide` on fresh snapshots until its plan commits, or fails.
    pub(crate) fn transact<T, E>(
        &self,
        trailer: &[(&str, String)],
        mut decide: impl FnMut(&TipSnapshot<'_>) -> Result<Plan<T>, E>,
    ) -> Result<Committed<T>, E>
    where
        E: From<StoreError>,
    {
        let mut read_failures = 0;
        for attempt in 0..MAX_ATTEMPTS {
            let snap = self.snapshot()?;
            crate::phase::mark("read");
            let plan = match decide(&snap) {
                Ok(plan) => plan,
                Err(_) if snap.store_failed() && read_failures + 1 < READ_ATTEMPTS => {
                    read_failures += 1;
                    backoff(read_failures);
                    continue;
                }
                Err(e) => return Err(e),
            };
            crate::phase::mark("decide");
            if plan.is_empty() {
                return Ok(Committed { plan, commit: None });
            }
            if attempt == 0 {
                hook::hold("decided");
            }
            match self.try_commit(&snap, &plan, trailer) {
                Ok(commit) => return Ok(Committed { plan, commit }),
                Err(Attempt::Conflict) => backoff(attempt),
                Err(Attempt::Locked(_)) if attempt + 1 < LOCKED_ATTEMPTS => backoff(attempt),
                Err(Attempt::Locked(locks)) => return Err(StoreError::Locked { locks }.into()),
                Err(Attempt::Failed(e)) => return Err(e.into()),
            }
        }
        Err(StoreError::Contention {
            attempts: MAX_ATTEMPTS,
        }
        .into())
    }

    fn try_commit<T>(
        &self,
        snap: &TipSnapshot<'_>,
        plan: &Plan<T>,
        trailer: &[(&str, String)],
    ) -> Result<Option<ObjectId>, Attempt> {
        let mut edits = Vec::new();
        let mut commit = None;
        if !plan.state.is_empty() || !plan.removals.is_empty() {
            let base = snap
                .tree
                .unwrap_or_else(|| ObjectId::empty_tree(self.repo.object_hash()));
            let tree = self.write_tree(base, &plan.state, &plan.removals)?;
            if tree != base {
                let message = commit_message(
                    &plan.summary,
                    plan.op,
                    &self.machine.to_string(),
                    trailer,
                    &plan.state,
                    &plan.removals,
                );
                let id = self.commit(&message, tree, &snap.tip.into_iter().collect::<Vec<_>>())?;
                edits.push(update(
                    &self.state_ref,
                    expect(snap.tip),
                    id,
                    &plan.summary,
                )?);
                commit = Some(id);
            }
        }
        let own = self.heartbeat_ref();
        let mut beat_tree = None;
        if !plan.heartbeats.is_empty() || !plan.heartbeat_removals.is_empty() {
            let current = snap.heartbeats().iter().find(|h| h.name == own);
            let base = current
                .map(|h| h.tree)
                .unwrap_or_else(|| ObjectId::empty_tree(self.repo.object_hash()));
            let records: Vec<(String, Record)> = plan
                .heartbeats
                .iter()
                .map(|(agent, record)| (format!("heartbeats/{agent}.json"), record.clone()))
                .collect();
            let removed: Vec<String> = plan
                .heartbeat_removals
                .iter()
                .map(|agent| format!("heartbeats/{agent}.json"))
                .collect();
            let tree = self.write_tree(base, &records, &removed)?;
            let agents: Vec<String> = plan.heartbeats.iter().map(|(a, _)| a.to_string()).collect();
            let message = format!(
                "heartbeat {}\n\nAgent-Coord-Op: heartbeat\nAgent-Coord-Machine: {}\n",
                agents.join(", "),
                self.machine
            );
            // Parentless: a heartbeat ref's history is always exactly one commit.
            let id = self.commit(&message, tree, &[])?;
            beat_tree = Some(tree);
            edits.push(update(
                &own,
                expect(current.map(|h| h.commit)),
                id,
                "heartbeat",
            )?);
        }
        if snap.consulted_heartbeats() && commit.is_some() {
            // Fence: the decision read these heartbeats; if any moved, decide again. A ref
            // this commit already updates is checked by that update itself.
            for hb in snap.heartbeats() {
                if edits
                    .iter()
                    .any(|e: &RefEdit| e.name.as_bstr() == hb.name.as_str())
                {
                    continue;
                }
                let expected = PreviousValue::MustExistAndMatch(Target::Object(hb.commit));
                edits.push(update(&hb.name, expected, hb.commit, "fence")?);
            }
            // A holder machine's heartbeat ref that did not exist yet must still not exist.
            for name in self.absent_holder_refs(snap, plan)? {
                if !edits.iter().any(|e| e.name.as_bstr() == name.as_str()) {
                    edits.push(fence::absent(&name, self.repo.object_hash())?);
                }
            }
        }
        if edits.is_empty() {
            return Ok(None);
        }
        crate::phase::mark("objects");
        let names: Vec<String> = edits.iter().map(|e| e.name.as_bstr().to_string()).collect();
        let signature = self.signature();
        let mut buf = gix::date::parse::TimeBuf::default();
        let moved = self
            .repo
            .edit_references_as(edits, Some(signature.to_ref(&mut buf)));
        crate::phase::mark("refs");
        match moved {
            Ok(_) => {
                if let Some(tree) = beat_tree {
                    // Best effort: the beat stands; only `--at` loses this moment.
                    if let Err(e) = super::history::record(self, &own, tree) {
                        self.warn(format!("warning: heartbeat history not recorded: {e}"));
                    }
                }
                Ok(commit)
            }
            Err(e) if cas::is_conflict(&e) => Err(Attempt::Conflict),
            Err(e) => match self.held_locks(&names) {
                // A ref lock we could not take: another writer, or one that was killed.
                Some(locks) => {
                    self.clear_abandoned(&locks);
                    Err(Attempt::Locked(locks))
                }
                None => Err(Attempt::Failed(StoreError::git(e))),
            },
        }
    }

    /// Writes the blobs and the changed trees for `records` (and without `removals`) on
    /// top of `base`.
    pub(crate) fn write_tree(
        &self,
        base: ObjectId,
        records: &[(String, Record)],
        removals: &[String],
    ) -> Result<ObjectId, Attempt> {
        let blobs = records
            .iter()
            .map(|(path, record)| (path.as_str(), to_bytes(record)))
            .collect::<Vec<_>>();
        let files = blobs
            .iter()
            .map(|(p, b)| (*p, Some(b.as_slice())))
            .chain(removals.iter().map(|p| (p.as_str(), None)));
        self.write_tree_bytes(base, files).map_err(Attempt::Failed)
    }

    /// Writes raw blobs at paths (or removes the paths given `None`) on top of `base` and
    /// returns the new root tree.
    ///
    /// Uses gix's object-level tree editor: the repository-level one checks that every
    /// entry of every rewritten tree exists, a `stat` per loose object, whereas here every
    /// entry is either a blob just written or taken from an existing tree.
    pub(crate) fn write_tree_bytes<'a>(
        &self,
        base: ObjectId,
        files: impl IntoIterator<Item = (&'a str, Option<&'a [u8]>)>,
    ) -> Result<ObjectId, StoreError> {
        let root: gix::objs::Tree = if base == ObjectId::empty_tree(self.repo.object_hash()) {
            gix::objs::Tree::empty()
        } else {
            let tree = self.repo.find_tree(base).map_err(StoreError::git)?;
            tree.decode().map_err(StoreError::git)?.into()
        };
        let files: Vec<(&str, Option<&[u8]>)> = files.into_iter().collect();
        self.check_shapes(base, files.iter().filter(|f| f.1.is_some()).map(|f| f.0))?;
        let mut editor =
            gix::objs::tree::Editor::new(root, &self.repo.objects, self.repo.object_hash());
        self.written
            .inc_length(files.iter().filter(|f| f.1.is_some()).count() as u64);
        for (path, bytes) in files {
            match bytes {
                Some(bytes) => {
                    let blob = self.put(Kind::Blob, bytes)?;
                    self.written.inc(1);
                    editor
                        .upsert(path.split('/'), EntryKind::Blob, blob)
                        .map_err(StoreError::git)?;
                }
                None => {
                    editor.remove(path.split('/')).map_err(StoreError::git)?;
                }
            }
        }
        editor.write(|tree| {
            let mut bytes = Vec::new();
            tree.write_to(&mut bytes).map_err(StoreError::git)?;
            self.put(Kind::Tree, &bytes)
        })
    }

    /// Writes an object as a loose file (see `loose.rs`) and returns its id; an object the
    /// repository already has is not written again.
    fn put(&self, kind: Kind, bytes: &[u8]) -> Result<ObjectId, StoreError> {
        let id = gix::objs::compute_hash(self.repo.object_hash(), kind, bytes)
            .map_err(StoreError::git)?;
        if !self.repo.objects.exists_without_refresh(&id) {
            let objects = self.repo.objects.store_ref().path();
            write_again(|| loose::write(objects, id, kind, bytes)).map_err(StoreError::git)?;
        }
        Ok(id)
    }
}

/// How many times an object write is tried.
const WRITE_TRIES: usize = 6;

/// Writes one object, again when a try fails. Another process's packing (`git repack -d`,
/// see `maintain.rs`) removes the loose-object folders it empties, and an object whose
/// folder goes between gix creating it and moving the object in fails to persist ("Could
/// not persist loose object"); writing again creates the folder again. A lasting failure
/// (a full disk, a read-only store) fails every try.
/// Between tries it waits a little longer each time (1, 2, 4, … ms), so a packer that keeps
/// emptying folders while many writers race (`regression_concurrent_packer_warning`) has
/// finished its pass by the next try.
fn write_again<T, E>(mut write: impl FnMut() -> Result<T, E>) -> Result<T, E> {
    let mut tries = 1;
    loop {
        match write() {
            Err(_) if tries < WRITE_TRIES => {
                std::thread::sleep(std::time::Duration::from_millis(1 << (tries - 1)));
                tries += 1;
            }
            done => return done,
        }
    }
}

impl Store {
    /// Refuses to write `paths` over `base` when one would replace a file with a folder
    /// (an ancestor is a blob) or a folder with a file: the tree editor does either
    /// silently, deleting content nobody asked to delete.
    fn check_shapes<'a>(
        &self,
        base: ObjectId,
        paths: impl Iterator<Item = &'a str>,
    ) -> Result<(), StoreError> {
        if base == ObjectId::empty_tree(self.repo.object_hash()) {
            return Ok(());
        }
        let tree = self.repo.find_tree(base).map_err(StoreError::git)?;
        let mut folders_seen = std::collections::HashSet::new();
        let shape = |path: &str, at: &str, found, wanted| StoreError::Shape {
            path: path.to_owned(),
            at: at.to_owned(),
            found,
            wanted,
        };
        for path in paths {
            for (end, _) in path.match_indices('/') {
                let folder = &path[..end];
                if !folders_seen.insert(folder) {
                    continue;
                }
                let entry = tree.lookup_entry_by_path(folder).map_err(StoreError::git)?;
                if entry.is_some_and(|e| !e.mode().is_tree()) {
                    return Err(shape(path, folder, "file", "folder"));
                }
            }
            let entry = tree.lookup_entry_by_path(path).map_err(StoreError::git)?;
            if entry.is_some_and(|e| e.mode().is_tree()) {
                return Err(shape(path, path, "folder", "file"));
            }
        }
        Ok(())
    }
}

/// Why one attempt did not commit.
pub(crate) enum Attempt {
    /// A ref moved under us: decide again.
    Conflict,
    /// A ref's lock file is held (by a live writer, or left by a killed one).
    Locked(Vec<PathBuf>),
    /// Anything else: give up.
    Failed(StoreError),
}

impl From<StoreError> for Attempt {
    fn from(e: StoreError) -> Self {
        Attempt::Failed(e)
    }
}

impl Store {
    /// Writes a commit object authored by the agent-coord bot, in UTC.
    ///
    /// An explicit UTC signature also keeps gix from resolving the local time zone, which
    /// scans the whole zoneinfo database on every commit.
    pub(crate) fn commit(
        &self,
        message: &str,
        tree: ObjectId,
        parents: &[ObjectId],
    ) -> Result<ObjectId, StoreError> {
        let signature = self.signature();
        let commit = gix::objs::Commit {
            tree,
            parents: parents.iter().copied().collect(),
            author: signature.clone(),
            committer: signature,
            encoding: None,
            message: message.into(),
            extra_headers: Vec::new(),
        };
        let mut bytes = Vec::new();
        commit.write_to(&mut bytes).map_err(StoreError::git)?;
        self.put(Kind::Commit, &bytes)
    }

    /// Moves `name` from `expected` (`None`: must not exist) to `new`; `Ok(false)` when
    /// someone else moved it first.
    pub(crate) fn move_ref(
        &self,
        name: &str,
        expected: Option<ObjectId>,
        new: ObjectId,
        message: &str,
    ) -> Result<bool, StoreError> {
        self.apply_edits(vec![update(name, expect(expected), new, message)?])
    }

    /// Points `name` at `new` whatever it was (for private tracking refs).
    pub(crate) fn set_ref(
        &self,
        name: &str,
        new: ObjectId,
        message: &str,
    ) -> Result<(), StoreError> {
        self.apply_edits(vec![update(name, PreviousValue::Any, new, message)?])
            .map(|_| ())
    }

    /// Deletes `name` if it still points at `expected`; `Ok(false)` when it moved (or went)
    /// first.
    pub(crate) fn delete_ref(&self, name: &str, expected: ObjectId) -> Result<bool, StoreError> {
        self.apply_edits(vec![RefEdit {
            change: Change::Delete {
                expected: PreviousValue::MustExistAndMatch(Target::Object(expected)),
                log: RefLog::AndReference,
            },
            name: name.try_into().map_err(StoreError::git)?,
            deref: false,
        }])
    }

    fn apply_edits(&self, edits: Vec<RefEdit>) -> Result<bool, StoreError> {
        let signature = self.signature();
        let mut buf = gix::date::parse::TimeBuf::default();
        match self
            .repo
            .edit_references_as(edits, Some(signature.to_ref(&mut buf)))
        {
            Ok(_) => Ok(true),
            Err(e) if cas::is_conflict(&e) => Ok(false),
            Err(e) => Err(StoreError::git(e)),
        }
    }

    /// Returns the bot signature for commits and reflogs: agent-coord at this machine, now, UTC.
    fn signature(&self) -> gix::actor::Signature {
        let seconds = self.commit_seconds();
        gix::actor::Signature {
            name: "agent-coord".into(),
            email: format!("agent-coord@{}", self.machine).into(),
            time: gix::date::Time::new(seconds, 0),
        }
    }

    /// Returns the lock files that exist for `refs`, if any.
    fn held_locks(&self, refs: &[String]) -> Option<Vec<PathBuf>> {
        let locks: Vec<PathBuf> = refs
            .iter()
            .map(|r| self.repo.git_dir().join(format!("{r}.lock")))
            .filter(|p| p.exists())
            .collect();
        (!locks.is_empty()).then_some(locks)
    }

    /// Removes lock files older than [`STALE_LOCK_AGE`], noting each removal.
    fn clear_abandoned(&self, locks: &[PathBuf]) {
        for lock in locks {
            let age = std::fs::metadata(lock)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok());
            if age.is_some_and(|a| a >= STALE_LOCK_AGE) && std::fs::remove_file(lock).is_ok() {
                self.warn(format!(
                    "warning: removed abandoned lock {} (left by a writer that was killed)",
                    lock.display()
                ));
            }
        }
    }
}

/// Sleeps a jittered, growing amount so racing writers spread out.
fn backoff(attempt: u32) {
    let cap = 1u64 << attempt.min(5);
    std::thread::sleep(Duration::from_micros(fastrand::u64(200..=cap * 1000 + 200)));
}

/// Returns the commit message: a human summary, then machine-readable trailers.
fn commit_message(
    summary: &str,
    op: &str,
    machine: &str,
    extra: &[(&str, String)],
    state: &[(String, Record)],
    removals: &[String],
) -> String {
    let mut msg = format!("{summary}\n\nAgent-Coord-Op: {op}\nAgent-Coord-Machine: {machine}\n");
    for (key, value) in extra {
        msg.push_str(&format!("{key}: {value}\n"));
    }
    for (path, _) in state {
        msg.push_str(&format!("Agent-Coord-Path: {path}\n"));
    }
    for path in removals {
        msg.push_str(&format!("Agent-Coord-Removed: {path}\n"));
    }
    msg
}

#[cfg(test)]
mod tests {
    use agent_coord_shared::snapshot::ReadError;

    use super::super::tree;
    use super::*;

    /// A plan that writes `{"n": text}` at `path`.
    fn upsert(path: &str, text: &str) -> Plan<()> {
        let record: Record = serde_json::from_str(&format!("{{\"n\": \"{text}\"}}"))
            .unwrap_or_else(|e| panic!("record: {e}"));
        let mut plan = Plan::nothing("test", ());
        plan.state.push((path.to_owned(), record));
        plan.summary = format!("write {path}");
        plan
    }

    /// The loose file of object `id`.
    fn loose_file(store: &Store, id: ObjectId) -> std::path::PathBuf {
        let hex = id.to_string();
        store
            .repo
            .path()
            .join("objects")
            .join(&hex[..2])
            .join(&hex[2..])
    }

    /// `regression_concurrent_packer_warning` failed one claim once: "state unreadable: An
    /// object with id … could not be found" while other writers packed.
    #[test]
    fn regression_a_read_that_misses_an_object_a_repack_moved_decides_again() {
        use agent_coord_shared::snapshot::Snapshot;

        let dir = tempfile::tempdir().expect("tempdir");
        let store = super::super::open_for_test(dir.path());
        let path = "claims/acme/app/1.json";
        store
            .transact(&[], |_| Ok::<_, StoreError>(upsert(path, "first")))
            .unwrap_or_else(|e| panic!("first write: {e}"));
        let snap = store.snapshot().unwrap_or_else(|e| panic!("snapshot: {e}"));
        let tree = snap.tree.expect("a tree");
        let blob = tree::blob_at(&store.repo, tree, path)
            .ok()
            .flatten()
            .expect("the record's blob");
        let file = loose_file(&store, blob);
        let aside = dir.path().join("moved-object");
        // The first decision's read finds the object gone (a repack moving it between
        // packs); by the next one it is back, as it would be in the new pack.
        let mut calls = 0;
        let committed = store.transact(&[], |snap| {
            calls += 1;
            if calls == 1 {
                std::fs::rename(&file, &aside).expect("object moved aside");
                let read = snap.read(path);
                std::fs::rename(&aside, &file).expect("object back");
                read?;
            } else {
                assert!(snap.read(path)?.is_some(), "the record reads again");
            }
            Ok::<_, StoreError>(upsert(path, "second"))
        });
        assert!(committed.is_ok(), "{:?}", committed.err());
        assert_eq!(calls, 2, "decided again on a fresh snapshot");
        // An object that stays gone fails every attempt, a bounded number of times.
        std::fs::remove_file(loose_file(&store, {
            let snap = store.snapshot().unwrap_or_else(|e| panic!("snapshot: {e}"));
            tree::blob_at(&store.repo, snap.tree.expect("a tree"), path)
                .ok()
                .flatten()
                .expect("the record's blob")
        }))
        .expect("object removed");
        let mut calls = 0;
        let failed = store.transact(&[], |snap| {
            calls += 1;
            snap.read(path)?;
            Ok::<_, StoreError>(upsert(path, "third"))
        });
        assert!(
            matches!(failed, Err(StoreError::Unreadable(ReadError::Store(_)))),
            "{:?}",
            failed.err()
        );
        assert_eq!(calls, READ_ATTEMPTS);
    }

    /// `sixteen_writers_fifty_claims_each_lose_nothing` failed one claim in `make test`:
    /// "Could not persist loose object" while another writer's packing ran.
    #[test]
    fn regression_an_object_write_that_lost_its_folder_is_tried_again() {
        let mut tries = 0;
        let written = write_again(|| {
            tries += 1;
            if tries < WRITE_TRIES {
                Err("Could not persist loose object")
            } else {
                Ok(tries)
            }
        });
        assert_eq!(written, Ok(WRITE_TRIES));
        let mut tries = 0;
        let lasting: Result<(), &str> = write_again(|| {
            tries += 1;
            Err("No space left on device")
        });
        assert_eq!(lasting, Err("No space left on device"));
        assert_eq!(
            tries, WRITE_TRIES,
            "a lasting failure is tried a bounded number of times"
        );
    }
}
