//! Reading trees: the one place that lists a tree, finds a blob by path, walks a folder and
//! reads a blob, for the CLI's snapshots and the server's model alike.
//!
//! [`TreeCache`] adds memory across reads: listings are kept per tree id and parsed blobs
//! per blob id, so after a new tip only the subtrees and records that changed are read
//! again (the server keeps one for its whole life). A listing holds its own blobs and
//! shares its subtrees' listings, so a new tip builds new listings only along the changed
//! path, each no bigger than its folder.

use std::collections::HashMap;
use std::collections::HashSet;
use std::sync::Arc;

use gix::ObjectId;

use super::Cause;

/// One entry of a tree: a blob or a subtree.
pub(crate) struct Entry {
    /// The file or folder name.
    pub(crate) name: String,
    /// Its object id.
    pub(crate) id: ObjectId,
    /// Whether it is a subtree.
    pub(crate) is_tree: bool,
}

/// Returns the blobs and subtrees of `tree` (other modes, such as links, are skipped).
pub(crate) fn entries(repo: &gix::Repository, tree: ObjectId) -> Result<Vec<Entry>, Cause> {
    let object = repo.find_tree(tree)?;
    let decoded = object.decode()?;
    Ok(decoded
        .entries
        .iter()
        .filter(|e| e.mode.is_tree() || e.mode.is_blob())
        .map(|e| Entry {
            name: e.filename.to_string(),
            id: e.oid.to_owned(),
            is_tree: e.mode.is_tree(),
        })
        .collect())
}

/// Returns the tree of `commit`.
pub(crate) fn of_commit(repo: &gix::Repository, commit: ObjectId) -> Result<ObjectId, Cause> {
    Ok(repo.find_commit(commit)?.tree_id()?.detach())
}

/// Returns the blob id at `path` in `tree`, if there is a blob there.
pub(crate) fn blob_at(
    repo: &gix::Repository,
    tree: ObjectId,
    path: &str,
) -> Result<Option<ObjectId>, Cause> {
    let tree = repo.find_tree(tree)?;
    match tree.lookup_entry_by_path(path)? {
        Some(entry) if entry.mode().is_blob() => Ok(Some(entry.object_id())),
        _ => Ok(None),
    }
}

/// Returns `(path, blob id)` of every blob below the folder `prefix` of `tree`, sorted.
pub(crate) fn blobs_below(
    repo: &gix::Repository,
    tree: ObjectId,
    prefix: &str,
) -> Result<Vec<(String, ObjectId)>, Cause> {
    let prefix = prefix.trim_end_matches('/');
    let start = if prefix.is_empty() {
        Some(tree)
    } else {
        repo.find_tree(tree)?
            .lookup_entry_by_path(prefix)?
            .filter(|e| e.mode().is_tree())
            .map(|e| e.object_id())
    };
    let mut out = Vec::new();
    if let Some(start) = start {
        walk(repo, start, prefix, &mut out)?;
    }
    out.sort();
    Ok(out)
}

fn walk(
    repo: &gix::Repository,
    tree: ObjectId,
    base: &str,
    out: &mut Vec<(String, ObjectId)>,
) -> Result<(), Cause> {
    for entry in entries(repo, tree)? {
        let path = if base.is_empty() {
            entry.name
        } else {
            format!("{base}/{}", entry.name)
        };
        if entry.is_tree {
            walk(repo, entry.id, &path, out)?;
        } else {
            out.push((path, entry.id));
        }
    }
    Ok(())
}

/// Returns the bytes of the blob `id`.
pub(crate) fn blob(repo: &gix::Repository, id: ObjectId) -> Result<Vec<u8>, Cause> {
    Ok(repo.find_object(id)?.detach().data)
}

/// A blob below a folder: its path, its id and what parsing it gave.
pub(crate) type Parsed<T> = (Arc<str>, ObjectId, T);

/// One tree, parsed: its blobs and its subtrees' listings, in tree order.
pub(crate) struct Listing<T> {
    /// The tree's id.
    id: ObjectId,
    /// What this listing itself holds, estimated in bytes (its subtrees not included).
    bytes: usize,
    /// The blobs directly in this tree.
    blobs: Vec<Parsed<T>>,
    /// Each subtree's listing, after how many of `blobs` it comes.
    subtrees: Vec<(usize, Arc<Listing<T>>)>,
}

