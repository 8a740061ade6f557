//! How a row is named outside the table: its item label (`PR #N`, `Issue #N`) and its
//! canonical GitHub URL, shared by Find and the launch prompt.

use crate::dashboard::model::Row;

/// `PR #N`, `Issue #N` or `Target #N`.
pub fn item_label(row: &Row) -> String {
    let kind = match row.kind.as_str() {
        "pull_request" => "PR",
        "issue" => "Issue",
        _ => "Target",
    };
    format!("{kind} #{}", row.target)
}

/// The row's canonical GitHub URL (`/pull/N` or `/issues/N`), when its kind says which.
pub fn github_url(row: &Row) -> Option<String> {
    let path = match row.kind.as_str() {
        "pull_request" => "pull",
        "issue" => "issues",
        _ => return None,
    };
    Some(format!(
        "https://github.com/{}/{path}/{}",
        row.repo, row.target
    ))
}
