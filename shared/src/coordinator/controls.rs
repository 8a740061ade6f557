//! The operator's holds on the coordinator (`coordinate pause|resume|drain`): one record at
//! `coordinator/controls/holds.json` on the state branch, so every machine of the fleet sees the
//! same holds once synced, and `git log` says who set each.
//!
//! - a **pause** starts no new lane and admits no new issue in its scope; lanes already
//!   running finish and are collected, and script-owned steps (checks, CI observation,
//!   readiness, Ready, the merge observation) go on, since they cost no model time;
//! - a **drain** admits no new issue in its scope, while the tasks already admitted go on to
//!   their end (what an operator wants before taking a worker out of service).
//!
//! A hold's scope is everything, one worker, or one repository. `resume` lifts every hold of
//! exactly that scope.

use std::fmt;

use serde::Deserialize;
use serde::Serialize;

/// The folder of the operator's controls on the state branch.
pub const CONTROLS_DIR: &str = "coordinator/controls";
/// Where the holds are stored on the state branch.
pub const CONTROLS_PATH: &str = "coordinator/controls/holds.json";

/// What a hold covers.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub enum Scope {
    /// Every worker and repository (`all`).
    All,
    /// One worker (`worker:<id>`).
    Worker(String),
    /// One target repository, whichever worker works on it (`repo:<owner/repo>`).
    Repo(String),
}

impl Scope {
    /// Reports whether the scope covers work of `worker` on `repo`.
    pub fn covers(&self, worker: &str, repo: &str) -> bool {
        match self {
            Scope::All => true,
            Scope::Worker(w) => w == worker,
            Scope::Repo(r) => r.eq_ignore_ascii_case(repo),
        }
    }

    /// Reports whether the scope covers anything of `worker` (every repository of it).
    pub fn covers_worker(&self, worker: &str) -> bool {
        match self {
            Scope::All => true,
            Scope::Worker(w) => w == worker,
            Scope::Repo(_) => false,
        }
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scope::All => f.write_str("all"),
            Scope::Worker(w) => write!(f, "worker:{w}"),
            Scope::Repo(r) => write!(f, "repo:{r}"),
        }
    }
}

impl From<Scope> for String {
    fn from(scope: Scope) -> String {
        scope.to_string()
    }
}

impl TryFrom<String> for Scope {
    type Error = ControlError;

    fn try_from(text: String) -> Result<Scope, ControlError> {
        text.parse()
    }
}

impl std::str::FromStr for Scope {
    type Err = ControlError;

    fn from_str(text: &str) -> Result<Scope, ControlError> {
        let bad = || ControlError::BadScope(text.to_owned());
        match text.split_once(':') {
            None if text == "all" => Ok(Scope::All),
            Some(("worker", w)) if !w.trim().is_empty() => Ok(Scope::Worker(w.to_owned())),
            Some(("repo", r)) if r.split('/').filter(|p| !p.is_empty()).count() == 2 => {
                Ok(Scope::Repo(r.to_owned()))
            }
            _ => Err(bad()),
        }
    }
}

/// What a hold stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HoldKind {
    /// No new lanes and no new admissions.
    Pause,
    /// No new admissions; admitted tasks go on.
    Drain,
}

impl HoldKind {
    /// The word for it (`paused`, `draining`).
    pub fn participle(self) -> &'static str {
        match self {
            HoldKind::Pause => "paused",
            HoldKind::Drain => "draining",
        }
    }
}

/// One hold an operator set.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hold {
    /// Pause or drain.
    pub kind: HoldKind,
    /// What it covers.
    pub scope: Scope,
    /// Who set it (the operator's name).
    pub by: String,
    /// When (RFC 3339).
    pub at: String,
    /// Why, when the operator said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl fmt::Display for Hold {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({}) by {} since {}",
            self.kind.participle(),
            self.scope,
            self.by,
            self.at
        )?;
        if let Some(reason) = &self.reason {
            write!(f, ": {reason}")?;
        }
        Ok(())
    }
}

