//! A batch manifest (`batches/<batch>.json`) and its lanes, as `register-batch` stores them
//! and closeouts stamp them.

use serde_json::Value;

use super::field::Field;
use super::field::BATCH_ID;
use super::field::BRANCH;
use super::field::CHAT_HANDLE;
use super::field::CLOSED_AT;
use super::field::CLOSED_BY;
use super::field::CREATED_AT;
use super::field::CREATED_BY_MACHINE;
use super::field::DASHBOARD_URL;
use super::field::DEPENDS_ON;
use super::field::EVIDENCE_URL;
use super::field::HOST;
use super::field::LANES;
use super::field::LAUNCH_PROMPT;
use super::field::NAME;
use super::field::OBJECTIVE;
use super::field::OPERATOR;
use super::field::OWNER;
use super::field::PHASE;
use super::field::PR_STATE;
use super::field::PR_URL;
use super::field::REPO;
use super::field::RESERVATIONS;
use super::field::SCHEMA_VERSION;
use super::field::STATUS;
use super::field::TARGETS;
use super::field::TERMINAL;
use super::field::THREAD_HANDLE;
use super::field::WORKSPACE;
use super::Record;

record_kind! {
    /// A stored batch manifest.
    Manifest
}

/// What a manifest the dashboard imports holds, before it is stored.
#[derive(Debug, Clone, PartialEq)]
pub struct NewManifest {
    /// The batch id.
    pub batch_id: String,
    /// The plan's one repository, when it has one.
    pub repo: Option<String>,
    /// The batch objective.
    pub objective: String,
    /// The plan's targets (`type`, `target`, and `url`, `title`, `repo` when known).
    pub targets: Vec<Record>,
    /// The lanes, as [`Lane::new`] builds them.
    pub lanes: Vec<Lane>,
    /// Items left out of the batch (`type`, `target`, `reason`, `repo` when known).
    pub reservations: Vec<Record>,
    /// When the plan was created.
    pub created_at: String,
    /// Which machine created it (`dashboard:<machine>`).
    pub created_by_machine: String,
    /// The launch prompt the plan was read from.
    pub launch_prompt: String,
}

impl Manifest {
    /// Builds an imported manifest in the order the dashboard's import writes it.
    pub fn new(m: NewManifest) -> Manifest {
        let rows = |rs: Vec<Record>| Value::Array(rs.into_iter().map(Value::Object).collect());
        let mut r = Record::new();
        SCHEMA_VERSION.set(&mut r, 1);
        BATCH_ID.set(&mut r, m.batch_id);
        if let Some(repo) = m.repo {
            REPO.set(&mut r, repo);
        }
        OBJECTIVE.set(&mut r, m.objective);
        TARGETS.set(&mut r, rows(m.targets));
        LANES.set(
            &mut r,
            rows(m.lanes.into_iter().map(Lane::into_record).collect()),
        );
        RESERVATIONS.set(&mut r, rows(m.reservations));
        CREATED_AT.set(&mut r, m.created_at);
        CREATED_BY_MACHINE.set(&mut r, m.created_by_machine);
        LAUNCH_PROMPT.set(&mut r, m.launch_prompt);
        Manifest(r)
    }

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
    /// Builds a new lane: `name`, `owner`, `targets`, `depends_on`, `status`, in that order.
    pub fn new(
        name: &str,
        owner: &str,
        targets: &[String],
        depends_on: &[String],
        status: &str,
    ) -> Lane {
        let mut r = Record::new();
        NAME.set(&mut r, name);
        OWNER.set(&mut r, owner);
        TARGETS.set(&mut r, targets);
        DEPENDS_ON.set(&mut r, depends_on);
        STATUS.set(&mut r, status);
        Lane(r)
    }

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
