//! Saving and clearing an operator's annotation (reference dashboard §4.4), decided inside
//! the store transaction like every write: saving replaces the item's annotation, clearing
//! removes it.

use serde_json::Value;

use crate::dashboard::inputs::annotations::key;
use crate::dashboard::inputs::annotations::path;
use crate::dashboard::inputs::annotations::read;
use crate::dashboard::inputs::annotations::AnnotationError;
use crate::dashboard::inputs::annotations::ANNOTATIONS_DIR;
use crate::dashboard::model::Annotation;
use crate::dashboard::model::AnnotationBody;
use crate::dashboard::model::AnnotationKey;
use crate::record::field as f;
use crate::record::Record;
use crate::rules::Ctx;
use crate::rules::Plan;
use crate::snapshot::ReadError;
use crate::snapshot::Snapshot;
use crate::time;

/// Why an annotation was not saved or cleared.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnnotateError {
    /// The body does not read as an annotation.
    #[error(transparent)]
    Invalid(#[from] AnnotationError),
    /// The annotations folder cannot be read.
    #[error(transparent)]
    Unreadable(#[from] ReadError),
}

/// Saves the annotation a `POST /api/annotations` body asks for (`{repo, target, kind,
/// until?, note?, operator?}`), replacing the item's previous one; stamped with `ctx`'s
/// clock and machine.
pub fn save(ctx: &Ctx, body: &AnnotationBody) -> Result<Plan<Annotation>, AnnotateError> {
    let mut a = read(body, Some(ctx.now))?;
    let (repo, target) = key(Some(&a.repo), Some(&a.target))?;
    let mut record = Record::new();
    f::SCHEMA_VERSION.set(&mut record, 1);
    record.insert("repo".into(), Value::from(a.repo.as_str()));
    record.insert("target".into(), Value::from(a.target.as_str()));
    record.insert("kind".into(), Value::from(a.kind.as_str()));
    for (name, value) in [
        ("until", &a.until),
        ("note", &a.note),
        ("operator", &a.operator),
    ] {
        if let Some(v) = value {
            record.insert(name.into(), Value::from(v.as_str()));
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
pub fn clear(snap: &impl Snapshot, item: &AnnotationKey) -> Result<Plan<bool>, AnnotateError> {
    let (repo, target) = key(item.repo.text(), item.target.text())?;
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
