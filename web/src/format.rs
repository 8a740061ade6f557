//! Pure presentation helpers: ages, labels, fallbacks, URL paths and pagination.
//!
//! Nothing here touches the browser, so it compiles (and is tested) on every target.

use agent_coord_shared::coordinator::task::TaskState;
use agent_coord_shared::dashboard::model::BatchTier;
use agent_coord_shared::dashboard::model::BatchView;
use agent_coord_shared::dashboard::model::ChecklistRow;
use agent_coord_shared::dashboard::model::Row;
use agent_coord_shared::dashboard::model::RowState;

/// Rows shown per page in the operator table.
pub const ROWS_PER_PAGE: usize = 100;

/// Batches shown per page on the batches board.
pub const BATCHES_PER_PAGE: usize = 50;

/// What an unknown value renders as.
pub const UNKNOWN: &str = "UNKNOWN";

/// What a missing, not-applicable value renders as.
pub const DASH: &str = "—";

/// The elapsed time from `at` (ISO-8601) to `now_ms` (Unix milliseconds) as `Ns`, `Nm`, `Nh`
/// or `Nd`; `—` when `at` is missing or unreadable.
pub fn age(now_ms: f64, at: Option<&str>) -> String {
    let now = agent_coord_shared::time::from_unix_millis(now_ms as i64);
    match (now, at.and_then(agent_coord_shared::time::parse)) {
        (Some(now), Some(t)) => agent_coord_shared::dashboard::derive::age_label(Some(t), now),
        _ => DASH.to_string(),
    }
}

/// A timestamp as `YYYY-MM-DD HH:MM:SS UTC`, or `—` when missing or unreadable.
pub fn timestamp(at: Option<&str>) -> String {
    at.and_then(agent_coord_shared::time::parse)
        .map(|t| t.format("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|| DASH.to_string())
}

/// The value, or `UNKNOWN` when it is missing or blank.
pub fn or_unknown(value: Option<&str>) -> String {
    or_marker(value, UNKNOWN)
}

/// The value, or `—` when it is missing or blank.
pub fn or_dash(value: Option<&str>) -> String {
    or_marker(value, DASH)
}

fn or_marker(value: Option<&str>, marker: &str) -> String {
    match value.map(str::trim) {
        Some(v) if !v.is_empty() => v.to_string(),
        _ => marker.to_string(),
    }
}

/// A list joined by commas, or `—` when empty.
pub fn list_or_dash(values: &[String]) -> String {
    if values.is_empty() {
        DASH.to_string()
    } else {
        values.join(", ")
    }
}

/// How a row's work is named: `PR #N`, `Issue #N`, `Target #N`, or `Lane <name>`.
pub fn work_label(row: &Row) -> String {
    if row.target.is_empty() {
        return format!("Lane {}", or_unknown(row.lane.as_deref()));
    }
    match row.kind.as_str() {
        "pull_request" => format!("PR #{}", row.target),
        "issue" => format!("Issue #{}", row.target),
        _ => format!("Target #{}", row.target),
    }
}

/// Percent-encodes one URL path segment (everything but RFC 3986 unreserved characters).
pub fn encode_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Percent-encodes a query-string value.
pub fn encode_query(value: &str) -> String {
    encode_segment(value)
}

/// The item page path for `owner/repo` and a target, when both are well formed.
pub fn item_path(repo: &str, target: &str) -> Option<String> {
    let (owner, name) = repo.split_once('/')?;
    if owner.is_empty() || name.is_empty() || name.contains('/') || target.is_empty() {
        return None;
    }
    Some(format!(
        "/items/{}/{}/{}",
        encode_segment(owner),
        encode_segment(name),
        encode_segment(target)
    ))
}

/// The item page path of a row, when it names a work item.
pub fn row_item_path(row: &Row) -> Option<String> {
    item_path(&row.repo, &row.target)
}

/// The batch page path.
pub fn batch_path(id: &str) -> String {
    format!("/batches/{}", encode_segment(id))
}

/// The path of the page a row links to: its item page, else its batch page.
pub fn row_path(row: &Row) -> Option<String> {
    row_item_path(row).or_else(|| row.batch_id.as_deref().map(batch_path))
}

/// The batch page of a `batch:lane` attention subject (`owner/repo#N` subjects have none).
pub fn subject_batch_path(subject: &str) -> Option<String> {
    if subject.contains('#') {
        return None;
    }
    let (batch, _lane) = subject.split_once(':')?;
    (!batch.is_empty()).then(|| batch_path(batch))
}

/// The item page of an `owner/repo#N` attention subject (`batch:lane` subjects have none).
pub fn subject_item_path(subject: &str) -> Option<String> {
    let (repo, target) = subject.rsplit_once('#')?;
    item_path(repo, target)
}

/// What a coordinator panel calls the task's text: a failed or uncertain task has a
/// blocker; a waiting one published a question or a blocker.
pub fn blocker_title(state: TaskState) -> &'static str {
    match state {
        TaskState::Failed | TaskState::Uncertain => "Blocker",
        _ => "Question or blocker",
    }
}

/// The heading of a coordinator task's checklist.
pub fn checklist_heading(short_head: Option<&str>) -> String {
    match short_head {
        Some(h) => format!("Evidence on head {h}"),
        None => "Evidence (no head yet)".to_string(),
    }
}

/// What a checklist mark means, in words (for a screen reader).
pub fn check_state(row: &ChecklistRow) -> &'static str {
    match (row.passed, row.other_head.is_some()) {
        (true, _) => "passed on this head",
        (false, true) => "not passed on this head (a pass on another head does not count)",
        (false, false) => "not passed yet",
    }
}

