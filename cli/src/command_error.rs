//! The CLI's one error type, the one table mapping error kinds to exit codes, and the one
//! table wording the rules' typed refusals as the CLI says them (the predecessor's exact
//! messages, flag names included).

use agent_coord_shared::ids::IdError;
use agent_coord_shared::record::field::Field;
use agent_coord_shared::record::PayloadError;
use agent_coord_shared::rules::batch::ManifestError;
use agent_coord_shared::rules::closeout::CloseoutError;
use agent_coord_shared::rules::event::EventError;
use agent_coord_shared::rules::gc::PolicyError;
use agent_coord_shared::rules::gc::Window;
use agent_coord_shared::rules::RuleError;
use agent_coord_shared::snapshot::ReadError;
use agent_coord_shared::time;

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
}

impl ErrorKind {
    /// Returns the documented exit code.
    pub(crate) fn exit_code(self) -> u8 {
        match self {
            ErrorKind::Usage => 1,
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
        let (kind, message) = words(&e);
        CommandError::new(kind, message).caused_by(e)
    }
}

/// Returns the kind and the CLI's sentence for a rule's refusal.
fn words(e: &RuleError) -> (ErrorKind, String) {
    use ErrorKind::Operational;
    use ErrorKind::Usage;
    match e {
        RuleError::Unreadable(e) => (Operational, e.to_string()),
        RuleError::ClaimRefused(e) => (ErrorKind::ClaimRefused, format!("CLAIM_REFUSED: {e}")),
        RuleError::ReleaseRefused(e) => (Usage, e.to_string()),
        RuleError::TtlOutOfRange(e) => (
            Usage,
            format!(
                "--ttl {} is too large: the {} would expire after {}, the latest time a record can hold",
                e.ttl_seconds,
                e.record,
                time::format(time::latest())
            ),
        ),
        RuleError::Manifest(ManifestError::BatchIdMismatch { .. }) => (
            Usage,
            "--batch-id does not match batch manifest batch_id".to_owned(),
        ),
        RuleError::Manifest(e) => (Usage, e.to_string()),
        RuleError::Closeout(e) => (Usage, closeout_words(e)),
        RuleError::Event(EventError::IdCollision { .. }) => (Operational, e.to_string()),
        RuleError::Event(EventError::FieldNotForType { field, kind }) => (
            Usage,
            format!("{} is not valid for --type {kind}", flag(*field)),
        ),
        RuleError::Event(EventError::Payload(PayloadError::Missing(field))) => {
            (Usage, format!("missing required {}", flag(*field)))
        }
        RuleError::Event(EventError::Payload(PayloadError::Invalid { field, allowed })) => (
            Usage,
            format!("{} must be one of: {}", flag(*field), allowed.join(", ")),
        ),
        RuleError::Policy(e) => (Usage, policy_words(e)),
        RuleError::Duration(e) => (
            Usage,
            format!(
                "--older-than {:?} is not a duration: use a positive whole number and a unit, as in 30d, 12h, 90m, 45s or 2w",
                e.text
            ),
        ),
        RuleError::Gc(e) => (Operational, e.to_string()),
    }
}

/// Returns the CLI's sentence for a refused terminal closeout.
fn closeout_words(e: &CloseoutError) -> String {
    match e {
        CloseoutError::UnknownTerminal { .. } => {
            "--terminal must be one of: done, abandoned, superseded".to_owned()
        }
        CloseoutError::Blank { option } => format!(
            "{} must not be empty for terminal closeout",
            flag(option.field())
        ),
        CloseoutError::NotAnHttpUrl { option, .. } => format!(
            "{} must be an HTTP(S) URL with a host",
            flag(option.field())
        ),
        CloseoutError::MissingBatch => "missing required --batch-id".to_owned(),
        CloseoutError::NotLaneAgent { lane, .. } => {
            format!("terminal closeout agent does not match lane {lane}")
        }
        e => e.to_string(),
    }
}

/// Returns the CLI's sentence for a retention window out of range.
fn policy_words(e: &PolicyError) -> String {
    let (earliest, latest) = (time::format(time::earliest()), time::format(time::latest()));
    match e {
        PolicyError::HotOutOfRange { window, days } => {
            let flag = match window {
                Window::Hot => "--hot-days",
                Window::SyntheticHot => "--synthetic-hot-days",
            };
            format!("{flag} {days} is out of range: {days} days before now is not between {earliest} and {latest}")
        }
        PolicyError::ArchiveOutOfRange { days } => format!(
            "--archive-days {days} is out of range: archives would be kept past {latest}, the latest time a record can hold"
        ),
    }
}

/// Returns the flag that sets a record field (`pr_url` is `--pr-url`).
fn flag(field: Field) -> String {
    format!("--{}", field.name().replace('_', "-"))
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

#[cfg(test)]
mod tests {
    use agent_coord_shared::record::field as f;
    use agent_coord_shared::rules::claim::ClaimRefused;
    use agent_coord_shared::rules::claim::HolderBeat;
    use agent_coord_shared::rules::claim::ReleaseRefused;
    use agent_coord_shared::rules::closeout::CloseoutOption;
    use agent_coord_shared::rules::gc::machines::DurationError;
    use agent_coord_shared::rules::gc::GcError;
    use agent_coord_shared::rules::TtlOutOfRange;

    use super::*;

    /// Returns the exit code and stderr sentence the CLI gives a refusal.
    fn said(e: impl Into<RuleError>) -> (u8, String) {
        let e = CommandError::from(e.into());
        (e.kind.exit_code(), e.message)
    }

    #[test]
    fn refusals_say_the_reference_messages() {
        let repo = || "acme/app".parse().unwrap();
        let target = || "7".parse().unwrap();
        let cases: Vec<(RuleError, u8, &str)> = vec![
            (
                ClaimRefused::HeldLive {
                    repo: repo(),
                    target: target(),
                    holder: "a".into(),
                }
                .into(),
                3,
                "CLAIM_REFUSED: active claim for acme/app#7 held by a; heartbeat live",
            ),
            (
                ClaimRefused::HeldStale {
                    repo: repo(),
                    target: target(),
                    holder: "a".into(),
                }
                .into(),
                3,
                "CLAIM_REFUSED: active claim for acme/app#7 held by a; heartbeat stale",
            ),
            (
                ClaimRefused::HeldUntilExpiry {
                    repo: repo(),
                    target: target(),
                    holder: "a".into(),
                    beat: HolderBeat::Missing,
                    expires_at: "2026-06-13T12:30:00Z".into(),
                }
                .into(),
                3,
                "CLAIM_REFUSED: active claim for acme/app#7 held by a; heartbeat missing; fallback claim expires at 2026-06-13T12:30:00Z",
            ),
            (
                ClaimRefused::ExpiryUnreadable {
                    repo: repo(),
                    target: target(),
                    holder: "a".into(),
                    beat: HolderBeat::Invalid,
                    expires_at: "soon".into(),
                }
                .into(),
                3,
                "CLAIM_REFUSED: active claim for acme/app#7 held by a; heartbeat invalid; fallback claim expiry \"soon\" is unreadable, so the claim stays held until its holder releases it",
            ),
            (
                ReleaseRefused::NoClaim {
                    repo: repo(),
                    target: target(),
                }
                .into(),
                1,
                "no claim exists for acme/app#7",
            ),
            (
                ReleaseRefused::HeldByOther {
                    holder: "a".into(),
                    agent: "b".parse().unwrap(),
                }
                .into(),
                1,
                "claim belongs to a; b cannot release it",
            ),
            (
                TtlOutOfRange {
                    record: "claim",
                    ttl_seconds: i64::MAX,
                }
                .into(),
                1,
                "--ttl 9223372036854775807 is too large: the claim would expire after 9999-12-31T23:59:59Z, the latest time a record can hold",
            ),
            (
                ManifestError::BatchIdMismatch {
                    given: "b".into(),
                    in_manifest: "a".into(),
                }
                .into(),
                1,
                "--batch-id does not match batch manifest batch_id",
            ),
            (
                ManifestError::LaneNotAnObject { number: 2 }.into(),
                1,
                "batch lane 2 must be a JSON object",
            ),
            (
                ManifestError::InvalidDependency {
                    lane: "x".into(),
                    dependency: "nolane".into(),
                }
                .into(),
                1,
                "batch lane x has invalid dependency ref: nolane",
            ),
            (
                CloseoutError::UnknownTerminal {
                    given: "finished".into(),
                }
                .into(),
                1,
                "--terminal must be one of: done, abandoned, superseded",
            ),
            (
                CloseoutError::Blank {
                    option: CloseoutOption::Workspace,
                }
                .into(),
                1,
                "--workspace must not be empty for terminal closeout",
            ),
            (
                CloseoutError::NotAnHttpUrl {
                    option: CloseoutOption::PrUrl,
                    value: "ftp://x".into(),
                }
                .into(),
                1,
                "--pr-url must be an HTTP(S) URL with a host",
            ),
            (
                CloseoutError::MissingBatch.into(),
                1,
                "missing required --batch-id",
            ),
            (
                CloseoutError::NoSingleLane {
                    batch: "b2".parse().unwrap(),
                }
                .into(),
                1,
                "terminal closeout does not match exactly one lane in batch b2",
            ),
            (
                CloseoutError::TargetNotInLane { lane: "docs".into() }.into(),
                1,
                "terminal closeout target does not match lane docs",
            ),
            (
                CloseoutError::NotLaneAgent {
                    lane: "code".into(),
                    agent: "intruder".parse().unwrap(),
                }
                .into(),
                1,
                "terminal closeout agent does not match lane code",
            ),
            (
                CloseoutError::Conflicting { lane: "code".into() }.into(),
                1,
                "conflicting terminal closeout for lane code; first closeout is authoritative",
            ),
            (
                EventError::IdCollision {
                    batch: "b".parse().unwrap(),
                }
                .into(),
                2,
                "event id collision while recording event for b",
            ),
            (
                EventError::FieldNotForType {
                    field: f::SEVERITY,
                    kind: agent_coord_shared::record::EventKind::HelpRequested,
                }
                .into(),
                1,
                "--severity is not valid for --type help_requested",
            ),
            (
                EventError::Payload(PayloadError::Missing(f::TO_ROUTE)).into(),
                1,
                "missing required --to-route",
            ),
            (
                EventError::Payload(PayloadError::Invalid {
                    field: f::SEVERITY,
                    allowed: &["P0", "P1", "P2", "P3"],
                })
                .into(),
                1,
                "--severity must be one of: P0, P1, P2, P3",
            ),
            (
                PolicyError::HotOutOfRange {
                    window: Window::SyntheticHot,
                    days: 4_000_000,
                }
                .into(),
                1,
                "--synthetic-hot-days 4000000 is out of range: 4000000 days before now is not between 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z",
            ),
            (
                PolicyError::ArchiveOutOfRange { days: 3_000_000 }.into(),
                1,
                "--archive-days 3000000 is out of range: archives would be kept past 9999-12-31T23:59:59Z, the latest time a record can hold",
            ),
            (
                DurationError { text: "30y".into() }.into(),
                1,
                "--older-than \"30y\" is not a duration: use a positive whole number and a unit, as in 30d, 12h, 90m, 45s or 2w",
            ),
            (
                GcError::InvalidTimestamp {
                    path: "claims/a/b/1.json".into(),
                    value: "soon".into(),
                }
                .into(),
                2,
                "gc record has invalid retention timestamp at claims/a/b/1.json: \"soon\"",
            ),
        ];
        for (e, code, message) in cases {
            assert_eq!(said(e), (code, message.to_owned()));
        }
    }
}
