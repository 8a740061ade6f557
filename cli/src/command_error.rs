//! The CLI's one error type and the one table mapping error kinds to exit codes.

use agent_coord_shared::ids::IdError;
use agent_coord_shared::rules::RuleError;
use agent_coord_shared::snapshot::ReadError;

use crate::store::StoreError;

/// What kind of failure, which decides the exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ErrorKind {
    /// Bad flags or input, or a rule violation the caller can fix.
    Usage,
    /// The state could not be read or written (UNKNOWN, contention, unreadable).
    Operational,
    /// A claim is held by someone else.
    ClaimRefused,
    /// A usage error under `doctor --stack-json`.
    StackUsage,
    /// The record to create already exists.
    Conflict,
    /// The record the command is about does not exist.
    NotFound,
}

impl ErrorKind {
    /// Returns the documented exit code.
    pub(crate) fn exit_code(self) -> u8 {
        match self {
            ErrorKind::Usage | ErrorKind::Conflict | ErrorKind::NotFound => 1,
            ErrorKind::Operational => 2,
            ErrorKind::ClaimRefused => 3,
            ErrorKind::StackUsage => 64,
        }
    }
}

/// A failed command: a kind and one clear sentence for stderr.
#[derive(Debug)]
pub(crate) struct CommandError {
    pub(crate) kind: ErrorKind,
    pub(crate) message: String,
}

impl CommandError {
    pub(crate) fn usage(message: impl Into<String>) -> Self {
        CommandError {
            kind: ErrorKind::Usage,
            message: message.into(),
        }
    }

    pub(crate) fn operational(message: impl Into<String>) -> Self {
        CommandError {
            kind: ErrorKind::Operational,
            message: message.into(),
        }
    }
}

impl From<RuleError> for CommandError {
    fn from(e: RuleError) -> Self {
        let kind = match &e {
            RuleError::Usage(_) => ErrorKind::Usage,
            RuleError::Refused(_) => ErrorKind::ClaimRefused,
            RuleError::Conflict(_) => ErrorKind::Conflict,
            RuleError::NotFound(_) => ErrorKind::NotFound,
            RuleError::Unreadable(_) | RuleError::Operational(_) => ErrorKind::Operational,
        };
        CommandError {
            kind,
            message: e.to_string(),
        }
    }
}

impl From<StoreError> for CommandError {
    fn from(e: StoreError) -> Self {
        CommandError::operational(e.to_string())
    }
}

impl From<ReadError> for CommandError {
    fn from(e: ReadError) -> Self {
        CommandError::operational(e.to_string())
    }
}

impl From<IdError> for CommandError {
    fn from(e: IdError) -> Self {
        CommandError::usage(e.to_string())
    }
}