impl<T> Listing<T> {
    /// Adds this listing and every listing below it to `seen` (each once).
    fn walk(self: &Arc<Self>, seen: &mut HashMap<ObjectId, Arc<Listing<T>>>) {
        if seen.insert(self.id, self.clone()).is_some() {
            return;
        }
        for (_, subtree) in &self.subtrees {
            subtree.walk(seen);
        }
    }

    /// Calls `f` with every blob below this tree, in tree order (as a flat walk lists them).
    fn for_each(&self, f: &mut dyn FnMut(&Parsed<T>)) {
        let mut next = 0;
        for (before, subtree) in &self.subtrees {
            self.blobs
                .get(next..*before)
                .into_iter()
                .flatten()
                .for_each(&mut *f);
            next = *before;
            subtree.for_each(f);
        }
        self.blobs.get(next..).into_iter().flatten().for_each(f);
    }
}

/// Tree listings by tree id and parsed blobs by blob id, kept across reads, bounded by
/// bytes: once what the current trees no longer use passes [`STALE_BYTES`], it is dropped
/// ([`TreeCache::trim`]). Each new tip adds new listings along its changed path (a flat
/// folder of thousands of records is a listing of thousands of entries), so without the
/// bound a server taking a write a second grows by megabytes a minute. See issue 12.
pub(crate) struct TreeCache<T> {
    /// Every tree read (its blobs parsed), by tree id.
    subtrees: HashMap<ObjectId, Arc<Listing<T>>>,
    /// Parsed blobs by blob id (a record's content names its identity, so one blob is one
    /// record wherever it sits), with their estimated size.
    blobs: HashMap<ObjectId, (T, usize)>,
    /// The folders listed since the last [`TreeCache::take_roots`].
    read: Vec<Arc<Listing<T>>>,
    /// Trees listed ahead of a read (while looking for the blobs to parse in parallel),
    /// taken by the read instead of decoding them again.
    listed: HashMap<ObjectId, Vec<Entry>>,
    /// The estimated size of everything held, in bytes.
    bytes: usize,
    /// The estimated size right after the last trim (what the trees then in use held).
    live_bytes: usize,
    /// How many stale bytes may pile up before a trim drops them.
    stale_budget: usize,
}

/// Stale bytes (listings and records no current tree uses) kept before a trim.
pub(crate) const STALE_BYTES: usize = 4 << 20;

/// The folders one read listed: what a caller keeps (and [`TreeCache::trim`] spares) for as
/// long as it uses those trees.
pub(crate) struct Roots<T>(Vec<Arc<Listing<T>>>);

impl<T> Default for Roots<T> {
    fn default() -> Self {
        Roots(Vec::new())
    }
}

impl<T> Default for TreeCache<T> {
    fn default() -> Self {
        TreeCache {
            subtrees: HashMap::new(),
            blobs: HashMap::new(),
            read: Vec::new(),
            listed: HashMap::new(),
            bytes: 0,
            live_bytes: 0,
            stale_budget: STALE_BYTES,
        }
    }
}

/// The estimated heap size of a parsed blob of `len` bytes kept in the blob map (the
/// parsed record is about as big as its JSON, plus the map entry).
fn blob_bytes<T>(len: usize) -> usize {
    len + 2 * std::mem::size_of::<(ObjectId, (T, usize))>()
}

/// Parses a blob at a path: its bytes, or why they could not be read. Called from several
/// threads when a read has many new blobs.
pub(crate) type Parse<'a, T> = &'a (dyn Fn(&str, Result<&[u8], &gix::Error>) -> T + Sync);

/// From this many blobs no cached record stands for, a read parses them on several threads
/// (inflating and parsing records is most of a cold read: a server's first request).
const PARALLEL_BLOBS: usize = 64;
/// Blobs per unit of work handed to a parsing thread.
const BLOB_CHUNK: usize = 32;

