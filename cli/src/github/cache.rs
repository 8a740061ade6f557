//! The ETag cache behind conditional GETs: route → (ETag, body, next page), persisted as one
//! JSON file per account between ticks so an idle poll is answered 304 and costs no rate
//! limit. A lost or unreadable cache only costs full requests.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;

/// Entries kept at most (oldest routes are not tracked; the cache is small and bounded).
const MAX_ENTRIES: usize = 4096;

/// A cached answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Cached {
    pub(crate) etag: String,
    pub(crate) body: Value,
    #[serde(default)]
    pub(crate) next: Option<String>,
}

/// The cache.
#[derive(Debug, Default)]
pub(crate) struct EtagCache {
    entries: BTreeMap<String, Cached>,
    path: Option<PathBuf>,
    dirty: bool,
}

impl EtagCache {
    /// Loads the cache kept at `path` (empty when absent or unreadable).
    pub(crate) fn load(path: &Path) -> EtagCache {
        let entries = std::fs::read(path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        EtagCache {
            entries,
            path: Some(path.to_owned()),
            dirty: false,
        }
    }

    pub(crate) fn get(&self, route: &str) -> Option<&Cached> {
        self.entries.get(route)
    }

    pub(crate) fn put(&mut self, route: &str, etag: String, body: Value, next: Option<String>) {
        if self.entries.len() >= MAX_ENTRIES && !self.entries.contains_key(route) {
            return;
        }
        self.entries
            .insert(route.to_owned(), Cached { etag, body, next });
        self.dirty = true;
    }

    /// Writes the cache back (atomically: a temporary file renamed over the old one).
    pub(crate) fn save(&self) -> std::io::Result<()> {
        let (Some(path), true) = (&self.path, self.dirty) else {
            return Ok(());
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let tmp = path.with_extension("tmp");
        std::fs::write(&tmp, serde_json::to_vec(&self.entries)?)?;
        std::fs::rename(tmp, path)
    }
}

#[cfg(test)]
mod tests {
    //! Persistence round trip.
    use super::*;

    #[test]
    fn a_saved_cache_loads_back_and_a_missing_one_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c/cache.json");
        assert!(EtagCache::load(&path).get("/x").is_none());
        let mut c = EtagCache::load(&path);
        c.put(
            "/x",
            "W/\"1\"".into(),
            serde_json::json!([1]),
            Some("/x?page=2".into()),
        );
        c.save().unwrap();
        let back = EtagCache::load(&path);
        let got = back.get("/x").unwrap();
        assert_eq!(got.etag, "W/\"1\"");
        assert_eq!(got.next.as_deref(), Some("/x?page=2"));
    }
}
