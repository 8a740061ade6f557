//! The repositories a scope shows (reference §7.3): which repositories are shown, what
//! text mentions one that is not (it is redacted), and which dashboard writes a scope
//! refuses.

use std::collections::BTreeSet;

use serde_json::Value;

use super::refs;
use super::settings;

/// The literal a dependency on a lane no longer visible is replaced with.
pub const OUTSIDE: &str = "outside saved target repositories";

/// The repositories the dashboard shows (lowercase `owner/repo`); empty shows every one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    repos: BTreeSet<String>,
}

impl Scope {
    /// Returns the scope that shows every repository.
    pub fn all() -> Scope {
        Scope::default()
    }

    /// Returns the scope of `repos` (compared case-insensitively; empty shows everything).
    pub fn of<S: AsRef<str>>(repos: &[S]) -> Scope {
        Scope {
            repos: repos
                .iter()
                .map(|r| r.as_ref().trim().to_ascii_lowercase())
                .filter(|r| !r.is_empty())
                .collect(),
        }
    }

    /// Reports whether this scope shows every repository.
    pub fn is_all(&self) -> bool {
        self.repos.is_empty()
    }

    /// The repositories, sorted (empty when every one is shown).
    pub fn repos(&self) -> Vec<String> {
        self.repos.iter().cloned().collect()
    }

    /// The scope id of these repositories ([`settings::scope_id`]).
    pub fn id(&self) -> String {
        settings::scope_id(&self.repos())
    }

    /// Reports whether `repo` is shown.
    pub fn contains(&self, repo: &str) -> bool {
        self.is_all() || self.repos.contains(&repo.trim().to_ascii_lowercase())
    }

    /// Reports whether `text` mentions a repository this scope does not show.
    pub fn mentions_foreign(&self, text: &str) -> bool {
        // Every form of reference has a slash: most text is cleared without tokenising it.
        !self.is_all()
            && text.contains('/')
            && refs::repo_refs(text)
                .iter()
                .any(|r| !self.repos.contains(r))
    }

    /// Returns `value` unless it mentions a repository this scope does not show.
    pub fn redact(&self, value: &Option<String>) -> Option<String> {
        value.clone().filter(|v| !self.mentions_foreign(v))
    }
}

/// Why a dashboard write was refused under a scope (reference §4.4).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteScopeError {
    /// A batch plan names repositories the scope does not show.
    #[error("Batch plan repos outside saved target repositories: {}.", .0.join(", "))]
    PlanOutside(Vec<String>),
    /// A stop request names a repository the scope does not show.
    #[error("Batch stop repo is outside saved target repositories: {0}.")]
    StopOutside(String),
}

impl Scope {
    /// Decides whether a batch plan (a manifest as it would be stored) may be imported: every
    /// repository it names (its own and its targets') must be shown.
    pub fn check_plan(&self, manifest: &Value) -> Result<(), WriteScopeError> {
        let own = manifest.get("repo").and_then(Value::as_str);
        let targets = manifest
            .get("targets")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| t.get("repo").and_then(Value::as_str));
        let outside: BTreeSet<String> = own
            .into_iter()
            .chain(targets)
            .filter(|r| !self.contains(r))
            .map(|r| r.trim().to_owned())
            .collect();
        if outside.is_empty() {
            Ok(())
        } else {
            Err(WriteScopeError::PlanOutside(outside.into_iter().collect()))
        }
    }

    /// Decides whether a stop request naming `repo` may be sent.
    pub fn check_stop(&self, repo: Option<&str>) -> Result<(), WriteScopeError> {
        match repo {
            Some(r) if !self.contains(r) => Err(WriteScopeError::StopOutside(r.to_owned())),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_empty_scope_shows_everything() {
        let all = Scope::of::<&str>(&[]);
        assert!(all.is_all() && all == Scope::all());
        assert!(all.contains("any/thing"));
        assert!(!all.mentions_foreign("https://github.com/any/thing"));
        assert_eq!(
            all.redact(&Some("beta/tool".into())),
            Some("beta/tool".into())
        );
    }

    #[test]
    fn a_scope_shows_its_repositories_whatever_their_case() {
        let s = Scope::of(&["Acme/App", " beta/tool "]);
        assert_eq!(s.repos(), ["acme/app", "beta/tool"]);
        assert!(s.contains("acme/app") && s.contains("ACME/APP") && s.contains("beta/tool"));
        assert!(!s.contains("acme/other") && !s.contains("UNKNOWN") && !s.contains(""));
        assert_eq!(
            s.id(),
            settings::scope_id(&["acme/app".into(), "beta/tool".into()])
        );
    }

    #[test]
    fn writes_naming_other_repositories_are_refused() {
        let s = Scope::of(&["acme/app"]);
        let plan = json!({"repo": "acme/app", "targets": [{"target": "1"}, {"target": "2", "repo": "beta/x"},
                                                          {"target": "3", "repo": "alpha/y"}]});
        let e = s.check_plan(&plan).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Batch plan repos outside saved target repositories: alpha/y, beta/x."
        );
        assert_eq!(
            s.check_plan(&json!({"repo": "ACME/app", "targets": [{"target": "1"}]})),
            Ok(())
        );
        assert_eq!(Scope::all().check_plan(&plan), Ok(()));
        assert_eq!(
            s.check_stop(Some("beta/x")).unwrap_err().to_string(),
            "Batch stop repo is outside saved target repositories: beta/x."
        );
        assert_eq!(s.check_stop(Some("acme/app")), Ok(()));
        assert_eq!(s.check_stop(None), Ok(()));
    }

    #[test]
    fn text_naming_another_repository_is_redacted() {
        let s = Scope::of(&["acme/app"]);
        assert!(!s.mentions_foreign("working on acme/app#3, read/write"));
        assert!(s.mentions_foreign("see gamma/secret#4"));
        assert!(s.mentions_foreign("https://github.com/gamma/secret/pull/1"));
        assert_eq!(s.redact(&Some("gamma/secret".into())), None);
        assert_eq!(
            s.redact(&Some("feature/login".into())),
            Some("feature/login".into())
        );
        assert_eq!(s.redact(&None), None);
    }
}
