//! The dashboard's write bodies and answers: what the page sends to each write route and
//! what the route answers.
//!
//! Bodies are read as leniently as the predecessor's clients send them: a field may be a
//! string or a number (its digits), a field of any other type counts as given but empty
//! ([`Scalar`]), and a few fields have a second spelling. What is wrong with a body is then
//! the write's own rule to say, in its own words.

use serde::Deserialize;
use serde::Deserializer;
use serde::Serialize;
use serde::Serializer;
use serde_json::Map;
use serde_json::Value;

use crate::record::scalar_string;
use crate::record::Record;

/// A text field of a request body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Scalar {
    /// The body does not have the field.
    #[default]
    Absent,
    /// The field is there but is neither a string nor a number (`null`, a list, …).
    Other,
    /// A string, or a number as its digits.
    Text(String),
}

impl Scalar {
    /// Returns the field `value` (`None`: absent) as a body field.
    pub fn of(value: Option<&Value>) -> Scalar {
        match value {
            None => Scalar::Absent,
            Some(v) => scalar_string(v).map_or(Scalar::Other, Scalar::Text),
        }
    }

    /// Returns the text, if the field is a string or a number.
    pub fn text(&self) -> Option<&str> {
        match self {
            Scalar::Text(s) => Some(s),
            Scalar::Absent | Scalar::Other => None,
        }
    }

    /// Returns this field, or `other` when the body does not have this one (a field with a
    /// second spelling reads the first one given).
    pub fn or<'a>(&'a self, other: &'a Scalar) -> &'a Scalar {
        match self {
            Scalar::Absent => other,
            given => given,
        }
    }

    /// Reports whether the body does not have the field (it is then not sent either).
    pub fn is_absent(&self) -> bool {
        matches!(self, Scalar::Absent)
    }
}

impl From<&str> for Scalar {
    fn from(text: &str) -> Scalar {
        Scalar::Text(text.to_owned())
    }
}

impl<'de> Deserialize<'de> for Scalar {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Scalar, D::Error> {
        Value::deserialize(deserializer).map(|v| Scalar::of(Some(&v)))
    }
}

impl Serialize for Scalar {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.text().serialize(serializer)
    }
}

/// `POST /api/batches/import`: a pasted launch prompt, or a reviewed (perhaps edited) draft.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ImportBody {
    /// `{"launch_prompt": "…"}` (or `launchPrompt`), nothing else.
    Prompt(LaunchPrompt),
    /// Anything else: a draft manifest, validated as one (so the import says what is
    /// wrong with it, a body that is not an object included).
    Draft(Value),
}

/// A launch prompt to import.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LaunchPrompt {
    /// The `$pr-batch` launch prompt, as pasted.
    #[serde(alias = "launchPrompt")]
    pub launch_prompt: String,
}

impl ImportBody {
    /// Returns the body as the manifest's import reads it (a JSON object).
    pub fn to_value(&self) -> Value {
        match self {
            ImportBody::Prompt(p) => {
                let mut o = Map::new();
                o.insert(
                    "launch_prompt".into(),
                    Value::from(p.launch_prompt.as_str()),
                );
                Value::Object(o)
            }
            ImportBody::Draft(draft) => draft.clone(),
        }
    }
}

/// What an import wrote (the answer to `POST /api/batches/import`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Imported {
    /// The batch id.
    pub batch_id: String,
    /// Where the manifest was stored.
    pub path: String,
    /// The manifest as stored.
    pub manifest: Value,
}

/// `POST /api/batches/stop`: which batch to stop, and why.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopBody {
    /// The batch to stop.
    #[serde(default, skip_serializing_if = "Scalar::is_absent")]
    pub batch_id: Scalar,
    /// The batch, spelt `batchId` (read when `batch_id` is absent).
    #[serde(default, rename = "batchId", skip_serializing_if = "Scalar::is_absent")]
    pub batch_id_camel: Scalar,
    /// Why (the default reason when none is given).
    #[serde(default, skip_serializing_if = "Scalar::is_absent")]
    pub reason: Scalar,
    /// Why, spelt `message` (read when `reason` is absent).
    #[serde(default, skip_serializing_if = "Scalar::is_absent")]
    pub message: Scalar,
    /// The repository the stop is recorded for, when the request names one.
    #[serde(default, skip_serializing_if = "Scalar::is_absent")]
    pub repo: Scalar,
}

