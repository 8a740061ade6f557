//! The repository-reference heuristic (reference §7.3, `server/repoRefs.ts`): which
//! `owner/repo` names a piece of free text mentions, so that text naming a repository
//! outside the saved targets can be redacted.
//!
//! Found: GitHub URLs (with a scheme, schemeless `github.com/o/r`, `www.`, SSH
//! `git@github.com:o/r.git`, `api.github.com/repos/o/r`), bare `owner/repo` and
//! `owner/repo#N`, and the repository of a prompt's `Repository:` header. Not found: local
//! paths (`src/server/app.ts`, `./x`, `/abs`, `~/x`, `C:/x`, `file:`), URL queries and
//! fragments, other URI schemes, dates and fractions (`12/05`), file names (`docs/a.md`),
//! common branch prefixes (`feature/x`) and operational slash vocabulary (`read/write`,
//! `frontend/backend`, `ci/passed`, `deploy/staging`). Anything else of the `a/b` shape
//! counts: the heuristic is deliberately conservative (`docs/private` is a repository), as a
//! missed reference would leak and an extra one only hides a field.

use super::settings::is_segment;

/// Words whose pairs are operational vocabulary rather than repositories (`read/write`).
const VOCABULARY: &[&str] = &[
    "a",
    "accept",
    "add",
    "after",
    "agent",
    "agents",
    "allow",
    "amd64",
    "and",
    "android",
    "api",
    "apply",
    "approve",
    "approved",
    "arm",
    "arm64",
    "async",
    "backend",
    "batch",
    "batches",
    "before",
    "blocked",
    "build",
    "builds",
    "cd",
    "ci",
    "claim",
    "claims",
    "client",
    "close",
    "closed",
    "create",
    "css",
    "delete",
    "deny",
    "deploy",
    "deployed",
    "desktop",
    "dev",
    "development",
    "disable",
    "disabled",
    "done",
    "down",
    "download",
    "draft",
    "e2e",
    "enable",
    "enabled",
    "event",
    "events",
    "export",
    "fail",
    "failed",
    "failing",
    "failure",
    "false",
    "frontend",
    "get",
    "green",
    "heartbeat",
    "heartbeats",
    "html",
    "http",
    "https",
    "i",
    "import",
    "in",
    "input",
    "integration",
    "ios",
    "issue",
    "issues",
    "js",
    "json",
    "lane",
    "lanes",
    "linux",
    "lint",
    "local",
    "login",
    "logout",
    "macos",
    "main",
    "master",
    "max",
    "merge",
    "merged",
    "min",
    "mobile",
    "n",
    "no",
    "not",
    "o",
    "off",
    "on",
    "open",
    "opened",
    "or",
    "out",
    "output",
    "owner",
    "pass",
    "passed",
    "passing",
    "patch",
    "pending",
    "plan",
    "post",
    "pr",
    "prod",
    "production",
    "prs",
    "pull",
    "push",
    "put",
    "qa",
    "read",
    "ready",
    "rebase",
    "red",
    "reject",
    "remote",
    "remove",
    "repo",
    "review",
    "reviews",
    "running",
    "server",
    "staging",
    "start",
    "started",
    "stop",
    "stopped",
    "success",
    "sync",
    "target",
    "tcp",
    "test",
    "testing",
    "tests",
    "todo",
    "true",
    "ts",
    "udp",
    "ui",
    "unit",
    "up",
    "update",
    "upload",
    "ux",
    "w",
    "web",
    "windows",
    "write",
    "x86",
    "xml",
    "yaml",
    "yes",
];

/// First segments that name a branch family, not an owner (`feature/login`).
const BRANCH_PREFIXES: &[&str] = &[
    "bugfix",
    "chore",
    "dependabot",
    "feat",
    "feature",
    "fix",
    "hotfix",
    "refactor",
    "release",
    "renovate",
    "wip",
];

/// Extensions that make a second segment a file name (`docs/README.md`), not a repository.
const FILE_EXTENSIONS: &[&str] = &[
    "c", "cfg", "h", "json", "jsx", "lock", "log", "md", "py", "rb", "rs", "sh", "snap", "toml",
    "ts", "tsx", "txt", "yaml", "yml",
];

