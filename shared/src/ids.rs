//! Identifier newtypes and the path-segment grammar.
//!
//! Every user-supplied identifier that becomes part of a record path (or a ref name) is
//! validated here first, so nothing can escape its folder or alias another record.

use std::fmt;
use std::str::FromStr;

use serde::Deserialize;
use serde::Serialize;

use crate::record::EventKind;

/// Why an identifier was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {field}: {value}")]
pub struct IdError {
    /// The name of the field as the user knows it (`agent-id`, `target`, …).
    pub field: &'static str,
    /// The rejected value, verbatim.
    pub value: String,
}

/// Reports whether `s` is a safe path segment: runs of `[A-Za-z0-9_:-]` joined by single dots.
///
/// No leading, trailing or doubled dot, so `.` and `..` (and hidden files) are impossible.
pub fn is_segment(s: &str) -> bool {
    !s.is_empty()
        && s.split('.').all(|run| {
            !run.is_empty()
                && run
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b':' | b'-'))
        })
}

/// Reports whether `s` is a safe owner or repository name (`[A-Za-z0-9_.-]+`, never `.`,
/// `..` or a name git reads as `.git`).
///
/// git treats `.git` followed by dots as `.git` (fsck's `hasDotgit`, `core.protectNTFS`):
/// such a tree entry aliases the repository's own folder on checkout and fails a
/// receiving side's `fsck`, so `.git.` and `.git..` are refused like `.git`.
pub fn is_repo_part(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
        && s != "."
        && s != ".."
        && !s.trim_end_matches('.').eq_ignore_ascii_case(".git")
}

