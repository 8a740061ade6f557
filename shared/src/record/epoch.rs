//! The epoch marker (`meta/epoch.json`): which epoch a state branch is in and the tip it
//! was cut from (epoch 0 has none).

use serde_json::Value;

use super::field::CREATED_AT;
use super::field::CREATED_BY;
use super::field::EPOCH;
use super::field::PREVIOUS_TIP;
use super::field::SCHEMA_VERSION;
use super::Record;

record_kind! {
    /// A stored epoch marker.
    EpochMarker
}

impl EpochMarker {
    /// Builds the marker of epoch `number`, cut from `previous_tip`, in the stored order.
    pub fn new(number: u64, previous_tip: String, created_at: &str, created_by: String) -> Self {
        let mut r = Record::new();
        SCHEMA_VERSION.set(&mut r, 1);
        EPOCH.set(&mut r, number);
        PREVIOUS_TIP.set(&mut r, previous_tip);
        CREATED_AT.set(&mut r, created_at);
        CREATED_BY.set(&mut r, created_by);
        EpochMarker(r)
    }

    /// Returns the epoch number (0 when absent or not a whole number).
    pub fn number(&self) -> u64 {
        EPOCH.get(&self.0).and_then(Value::as_u64).unwrap_or(0)
    }

    text_accessors! {
        /// Returns the tip the epoch was cut from, as hex.
        previous_tip => PREVIOUS_TIP;
    }
}
