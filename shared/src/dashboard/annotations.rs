//! Annotations: an operator dismisses an attention item, or snoozes it until a time
//! (reference dashboard §4.4). Each is one record on the state branch at
//! `annotations/<owner>/<repo>/<target>.json`, so sync shares it with every machine; saving
//! replaces the item's annotation and clearing removes it.
//!
//! An annotation is presentation only: it hides the item from the attention queue (a
//! dismissal for good, a snooze until its time) and never changes a row's state, so
//! terminal work stays terminal and nothing is created for an item the state does not
//! know. A record that does not read as an annotation is a model warning, never a broken
//! page.

use rustc_hash::FxHashSet as HashSet;
use serde::Deserialize;
use serde::Serialize;
use serde_json::json;
use serde_json::Value;

use crate::ids::RepoSlug;
use crate::ids::Target;
use crate::record::field as f;
use crate::record::scalar_string;
use crate::record::Record;
use crate::rules::Ctx;
use crate::rules::Plan;
use crate::rules::RuleError;
use crate::snapshot::Snapshot;
use crate::time;
use crate::time::Instant;

/// The folder annotations live in.
pub const ANNOTATIONS_DIR: &str = "annotations";

/// The longest note or operator an annotation keeps (characters, after trimming).
pub const MAX_TEXT: usize = 500;

const INVALID_KEY: &str = "annotation requires a valid owner/repo and numeric target";
const INVALID_KIND: &str = "annotation kind must be dismiss or snooze";
const INVALID_UNTIL: &str = "snooze until must be a future timestamp";

/// What an annotation does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AnnotationKind {
    /// Hidden from the attention queue for good (until cleared).
    Dismiss,
    /// Hidden until `until`.
    Snooze,
}

impl AnnotationKind {
    /// The name used in records and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            AnnotationKind::Dismiss => "dismiss",
            AnnotationKind::Snooze => "snooze",
        }
    }

    fn parse(s: &str) -> Option<AnnotationKind> {
        match s {
            "dismiss" => Some(AnnotationKind::Dismiss),
            "snooze" => Some(AnnotationKind::Snooze),
            _ => None,
        }
    }
}

/// One annotation, as the model carries it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotation {
    /// `owner/repo`.
    pub repo: String,
    /// The issue or PR number.
    pub target: String,
    /// Dismiss or snooze.
    pub kind: AnnotationKind,
    /// When a snooze ends (ISO-8601 UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// Why, in the operator's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Who.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    /// When it was saved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    /// The machine that saved it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_id: Option<String>,
    /// Whether it hides its item now (a dismissal, or a snooze not yet over).
    #[serde(default)]
    pub active: bool,
}

impl Annotation {
    /// The row id of the item it is about.
    pub fn row_id(&self) -> String {
        format!("target:{}#{}", self.repo, self.target)
    }

