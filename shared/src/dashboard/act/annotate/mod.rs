//! Saving and clearing an operator's annotation (reference dashboard §4.4), decided inside
//! the store transaction like every write: saving replaces the item's annotation, clearing
//! removes it.

use serde_json::json;
use serde_json::Value;

use crate::dashboard::inputs::annotations::key;
use crate::dashboard::inputs::annotations::path;
use crate::dashboard::inputs::annotations::read;
use crate::dashboard::inputs::annotations::AnnotationInvalid;
use crate::dashboard::inputs::annotations::ANNOTATIONS_DIR;
use crate::dashboard::model::Annotation;
use crate::record::field as f;
use crate::record::scalar_string;
use crate::record::Record;
use crate::rules::Ctx;
use crate::rules::Plan;
use crate::snapshot::ReadError;
use crate::snapshot::Snapshot;
use crate::time;

/// Why an annotation was not saved or cleared.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnnotateError {
    /// The request body is not a JSON object.
    #[error("the request body is not a JSON object")]
    NotAnObject,
    /// The body does not read as an annotation.
    #[error(transparent)]
    Invalid(#[from] AnnotationInvalid),
    /// The annotations folder cannot be read.
    #[error(transparent)]
    Unreadable(#[from] ReadError),
}

fn object(body: &Value) -> Result<&Record, AnnotateError> {
    body.as_object().ok_or(AnnotateError::NotAnObject)
}

/// Saves the annotation a `POST /api/annotations` body asks for (`{repo, target, kind,
/// until?, note?, operator?}`), replacing the item's previous one; stamped with `ctx`'s
/// clock and machine.
pub fn save(ctx: &Ctx, body: &Value) -> Result<Plan<Annotation>, AnnotateError> {
    let mut a = read(object(body)?, Some(ctx.now))?;
    let (repo, target) = key(Some(&a.repo), Some(&a.target))?;
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
pub fn clear(snap: &impl Snapshot, body: &Value) -> Result<Plan<bool>, AnnotateError> {
    let obj = object(body)?;
    let repo = obj.get("repo").and_then(scalar_string);
    let target = obj.get("target").and_then(scalar_string);
    let (repo, target) = key(repo.as_deref(), target.as_deref())?;
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
