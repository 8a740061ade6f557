//! Annotation records as read: an operator dismisses an attention item, or snoozes it until
//! a time (reference dashboard §4.4). Each is one record on the state branch at
//! `annotations/<owner>/<repo>/<target>.json`, so sync shares it with every machine. This
//! file owns where the record lives and how it reads (stored, or as a request body sends
//! it); saving and clearing are the act stage's (`act::annotate`).
//!
//! An annotation is presentation only: it hides the item from the attention queue (a
//! dismissal for good, a snooze until its time) and never changes a row's state, so
//! terminal work stays terminal and nothing is created for an item the state does not
//! know. A record that does not read as an annotation is a model warning, never a broken
//! page.

use crate::dashboard::model::Annotation;
use crate::dashboard::model::AnnotationBody;
use crate::dashboard::model::AnnotationKind;
use crate::dashboard::model::Scalar;
use crate::ids::RepoSlug;
use crate::ids::Target;
use crate::record::field as f;
use crate::record::ParseError;
use crate::time;
use crate::time::Instant;

/// The folder annotations live in.
pub const ANNOTATIONS_DIR: &str = "annotations";

/// The longest note or operator an annotation keeps (characters, after trimming).
pub const MAX_TEXT: usize = 500;

/// Why a request body or a stored record is not an annotation (the messages are the
/// reference's).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnnotationError {
    /// The repository is not `owner/repo`, or the target is not a number.
    #[error("annotation requires a valid owner/repo and numeric target")]
    InvalidKey,
    /// The kind is neither `dismiss` nor `snooze`.
    #[error("annotation kind must be dismiss or snooze")]
    InvalidKind,
    /// A snooze without a time to end, or (for a request) one already past.
    #[error("snooze until must be a future timestamp")]
    InvalidUntil,
    /// The note or the operator is longer than [`MAX_TEXT`].
    #[error("annotation {what} is too long")]
    TooLong {
        /// Which field (`note`, `operator`).
        what: &'static str,
    },
    /// The stored bytes are not a record.
    #[error("{0}")]
    Unreadable(#[from] ParseError),
    /// The record annotates another item than its path says.
    #[error("annotation for {repo}#{target} is stored at {path}")]
    Misplaced {
        /// The repository the record names.
        repo: String,
        /// The target the record names.
        target: String,
        /// Where it is stored.
        path: String,
    },
}

/// Returns `annotations/<owner>/<repo>/<target>.json`.
pub fn path(repo: &RepoSlug, target: &Target) -> String {
    format!(
        "{ANNOTATIONS_DIR}/{}/{}/{target}.json",
        repo.owner(),
        repo.name()
    )
}

/// Reports whether `path` is an annotation record's.
pub fn is_annotation_path(path: &str) -> bool {
    path.strip_prefix(ANNOTATIONS_DIR)
        .is_some_and(|rest| rest.starts_with('/'))
}

/// `^[A-Za-z0-9][A-Za-z0-9._-]*$`, and a name the store accepts as a path segment.
fn key_part(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric()) && crate::ids::is_repo_part(s)
}

/// Validates `owner/repo` and a numeric target.
pub(crate) fn key(
    repo: Option<&str>,
    target: Option<&str>,
) -> Result<(RepoSlug, Target), AnnotationError> {
    let (Some(repo), Some(target)) = (repo, target) else {
        return Err(AnnotationError::InvalidKey);
    };
    let (repo, target) = (repo.trim(), target.trim());
    let valid_repo = repo
        .split_once('/')
        .is_some_and(|(o, n)| key_part(o) && key_part(n));
    let numeric = !target.is_empty() && target.bytes().all(|b| b.is_ascii_digit());
    if !valid_repo || !numeric {
        return Err(AnnotationError::InvalidKey);
    }
    let slug = repo.parse().map_err(|_| AnnotationError::InvalidKey)?;
    let target = target.parse().map_err(|_| AnnotationError::InvalidKey)?;
    Ok((slug, target))
}

fn text(v: &Scalar, what: &'static str) -> Result<Option<String>, AnnotationError> {
    let Some(s) = v.text() else {
        return Ok(None);
    };
    let s = s.trim();
    if s.chars().count() > MAX_TEXT {
        return Err(AnnotationError::TooLong { what });
    }
    Ok((!s.is_empty()).then(|| s.to_owned()))
}

/// Reads an annotation, as a request body sends it or a stored record holds it; with `now`
/// (a request) a snooze's `until` must be in the future, and `active` is set. When it was
/// saved, and by which machine, are the stored record's to say (see [`parse`]).
pub(crate) fn read(
    body: &AnnotationBody,
    now: Option<Instant>,
) -> Result<Annotation, AnnotationError> {
    let (repo, target) = key(body.key.repo.text(), body.key.target.text())?;
    let kind = body
        .kind
        .text()
        .and_then(AnnotationKind::parse)
        .ok_or(AnnotationError::InvalidKind)?;
    let until = match kind {
        AnnotationKind::Dismiss => None,
        AnnotationKind::Snooze => {
            let at = body
                .until
                .text()
                .and_then(time::parse)
                .filter(|t| now.is_none_or(|now| *t > now))
                .ok_or(AnnotationError::InvalidUntil)?;
            Some(time::format(at))
        }
    };
    let mut a = Annotation {
        repo: repo.to_string(),
        target: target.to_string(),
        kind,
        until,
        note: text(&body.note, "note")?,
        operator: text(&body.operator, "operator")?,
        updated_at: None,
        machine_id: None,
        active: false,
    };
    a.active = now.is_some_and(|now| a.is_active(now));
    Ok(a)
}

/// Parses a stored annotation at `path`. A record whose item differs from its path is
/// refused too (it would annotate something else).
pub fn parse(path: &str, bytes: &[u8]) -> Result<Annotation, AnnotationError> {
    let record = crate::record::from_bytes(bytes)?;
    // Whether it is active is decided when the model is built, not here.
    let mut a = read(&AnnotationBody::of_record(&record), None)?;
    let (repo, target) = key(Some(&a.repo), Some(&a.target))?;
    if self::path(&repo, &target) != path {
        return Err(AnnotationError::Misplaced {
            repo: a.repo,
            target: a.target,
            path: path.to_owned(),
        });
    }
    a.updated_at = f::UPDATED_AT.text(&record).map(str::to_owned);
    a.machine_id = f::MACHINE_ID.text(&record).map(str::to_owned);
    Ok(a)
}
