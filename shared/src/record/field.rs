//! The field names of stored records, each written once, and typed access to one field.
//!
//! A [`Field`] is a record key with the reads and writes rules need: `text` is lenient (a
//! value of the wrong JSON type reads as absent and stays stored as it was), `set` keeps
//! an existing key's position and appends a new one, `take` removes the way
//! `serde_json::Map::remove` does (the last entry moves into the gap). Those are the
//! ordered-map operations the stored byte order depends on, so a rule written with
//! fields writes exactly the bytes it wrote with raw keys.

use serde_json::Value;

use super::Record;

/// One record field: its JSON key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Field(&'static str);

impl Field {
    /// Returns the JSON key.
    pub const fn name(self) -> &'static str {
        self.0
    }

    /// Returns the value stored under this field.
    pub fn get(self, r: &Record) -> Option<&Value> {
        r.get(self.0)
    }

    /// Returns the value when it is present and not `null`.
    pub fn present(self, r: &Record) -> Option<&Value> {
        r.get(self.0).filter(|v| !v.is_null())
    }

    /// Returns the value when it is a string (any other type reads as absent).
    pub fn text(self, r: &Record) -> Option<&str> {
        r.get(self.0).and_then(Value::as_str)
    }

    /// Returns the value when it is a non-empty string.
    pub fn nonempty(self, r: &Record) -> Option<&str> {
        self.text(r).filter(|s| !s.is_empty())
    }

    /// Reports whether the record holds this field (any value, `null` included).
    pub fn is_in(self, r: &Record) -> bool {
        r.contains_key(self.0)
    }

    /// Stores `v`, in place when the field exists, else at the end.
    pub fn set(self, r: &mut Record, v: impl Into<Value>) {
        r.insert(self.0.to_owned(), v.into());
    }

    /// Removes the field (the last entry takes its place, as `Map::remove` does).
    pub fn take(self, r: &mut Record) -> Option<Value> {
        r.remove(self.0)
    }

    /// Copies the field from `from` into `to` when `from` holds it.
    pub fn copy(self, from: &Record, to: &mut Record) {
        if let Some(v) = from.get(self.0) {
            to.insert(self.0.to_owned(), v.clone());
        }
    }
}

/// Copies each of `fields` that `from` holds into `to`, in the order given.
pub fn copy_all(fields: &[Field], from: &Record, to: &mut Record) {
    for f in fields {
        f.copy(from, to);
    }
}

