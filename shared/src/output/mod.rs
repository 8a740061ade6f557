//! The `--json` documents the CLI prints, one serde type per document, so a command's JSON
//! contract is a type its tests can name rather than a literal in the command.
//!
//! Each file matches a command in `cli/src/commands/`. Field order is output order (serde
//! serialises in declaration order, as the snapshot and end-to-end tests pin it); an
//! optional field that is left out rather than printed as `null` says so with
//! `skip_serializing_if`. Records inside a document are the stored record types
//! themselves, printed as stored.

use serde::ser::SerializeMap;
use serde::Serialize;
use serde::Serializer;

pub mod coordinate;
pub mod coordinate_ops;
pub mod doctor;
pub mod gc;
pub mod info;
pub mod init;
pub mod status;
pub mod sync;
pub mod transfer;
pub mod writes;

/// A JSON object whose keys are data (family names, status aliases), in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OrderedMap<V>(pub Vec<(&'static str, V)>);

impl<V: Serialize> Serialize for OrderedMap<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}
