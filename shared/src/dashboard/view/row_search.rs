//! Operator-row search (reference §10): exact number, PR and issue forms, `repo#N`,
//! GitHub URLs, and otherwise a substring over everything a row shows.

use crate::dashboard::model::LivenessView;
use crate::dashboard::model::Row;

/// A parsed search query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    /// Matches everything.
    All,
    /// `123` or `#123`: the target, or a PR with that number.
    Number(String),
    /// `PR #123`, `pr 123`, `pull request #123`: pull-request rows only.
    Pr(String),
    /// `issue #123`: issue rows only.
    Issue(String),
    /// `owner/repo#123` or `repo#123` (also a canonical GitHub URL).
    RepoNumber {
        /// `owner/repo` or `repo`.
        repo: String,
        /// The number.
        number: String,
    },
    /// Anything else: a lowercase substring.
    Text(String),
}

fn number(s: &str) -> Option<String> {
    let s = s.strip_prefix('#').unwrap_or(s);
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.to_owned())
}

/// Canonicalises a GitHub pull/issue URL to `(owner/repo, number)`.
fn github_url(q: &str) -> Option<(String, String)> {
    let rest = q.strip_prefix("https://")?;
    let rest = rest.split(['?', '#']).next()?;
    let rest = rest.strip_prefix("github.com/")?;
    let parts: Vec<&str> = rest.split('/').collect();
    if parts.len() < 4 || !matches!(parts[2], "pull" | "issues") {
        return None;
    }
    Some((format!("{}/{}", parts[0], parts[1]), number(parts[3])?))
}

/// Parses a query: lowercased, whitespace collapsed.
pub fn parse_query(raw: &str) -> Query {
    let q = raw
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    if q.is_empty() {
        return Query::All;
    }
    if let Some(n) = number(&q) {
        return Query::Number(n);
    }
    if let Some((repo, number)) = github_url(&q) {
        return Query::RepoNumber { repo, number };
    }
    for prefix in ["pull request ", "pr "] {
        if let Some(n) = q.strip_prefix(prefix).and_then(|r| number(r.trim())) {
            return Query::Pr(n);
        }
    }
    if let Some(n) = q.strip_prefix("pr#").and_then(number) {
        return Query::Pr(n);
    }
    if let Some(n) = q.strip_prefix("issue ").and_then(|r| number(r.trim())) {
        return Query::Issue(n);
    }
    if let Some((repo, n)) = q.rsplit_once('#') {
        if !repo.is_empty() && !repo.contains(' ') {
            if let Some(number) = number(n) {
                return Query::RepoNumber {
                    repo: repo.to_owned(),
                    number,
                };
            }
        }
    }
    Query::Text(q)
}

/// The number of the row's PR URL, if it has one.
fn pr_number(row: &Row) -> Option<&str> {
    let url = row.pr_url.as_deref()?;
    let (_, tail) = url.split_once("/pull/")?;
    let n = tail.split(['/', '?', '#']).next()?;
    (!n.is_empty()).then_some(n)
}

/// Everything a row shows, lowercased, for substring search.
pub fn search_text(row: &Row) -> String {
    let kind = match row.kind.as_str() {
        "pull_request" => "pr",
        "issue" => "issue",
        _ => "target",
    };
    let mut parts: Vec<&str> = vec![&row.repo, &row.target, row.state.as_str(), &row.kind];
    let tagged = format!("#{} {kind} #{}", row.target, row.target);
    parts.push(&tagged);
    for v in [
        row.title.as_deref(),
        row.liveness.map(LivenessView::as_str),
        row.agent.as_deref(),
        row.machine.as_deref(),
        row.host.as_deref(),
        row.thread.as_deref(),
        row.operator.as_deref(),
        row.branch.as_deref(),
        row.pr_url.as_deref(),
        row.batch_id.as_deref(),
        row.lane.as_deref(),
        row.status.as_deref(),
        row.message.as_deref(),
    ]
    .into_iter()
    .flatten()
    {
        parts.push(v);
    }
    for v in row.blocked_on.iter().chain(&row.warnings) {
        parts.push(v);
    }
    parts.join(" ").to_lowercase()
}

