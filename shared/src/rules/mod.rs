//! Coordination rules: pure decisions over a snapshot and a clock.
//!
//! A write rule reads what it needs from a [`Snapshot`](crate::snapshot::Snapshot) and
//! returns a [`Plan`]: the records to write and a result to report. The CLI commits the
//! plan atomically on the tip it read, or re-runs the rule on the new tip if that moved.

use crate::ids::AgentId;
use crate::record::Identity;
use crate::record::Record;
use crate::snapshot::ReadError;
use crate::time::Instant;

pub mod audit;
pub mod batch;
pub mod claim;
pub mod closeout;
pub mod deps;
pub mod event;
pub mod gc;
pub mod heartbeat;
pub mod liveness;
pub mod newest_beat;
pub mod reconcile;
pub mod status;
pub mod vocab;

/// What a write rule knows about the world besides the snapshot.
#[derive(Debug, Clone)]
pub struct Ctx {
    /// The clock reading for this attempt.
    pub now: Instant,
    /// Random bits for event ids (re-drawn per attempt).
    pub nonce: u32,
    /// Who is writing.
    pub identity: Identity,
}

/// The records a write rule wants committed, with the result to report.
#[derive(Debug, Clone)]
pub struct Plan<T> {
    /// Upserts on the state branch, by path.
    pub state: Vec<(String, Record)>,
    /// Paths removed from the state branch (retention only: records are otherwise kept).
    pub removals: Vec<String>,
    /// Upserts of agents' heartbeats on this machine's heartbeat ref.
    pub heartbeats: Vec<(AgentId, Record)>,
    /// Agents whose heartbeat leaves this machine's heartbeat ref (retention only).
    pub heartbeat_removals: Vec<AgentId>,
    /// The one-line commit summary.
    pub summary: String,
    /// The operation name recorded in the commit trailer.
    pub op: &'static str,
    /// Warnings for stderr (the write still stands).
    pub warnings: Vec<String>,
    /// What the command reports.
    pub outcome: T,
}

impl<T> Plan<T> {
    /// Returns a plan that writes nothing.
    pub fn nothing(op: &'static str, outcome: T) -> Self {
        Plan {
            state: Vec::new(),
            removals: Vec::new(),
            heartbeats: Vec::new(),
            heartbeat_removals: Vec::new(),
            summary: String::new(),
            op,
            warnings: Vec::new(),
            outcome,
        }
    }

    /// Reports whether the plan writes anything.
    pub fn is_empty(&self) -> bool {
        self.state.is_empty()
            && self.removals.is_empty()
            && self.heartbeats.is_empty()
            && self.heartbeat_removals.is_empty()
    }
}

/// Why a write rule refused: the sum of the operations' own errors, as the transaction
/// layer carries it. Each caller (the CLI, the server) words each variant and picks its exit
/// or status code in one table of its own.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// A record the rule needs cannot be read.
    #[error(transparent)]
    Unreadable(#[from] ReadError),
    /// A claim held by someone else (boxed: it is the largest refusal by far).
    #[error(transparent)]
    ClaimRefused(Box<claim::ClaimRefused>),
    /// A release of a claim that is missing or someone else's.
    #[error(transparent)]
    ReleaseRefused(#[from] claim::ReleaseRefused),
    /// A TTL whose expiry no record can hold.
    #[error(transparent)]
    TtlOutOfRange(#[from] TtlOutOfRange),
    /// A batch manifest that does not validate.
    #[error(transparent)]
    Manifest(#[from] batch::ManifestError),
    /// A terminal closeout the contract refuses.
    #[error(transparent)]
    Closeout(#[from] closeout::CloseoutError),
    /// An event that cannot be recorded.
    #[error(transparent)]
    Event(#[from] event::EventError),
    /// Retention windows out of range.
    #[error(transparent)]
    Policy(#[from] gc::PolicyError),
    /// A retention period that does not read.
    #[error(transparent)]
    Duration(#[from] gc::machines::DurationError),
    /// State gc cannot proceed from.
    #[error(transparent)]
    Gc(#[from] gc::GcError),
}

impl From<claim::ClaimRefused> for RuleError {
    fn from(e: claim::ClaimRefused) -> Self {
        RuleError::ClaimRefused(Box::new(e))
    }
}

/// A TTL too large: the record would expire after the latest time a record can hold
/// ([`crate::time::latest`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "a TTL of {ttl_seconds} seconds is too large: the {record} would expire after the latest time a record can hold"
)]
pub struct TtlOutOfRange {
    /// The kind of record (`claim`, `heartbeat`).
    pub record: &'static str,
    /// The TTL asked for, in seconds.
    pub ttl_seconds: i64,
}