/// A batch-board filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TierFilter {
    /// Everything not ready to archive (the default).
    Active,
    /// Blocked batches.
    Blocked,
    /// Stuck batches.
    Stuck,
    /// Running batches.
    Running,
    /// Batches whose lanes are all done.
    Archive,
    /// Every batch.
    All,
}

impl TierFilter {
    /// Every filter, in chip order.
    pub const ALL: [TierFilter; 6] = [
        TierFilter::Active,
        TierFilter::Blocked,
        TierFilter::Stuck,
        TierFilter::Running,
        TierFilter::Archive,
        TierFilter::All,
    ];

    /// The `?tier=` value.
    pub fn key(self) -> &'static str {
        match self {
            TierFilter::Active => "active",
            TierFilter::Blocked => "blocked",
            TierFilter::Stuck => "stuck",
            TierFilter::Running => "running",
            TierFilter::Archive => "archive",
            TierFilter::All => "all",
        }
    }

    /// The chip label.
    pub fn label(self) -> &'static str {
        match self {
            TierFilter::Active => "Active",
            TierFilter::Blocked => "Blocked",
            TierFilter::Stuck => "Stuck",
            TierFilter::Running => "Running",
            TierFilter::Archive => "Ready to archive",
            TierFilter::All => "All",
        }
    }

    /// Reads a `?tier=` value; anything unrecognised is the default.
    pub fn from_key(key: Option<&str>) -> TierFilter {
        Self::ALL
            .into_iter()
            .find(|f| Some(f.key()) == key)
            .unwrap_or(TierFilter::Active)
    }

    /// Reports whether a batch passes the filter.
    pub fn admits(self, batch: &BatchView) -> bool {
        match self {
            TierFilter::Active => batch.tier != BatchTier::Archive,
            TierFilter::Blocked => batch.tier == BatchTier::Blocked,
            TierFilter::Stuck => batch.tier == BatchTier::Stuck,
            TierFilter::Running => batch.tier == BatchTier::Running,
            TierFilter::Archive => batch.tier == BatchTier::Archive,
            TierFilter::All => true,
        }
    }
}

/// Reads a 1-based `?page=` value; anything unreadable is page 1.
pub fn page_number(raw: Option<&str>) -> usize {
    raw.and_then(|p| p.trim().parse::<usize>().ok())
        .filter(|p| *p >= 1)
        .unwrap_or(1)
}

/// How many pages `total` items fill (at least one).
pub fn page_count(total: usize, per_page: usize) -> usize {
    total.div_ceil(per_page.max(1)).max(1)
}

/// The index range of 1-based `page` (clamped to the last page).
pub fn page_range(total: usize, per_page: usize, page: usize) -> std::ops::Range<usize> {
    let page = page.clamp(1, page_count(total, per_page));
    let start = (page - 1) * per_page;
    start.min(total)..(start + per_page).min(total)
}

/// Builds a query string (`?a=1&b=2`) from the non-empty pairs, or `""` when there are none.
pub fn query_string(pairs: &[(&str, &str)]) -> String {
    let parts: Vec<String> = pairs
        .iter()
        .filter(|(_, v)| !v.is_empty())
        .map(|(k, v)| format!("{k}={}", encode_query(v)))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("?{}", parts.join("&"))
    }
}

/// The operator table's selection: rows matching the search and state filter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Indices into the model's rows that pass both the search and the state filter.
    pub rows: Vec<usize>,
    /// Rows matching the search, by state (for the chips).
    pub by_state: Vec<(RowState, usize)>,
    /// Rows matching the search, any state.
    pub matched: usize,
}