/// Declares field constants with their keys.
macro_rules! fields {
    ($($(#[$doc:meta])* $name:ident = $key:literal;)*) => {
        $($(#[$doc])* pub const $name: Field = Field($key);)*
    };
}

fields! {
    /// The record format version.
    SCHEMA_VERSION = "schema_version";
    /// The agent (claim holder, heartbeat owner, event author).
    AGENT_ID = "agent_id";
    /// `owner/repo`.
    REPO = "repo";
    /// The issue or pull request number.
    TARGET = "target";
    /// The batch.
    BATCH_ID = "batch_id";
    /// The working branch.
    BRANCH = "branch";
    /// The status word.
    STATUS = "status";
    /// A status outside the canonical vocabulary, as given.
    STATUS_RAW = "status_raw";
    /// Last write time.
    UPDATED_AT = "updated_at";
    /// Expiry (claims, heartbeats).
    EXPIRES_AT = "expires_at";
    /// When a claim was first granted.
    CLAIMED_AT = "claimed_at";
    /// Who released a claim.
    RELEASED_BY = "released_by";
    /// When a claim was released.
    RELEASED_AT = "released_at";
    /// `handoff` on a handoff release.
    RELEASE_MODE = "release_mode";
    /// The agent a claim is handed to.
    HANDOFF_TO = "handoff_to";
    /// The note left with a handoff.
    HANDOFF_NOTE = "handoff_note";
    /// Conversation thread handle.
    THREAD_HANDLE = "thread_handle";
    /// Chat handle.
    CHAT_HANDLE = "chat_handle";
    /// The host application.
    HOST = "host";
    /// The pull request URL.
    PR_URL = "pr_url";
    /// A dashboard URL.
    DASHBOARD_URL = "dashboard_url";
    /// The human operator.
    OPERATOR = "operator";
    /// The work phase.
    PHASE = "phase";
    /// Fencing generation.
    GENERATION = "generation";
    /// Fencing instance id.
    INSTANCE_ID = "instance_id";
    /// Marks test/demo data.
    SYNTHETIC = "synthetic";
    /// What kind of synthetic data.
    SYNTHETIC_KIND = "synthetic_kind";
    /// The writing machine.
    MACHINE_ID = "machine_id";
    /// The writing session.
    SESSION_ID = "session_id";
    /// Where the session id came from.
    SESSION_SOURCE = "session_source";
    /// A lane's or claim's terminal word (`done`, `abandoned`, …).
    TERMINAL = "terminal";
    /// The pull request state at closeout.
    PR_STATE = "pr_state";
    /// Evidence for a closeout.
    EVIDENCE_URL = "evidence_url";
    /// The workspace a lane closed in.
    WORKSPACE = "workspace";
    /// Who closed a lane: `{agent_id, machine}`.
    CLOSED_BY = "closed_by";
    /// When a lane closed.
    CLOSED_AT = "closed_at";
    /// A closer's machine (inside `closed_by`).
    MACHINE = "machine";
    /// A manifest's lanes.
    LANES = "lanes";
    /// A manifest's or lane's targets.
    TARGETS = "targets";
    /// A lane's name.
    NAME = "name";
    /// A lane's legacy name.
    ID = "id";
    /// A lane's owner.
    OWNER = "owner";
    /// A lane's dependency refs.
    DEPENDS_ON = "depends_on";
    /// The batch objective.
    OBJECTIVE = "objective";
    /// Batch instructions.
    INSTRUCTIONS = "instructions";
    /// The launch prompt.
    LAUNCH_PROMPT = "launch_prompt";
    /// An epoch marker's number.
    EPOCH = "epoch";
    /// The state tip an epoch was cut from.
    PREVIOUS_TIP = "previous_tip";
    /// Which machine cut an epoch.
    CREATED_BY = "created_by";
    /// A record's path in the state, where a document lists records beside their paths.
    PATH = "path";
    /// Items a manifest deliberately leaves out, with why.
    RESERVATIONS = "reservations";
    /// First registration time.
    REGISTERED_AT = "registered_at";
    /// Creation time (predecessor manifests).
    CREATED_AT = "created_at";
    /// When a batch completed.
    COMPLETED_AT = "completed_at";
    /// Which machine registered a batch (predecessor manifests).
    CREATED_BY_MACHINE = "created_by_machine";
    /// A structured blocker recorded on a batch.
    BLOCKER = "blocker";
    /// A manifest target's title.
    TITLE = "title";
    /// A manifest target's URL.
    URL = "url";
    /// An event's id.
    EVENT_ID = "event_id";
    /// An event's type.
    TYPE = "type";
    /// An event's lane.
    LANE = "lane";
    /// Free text.
    MESSAGE = "message";
    /// An event's time.
    AT = "at";
    /// The phase before a `phase.changed`.
    PREVIOUS_PHASE = "previous_phase";
    /// The phase before a change (historical `phase.changed` events).
    OLD_PHASE = "old_phase";
    /// The phase after a change (historical `phase.changed` events).
    NEW_PHASE = "new_phase";
    /// `help_requested` reason.
    REASON = "reason";
    /// `escalation_requested` source route.
    FROM_ROUTE = "from_route";
    /// `escalation_requested` destination route.
    TO_ROUTE = "to_route";
    /// `escalation_requested` evidence.
    EVIDENCE = "evidence";
    /// `error` severity.
    SEVERITY = "severity";
    /// `error` category.
    CATEGORY = "category";
    /// `human_intervention` kind.
    KIND = "kind";
    /// Archive: what kind of record is archived.
    RECORD_FAMILY = "record_family";
    /// Archive: the archived record's path.
    SOURCE_PATH = "source_path";
    /// Archive: the archived records' paths (compactions).
    SOURCE_PATHS = "source_paths";
    /// Archive: when it was archived.
    ARCHIVED_AT = "archived_at";
    /// Archive: when it may be deleted.
    DELETE_AFTER = "delete_after";
    /// Archive: the archived record.
    DATA = "data";
    /// Archive: the compacted records.
    RECORDS = "records";
    /// Archive: how many events were compacted.
    EVENT_COUNT = "event_count";
}

/// Claim and heartbeat metadata fields, in the order they are written.
pub const METADATA: [Field; 11] = [
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
];

/// Attribution fields stamped on every write, in order.
pub const IDENTITY: [Field; 3] = [MACHINE_ID, SESSION_ID, SESSION_SOURCE];
