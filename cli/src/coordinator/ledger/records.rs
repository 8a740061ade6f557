//! The task checkpoint's record form: written as JSON, read back (an unreadable one is an
//! operational error, never a silently new task).

use super::*;

/// The checkpoint as a record.
pub(super) fn to_record(task: &Task) -> Record {
    match serde_json::to_value(task) {
        Ok(Value::Object(m)) => m,
        _ => Record::new(),
    }
}

/// Reads the checkpoint at `path`, if any.
pub(super) fn read_task(snap: &TipSnapshot<'_>, path: &str) -> Result<Option<Task>, CommandError> {
    match snap.read(path)? {
        Some(record) => serde_json::from_value(Value::Object(record))
            .map(Some)
            .map_err(|e| {
                CommandError::operational(format!("task record {path} is unreadable: {e}"))
            }),
        None => Ok(None),
    }
}