/// Selects the operator rows for a raw search query and an optional state.
pub fn select_rows(rows: &[Row], raw_query: &str, state: Option<RowState>) -> Selection {
    let query = agent_coord_shared::dashboard::search::parse_query(raw_query);
    let blank = raw_query.trim().is_empty();
    let mut selection = Selection::default();
    let mut counts = [0usize; RowState::ALL.len()];
    for (i, row) in rows.iter().enumerate() {
        if !blank && !agent_coord_shared::dashboard::search::matches(row, &query) {
            continue;
        }
        selection.matched += 1;
        counts[row.state.index()] += 1;
        if state.is_none_or(|s| s == row.state) {
            selection.rows.push(i);
        }
    }
    selection.by_state = RowState::ALL.into_iter().zip(counts).collect();
    selection
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_coord_shared::dashboard::fixtures;

    const NOW: &str = "2026-06-13T12:00:00Z";

    fn now_ms() -> f64 {
        agent_coord_shared::time::parse(NOW)
            .map(|t| t.timestamp_millis() as f64)
            .unwrap_or_default()
    }

    #[test]
    fn ages_use_the_largest_whole_unit() {
        assert_eq!(age(now_ms(), Some("2026-06-13T11:59:30Z")), "30s");
        assert_eq!(age(now_ms(), Some("2026-06-13T11:55:00Z")), "5m");
        assert_eq!(age(now_ms(), Some("2026-06-13T09:00:00Z")), "3h");
        assert_eq!(age(now_ms(), Some("2026-06-10T12:00:00Z")), "3d");
        assert_eq!(age(now_ms(), Some("2026-06-13T12:00:10Z")), "0s");
    }

    #[test]
    fn unknown_ages_are_a_dash() {
        assert_eq!(age(now_ms(), None), "—");
        assert_eq!(age(now_ms(), Some("yesterday")), "—");
    }

    #[test]
    fn blanks_render_as_markers() {
        assert_eq!(or_unknown(Some("  ")), "UNKNOWN");
        assert_eq!(or_unknown(None), "UNKNOWN");
        assert_eq!(or_dash(Some("m1")), "m1");
        assert_eq!(list_or_dash(&[]), "—");
    }

    #[test]
    fn item_paths_need_owner_repo_and_target() {
        assert_eq!(
            item_path("acme/app", "12").as_deref(),
            Some("/items/acme/app/12")
        );
        assert_eq!(item_path("UNKNOWN", "12"), None);
        assert_eq!(item_path("acme/app", ""), None);
        assert_eq!(item_path("a/b/c", "1"), None);
        assert_eq!(batch_path("x y"), "/batches/x%20y");
        assert_eq!(
            subject_batch_path("demo:lane-a").as_deref(),
            Some("/batches/demo")
        );
        assert_eq!(subject_batch_path("acme/app#1"), None);
    }

    #[test]
    fn pages_clamp_to_the_data() {
        assert_eq!(page_count(0, 100), 1);
        assert_eq!(page_count(250, 100), 3);
        assert_eq!(page_range(250, 100, 3), 200..250);
        assert_eq!(page_range(250, 100, 9), 200..250);
        assert_eq!(page_range(0, 100, 1), 0..0);
        assert_eq!(page_number(Some("0")), 1);
        assert_eq!(page_number(Some("x")), 1);
        assert_eq!(page_number(Some("4")), 4);
    }

    #[test]
    fn query_strings_skip_empty_values_and_encode() {
        assert_eq!(query_string(&[("q", ""), ("state", "")]), "");
        assert_eq!(
            query_string(&[("q", "PR #1"), ("state", "dead")]),
            "?q=PR%20%231&state=dead"
        );
    }

    fn row(target: &str, state: RowState) -> Row {
        Row {
            state,
            ..fixtures::row("acme/app", target)
        }
    }

    #[test]
    fn selection_counts_search_matches_by_state_and_filters_by_state() {
        let rows = vec![
            row("1", RowState::Dead),
            row("2", RowState::Running),
            row("12", RowState::Dead),
        ];
        let all = select_rows(&rows, "", None);
        assert_eq!(all.rows, vec![0, 1, 2]);
        assert_eq!(all.matched, 3);
        let dead = select_rows(&rows, "", RowState::parse("dead"));
        assert_eq!(dead.rows, vec![0, 2]);
        let pr = select_rows(&rows, "PR #12", None);
        assert_eq!(pr.rows, vec![2]);
        assert!(pr.by_state.contains(&(RowState::Dead, 1)));
        assert!(pr.by_state.contains(&(RowState::Running, 0)));
        assert_eq!(RowState::parse("bogus"), None);
    }

    #[test]
    fn coordinator_words() {
        assert_eq!(
            subject_item_path("acme/app#7").as_deref(),
            Some("/items/acme/app/7")
        );
        assert_eq!(subject_item_path("b1:lane"), None);
        assert_eq!(subject_item_path("acme#7"), None);
        assert_eq!(blocker_title(TaskState::Uncertain), "Blocker");
        assert_eq!(blocker_title(TaskState::Waiting), "Question or blocker");
        assert_eq!(
            checklist_heading(Some("c0ffee1")),
            "Evidence on head c0ffee1"
        );
        assert_eq!(checklist_heading(None), "Evidence (no head yet)");
        let row = |passed, other: Option<&str>| ChecklistRow {
            key: "ci".into(),
            label: "GitHub CI".into(),
            passed,
            other_head: other.map(str::to_owned),
        };
        assert_eq!(check_state(&row(true, None)), "passed on this head");
        assert!(check_state(&row(false, Some("0dead00"))).contains("another head"));
        assert_eq!(check_state(&row(false, None)), "not passed yet");
    }

    #[test]
    fn tier_filters_default_to_active() {
        assert_eq!(TierFilter::from_key(None), TierFilter::Active);
        assert_eq!(TierFilter::from_key(Some("archive")), TierFilter::Archive);
        assert_eq!(TierFilter::from_key(Some("nope")), TierFilter::Active);
    }
}
