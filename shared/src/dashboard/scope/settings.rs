//! The saved target repositories as a setting (reference §4.4 "Settings"): what an operator
//! may type (`owner/repo` entries as a list or one comma-separated string), how it is
//! normalised (trimmed, lowercased, deduplicated, sorted), what is refused (dot-only
//! segments, anything but exactly two `[A-Za-z0-9_.-]` segments, an empty list), and the
//! `scopeId` that names a normalised list.

use sha2::Digest;

use crate::dashboard::model::SettingsBody;

/// The message of an empty setting (the reference's 400).
pub const EMPTY_MESSAGE: &str = "At least one owner/repo target is required.";

/// Why a target-repository setting was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// No entry remained after trimming.
    #[error("At least one owner/repo target is required.")]
    Empty,
    /// An entry is not `owner/repo` with two plain segments.
    #[error("Target repository \"{0}\" is not owner/repo (two segments of letters, digits, '.', '_' or '-', neither only dots).")]
    Malformed(String),
    /// The value is neither a list of strings nor a string.
    #[error("targetRepos must be a list of owner/repo strings or one comma-separated string.")]
    WrongType,
}

/// Reports whether `segment` is a plain repository path segment: one or more of
/// `[A-Za-z0-9_.-]`, not made of dots only (`.`, `..`, `...` could name no repository, and
/// would escape a path).
pub fn is_segment(segment: &str) -> bool {
    !segment.is_empty()
        && segment
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
        && !segment.chars().all(|c| c == '.')
}

/// Returns `entry` as a normalised `owner/repo` (trimmed, lowercased: GitHub names are
/// case-insensitive), or `None` when it is not exactly two plain segments.
pub fn normalize_repo(entry: &str) -> Option<String> {
    let entry = entry.trim();
    let (owner, repo) = entry.split_once('/')?;
    (is_segment(owner) && is_segment(repo)).then(|| entry.to_ascii_lowercase())
}

/// Normalises a list of entries: each trimmed, blank ones skipped, every other one an
/// `owner/repo`; the result lowercased, deduplicated and sorted, and never empty.
pub fn normalize<'a>(
    entries: impl IntoIterator<Item = &'a str>,
) -> Result<Vec<String>, SettingsError> {
    let mut out = Vec::new();
    for entry in entries {
        if entry.trim().is_empty() {
            continue;
        }
        out.push(
            normalize_repo(entry)
                .ok_or_else(|| SettingsError::Malformed(entry.trim().to_owned()))?,
        );
    }
    out.sort();
    out.dedup();
    if out.is_empty() {
        return Err(SettingsError::Empty);
    }
    Ok(out)
}

/// Normalises one comma-separated string (`--repos`, a saved setting, a typed field).
pub fn normalize_text(text: &str) -> Result<Vec<String>, SettingsError> {
    normalize(text.split(','))
}

/// Normalises the `targetRepos` of a settings request: a list of strings (each may itself
/// be comma-separated) or one comma-separated string; absent or null is empty.
pub fn normalize_body(body: &SettingsBody) -> Result<Vec<String>, SettingsError> {
    let given = body.target_repos.as_ref().ok_or(SettingsError::Empty)?;
    normalize(given.entries().ok_or(SettingsError::WrongType)?)
}

/// Returns the scope id of a normalised list: the SHA-256 (64 hex digits) of its JSON
/// array, so equal lists have equal ids whoever computes them (the page uses it to tell
/// whether a model it holds belongs to the scope it shows).
pub fn scope_id(repos: &[String]) -> String {
    let json = serde_json::to_string(repos).unwrap_or_default();
    sha2::Sha256::digest(json.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use serde_json::Value;

    use super::*;

    /// Normalises a request body whose `targetRepos` is `value` (`None`: absent).
    fn normalize_value(value: Option<&Value>) -> Result<Vec<String>, SettingsError> {
        let body = value.map_or_else(|| json!({}), |v| json!({ "targetRepos": v }));
        normalize_body(&serde_json::from_value(body).expect("a settings body"))
    }

    #[test]
    fn entries_are_trimmed_lowercased_deduplicated_and_sorted() {
        assert_eq!(
            normalize_text(" Acme/App , beta/tool,acme/app,, zed/x.y ").unwrap(),
            ["acme/app", "beta/tool", "zed/x.y"]
        );
        assert_eq!(
            normalize_value(Some(&json!(["b/c", "A/b", "a/B", " a/b "]))).unwrap(),
            ["a/b", "b/c"]
        );
        assert_eq!(
            normalize_value(Some(&json!(["a/b,c/d", "e/f"]))).unwrap(),
            ["a/b", "c/d", "e/f"]
        );
        assert_eq!(
            normalize_value(Some(&json!("x_1/y-2.z"))).unwrap(),
            ["x_1/y-2.z"]
        );
    }

    #[test]
    fn empty_settings_are_refused_with_the_reference_message() {
        for v in [
            None,
            Some(json!(null)),
            Some(json!("")),
            Some(json!(" , ,")),
            Some(json!([])),
            Some(json!(["", " "])),
        ] {
            let e = normalize_value(v.as_ref()).unwrap_err();
            assert_eq!(e, SettingsError::Empty, "{v:?}");
            assert_eq!(e.to_string(), EMPTY_MESSAGE);
        }
    }

    #[test]
    fn malformed_and_dot_only_entries_are_refused_by_name() {
        for bad in [
            "./app",
            "repo/..",
            ".../repo",
            "../x",
            "acme",
            "acme/app/extra",
            "/app",
            "acme/",
            "ac me/app",
            "acme/app#1",
            "https://github.com/acme/app",
            "acme\\app",
            "acme/ä",
        ] {
            let e = normalize_text(&format!("ok/fine,{bad}")).unwrap_err();
            assert_eq!(e, SettingsError::Malformed(bad.trim().to_owned()), "{bad}");
            assert!(e.to_string().contains(bad), "{e}");
        }
        // Dots inside a segment are fine; only dot-only segments are refused.
        assert_eq!(normalize_text(".github/.a.").unwrap(), [".github/.a."]);
    }

    #[test]
    fn other_json_types_are_refused() {
        for v in [
            json!(1),
            json!({"a": "b/c"}),
            json!(["a/b", 3]),
            json!(true),
        ] {
            assert_eq!(
                normalize_value(Some(&v)).unwrap_err(),
                SettingsError::WrongType,
                "{v}"
            );
        }
    }

    #[test]
    fn scope_ids_are_stable_digests_of_the_normalised_list() {
        let a = scope_id(&normalize_text("b/c, A/B").unwrap());
        let b = scope_id(&normalize_value(Some(&json!(["a/b", "b/c", "b/c"]))).unwrap());
        assert_eq!(a, b);
        assert_eq!(a.len(), 64);
        assert!(a
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_ne!(a, scope_id(&["a/b".to_owned()]));
        // The digest of `[]` (nothing saved: every repository).
        assert_eq!(
            scope_id(&[]),
            "4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945"
        );
    }
}
