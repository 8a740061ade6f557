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

use serde_json::Value;

use crate::dashboard::model::Annotation;
use crate::dashboard::model::AnnotationKind;
use crate::ids::RepoSlug;
use crate::ids::Target;
use crate::record::field as f;
use crate::record::scalar_string;
use crate::record::ParseError;
use crate::record::Record;
use crate::time;
use crate::time::Instant;

/// The folder annotations live in.
pub const ANNOTATIONS_DIR: &str = "annotations";

/// The longest note or operator an annotation keeps (characters, after trimming).
pub const MAX_TEXT: usize = 500;

/// Why a record (stored, or a request body) does not read as an annotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AnnotationInvalid {
    /// The item is not a valid `owner/repo` and a numeric target.
    #[error("annotation requires a valid owner/repo and numeric target")]
    Key,
    /// The kind is neither `dismiss` nor `snooze`.
    #[error("annotation kind must be dismiss or snooze")]
    Kind,
    /// A snooze without a (future, for a request) `until`.
    #[error("snooze until must be a future timestamp")]
    Until,
    /// The note or operator is longer than [`MAX_TEXT`].
    #[error("annotation {0} is too long")]
    TooLong(&'static str),
}

/// Why a stored record at an annotation path is not an annotation (a model warning).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoredAnnotationInvalid {
    /// The bytes are not a JSON object.
    #[error(transparent)]
    Record(#[from] ParseError),
    /// The record does not read as an annotation.
    #[error(transparent)]
    Invalid(#[from] AnnotationInvalid),
    /// The record annotates another item than the one its path names.
    #[error("annotation for {repo}#{target} is stored at {path}")]
    Misplaced {
        /// The record's repository.
        repo: String,
        /// The record's target.
        target: String,
        /// Where the record is stored.
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
) -> Result<(RepoSlug, Target), AnnotationInvalid> {
    let (Some(repo), Some(target)) = (repo, target) else {
        return Err(AnnotationInvalid::Key);
    };
    let (repo, target) = (repo.trim(), target.trim());
    let valid_repo = repo
        .split_once('/')
        .is_some_and(|(o, n)| key_part(o) && key_part(n));
    let numeric = !target.is_empty() && target.bytes().all(|b| b.is_ascii_digit());
    if !valid_repo || !numeric {
        return Err(AnnotationInvalid::Key);
    }
    let slug = repo.parse().map_err(|_| AnnotationInvalid::Key)?;
    let target = target.parse().map_err(|_| AnnotationInvalid::Key)?;
    Ok((slug, target))
}

fn text(v: Option<&Value>, what: &'static str) -> Result<Option<String>, AnnotationInvalid> {
    let Some(s) = v.and_then(scalar_string) else {
        return Ok(None);
    };
    let s = s.trim();
    if s.chars().count() > MAX_TEXT {
        return Err(AnnotationInvalid::TooLong(what));
    }
    Ok((!s.is_empty()).then(|| s.to_owned()))
}

/// Reads an annotation record, as stored or as a request body sends it; with `now` (a
/// request) a snooze's `until` must be in the future, and `active` is set.
pub(crate) fn read(r: &Record, now: Option<Instant>) -> Result<Annotation, AnnotationInvalid> {
    let repo = r.get("repo").and_then(scalar_string);
    let target = r.get("target").and_then(scalar_string);
    let (repo, target) = key(repo.as_deref(), target.as_deref())?;
    let kind = r
        .get("kind")
        .and_then(Value::as_str)
        .and_then(AnnotationKind::parse)
        .ok_or(AnnotationInvalid::Kind)?;
    let until = match kind {
        AnnotationKind::Dismiss => None,
        AnnotationKind::Snooze => {
            let at = r
                .get("until")
                .and_then(Value::as_str)
                .and_then(time::parse)
                .filter(|t| now.is_none_or(|now| *t > now))
                .ok_or(AnnotationInvalid::Until)?;
            Some(time::format(at))
        }
    };
    let note = text(r.get("note"), "note")?;
    let operator = text(r.get("operator"), "operator")?;
    let mut a = Annotation {
        repo: repo.to_string(),
        target: target.to_string(),
        kind,
        until,
        note,
        operator,
        updated_at: f::UPDATED_AT.text(r).map(str::to_owned),
        machine_id: f::MACHINE_ID.text(r).map(str::to_owned),
        active: false,
    };
    a.active = now.is_some_and(|now| a.is_active(now));
    Ok(a)
}

/// Parses a stored annotation at `path`, or says why it is not one. A record whose item
/// differs from its path is refused too (it would annotate something else).
pub fn parse(path: &str, bytes: &[u8]) -> Result<Annotation, StoredAnnotationInvalid> {
    let record = crate::record::from_bytes(bytes)?;
    // Whether it is active is decided when the model is built, not here.
    let a = read(&record, None)?;
    let (repo, target) = key(Some(&a.repo), Some(&a.target))?;
    if self::path(&repo, &target) != path {
        return Err(StoredAnnotationInvalid::Misplaced {
            repo: a.repo,
            target: a.target,
            path: path.to_owned(),
        });
    }
    Ok(a)
}
