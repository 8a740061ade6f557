//! An operator's annotation as the model carries it: a dismissal, or a snooze until a time
//! (reference dashboard §4.4), whether it hides its item now, and when the next snooze ends.

use rustc_hash::FxHashSet as HashSet;
use serde::Deserialize;
use serde::Serialize;

use crate::serde_name::from_serde_name;
use crate::serde_name::serde_name;
use crate::time;
use crate::time::Instant;

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
        serde_name(&self)
    }

    pub(crate) fn parse(s: &str) -> Option<AnnotationKind> {
        from_serde_name(s)
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
