//! An archive envelope (`archive/…`): one archived record (`archived_record`) or a
//! compacted event trail (`compacted_events`), the published contract gc writes.

use serde_json::Value;

use super::field::ARCHIVED_AT;
use super::field::DATA;
use super::field::DELETE_AFTER;
use super::field::REASON;
use super::field::RECORDS;
use super::field::RECORD_FAMILY;
use super::field::SCHEMA_VERSION;
use super::field::SOURCE_PATH;
use super::field::SOURCE_PATHS;
use super::field::SYNTHETIC;
use super::Record;

record_kind! {
    /// A stored archive envelope.
    Archive
}

/// `record_family` of one archived record.
pub const ARCHIVED_RECORD: &str = "archived_record";
/// `record_family` of a compacted event trail.
pub const COMPACTED_EVENTS: &str = "compacted_events";

/// What an envelope holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Archived {
    /// One record and the path it came from.
    Record {
        /// The archived record's path.
        source_path: String,
        /// The record.
        data: Record,
    },
    /// The retained events of a trail and the paths of all of them.
    Events {
        /// Every compacted event's path, sorted.
        source_paths: Vec<String>,
        /// The retained events.
        records: Vec<Value>,
    },
}

impl Archive {
    /// Builds an envelope in the published field order.
    pub fn new(
        content: Archived,
        reason: &str,
        synthetic: bool,
        archived_at: String,
        delete_after: String,
    ) -> Archive {
        let mut r = Record::new();
        SCHEMA_VERSION.set(&mut r, 1);
        let (family, source, payload) = match content {
            Archived::Record { source_path, data } => (
                ARCHIVED_RECORD,
                (SOURCE_PATH, Value::from(source_path)),
                (DATA, Value::Object(data)),
            ),
            Archived::Events {
                source_paths,
                records,
            } => (
                COMPACTED_EVENTS,
                (SOURCE_PATHS, Value::from(source_paths)),
                (RECORDS, Value::Array(records)),
            ),
        };
        RECORD_FAMILY.set(&mut r, family);
        source.0.set(&mut r, source.1);
        REASON.set(&mut r, reason);
        SYNTHETIC.set(&mut r, synthetic);
        ARCHIVED_AT.set(&mut r, archived_at);
        DELETE_AFTER.set(&mut r, delete_after);
        payload.0.set(&mut r, payload.1);
        Archive(r)
    }

    text_accessors! {
        /// Returns `archived_record` or `compacted_events` (anything else is unknown).
        record_family => RECORD_FAMILY;
        /// Returns the archived record's path.
        source_path => SOURCE_PATH;
        /// Returns the deletion time as written.
        delete_after => DELETE_AFTER;
    }
}
