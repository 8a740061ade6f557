//! The record forms the coordinator reads and writes: the task checkpoint (written as JSON,
//! read back; an unreadable one is an operational error, never a silently new task) and the
//! operator's holds.

use agent_coord_shared::coordinator::controls::Controls;
use agent_coord_shared::coordinator::controls::CONTROLS_PATH;

use super::*;

/// The checkpoint as a record.
pub(crate) fn to_record(task: &Task) -> Record {
    match serde_json::to_value(task) {
        Ok(Value::Object(m)) => m,
        _ => Record::new(),
    }
}

/// Reads the checkpoint at `path`, if any.
pub(crate) fn read_task(snap: &TipSnapshot<'_>, path: &str) -> Result<Option<Task>, CommandError> {
    match snap.read(path)? {
        Some(record) => serde_json::from_value(Value::Object(record))
            .map(Some)
            .map_err(|e| {
                CommandError::operational(format!("task record {path} is unreadable: {e}"))
            }),
        None => Ok(None),
    }
}

/// Reads the operator's holds (none when the record is absent).
pub(crate) fn read_controls(snap: &TipSnapshot<'_>) -> Result<Controls, CommandError> {
    match snap.read(CONTROLS_PATH)? {
        Some(record) => serde_json::from_value(Value::Object(record))
            .map_err(|e| CommandError::operational(format!("{CONTROLS_PATH} is unreadable: {e}"))),
        None => Ok(Controls::default()),
    }
}
