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

/// A failed command: a kind, one clear sentence for stderr, and the error behind it (kept
/// for the logs; the sentence already says what the user needs).
#[derive(Debug)]
pub(crate) struct CommandError {
    pub(crate) kind: ErrorKind,
    pub(crate) message: String,
    pub(crate) source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

impl CommandError {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        CommandError {
            kind,
            message: message.into(),
            source: None,
        }
    }

    pub(crate) fn usage(message: impl Into<String>) -> Self {
        CommandError::new(ErrorKind::Usage, message)
    }

    pub(crate) fn operational(message: impl Into<String>) -> Self {
        CommandError::new(ErrorKind::Operational, message)
    }

    /// Returns the error with `lines` said after its sentence, one per line.
    pub(crate) fn with_lines(mut self, lines: impl IntoIterator<Item = String>) -> Self {
        for line in lines {
            self.message.push('\n');
            self.message.push_str(&line);
        }
        self
    }

    /// Returns the error with `source` kept as its cause.
    fn caused_by(mut self, source: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Box::new(source));
        self
    }

    /// Returns the causes below the message, outermost first (for the logs).
    pub(crate) fn causes(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut next: Option<&(dyn std::error::Error + 'static)> = self
            .source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static));
        while let Some(e) = next {
            out.push(e.to_string());
            next = e.source();
        }
        out
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
        let message = e.to_string();
        CommandError::new(kind, message).caused_by(e)
    }
}

impl From<StoreError> for CommandError {
    fn from(e: StoreError) -> Self {
        CommandError::operational(e.to_string()).caused_by(e)
    }
}

impl From<ReadError> for CommandError {
    fn from(e: ReadError) -> Self {
        CommandError::operational(e.to_string()).caused_by(e)
    }
}

impl From<IdError> for CommandError {
    fn from(e: IdError) -> Self {
        CommandError::usage(e.to_string())
    }
}