/// The answer to `POST /api/batches/stop`: the `batch.stop_requested` event written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StopRequested {
    /// The event as stored.
    pub event: Record,
    /// Where it was stored.
    pub path: String,
}

/// `DELETE /api/annotations`, and the item half of a save: which item.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnnotationKey {
    /// `owner/repo`.
    #[serde(default, skip_serializing_if = "Scalar::is_absent")]
    pub repo: Scalar,
    /// The issue or pull request number.
    #[serde(default, skip_serializing_if = "Scalar::is_absent")]
    pub target: Scalar,
}

/// `POST /api/annotations`: dismiss an item's attention, or snooze it until a time. A
/// stored annotation record reads as one too.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AnnotationBody {
    /// The item.
    #[serde(flatten)]
    pub key: AnnotationKey,
    /// `dismiss` or `snooze`.
    #[serde(default, skip_serializing_if = "Scalar::is_absent")]
    pub kind: Scalar,
    /// When a snooze ends (ISO-8601 UTC, in the future).
    #[serde(default, skip_serializing_if = "Scalar::is_absent")]
    pub until: Scalar,
    /// Why, in the operator's words.
    #[serde(default, skip_serializing_if = "Scalar::is_absent")]
    pub note: Scalar,
    /// Who.
    #[serde(default, skip_serializing_if = "Scalar::is_absent")]
    pub operator: Scalar,
}

impl AnnotationBody {
    /// Returns the fields of a stored annotation `record`.
    pub fn of_record(record: &Record) -> AnnotationBody {
        let field = |name: &str| Scalar::of(record.get(name));
        AnnotationBody {
            key: AnnotationKey {
                repo: field("repo"),
                target: field("target"),
            },
            kind: field("kind"),
            until: field("until"),
            note: field("note"),
            operator: field("operator"),
        }
    }
}

/// `PUT /api/settings`: the target repositories to save.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsBody {
    /// The repositories (`None`: absent or `null`).
    #[serde(default)]
    pub target_repos: Option<TargetRepos>,
}

/// The target repositories as a settings body gives them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum TargetRepos {
    /// One comma-separated string.
    Text(String),
    /// A list of strings (each may hold several, comma-separated).
    List(Vec<String>),
    /// Anything else (refused).
    Other(Value),
}

impl TargetRepos {
    /// Returns the entries given, each comma-separated string split; `None` for a value of
    /// another type.
    pub fn entries(&self) -> Option<Vec<&str>> {
        match self {
            TargetRepos::Text(text) => Some(text.split(',').collect()),
            TargetRepos::List(items) => Some(items.iter().flat_map(|s| s.split(',')).collect()),
            TargetRepos::Other(_) => None,
        }
    }
}

/// Where the target repositories in force came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScopeSource {
    /// `serve --repos` (for this run).
    CommandLine,
    /// This machine's saved setting.
    Saved,
    /// Nothing saved and no `--repos`: every repository is shown.
    Unset,
}

/// What `GET /api/settings` and `PUT /api/settings` answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SettingsView {
    /// The repositories shown, sorted (empty: every repository).
    pub target_repos: Vec<String>,
    /// How often the page should poll (0: never; it follows the stream).
    pub refresh_interval_ms: u64,
    /// The SHA-256 of the sorted list (64 hex digits).
    pub scope_id: String,
    /// Where the list came from.
    pub source: ScopeSource,
    /// Whether the asking client may change them (it is on this machine).
    pub editable: bool,
}

/// What every refused or failed request answers: `{"error": "…"}`, in words for the page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorAnswer {
    /// The message.
    pub error: String,
}