/// Reads and parses the blob `id` at `path`: its parsed value and byte length. A blob that
/// cannot be read is parsed as the error, with length 0.
fn read_blob<T>(
    repo: &gix::Repository,
    path: &str,
    id: ObjectId,
    parse: Parse<'_, T>,
) -> (T, usize) {
    match repo.find_object(id) {
        Ok(obj) => (parse(path, Ok(&obj.data)), obj.data.len()),
        Err(e) => (parse(path, Err(&e)), 0),
    }
}

/// [`read_blob`] for every one of `blobs` (path, id) on every core, in order.
fn read_blobs<T: Send>(
    repo: &gix::Repository,
    blobs: &[(String, ObjectId)],
    parse: Parse<'_, T>,
) -> Vec<(T, usize)> {
    let chunks: Vec<&[(String, ObjectId)]> = blobs.chunks(BLOB_CHUNK).collect();
    let work = |repo: &gix::Repository, i: usize| -> Vec<(T, usize)> {
        (chunks[i].iter())
            .map(|(path, id)| read_blob(repo, path, *id, parse))
            .collect()
    };
    let mut out = Vec::with_capacity(blobs.len());
    let read = super::parallel::in_order(repo, chunks.len(), &work, &mut |parsed| {
        out.extend(parsed);
        Ok::<(), std::convert::Infallible>(())
    });
    match read {
        Ok(()) => out,
        Err(never) => match never {},
    }
}

impl<T: Clone + Send> TreeCache<T> {
    /// Lists the trees below `tree` (at `prefix`) that no listing is kept for, keeping the
    /// listings in [`TreeCache::listed`] for the read, and adds the blobs in them that no
    /// parsed record stands for to `out` (each blob once).
    fn unread(
        &mut self,
        repo: &gix::Repository,
        tree: ObjectId,
        prefix: &mut String,
        out: &mut Vec<(String, ObjectId)>,
        seen: &mut HashSet<ObjectId>,
    ) -> Result<(), Cause> {
        if self.subtrees.contains_key(&tree) || self.listed.contains_key(&tree) {
            return Ok(());
        }
        let listed = entries(repo, tree)?;
        for entry in &listed {
            let len = prefix.len();
            prefix.push_str(&entry.name);
            if entry.is_tree {
                prefix.push('/');
                self.unread(repo, entry.id, prefix, out, seen)?;
            } else if !self.blobs.contains_key(&entry.id) && seen.insert(entry.id) {
                out.push((prefix.clone(), entry.id));
            }
            prefix.truncate(len);
        }
        self.listed.insert(tree, listed);
        Ok(())
    }

    /// Parses ahead, on several threads, the blobs below `trees` (each with its folder's
    /// path) that no parsed record stands for, when there are many.
    fn prefetch(
        &mut self,
        repo: &gix::Repository,
        trees: &[(ObjectId, String)],
        parse: Parse<'_, T>,
    ) -> Result<(), Cause> {
        let (mut missing, mut seen) = (Vec::new(), HashSet::new());
        for (tree, prefix) in trees {
            self.unread(repo, *tree, &mut prefix.clone(), &mut missing, &mut seen)?;
        }
        if missing.len() < PARALLEL_BLOBS {
            return Ok(());
        }
        for ((_, id), (parsed, len)) in missing.iter().zip(read_blobs(repo, &missing, parse)) {
            let size = blob_bytes::<T>(len);
            self.bytes += size;
            self.blobs.insert(*id, (parsed, size));
        }
        Ok(())
    }

