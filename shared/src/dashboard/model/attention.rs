//! The needs-attention queue: why a row or a coordinator task needs a person, and one entry
//! of the queue.

use serde::Deserialize;
use serde::Serialize;

use super::health::Severity;
use crate::coordinator::task::Phase;
use crate::serde_name::serde_name;

/// Why a row or a coordinator task needs a person, most urgent first within each source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AttentionKind {
    /// The batch was stopped.
    BatchStopped,
    /// A stop was requested for the batch and is pending.
    BatchStopRequested,
    /// The lane waits for operator input.
    BlockedUserInput,
    /// QA failed, or is missing for work that is ready for QA.
    QaMissing,
    /// The holder's heartbeat is dead.
    DeadHolder,
    /// No progress for over 15 minutes.
    Wedged,
    /// A coordinator task published a question or blocker and waits for an authorized reply.
    TaskWaitingReply,
    /// A coordinator task's lane outcome is unknown: no model starts until an operator decides.
    TaskNeedsOperator,
    /// A coordinator task's pull request is Ready and waits for a human to merge it.
    TaskAwaitingMerge,
}

impl AttentionKind {
    /// The person-facing reason.
    pub fn label(self) -> &'static str {
        match self {
            AttentionKind::BatchStopped => "Batch is stopped",
            AttentionKind::BatchStopRequested => "Batch stop is pending",
            AttentionKind::BlockedUserInput => "Waiting for operator input",
            AttentionKind::QaMissing => "QA evidence is missing or failing",
            AttentionKind::DeadHolder => "Holder is no longer live",
            AttentionKind::Wedged => "No progress for over 15 minutes",
            AttentionKind::TaskWaitingReply => "Waiting on a human reply",
            AttentionKind::TaskNeedsOperator => "Needs an operator",
            AttentionKind::TaskAwaitingMerge => "Ready, waiting for a human merge",
        }
    }

    /// 1 for the most urgent, 7 for the least. A coordinator task that waits on a person
    /// ranks with a lane waiting for operator input; a Ready pull request waiting for its
    /// merge is nothing wrong, so it comes last.
    pub fn priority(self) -> u8 {
        match self {
            AttentionKind::BatchStopped => 1,
            AttentionKind::BatchStopRequested => 2,
            AttentionKind::BlockedUserInput
            | AttentionKind::TaskWaitingReply
            | AttentionKind::TaskNeedsOperator => 3,
            AttentionKind::QaMissing => 4,
            AttentionKind::DeadHolder => 5,
            AttentionKind::Wedged => 6,
            AttentionKind::TaskAwaitingMerge => 7,
        }
    }

    /// How bad it is: a Ready pull request waiting for its merge is information, the rest
    /// are warnings.
    pub fn severity(self) -> Severity {
        match self {
            AttentionKind::TaskAwaitingMerge => Severity::Info,
            _ => Severity::Warning,
        }
    }

    /// What the entry's outside link opens (the published checkpoint or the pull request).
    pub fn link_text(self) -> &'static str {
        match self {
            AttentionKind::TaskWaitingReply => "Open the question",
            AttentionKind::TaskNeedsOperator => "Open the blocker",
            _ => "Open the pull request",
        }
    }

    /// The snake_case name used in JSON and the UI.
    pub fn as_str(self) -> &'static str {
        serde_name(&self)
    }
}

/// One entry of the needs-attention queue.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attention {
    /// The row this is about (`target:owner/repo#N` for a coordinator task, whether or not
    /// such a row exists).
    pub row_id: String,
    /// Why.
    pub kind: AttentionKind,
    /// 1 (most urgent) … 7.
    pub priority: u8,
    /// Person-facing reason.
    pub label: String,
    /// `owner/repo#N` or `batch:lane`.
    pub subject: String,
    /// The row's (or task checkpoint's) last activity, if known.
    pub last_activity: Option<String>,
    /// What to read: a coordinator task's question or blocker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// Where to act: the published question or blocker, or the pull request (http(s) only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
    /// The phase an authorized reply resumes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_phase: Option<Phase>,
}
