//! An event (`events/<batch>/<event-id>.json`), append-only, and the `lane_closed` v2
//! reservation whose fields decide whether two closeouts conflict.

use serde_json::Value;

use super::field::*;
use super::EventKind;
use super::Payload;
use super::Record;
use crate::time;
use crate::time::Instant;

record_kind! {
    /// A stored event.
    Event
}

impl Event {
    /// Field order of stored events (anything else follows in insertion order).
    pub const ORDER: [Field; 36] = [
        SCHEMA_VERSION,
        EVENT_ID,
        BATCH_ID,
        TYPE,
        LANE,
        AGENT_ID,
        REPO,
        TARGET,
        BRANCH,
        MESSAGE,
        AT,
        STATUS,
        STATUS_RAW,
        PREVIOUS_PHASE,
        THREAD_HANDLE,
        CHAT_HANDLE,
        HOST,
        PR_URL,
        DASHBOARD_URL,
        OPERATOR,
        PHASE,
        GENERATION,
        INSTANCE_ID,
        SYNTHETIC,
        SYNTHETIC_KIND,
        RELEASE_MODE,
        HANDOFF_TO,
        HANDOFF_NOTE,
        REASON,
        FROM_ROUTE,
        TO_ROUTE,
        EVIDENCE,
        SEVERITY,
        CATEGORY,
        KIND,
        MACHINE_ID,
    ];

    /// Typed-event payload fields, in the order foreign-field checks report them.
    pub const TYPED: [Field; 7] = [
        REASON, FROM_ROUTE, TO_ROUTE, EVIDENCE, SEVERITY, CATEGORY, KIND,
    ];

    /// Returns `fields` reordered into [`Event::ORDER`], unknown fields after in their order.
    pub fn ordered(mut fields: Record) -> Event {
        let mut out = Record::new();
        for f in Event::ORDER {
            if let Some(v) = f.take(&mut fields) {
                f.set(&mut out, v);
            }
        }
        out.extend(fields);
        Event(out)
    }

    text_accessors! {
        /// Returns the event id.
        event_id => EVENT_ID;
        /// Returns the event type.
        kind => TYPE;
        /// Returns the batch.
        batch_id => BATCH_ID;
        /// Returns the lane.
        lane => LANE;
        /// Returns the agent.
        agent_id => AGENT_ID;
        /// Returns the status word.
        status => STATUS;
        /// Returns the terminal word of a closeout.
        terminal => TERMINAL;
        /// Returns the phase.
        phase => PHASE;
    }

    /// Returns the type when it is one the code knows by name.
    pub fn known_kind(&self) -> Option<EventKind> {
        self.kind().and_then(EventKind::parse)
    }

    /// Returns the typed payload: `None` for a type without one, or when it is malformed
    /// (see [`Payload::read`] for why).
    pub fn payload(&self) -> Option<Payload<'_>> {
        Payload::read(self.known_kind()?, &self.0)?.ok()
    }

    /// Returns `at`, parsed.
    pub fn at(&self) -> Option<Instant> {
        AT.text(&self.0).and_then(time::parse)
    }
}

/// The `type` of a terminal closeout reservation.
pub const LANE_CLOSED: &str = EventKind::LaneClosed.as_str();

record_kind! {
    /// A `lane_closed` v2 reservation: one per lane, at a deterministic event id.
    LaneClosed
}

impl LaneClosed {
    /// The reservation's schema version.
    pub const SCHEMA: u64 = 2;

    /// Returns the fields whose difference makes two closeouts conflict: terminal,
    /// workspace (`default` when absent), the closer's agent, pr_url, pr_state and
    /// evidence_url. Works on a lane stamp too, which carries the same fields.
    pub fn semantics(r: &Record) -> [Value; 6] {
        let get = |f: Field| f.get(r).cloned().unwrap_or(Value::Null);
        let workspace = WORKSPACE
            .get(r)
            .cloned()
            .unwrap_or_else(|| Value::from("default"));
        let closer = CLOSED_BY
            .get(r)
            .and_then(|c| c.get(AGENT_ID.name()))
            .cloned()
            .unwrap_or(Value::Null);
        [
            get(TERMINAL),
            workspace,
            closer,
            get(PR_URL),
            get(PR_STATE),
            get(EVIDENCE_URL),
        ]
    }
}