    /// Returns the listing of `tree` (at `prefix`), parsed: an unchanged subtree costs
    /// one lookup, a changed one re-reads only its changed parts.
    fn subtree(
        &mut self,
        repo: &gix::Repository,
        tree: ObjectId,
        prefix: &mut String,
        parse: Parse<'_, T>,
    ) -> Result<Arc<Listing<T>>, Cause> {
        if let Some(hit) = self.subtrees.get(&tree) {
            return Ok(hit.clone());
        }
        let mut out = Listing {
            id: tree,
            bytes: 0,
            blobs: Vec::new(),
            subtrees: Vec::new(),
        };
        let mut paths = 0;
        let listed = match self.listed.remove(&tree) {
            Some(listed) => listed,
            None => entries(repo, tree)?,
        };
        for entry in listed {
            let len = prefix.len();
            prefix.push_str(&entry.name);
            if entry.is_tree {
                prefix.push('/');
                let subtree = self.subtree(repo, entry.id, prefix, parse)?;
                out.subtrees.push((out.blobs.len(), subtree));
            } else {
                let parsed = match self.blobs.get(&entry.id) {
                    Some((parsed, _)) => parsed.clone(),
                    None => {
                        let (parsed, len) = read_blob(repo, prefix, entry.id, parse);
                        let size = blob_bytes::<T>(len);
                        self.bytes += size;
                        self.blobs.insert(entry.id, (parsed.clone(), size));
                        parsed
                    }
                };
                paths += prefix.len() + 2 * std::mem::size_of::<usize>();
                out.blobs
                    .push((Arc::from(prefix.as_str()), entry.id, parsed));
            }
            prefix.truncate(len);
        }
        out.bytes = std::mem::size_of::<Listing<T>>()
            + paths
            + out.blobs.capacity() * std::mem::size_of::<Parsed<T>>()
            + out.subtrees.capacity() * std::mem::size_of::<(usize, Arc<Listing<T>>)>()
            + 2 * std::mem::size_of::<(ObjectId, Arc<Listing<T>>)>();
        self.bytes += out.bytes;
        let out = Arc::new(out);
        self.subtrees.insert(tree, out.clone());
        Ok(out)
    }

    /// Calls `f` with every blob under the folders `only` of the tree `root`: top-level
    /// names, or deeper paths such as `coordinator/tasks` (whose sibling folders are never
    /// read).
    pub(crate) fn folders(
        &mut self,
        repo: &gix::Repository,
        root: ObjectId,
        only: &[&str],
        parse: Parse<'_, T>,
        f: &mut dyn FnMut(&Parsed<T>),
    ) -> Result<(), Cause> {
        let mut trees = Vec::new();
        for entry in entries(repo, root)? {
            if !entry.is_tree {
                continue;
            }
            for folder in only {
                let (top, below) = folder.split_once('/').unwrap_or((folder, ""));
                if top != entry.name {
                    continue;
                }
                let tree = if below.is_empty() {
                    Some(entry.id)
                } else {
                    repo.find_tree(entry.id)?
                        .lookup_entry_by_path(below)?
                        .filter(|e| e.mode().is_tree())
                        .map(|e| e.object_id())
                };
                trees.extend(tree.map(|t| (t, format!("{folder}/"))));
            }
        }
        let read = self.prefetch(repo, &trees, parse).and_then(|()| {
            for (tree, prefix) in &trees {
                let listing = self.subtree(repo, *tree, &mut prefix.clone(), parse)?;
                listing.for_each(f);
                self.read.push(listing);
            }
            Ok(())
        });
        // Listings read ahead that a failed read did not take are not kept.
        self.listed.clear();
        read
    }

    /// Returns the folders listed since the last call: keep them for as long as the trees
    /// they come from are current, and pass them to [`TreeCache::trim`].
    pub(crate) fn take_roots(&mut self) -> Roots<T> {
        Roots(std::mem::take(&mut self.read))
    }

    /// The estimated size of everything the cache holds, in bytes.
    #[cfg(test)]
    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Drops every listing and record that none of the trees of `keep` uses, once such
    /// stale entries pass the budget; returns whether it did.
    pub(crate) fn trim(&mut self, keep: &[&Roots<T>]) -> bool {
        if self.bytes <= self.live_bytes + self.stale_budget {
            return false;
        }
        let mut live = HashMap::new();
        for roots in keep {
            for root in &roots.0 {
                root.walk(&mut live);
            }
        }
        let live_blobs: std::collections::HashSet<ObjectId> = live
            .values()
            .flat_map(|listing| listing.blobs.iter().map(|(_, id, _)| *id))
            .collect();
        self.blobs.retain(|id, _| live_blobs.contains(id));
        self.subtrees = live;
        self.bytes = self.subtrees.values().map(|l| l.bytes).sum::<usize>()
            + self.blobs.values().map(|(_, size)| size).sum::<usize>();
        self.live_bytes = self.bytes;
        true
    }
}