/// GitHub URL prefixes (lowercase), each followed by `owner/repo`.
const GITHUB_PREFIXES: &[&str] = &[
    "https://api.github.com/repos/",
    "http://api.github.com/repos/",
    "api.github.com/repos/",
    "git+https://github.com/",
    "ssh://git@github.com/",
    "git://github.com/",
    "https://www.github.com/",
    "http://www.github.com/",
    "https://github.com/",
    "http://github.com/",
    "www.github.com/",
    "github.com/",
    "git@github.com:",
];

/// First path segments of github.com pages that are not repositories.
const GITHUB_RESERVED: &[&str] = &[
    "about",
    "apps",
    "collections",
    "enterprise",
    "explore",
    "features",
    "login",
    "marketplace",
    "new",
    "notifications",
    "orgs",
    "pricing",
    "search",
    "settings",
    "sponsors",
    "topics",
];

/// Returns the repositories `text` mentions, lowercased, deduplicated and sorted.
pub fn repo_refs(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut header = false;
    for raw in text.split_whitespace() {
        let token = trim_wrappers(raw);
        let lower = token.to_ascii_lowercase();
        if lower == "repository" && raw.ends_with(':') {
            header = true;
            continue;
        }
        if let Some(rest) = lower.strip_prefix("repository:") {
            out.extend(bare(rest, true));
        } else {
            out.extend(token_refs(&lower, header));
        }
        header = false;
    }
    out.sort();
    out.dedup();
    out
}

/// Strips the punctuation text wraps a reference in: brackets, quotes, emphasis, and a
/// sentence's trailing stop.
fn trim_wrappers(token: &str) -> &str {
    token
        .trim_start_matches(['(', '[', '{', '<', '"', '\'', '`', '*', '_'])
        .trim_end_matches([
            ')', ']', '}', '>', '"', '\'', '`', '*', '_', '.', ',', ';', ':', '!', '?',
        ])
}

/// The repositories one lowercase token names (a comma-joined list names several).
fn token_refs(token: &str, header: bool) -> Vec<String> {
    if token.is_empty() {
        return Vec::new();
    }
    if let Some(rest) = GITHUB_PREFIXES.iter().find_map(|p| token.strip_prefix(p)) {
        return github_path(rest).into_iter().collect();
    }
    if has_scheme(token) || token.contains("://") {
        // Another URI scheme, a drive letter (`c:/x`) or `file:`: not a GitHub reference.
        return Vec::new();
    }
    // A lone query string, an address or an assignment is not a reference.
    if token.contains(['?', '=', '&', '@']) {
        return Vec::new();
    }
    token
        .split([',', '|', ';'])
        .filter_map(|p| bare(p, header))
        .collect()
}

/// `owner/repo` or `owner/repo#N` as a bare token (`header`: it follows `Repository:`, so
/// vocabulary and file names count as well).
fn bare(token: &str, header: bool) -> Option<String> {
    let token = trim_wrappers(token);
    if token.starts_with(['/', '.', '~', '\\', '-', '#']) {
        // Absolute, relative or home paths, flags, and bare issue numbers.
        return None;
    }
    let path = match token.split_once('#') {
        Some((path, n)) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => path,
        Some(_) => return None,
        None => token,
    };
    let (owner, repo) = path.split_once('/')?;
    if !is_segment(owner) || !is_segment(repo) {
        return None;
    }
    if !header {
        let operational = VOCABULARY.contains(&owner) && VOCABULARY.contains(&repo);
        let numeric = owner.chars().all(|c| c.is_ascii_digit());
        let file = repo
            .rsplit_once('.')
            .is_some_and(|(_, ext)| FILE_EXTENSIONS.contains(&ext));
        if operational || numeric || file || BRANCH_PREFIXES.contains(&owner) {
            return None;
        }
    }
    Some(format!("{owner}/{repo}"))
}

/// `owner/repo` from the path after a GitHub URL prefix (query and fragment ignored, a
/// `.git` suffix dropped).
fn github_path(rest: &str) -> Option<String> {
    let path = rest.split(['?', '#']).next().unwrap_or_default();
    let mut segments = path.split('/');
    let owner = segments.next()?;
    let repo = segments.next()?;
    let repo = repo.strip_suffix(".git").unwrap_or(repo);
    if !is_segment(owner) || !is_segment(repo) || GITHUB_RESERVED.contains(&owner) {
        return None;
    }
    Some(format!("{owner}/{repo}"))
}

