//! The issue coordinator's pure rules (`spec/issue-coordinator.md`, DESIGN §6): its
//! configuration, the lane output protocol, redaction and bounding of everything stored or
//! published, deterministic names and markers, reply selection and human evidence from issue
//! events, the task state machine and what its lanes cost.
//!
//! No I/O here: `cli/src/coordinate/` runs processes, git and GitHub and commits what these
//! functions decide.

pub mod ci;
pub mod config;
pub mod controls;
pub mod evidence;
pub mod explain;
pub mod lane;
pub mod leases;
pub mod lifecycle;
pub mod merge;
pub mod merge_queue;
pub mod naming;
pub mod notify;
pub mod operator;
pub mod priority;
pub mod protocol;
pub mod readiness;
pub mod redact;
pub mod reply;
pub mod slots;
pub mod spend;
pub mod takeover;
pub mod task;
pub mod telemetry;
pub mod waits;
pub mod webhook;