/// The stored record: every hold in force.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Controls {
    /// Always 1 for now.
    #[serde(default = "one")]
    pub schema_version: u32,
    /// The holds, in the order they were set.
    #[serde(default)]
    pub holds: Vec<Hold>,
    /// Fields this version does not know, kept byte for byte.
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
}

fn one() -> u32 {
    1
}

/// Why an operator's hold command was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ControlError {
    /// The scope text is not `all`, `worker:<id>` or `repo:<owner/repo>`.
    #[error("unusable scope {0:?}: expected all, worker:<id> or repo:<owner/repo>")]
    BadScope(String),
    /// `resume` found no hold of that scope.
    #[error("nothing to resume: no pause or drain on {scope}{}", in_force(.others))]
    NothingToResume {
        /// The scope asked for.
        scope: Scope,
        /// The holds in force, described.
        others: Vec<String>,
    },
}

fn in_force(others: &[String]) -> String {
    if others.is_empty() {
        " (no hold is in force)".to_owned()
    } else {
        format!(" (in force: {})", others.join("; "))
    }
}

/// What a hold command changed, for its output and its event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A hold was set (or replaced the same kind's on the same scope, given back here).
    Set {
        /// The new hold.
        hold: Hold,
        /// The hold it replaced.
        replaced: Option<Hold>,
    },
    /// Holds were lifted.
    Lifted(Vec<Hold>),
}

impl Controls {
    /// Sets `hold`, replacing a hold of the same kind on the same scope.
    pub fn set(&mut self, hold: Hold) -> Change {
        let replaced = self
            .holds
            .iter()
            .position(|h| h.kind == hold.kind && h.scope == hold.scope)
            .map(|i| self.holds.remove(i));
        self.holds.push(hold.clone());
        Change::Set { hold, replaced }
    }

    /// Lifts every hold of exactly `scope` (a `--worker` resume leaves an `--all` pause).
    pub fn resume(&mut self, scope: &Scope) -> Result<Change, ControlError> {
        let (lifted, kept): (Vec<Hold>, Vec<Hold>) =
            self.holds.drain(..).partition(|h| &h.scope == scope);
        self.holds = kept;
        if lifted.is_empty() {
            return Err(ControlError::NothingToResume {
                scope: scope.clone(),
                others: self.holds.iter().map(ToString::to_string).collect(),
            });
        }
        Ok(Change::Lifted(lifted))
    }

    /// The pause that keeps lanes of `worker` on `repo` from starting, if any.
    pub fn lanes_held(&self, worker: &str, repo: &str) -> Option<&Hold> {
        self.holds
            .iter()
            .find(|h| h.kind == HoldKind::Pause && h.scope.covers(worker, repo))
    }

    /// The pause or drain that keeps `worker` from admitting an issue of `repo`, if any (a
    /// pause first: it is the stronger hold).
    pub fn admission_held(&self, worker: &str, repo: &str) -> Option<&Hold> {
        self.lanes_held(worker, repo).or_else(|| {
            self.holds
                .iter()
                .find(|h| h.kind == HoldKind::Drain && h.scope.covers(worker, repo))
        })
    }

