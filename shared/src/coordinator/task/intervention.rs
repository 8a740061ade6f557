//! What an operator did to one task (`coordinate cancel`, `coordinate retry`), as the task
//! checkpoint records it: who, when, why, and for a retry the phase it went on from.

use serde::Deserialize;
use serde::Serialize;

use super::Phase;

/// The operator's command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OperatorAction {
    /// `coordinate cancel`.
    Cancel,
    /// `coordinate retry`.
    Retry,
}

/// One operator intervention on a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Intervention {
    /// Cancel or retry.
    pub action: OperatorAction,
    /// Who ran it (the operator's name).
    pub by: String,
    /// When (RFC 3339).
    pub at: String,
    /// Why, when the operator said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The phase a retry went on from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<Phase>,
    /// The state the task was in before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub was: Option<super::TaskState>,
}

/// The wire name (`cancel`, `retry`).
impl crate::serde_name::WireName for OperatorAction {}
