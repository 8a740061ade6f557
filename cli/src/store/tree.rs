//! Reading trees: the one place that lists a tree, finds a blob by path, walks a folder and
//! reads a blob, for the CLI's snapshots and the server's model alike.
//!
//! [`TreeCache`] adds memory across reads: listings are kept per tree id and parsed blobs
//! per blob id, so after a new tip only the subtrees and records that changed are read
//! again (the server keeps one for its whole life).

use std::collections::HashMap;
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

/// Tree listings by tree id and parsed blobs by blob id, kept across reads.
pub(crate) struct TreeCache<T> {
    /// Every blob below a tree (with its parsed value), by tree id.
    subtrees: HashMap<ObjectId, Arc<Vec<Parsed<T>>>>,
    /// How many subtrees a clean walk holds (the eviction yardstick).
    walked: usize,
    /// Parsed blobs by blob id (a record's content names its identity, so one blob is one
    /// record wherever it sits).
    blobs: HashMap<ObjectId, T>,
}

impl<T> Default for TreeCache<T> {
    fn default() -> Self {
        TreeCache {
            subtrees: HashMap::new(),
            walked: 0,
            blobs: HashMap::new(),
        }
    }
}

/// Parses a blob at a path: its bytes, or why they could not be read.
pub(crate) type Parse<'a, T> = &'a dyn Fn(&str, Result<&[u8], String>) -> T;

impl<T: Clone> TreeCache<T> {
    /// Returns every blob below `tree` (at `prefix`), parsed: an unchanged subtree costs
    /// one lookup, a changed one re-reads only its changed parts.
    fn subtree(
        &mut self,
        repo: &gix::Repository,
        tree: ObjectId,
        prefix: &mut String,
        parse: Parse<'_, T>,
    ) -> Result<Arc<Vec<Parsed<T>>>, Cause> {
        if let Some(hit) = self.subtrees.get(&tree) {
            return Ok(hit.clone());
        }
        let mut out = Vec::new();
        for entry in entries(repo, tree)? {
            let len = prefix.len();
            prefix.push_str(&entry.name);
            if entry.is_tree {
                prefix.push('/');
                out.extend(self.subtree(repo, entry.id, prefix, parse)?.iter().cloned());
            } else {
                let parsed = match self.blobs.get(&entry.id) {
                    Some(parsed) => parsed.clone(),
                    None => {
                        let parsed = match repo.find_object(entry.id) {
                            Ok(obj) => parse(prefix, Ok(&obj.data)),
                            Err(e) => parse(prefix, Err(e.to_string())),
                        };
                        self.blobs.insert(entry.id, parsed.clone());
                        parsed
                    }
                };
                out.push((Arc::from(prefix.as_str()), entry.id, parsed));
            }
            prefix.truncate(len);
        }
        let out = Arc::new(out);
        self.subtrees.insert(tree, out.clone());
        Ok(out)
    }

    /// Calls `f` with every blob under the top-level folders `only` of the tree `root`.
    pub(crate) fn folders(
        &mut self,
        repo: &gix::Repository,
        root: ObjectId,
        only: &[&str],
        parse: Parse<'_, T>,
        f: &mut dyn FnMut(&Parsed<T>),
    ) -> Result<(), Cause> {
        for entry in entries(repo, root)? {
            if !entry.is_tree || !only.contains(&entry.name.as_str()) {
                continue;
            }
            let mut prefix = format!("{}/", entry.name);
            for parsed in self.subtree(repo, entry.id, &mut prefix, parse)?.iter() {
                f(parsed);
            }
        }
        Ok(())
    }

    /// Forgets stale entries once they dominate: call before a read, with nothing.
    pub(crate) fn before_read(&mut self) {
        // Each new tip adds a few subtrees; start afresh once stale ones dominate.
        if self.subtrees.len() > 2 * self.walked + 1024 {
            self.subtrees.clear();
            self.blobs.clear();
        }
    }

    /// Notes the size of a clean read of `records` blobs (the eviction yardstick).
    pub(crate) fn after_read(&mut self, records: usize) {
        if self.walked == 0 || self.subtrees.len() < self.walked {
            self.walked = self.subtrees.len();
        }
        if self.blobs.len() > 4 * (records + 256) {
            self.blobs.clear();
        }
    }
}