#[cfg(test)]
mod tests {
    use gix::objs::tree::EntryKind;

    use super::*;

    /// Writes `files` over the tree `base` and returns the new tree.
    fn write(repo: &gix::Repository, base: ObjectId, files: &[(&str, &str)]) -> ObjectId {
        let root: gix::objs::Tree = if base == ObjectId::empty_tree(repo.object_hash()) {
            gix::objs::Tree::empty()
        } else {
            repo.find_tree(base).unwrap().decode().unwrap().into()
        };
        let mut editor = gix::objs::tree::Editor::new(root, &repo.objects, repo.object_hash());
        for (path, text) in files {
            let blob = repo.write_blob(text.as_bytes()).unwrap().detach();
            editor
                .upsert(path.split('/'), EntryKind::Blob, blob)
                .unwrap();
        }
        editor
            .write(|tree| repo.write_object(tree).map(|id| id.detach()))
            .unwrap()
    }

    /// What `folders` gives: `(path, blob id, parsed text)` in call order.
    fn listed(
        cache: &mut TreeCache<String>,
        repo: &gix::Repository,
        root: ObjectId,
    ) -> Vec<(String, ObjectId, String)> {
        let parse: Parse<'_, String> = &|path, bytes| match bytes {
            Ok(bytes) => format!("{path}={}", String::from_utf8_lossy(bytes)),
            Err(e) => e.to_string(),
        };
        let mut out = Vec::new();
        cache
            .folders(repo, root, &["a", "c"], parse, &mut |(path, id, text)| {
                out.push((path.to_string(), *id, text.clone()))
            })
            .unwrap();
        out
    }

    #[test]
    fn a_read_of_many_new_blobs_parses_them_on_several_threads_as_one_thread_would() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path()).unwrap();
        let empty = ObjectId::empty_tree(repo.object_hash());
        // Enough new blobs for the parallel read, in nested folders, one of them twice
        // (the same content at two paths is one blob, parsed once).
        let owned: Vec<(String, String)> = (0..300)
            .map(|i| (format!("a/{}/{i}.json", i % 7), format!("{}", i.min(298))))
            .chain([("c/only.json".to_owned(), "c".to_owned())])
            .collect();
        let files: Vec<(&str, &str)> = owned
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let root = write(&repo, empty, &files);
        let mut cache = TreeCache::default();
        let all = listed(&mut cache, &repo, root);
        assert!(all.len() > PARALLEL_BLOBS, "{} blobs", all.len());
        let mut flat = blobs_below(&repo, root, "a").unwrap();
        flat.extend(blobs_below(&repo, root, "c").unwrap());
        let paths: Vec<(String, ObjectId)> =
            all.iter().map(|(p, id, _)| (p.clone(), *id)).collect();
        assert_eq!(paths, flat, "every blob once, in tree order");
        // Each record parsed from its own bytes, at a path that holds it.
        for (path, _, text) in &all {
            let (at, content) = text.split_once('=').unwrap();
            let want = &owned.iter().find(|(p, _)| p == path).unwrap().1;
            assert_eq!(content, want, "{path}");
            assert!(owned.iter().any(|(p, t)| p == at && t == want), "{at}");
        }
        // Nothing read ahead is left over, and the same read again is served from the cache.
        assert!(cache.listed.is_empty());
        assert_eq!(listed(&mut cache, &repo, root), all);
    }

    #[test]
    fn folders_list_blobs_in_tree_order_before_and_after_a_change() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path()).unwrap();
        let empty = ObjectId::empty_tree(repo.object_hash());
        // Blobs and subtrees interleave (git sorts a folder `x` as `x/`), at several depths.
        let files = [
            ("a/b.json", "1"),
            ("a/b/c.json", "2"),
            ("a/b/d/e.json", "3"),
            ("a/b0.json", "4"),
            ("a/b/z.json", "5"),
            ("a/a.json", "6"),
            ("b/skipped.json", "7"),
            ("c/only.json", "8"),
        ];
        let root = write(&repo, empty, &files);
        let flat = |root: ObjectId| -> Vec<(String, ObjectId)> {
            let mut all = blobs_below(&repo, root, "a").unwrap();
            all.extend(blobs_below(&repo, root, "c").unwrap());
            all
        };
        let mut cache = TreeCache::default();
        let first = listed(&mut cache, &repo, root);
        let paths: Vec<(String, ObjectId)> =
            first.iter().map(|(p, id, _)| (p.clone(), *id)).collect();
        assert_eq!(paths, flat(root));
        assert!(first
            .iter()
            .all(|(path, _, text)| text.starts_with(&format!("{path}="))));

        // A new blob deep down: the cached listings beside it are reused, and the walk
        // still lists every blob once, in order.
        let changed = write(&repo, root, &[("a/b/d/f.json", "9"), ("a/b.json", "10")]);
        let second = listed(&mut cache, &repo, changed);
        let paths: Vec<(String, ObjectId)> =
            second.iter().map(|(p, id, _)| (p.clone(), *id)).collect();
        assert_eq!(paths, flat(changed));
        assert!(second
            .iter()
            .any(|(path, _, text)| path == "a/b.json" && text == "a/b.json=10"));
        assert_eq!(listed(&mut TreeCache::default(), &repo, changed), second);
    }

    #[test]
    fn a_deeper_folder_is_read_without_its_siblings() {
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path()).unwrap();
        let empty = ObjectId::empty_tree(repo.object_hash());
        let root = write(
            &repo,
            empty,
            &[
                ("claims/a.json", "1"),
                ("coordinator/activities/t/x.json", "2"),
                ("coordinator/tasks/o/r/7.json", "3"),
                ("coordinator/tasks.json", "4"),
            ],
        );
        let parse: Parse<'_, String> = &|path, _| path.to_owned();
        let mut seen = Vec::new();
        TreeCache::default()
            .folders(
                &repo,
                root,
                &["claims", "coordinator/tasks", "coordinator/nothing"],
                parse,
                &mut |(path, _, parsed)| seen.push((path.to_string(), parsed.clone())),
            )
            .unwrap();
        let paths: Vec<&str> = seen.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["claims/a.json", "coordinator/tasks/o/r/7.json"]);
        assert!(seen.iter().all(|(path, parsed)| path == parsed));
    }

    #[test]
    fn regression_server_memory_grows_with_every_write() {
        // A flat folder of 300 records, and 200 new tips each changing one of them: every tip
        // lists the folder again. The cache must drop what no current tree uses once that
        // passes its budget, instead of keeping every tip's listing.
        let dir = tempfile::tempdir().unwrap();
        let repo = gix::init_bare(dir.path()).unwrap();
        let empty = ObjectId::empty_tree(repo.object_hash());
        let files: Vec<(String, String)> = (0..300)
            .map(|i| (format!("a/{i:04}.json"), format!("{{\"n\":{i}}}")))
            .collect();
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let mut root = write(&repo, empty, &refs);
        let mut cache: TreeCache<String> = TreeCache {
            stale_budget: 64 << 10,
            ..TreeCache::default()
        };
        let first = listed(&mut cache, &repo, root);
        let live = cache.take_roots();
        // The first trim only measures what the current tree holds.
        cache.trim(&[&live]);
        assert!(!cache.trim(&[&live]), "nothing stale yet");
        let one_tip = cache.bytes();
        let mut trims = 0;
        let mut peak = 0;
        for i in 0..200 {
            let text = format!("{{\"n\":{i},\"v\":2}}");
            root = write(&repo, root, &[("a/0001.json", text.as_str())]);
            let now = listed(&mut cache, &repo, root);
            assert_eq!(now.len(), first.len());
            let live = cache.take_roots();
            trims += usize::from(cache.trim(&[&live]));
            peak = peak.max(cache.bytes());
            assert!(
                cache.subtrees.len() <= 8,
                "{} listings kept",
                cache.subtrees.len()
            );
        }
        assert!(trims > 0);
        assert!(
            peak <= one_tip + (64 << 10) + one_tip,
            "{peak} vs {one_tip}"
        );
        // A trim keeps what the current tree uses: the next read parses nothing.
        let before = cache.blobs.len();
        let again = listed(&mut cache, &repo, root);
        assert_eq!(again.len(), first.len());
        assert_eq!(cache.blobs.len(), before);
    }
}