    /// The holds that concern `worker` (on all of it or any of `repos`), for its views.
    pub fn of_worker<'a>(&'a self, worker: &'a str, repos: &'a [String]) -> Vec<&'a Hold> {
        self.holds
            .iter()
            .filter(|h| {
                h.scope.covers_worker(worker) || repos.iter().any(|r| h.scope.covers(worker, r))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hold(kind: HoldKind, scope: &str) -> Hold {
        Hold {
            kind,
            scope: scope.parse().expect("scope"),
            by: "alice".into(),
            at: "2026-12-07T10:00:00Z".into(),
            reason: None,
        }
    }

    #[test]
    fn scopes_read_and_print_the_same_text() {
        for text in ["all", "worker:w1", "repo:acme/widget"] {
            let scope: Scope = text.parse().expect(text);
            assert_eq!(scope.to_string(), text);
        }
        for bad in [
            "",
            "everything",
            "worker:",
            "repo:acme",
            "repo:a/b/c",
            "team:x",
        ] {
            assert!(bad.parse::<Scope>().is_err(), "{bad}");
        }
    }

    #[test]
    fn a_pause_holds_lanes_and_admission_a_drain_only_admission() {
        let mut c = Controls::default();
        c.set(hold(HoldKind::Drain, "worker:w1"));
        assert!(c.lanes_held("w1", "acme/widget").is_none());
        assert!(c.admission_held("w1", "acme/widget").is_some());
        assert!(c.admission_held("w2", "acme/widget").is_none());
        c.set(hold(HoldKind::Pause, "repo:acme/widget"));
        assert_eq!(
            c.lanes_held("w2", "ACME/Widget").map(|h| h.kind),
            Some(HoldKind::Pause)
        );
        assert!(c.lanes_held("w2", "acme/other").is_none());
        assert_eq!(
            c.admission_held("w1", "acme/widget").map(|h| h.kind),
            Some(HoldKind::Pause),
            "the pause is named before the drain"
        );
    }

    #[test]
    fn setting_the_same_kind_on_the_same_scope_replaces_it() {
        let mut c = Controls::default();
        c.set(hold(HoldKind::Pause, "all"));
        let mut again = hold(HoldKind::Pause, "all");
        again.by = "bob".into();
        match c.set(again) {
            Change::Set { replaced, .. } => {
                assert_eq!(replaced.map(|h| h.by), Some("alice".into()))
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(c.holds.len(), 1);
        c.set(hold(HoldKind::Drain, "all"));
        assert_eq!(c.holds.len(), 2, "a drain beside a pause");
    }

    #[test]
    fn resume_lifts_exactly_its_scope_and_says_what_is_in_force_otherwise() {
        let mut c = Controls::default();
        c.set(hold(HoldKind::Pause, "all"));
        c.set(hold(HoldKind::Drain, "worker:w1"));
        c.set(hold(HoldKind::Pause, "worker:w1"));
        match c.resume(&Scope::Worker("w1".into())) {
            Ok(Change::Lifted(l)) => assert_eq!(l.len(), 2),
            other => panic!("{other:?}"),
        }
        assert!(
            c.lanes_held("w1", "acme/widget").is_some(),
            "the all pause stays"
        );
        let err = c.resume(&Scope::Repo("acme/widget".into())).unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("nothing to resume: no pause or drain on repo:acme/widget"),
            "{text}"
        );
        assert!(text.contains("paused (all) by alice"), "{text}");
        c.resume(&Scope::All).expect("lifts");
        assert!(c
            .resume(&Scope::All)
            .unwrap_err()
            .to_string()
            .ends_with("(no hold is in force)"));
    }

    #[test]
    fn the_record_keeps_unknown_fields_and_reads_an_empty_object() {
        let c: Controls = serde_json::from_str("{}").expect("empty");
        assert!(c.holds.is_empty());
        let text = r#"{"schema_version":1,"holds":[{"kind":"drain","scope":"repo:acme/widget","by":"alice","at":"2026-12-07T10:00:00Z","reason":"upgrade"}],"future":7}"#;
        let c: Controls = serde_json::from_str(text).expect("reads");
        assert_eq!(
            c.holds[0].to_string(),
            "draining (repo:acme/widget) by alice since 2026-12-07T10:00:00Z: upgrade"
        );
        assert_eq!(serde_json::to_string(&c).expect("writes"), text);
        assert!(serde_json::from_str::<Controls>(
            r#"{"holds":[{"kind":"pause","scope":"nope","by":"a","at":"t"}]}"#
        )
        .is_err());
    }

    #[test]
    fn a_workers_views_see_holds_on_it_and_on_its_repositories() {
        let mut c = Controls::default();
        c.set(hold(HoldKind::Pause, "repo:acme/widget"));
        c.set(hold(HoldKind::Drain, "worker:w2"));
        let repos = vec!["acme/widget".to_owned()];
        assert_eq!(c.of_worker("w1", &repos).len(), 1);
        assert_eq!(c.of_worker("w1", &[]).len(), 0);
        assert_eq!(c.of_worker("w2", &[]).len(), 1);
    }
}