/// Reports whether a token starts with a URI scheme (`mailto:`, `file:`, `c:`).
fn has_scheme(token: &str) -> bool {
    let Some((scheme, _)) = token.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(text: &str) -> Vec<String> {
        repo_refs(text)
    }

    #[test]
    fn github_urls_name_their_repository() {
        for (text, want) in [
            ("see https://github.com/Acme/App/pull/12", "acme/app"),
            ("http://github.com/acme/app", "acme/app"),
            (
                "https://www.github.com/acme/app/issues/3#issuecomment-1",
                "acme/app",
            ),
            ("github.com/acme/app", "acme/app"),
            ("(github.com/acme/app/tree/main)", "acme/app"),
            ("www.github.com/acme/app.", "acme/app"),
            ("git@github.com:acme/app.git", "acme/app"),
            ("ssh://git@github.com/acme/app.git", "acme/app"),
            ("https://github.com/acme/app.git", "acme/app"),
            ("https://api.github.com/repos/acme/app/pulls/4", "acme/app"),
            ("https://github.com/acme/app?tab=readme", "acme/app"),
            ("<https://github.com/acme/app/pull/1>", "acme/app"),
        ] {
            assert_eq!(refs(text), [want], "{text}");
        }
    }

    #[test]
    fn bare_names_and_numbered_references_count() {
        for (text, want) in [
            ("owner/repo", vec![]),
            ("acme/app", vec!["acme/app"]),
            ("fix acme/app#12 first", vec!["acme/app"]),
            ("`acme/app`", vec!["acme/app"]),
            ("(acme/app#3).", vec!["acme/app"]),
            ("docs/private", vec!["docs/private"]),
            ("vercel/next.js", vec!["vercel/next.js"]),
            ("acme/a,beta/b", vec!["acme/a", "beta/b"]),
            ("Repos: acme/a and Beta/B.", vec!["acme/a", "beta/b"]),
            ("acme/app#12 acme/app#13", vec!["acme/app"]),
        ] {
            assert_eq!(refs(text), want, "{text}");
        }
    }

    #[test]
    fn the_repository_header_of_a_prompt_counts_whatever_the_name() {
        assert_eq!(refs("Repository: acme/app\nBatch id: b1"), ["acme/app"]);
        assert_eq!(refs("repository:acme/app"), ["acme/app"]);
        // After the header even vocabulary-looking names are repositories.
        assert_eq!(refs("Repository: read/write"), ["read/write"]);
        assert_eq!(refs("Repository: feature/notes.md"), ["feature/notes.md"]);
    }

    #[test]
    fn local_paths_urls_elsewhere_and_vocabulary_do_not_count() {
        for text in [
            "src/server/app.ts",
            "edit ./x and ../y/z",
            "/abs/path",
            "/abs",
            "~/notes/x",
            "C:/Users/me",
            "c:\\x\\y",
            "file:src/app",
            "file:///home/me/repo",
            "https://gitlab.com/acme/app",
            "https://example.com/a/b?next=acme/app",
            "https://example.com/#acme/app",
            "mailto:someone@acme/app",
            "?q=acme/app",
            "read/write",
            "frontend/backend",
            "ci/passed",
            "deploy/staging",
            "Read/Write access",
            "and/or",
            "12/05",
            "2026/11",
            "docs/README.md",
            "cli/main.rs",
            "feature/login",
            "fix/issue-12",
            "release/v1.2",
            "github.com/orgs/acme",
            "https://github.com/settings/tokens",
            "https://github.com/acme",
            "#12",
            "--repos",
            "a/b/c",
            "acme/app#x",
            "acme/app#",
            "acme/",
            "/app",
            "../..",
            "",
            "no references here at all",
        ] {
            assert_eq!(refs(text), Vec::<String>::new(), "{text}");
        }
    }

    #[test]
    fn mixed_text_finds_each_reference_once() {
        let text = "Batch for acme/app (see https://github.com/beta/tool/pull/9, src/a/b.rs). \
                    Depends on gamma/lib#4; read/write only; Repository: acme/app";
        assert_eq!(refs(text), ["acme/app", "beta/tool", "gamma/lib"]);
    }
}