    /// Reports whether it hides its item at `now`.
    pub fn is_active(&self, now: Instant) -> bool {
        match self.kind {
            AnnotationKind::Dismiss => true,
            AnnotationKind::Snooze => self
                .until
                .as_deref()
                .and_then(time::parse)
                .is_some_and(|until| until > now),
        }
    }
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
fn key(repo: Option<&str>, target: Option<&str>) -> Result<(RepoSlug, Target), String> {
    let (Some(repo), Some(target)) = (repo, target) else {
        return Err(INVALID_KEY.into());
    };
    let (repo, target) = (repo.trim(), target.trim());
    let valid_repo = repo
        .split_once('/')
        .is_some_and(|(o, n)| key_part(o) && key_part(n));
    let numeric = !target.is_empty() && target.bytes().all(|b| b.is_ascii_digit());
    if !valid_repo || !numeric {
        return Err(INVALID_KEY.into());
    }
    let slug = repo.parse().map_err(|_| INVALID_KEY.to_owned())?;
    let target = target.parse().map_err(|_| INVALID_KEY.to_owned())?;
    Ok((slug, target))
}

fn text(v: Option<&Value>, what: &str) -> Result<Option<String>, String> {
    let Some(s) = v.and_then(scalar_string) else {
        return Ok(None);
    };
    let s = s.trim();
    if s.chars().count() > MAX_TEXT {
        return Err(format!("annotation {what} is too long"));
    }
    Ok((!s.is_empty()).then(|| s.to_owned()))
}

/// Reads an annotation record, as stored or as a request body sends it; with `now` (a
/// request) a snooze's `until` must be in the future, and `active` is set.
fn read(r: &Record, now: Option<Instant>) -> Result<Annotation, String> {
    let repo = r.get("repo").and_then(scalar_string);
    let target = r.get("target").and_then(scalar_string);
    let (repo, target) = key(repo.as_deref(), target.as_deref())?;
    let kind = r
        .get("kind")
        .and_then(Value::as_str)
        .and_then(AnnotationKind::parse)
        .ok_or_else(|| INVALID_KIND.to_owned())?;
    let until = match kind {
        AnnotationKind::Dismiss => None,
        AnnotationKind::Snooze => {
            let at = r
                .get("until")
                .and_then(Value::as_str)
                .and_then(time::parse)
                .filter(|t| now.is_none_or(|now| *t > now))
                .ok_or_else(|| INVALID_UNTIL.to_owned())?;
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

/// Parses a stored annotation at `path`; the message says why it is not one. A record
/// whose item differs from its path is refused too (it would annotate something else).
pub fn parse(path: &str, bytes: &[u8]) -> Result<Annotation, String> {
    let record = crate::record::from_bytes(bytes).map_err(|e| e.to_string())?;
    // Whether it is active is decided when the model is built, not here.
    let a = read(&record, None)?;
    let (repo, target) = key(Some(&a.repo), Some(&a.target))?;
    if self::path(&repo, &target) != path {
        return Err(format!(
            "annotation for {}#{} is stored at {path}",
            a.repo, a.target
        ));
    }
    Ok(a)
}

/// The row ids hidden from the attention queue at `now`.
pub fn hidden<'a>(
    annotations: impl IntoIterator<Item = &'a Annotation>,
    now: Instant,
) -> HashSet<String> {
    annotations
        .into_iter()
        .filter(|a| a.is_active(now))
        .map(Annotation::row_id)
        .collect()
}

/// The earliest end of a snooze that is active in the model: when the attention queue
/// changes by the clock alone (no ref moves), so a page must reload then.
pub fn next_expiry(annotations: &[Annotation]) -> Option<Instant> {
    annotations
        .iter()
        .filter(|a| a.active && a.kind == AnnotationKind::Snooze)
        .filter_map(|a| a.until.as_deref().and_then(time::parse))
        .min()
}

fn object(body: &Value) -> Result<&Record, RuleError> {
    body.as_object()
        .ok_or_else(|| RuleError::Usage("Request body must be a JSON object.".into()))
}

/// Saves the annotation a `POST /api/annotations` body asks for (`{repo, target, kind,
/// until?, note?, operator?}`), replacing the item's previous one; stamped with `ctx`'s
/// clock and machine.
pub fn save(ctx: &Ctx, body: &Value) -> Result<Plan<Annotation>, RuleError> {
    let mut a = read(object(body)?, Some(ctx.now)).map_err(RuleError::Usage)?;
    let (repo, target) = key(Some(&a.repo), Some(&a.target)).map_err(RuleError::Usage)?;
    let mut record = Record::new();
    f::SCHEMA_VERSION.set(&mut record, 1);
    record.insert("repo".into(), json!(a.repo));
    record.insert("target".into(), json!(a.target));
    record.insert("kind".into(), json!(a.kind.as_str()));
    for (name, value) in [
        ("until", &a.until),
        ("note", &a.note),
        ("operator", &a.operator),
    ] {
        if let Some(v) = value {
            record.insert(name.into(), json!(v));
        }
    }
    f::UPDATED_AT.set(&mut record, time::format(ctx.now));
    ctx.identity.stamp(&mut record);
    a.updated_at = Some(time::format(ctx.now));
    a.machine_id = f::MACHINE_ID.text(&record).map(str::to_owned);
    let summary = match &a.until {
        Some(until) => format!("dashboard: snooze {}#{} until {until}", a.repo, a.target),
        None => format!("dashboard: dismiss {}#{}", a.repo, a.target),
    };
    let mut plan = Plan::nothing("dashboard-annotate", a);
    plan.state.push((path(&repo, &target), record));
    plan.summary = summary;
    Ok(plan)
}

/// Clears an item's annotation (a `DELETE /api/annotations` body, `{repo, target}`);
/// reports whether there was one. Clearing nothing writes nothing.
pub fn clear(snap: &impl Snapshot, body: &Value) -> Result<Plan<bool>, RuleError> {
    let obj = object(body)?;
    let repo = obj.get("repo").and_then(scalar_string);
    let target = obj.get("target").and_then(scalar_string);
    let (repo, target) = key(repo.as_deref(), target.as_deref()).map_err(RuleError::Usage)?;
    let at = path(&repo, &target);
    // By name, not by reading it: a malformed annotation can be cleared too.
    let folder = format!("{ANNOTATIONS_DIR}/{}/{}", repo.owner(), repo.name());
    let existed = snap.paths(&folder)?.contains(&at);
    let mut plan = Plan::nothing("dashboard-annotate", existed);
    if existed {
        plan.removals.push(at);
        plan.summary = format!("dashboard: clear the annotation of {repo}#{target}");
    }
    Ok(plan)
}

#[cfg(test)]
mod tests;