macro_rules! segment_id {
    ($(#[$doc:meta])* $name:ident, $field:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// Returns the identifier as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl FromStr for $name {
            type Err = IdError;
            fn from_str(s: &str) -> Result<Self, IdError> {
                if is_segment(s) {
                    Ok(Self(s.to_owned()))
                } else {
                    Err(IdError { field: $field, value: s.to_owned() })
                }
            }
        }

        impl TryFrom<String> for $name {
            type Error = IdError;
            fn try_from(s: String) -> Result<Self, IdError> {
                s.parse()
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

segment_id!(
    /// An agent's stable id; names its heartbeat record.
    AgentId,
    "agent-id"
);
segment_id!(
    /// An issue or pull request number, or another repo-scoped target id.
    Target,
    "target"
);
segment_id!(
    /// A batch id; names its manifest and its events folder.
    BatchId,
    "batch-id"
);
segment_id!(
    /// An event id; names the event's file.
    EventId,
    "event id"
);
segment_id!(
    /// An event type such as `phase` or `claim.acquired`.
    EventType,
    "event type"
);

impl EventType {
    /// Returns the type when it is one the code knows by name.
    pub fn known(&self) -> Option<EventKind> {
        EventKind::parse(&self.0)
    }
}

impl From<EventKind> for EventType {
    fn from(kind: EventKind) -> Self {
        // Every known name is a valid segment (checked in `record::kind`'s tests).
        Self(kind.as_str().to_owned())
    }
}

/// A machine id: a segment that is also a valid git ref component (no `:`, no `.lock` suffix).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct MachineId(String);

impl MachineId {
    /// Returns the identifier as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for MachineId {
    type Err = IdError;
    fn from_str(s: &str) -> Result<Self, IdError> {
        if is_segment(s) && !s.contains(':') && !s.ends_with(".lock") {
            Ok(Self(s.to_owned()))
        } else {
            Err(IdError {
                field: "machine id",
                value: s.to_owned(),
            })
        }
    }
}

impl fmt::Display for MachineId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A repository slug, `OWNER/REPO`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RepoSlug {
    owner: String,
    name: String,
}

impl RepoSlug {
    /// Parses a slug, naming `field` in the error (`target repo`, `batch repo`, …).
    pub fn parse_as(s: &str, field: &'static str) -> Result<Self, IdError> {
        match s.split_once('/') {
            Some((owner, name)) if is_repo_part(owner) && is_repo_part(name) => Ok(Self {
                owner: owner.to_owned(),
                name: name.to_owned(),
            }),
            _ => Err(IdError {
                field,
                value: s.to_owned(),
            }),
        }
    }

    /// Returns the owner part.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// Returns the repository name part.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl FromStr for RepoSlug {
    type Err = IdError;
    fn from_str(s: &str) -> Result<Self, IdError> {
        Self::parse_as(s, "target repo")
    }
}

impl fmt::Display for RepoSlug {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.owner, self.name)
    }
}

/// A lane name: non-empty, without `:` (it is a payload field, never a path segment).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LaneName(String);

impl LaneName {
    /// Returns the lane name as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Why a string is not a [`LaneName`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LaneNameError {
    /// The name is empty.
    #[error("--lane must not be empty")]
    Empty,
    /// The name contains `:` (events use it to join a batch and a lane).
    #[error("event lane {name} cannot contain ':'")]
    HasColon {
        /// The rejected name, verbatim.
        name: String,
    },
}

impl FromStr for LaneName {
    type Err = LaneNameError;
    fn from_str(s: &str) -> Result<Self, LaneNameError> {
        if s.is_empty() {
            Err(LaneNameError::Empty)
        } else if s.contains(':') {
            Err(LaneNameError::HasColon { name: s.to_owned() })
        } else {
            Ok(Self(s.to_owned()))
        }
    }
}

impl fmt::Display for LaneName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Record paths, built only from validated identifiers.
pub mod paths {
    use super::AgentId;
    use super::BatchId;
    use super::RepoSlug;
    use super::Target;

    /// Returns `claims/<owner>/<repo>/<target>.json`.
    pub fn claim(repo: &RepoSlug, target: &Target) -> String {
        format!("claims/{}/{}/{}.json", repo.owner(), repo.name(), target)
    }

    /// Returns `heartbeats/<agent-id>.json`.
    pub fn heartbeat(agent: &AgentId) -> String {
        format!("heartbeats/{agent}.json")
    }

    /// Returns `batches/<batch-id>.json`.
    pub fn batch(batch: &BatchId) -> String {
        format!("batches/{batch}.json")
    }

    /// Returns `events/<batch-id>` (the folder of a batch's events).
    pub fn events_dir(batch: &BatchId) -> String {
        format!("events/{batch}")
    }

    /// Returns `events/<batch-id>/<event-id>.json`.
    pub fn event(batch: &BatchId, event_id: &str) -> String {
        format!("events/{batch}/{event_id}.json")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_event_types_are_segments() {
        for kind in EventKind::ALL {
            let t = EventType::from(*kind);
            assert_eq!(t.as_str().parse::<EventType>(), Ok(t.clone()));
            assert_eq!(t.known(), Some(*kind));
        }
        assert_eq!("note".parse::<EventType>().unwrap().known(), None);
    }

    #[test]
    fn segment_grammar() {
        for ok in ["a", "a.b", "x:y", "A-1_b", "batch-2026:lane", "1234"] {
            assert!(is_segment(ok), "{ok}");
        }
        for bad in [
            "", ".", "..", ".a", "a.", "a..b", "a/b", "a b", "é", "../x", "a\\b",
        ] {
            assert!(!is_segment(bad), "{bad}");
        }
    }

    #[test]
    fn repo_slug_rejects_aliasing() {
        assert!("acme/app".parse::<RepoSlug>().is_ok());
        assert!("acme/.github".parse::<RepoSlug>().is_ok());
        for bad in [
            "a/.", "./b", "a/..", "../x", "a", "a/b/c", "a/", "/b", "a/.GIT", "a/b c",
        ] {
            let err = bad.parse::<RepoSlug>().unwrap_err();
            assert_eq!(err.to_string(), format!("invalid target repo: {bad}"));
        }
    }

    /// Found by `make fuzz` (fuzz/regressions/ids_paths/): `p/.git..` was a valid slug, so a
    /// claim wrote the tree entry `claims/p/.git../`, which git's fsck flags as `.git`.
    #[test]
    fn regression_repo_slug_dotgit_with_trailing_dots() {
        for bad in ["p/.git.", "p/.git..", "p/.GIT.", ".git./app"] {
            assert!(bad.parse::<RepoSlug>().is_err(), "{bad}");
        }
        assert!("p/.git.x".parse::<RepoSlug>().is_ok());
        assert!("p/.gitignore".parse::<RepoSlug>().is_ok());
    }

    #[test]
    fn machine_id_is_a_ref_component() {
        assert!("box-1".parse::<MachineId>().is_ok());
        assert!("a:b".parse::<MachineId>().is_err());
        assert!("box.lock".parse::<MachineId>().is_err());
        assert!("a..b".parse::<MachineId>().is_err());
    }

    #[test]
    fn lane_names() {
        assert!("docs/api copy".parse::<LaneName>().is_ok());
        assert_eq!("".parse::<LaneName>().unwrap_err(), LaneNameError::Empty);
        assert_eq!(
            "docs:copy".parse::<LaneName>().unwrap_err(),
            LaneNameError::HasColon {
                name: "docs:copy".into()
            }
        );
    }

    proptest::proptest! {
        #[test]
        fn valid_segments_never_escape(s in "\\PC{0,12}") {
            if is_segment(&s) {
                proptest::prop_assert!(!s.contains('/'));
                proptest::prop_assert!(!s.split('.').any(|p| p.is_empty()));
            }
        }
    }
}
