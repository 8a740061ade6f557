//! The read side that every rule sees: records at paths of one consistent state.
//!
//! The CLI implements [`Snapshot`] over one git tip (plus the heartbeat refs read with it);
//! tests implement it over a map. Rules read lazily, so a claim decision touches two
//! records, not the whole state.

use std::collections::BTreeMap;

use crate::record::from_bytes;
use crate::record::Record;

/// Why a read could not produce a record.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReadError {
    /// The stored bytes are not a JSON object.
    #[error("state unreadable: {path}: {message}")]
    Malformed {
        /// The record's path.
        path: String,
        /// What the parser said.
        message: String,
    },
    /// The store itself failed (I/O, corrupt object, …).
    #[error("state unreadable: {0}")]
    Store(String),
}

/// A consistent view of the coordination state.
pub trait Snapshot {
    /// Returns the record at `path`, `None` if absent.
    fn read(&self, path: &str) -> Result<Option<Record>, ReadError>;
    /// Returns the record at `path` as a record kind (`Claim`, `Heartbeat`, …).
    fn read_as<T: From<Record>>(&self, path: &str) -> Result<Option<T>, ReadError>
    where
        Self: Sized,
    {
        Ok(self.read(path)?.map(T::from))
    }

    /// Reports whether the state tree holds a file (of any content, a record or not) at
    /// exactly `path`: a write below it would need a folder there.
    fn is_file(&self, path: &str) -> Result<bool, ReadError>;

    /// Returns every `.json` record below the folder `prefix`, sorted by path.
    fn list(&self, prefix: &str) -> Result<Vec<(String, Record)>, ReadError>;

    /// Returns the paths of every `.json` record below the folder `prefix`, sorted, without
    /// reading the records (implementations that can list names cheaply should).
    fn paths(&self, prefix: &str) -> Result<Vec<String>, ReadError> {
        Ok(self.list(prefix)?.into_iter().map(|(p, _)| p).collect())
    }

    /// Calls `f` with every `.json` record below `prefix`, in path order, without holding
    /// them all at once (implementations may stream; this default lists first).
    fn for_each(&self, prefix: &str, f: &mut dyn FnMut(String, Record)) -> Result<(), ReadError> {
        for (path, record) in self.list(prefix)? {
            f(path, record);
        }
        Ok(())
    }

    /// Like [`for_each`](Self::for_each), applying `map` to each record first; an
    /// implementation may run `map` on worker threads (results still arrive in path order).
    fn for_each_map<T: Send>(
        &self,
        prefix: &str,
        map: &(dyn Fn(String, Record) -> T + Sync),
        f: &mut dyn FnMut(T),
    ) -> Result<(), ReadError>
    where
        Self: Sized,
    {
        self.for_each(prefix, &mut |path, record| f(map(path, record)))
    }
}

/// An in-memory snapshot of raw file contents, for tests and imports.
#[derive(Debug, Default, Clone)]
pub struct MemorySnapshot {
    /// Path → stored bytes.
    pub files: BTreeMap<String, Vec<u8>>,
}

impl MemorySnapshot {
    /// Stores `record` at `path` (pretty JSON, as the store writes it).
    pub fn put(&mut self, path: &str, record: &serde_json::Value) {
        let mut bytes = serde_json::to_vec_pretty(record).unwrap_or_default();
        bytes.push(b'\n');
        self.files.insert(path.to_owned(), bytes);
    }

    /// Stores raw bytes at `path` (for malformed-record tests).
    pub fn put_raw(&mut self, path: &str, bytes: &[u8]) {
        self.files.insert(path.to_owned(), bytes.to_vec());
    }
}

fn parse(path: &str, bytes: &[u8]) -> Result<Record, ReadError> {
    from_bytes(bytes).map_err(|e| ReadError::Malformed {
        path: path.to_owned(),
        message: e.to_string(),
    })
}

impl Snapshot for MemorySnapshot {
    fn read(&self, path: &str) -> Result<Option<Record>, ReadError> {
        self.files.get(path).map(|b| parse(path, b)).transpose()
    }

    fn is_file(&self, path: &str) -> Result<bool, ReadError> {
        Ok(self.files.contains_key(path))
    }

    fn list(&self, prefix: &str) -> Result<Vec<(String, Record)>, ReadError> {
        let dir = format!("{}/", prefix.trim_end_matches('/'));
        self.files
            .iter()
            .filter(|(p, _)| p.starts_with(&dir) && p.ends_with(".json"))
            .map(|(p, b)| Ok((p.clone(), parse(p, b)?)))
            .collect()
    }

    fn paths(&self, prefix: &str) -> Result<Vec<String>, ReadError> {
        let dir = format!("{}/", prefix.trim_end_matches('/'));
        Ok(self
            .files
            .keys()
            .filter(|p| p.starts_with(&dir) && p.ends_with(".json"))
            .cloned()
            .collect())
    }
}
