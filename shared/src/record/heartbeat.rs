//! A heartbeat: `heartbeats/<agent>.json` on a machine's heartbeat ref, one per agent.

use super::field::Field;
use super::field::BATCH_ID;
use super::field::BRANCH;
use super::field::CHAT_HANDLE;
use super::field::DASHBOARD_URL;
use super::field::GENERATION;
use super::field::HOST;
use super::field::INSTANCE_ID;
use super::field::MACHINE_ID;
use super::field::OPERATOR;
use super::field::PHASE;
use super::field::PR_URL;
use super::field::SESSION_ID;
use super::field::SESSION_SOURCE;
use super::field::STATUS_RAW;
use super::field::SYNTHETIC;
use super::field::SYNTHETIC_KIND;
use super::field::THREAD_HANDLE;
use crate::time;
use crate::time::Instant;

record_kind! {
    /// A stored heartbeat.
    Heartbeat
}

impl Heartbeat {
    /// The lane fields a same-lane beat carries over from the prior beat, in the order it
    /// writes them (after `schema_version`, `agent_id`, `repo` and `target`).
    pub const CARRIED: [Field; 17] = [
        BATCH_ID,
        BRANCH,
        THREAD_HANDLE,
        CHAT_HANDLE,
        HOST,
        MACHINE_ID,
        SESSION_ID,
        SESSION_SOURCE,
        PR_URL,
        DASHBOARD_URL,
        OPERATOR,
        PHASE,
        GENERATION,
        INSTANCE_ID,
        STATUS_RAW,
        SYNTHETIC,
        SYNTHETIC_KIND,
    ];

    text_accessors! {
        /// Returns the agent.
        agent_id => AGENT_ID;
        /// Returns the status word.
        status => STATUS;
        /// Returns the batch.
        batch_id => BATCH_ID;
        /// Returns the phase.
        phase => PHASE;
    }

    /// Returns `updated_at`, parsed.
    pub fn updated_at(&self) -> Option<Instant> {
        super::field::UPDATED_AT.text(&self.0).and_then(time::parse)
    }

    /// Returns `expires_at`, parsed.
    pub fn expires_at(&self) -> Option<Instant> {
        super::field::EXPIRES_AT.text(&self.0).and_then(time::parse)
    }
}