/// Reports whether `row` matches `query`.
pub fn matches(row: &Row, query: &Query) -> bool {
    let is_pr = row.kind == "pull_request";
    match query {
        Query::All => true,
        Query::Number(n) => row.target == *n || pr_number(row) == Some(n),
        Query::Pr(n) => (is_pr && row.target == *n) || pr_number(row) == Some(n),
        Query::Issue(n) => row.kind == "issue" && row.target == *n,
        Query::RepoNumber { repo, number } => {
            let repo_ok = row.repo.eq_ignore_ascii_case(repo)
                || row.repo.to_lowercase().ends_with(&format!("/{repo}"));
            repo_ok && (row.target == *number || pr_number(row) == Some(number))
        }
        Query::Text(t) => search_text(row).contains(t.as_str()),
    }
}

/// Filters `rows` by a raw query string.
pub fn filter<'a>(rows: &'a [Row], raw: &str) -> Vec<&'a Row> {
    let q = parse_query(raw);
    rows.iter().filter(|r| matches(r, &q)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dashboard::fixtures;

    fn row(repo: &str, target: &str, kind: &str) -> Row {
        Row {
            kind: kind.into(),
            liveness: Some(LivenessView::Live),
            agent: Some("worker-7".into()),
            machine: Some("box-3".into()),
            host: Some("codex".into()),
            thread: Some("thread-abc".into()),
            branch: Some("codex/fix-fouc".into()),
            batch_id: Some("batch-1".into()),
            lane: Some("tests".into()),
            ..fixtures::row(repo, target)
        }
    }

    #[test]
    fn parses_every_reference_form() {
        assert_eq!(parse_query("123"), Query::Number("123".into()));
        assert_eq!(parse_query(" #123 "), Query::Number("123".into()));
        assert_eq!(parse_query("PR #123"), Query::Pr("123".into()));
        assert_eq!(parse_query("pr 123"), Query::Pr("123".into()));
        assert_eq!(parse_query("pull request #123"), Query::Pr("123".into()));
        assert_eq!(parse_query("issue #123"), Query::Issue("123".into()));
        assert_eq!(
            parse_query("acme/app#123"),
            Query::RepoNumber {
                repo: "acme/app".into(),
                number: "123".into()
            }
        );
        assert_eq!(
            parse_query("app#123"),
            Query::RepoNumber {
                repo: "app".into(),
                number: "123".into()
            }
        );
        assert_eq!(
            parse_query("https://github.com/acme/app/pull/123/files?x=1#top"),
            Query::RepoNumber {
                repo: "acme/app".into(),
                number: "123".into()
            }
        );
        assert_eq!(parse_query("Worker  7"), Query::Text("worker 7".into()));
        assert_eq!(parse_query("   "), Query::All);
    }

    #[test]
    fn matches_rows_by_form() {
        let pr = row("acme/app", "123", "pull_request");
        let issue = row("acme/app", "123", "issue");
        let other = row("acme/api", "45", "issue");
        let mut linked = row("acme/api", "9", "issue");
        linked.pr_url = Some("https://github.com/acme/api/pull/123".into());
        let rows = [pr, issue, other, linked];
        let ids = |q: &str| {
            filter(&rows, q)
                .iter()
                .map(|r| r.id.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(ids("123").len(), 3, "target 123 twice and a linked PR 123");
        assert_eq!(ids("PR #123"), ["target:acme/app#123", "target:acme/api#9"]);
        assert_eq!(ids("issue #123"), ["target:acme/app#123"]);
        assert_eq!(ids("api#45"), ["target:acme/api#45"]);
        assert_eq!(ids("app#45"), Vec::<String>::new());
        assert_eq!(ids("codex/fix-fouc").len(), 4, "branch");
        assert_eq!(ids("box-3").len(), 4, "machine");
        assert_eq!(ids("thread-abc").len(), 4, "thread");
        assert_eq!(ids("nothing-like-this"), Vec::<String>::new());
        assert_eq!(
            ids("api 45"),
            ["target:acme/api#45"],
            "as in the reference, repo then target"
        );
    }
}
