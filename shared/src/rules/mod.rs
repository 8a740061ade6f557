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

/// Why a write rule refused; the variant decides the exit code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RuleError {
    /// Bad input or a rule violation the caller can fix (exit 1).
    #[error("{0}")]
    Usage(String),
    /// A claim held by someone else (exit 3); the message starts with `CLAIM_REFUSED: `.
    #[error("{0}")]
    Refused(String),
    /// A record the rule needs cannot be read (exit 2).
    #[error(transparent)]
    Unreadable(#[from] ReadError),
    /// The state is in a shape the rule cannot proceed from (exit 2).
    #[error("{0}")]
    Operational(String),
    /// The record to create already exists (exit 1; HTTP 409).
    #[error("{0}")]
    Conflict(String),
    /// The record the write is about does not exist (exit 1; HTTP 404).
    #[error("{0}")]
    NotFound(String),
}

/// Returns the usage error for a `--ttl` whose expiry no record can hold.
pub(crate) fn ttl_out_of_range(what: &str, ttl_seconds: i64) -> RuleError {
    usage(format!(
        "--ttl {ttl_seconds} is too large: the {what} would expire after {}, the latest time a record can hold",
        crate::time::format(crate::time::latest())
    ))
}

/// Shorthand for a usage error.
pub(crate) fn usage(msg: impl Into<String>) -> RuleError {
    RuleError::Usage(msg.into())
}
