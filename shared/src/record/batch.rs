//! A batch manifest (`batches/<batch>.json`) and its lanes, as `register-batch` stores them
//! and closeouts stamp them.

use serde_json::Value;

use super::field::Field;
use super::field::BRANCH;
use super::field::CHAT_HANDLE;
use super::field::CLOSED_AT;
use super::field::CLOSED_BY;
use super::field::DASHBOARD_URL;
use super::field::EVIDENCE_URL;
use super::field::HOST;
use super::field::LANES;
use super::field::OPERATOR;
use super::field::PHASE;
use super::field::PR_STATE;
use super::field::PR_URL;
use super::field::STATUS;
use super::field::TERMINAL;
use super::field::THREAD_HANDLE;
use super::field::WORKSPACE;
use super::Record;

record_kind! {
    /// A stored batch manifest.
    Manifest
}

impl Manifest {
    text_accessors! {
        /// Returns the batch id.
        batch_id => BATCH_ID;
        /// Returns the batch status (`completed` once every lane closed).
        status => STATUS;
    }

    /// Returns the lanes: the `lanes` array, or a lone value as a list of one.
    pub fn lanes(&self) -> &[Value] {
        Manifest::lanes_in(&self.0)
    }

    /// Returns the lanes of a manifest not (yet) wrapped, as [`Manifest::lanes`] does.
    pub fn lanes_in(r: &Record) -> &[Value] {
        match LANES.get(r) {
            None | Some(Value::Null) => &[],
            Some(Value::Array(items)) => items,
            Some(one) => std::slice::from_ref(one),
        }
    }
}

record_kind! {
    /// One lane of a manifest (lanes are stored inside the manifest's `lanes` array).
    Lane
}

impl Lane {
    /// The fields the protocol stamps on a lane when it closes.
    pub const TERMINAL: [Field; 8] = [
        STATUS,
        TERMINAL,
        CLOSED_AT,
        CLOSED_BY,
        WORKSPACE,
        PR_URL,
        PR_STATE,
        EVIDENCE_URL,
    ];

    /// Lane fields the status projection passes through when present, in order.
    pub const METADATA: [Field; 13] = [
        THREAD_HANDLE,
        CHAT_HANDLE,
        HOST,
        PR_URL,
        DASHBOARD_URL,
        OPERATOR,
        PHASE,
        BRANCH,
        TERMINAL,
        CLOSED_AT,
        CLOSED_BY,
        PR_STATE,
        EVIDENCE_URL,
    ];

    /// Reports whether a lane carries a terminal stamp (`null` does not count).
    pub fn is_closed(lane: &Record) -> bool {
        TERMINAL.present(lane).is_some()
    }
}
