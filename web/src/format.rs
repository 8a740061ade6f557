//! Pure presentation helpers: ages, labels, fallbacks, URL paths, pagination, costs, token
//! counts, durations and the lane timeline's texts.
//!
//! Nothing here touches the browser, so it compiles (and is tested) on every target.

use agent_coord_shared::coordinator::task::TaskState;
use agent_coord_shared::dashboard::model::ChecklistRow;
use agent_coord_shared::dashboard::model::LaneBar;
use agent_coord_shared::dashboard::model::Row;
use agent_coord_shared::dashboard::model::SpendView;

pub use agent_coord_shared::dashboard::view::slice::page_count;
pub use agent_coord_shared::dashboard::view::slice::page_number;
pub use agent_coord_shared::dashboard::view::slice::page_range;
pub use agent_coord_shared::dashboard::view::slice::TierFilter;

pub use agent_coord_shared::dashboard::view::slice::BATCHES_PER_PAGE;
pub use agent_coord_shared::dashboard::view::slice::ROWS_PER_PAGE;

/// What an unknown value renders as.
pub const UNKNOWN: &str = "UNKNOWN";

/// What a missing, not-applicable value renders as.
pub const DASH: &str = "—";

/// The elapsed time from `at` (ISO-8601) to `now_ms` (Unix milliseconds) as `Ns`, `Nm`, `Nh`
/// or `Nd`; `—` when `at` is missing or unreadable.
pub fn age(now_ms: f64, at: Option<&str>) -> String {
    let now = agent_coord_shared::time::from_unix_millis(now_ms as i64);
    match (now, at.and_then(agent_coord_shared::time::parse)) {
        (Some(now), Some(t)) => agent_coord_shared::time::age_label(Some(t), now),
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

/// `url` with `name=value` (encoded) added to its query, unless it already has `name`; any
/// `#fragment` stays last.
pub fn with_query_param(url: &str, name: &str, value: &str) -> String {
    let (base, fragment) = url
        .split_once('#')
        .map_or((url, None), |(b, f)| (b, Some(f)));
    let query = base.split_once('?').map_or("", |(_, q)| q);
    if query
        .split('&')
        .any(|pair| pair.split('=').next() == Some(name))
    {
        return url.to_owned();
    }
    let sep = if base.contains('?') { '&' } else { '?' };
    let mut out = format!("{base}{sep}{name}={}", encode_query(value));
    if let Some(f) = fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

/// `url` without its `name` query parameter (and without a `?` left empty).
pub fn without_query_param(url: &str, name: &str) -> String {
    let Some((path, query)) = url.split_once('?') else {
        return url.to_owned();
    };
    let kept: Vec<&str> = query
        .split('&')
        .filter(|pair| !pair.is_empty() && pair.split('=').next() != Some(name))
        .collect();
    if kept.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{}", kept.join("&"))
    }
}

/// Whether `href` is a page of the dashboard itself (a path on this server, not the API's,
/// not another site's).
pub fn is_dashboard_link(href: &str) -> bool {
    href.starts_with('/') && !href.starts_with("//") && !href.starts_with("/api/")
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
        TaskState::Cancelled => "Cancelled",
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

/// A cost in US dollars (`$0.0123`, `$12.30`), `unknown` without one.
pub fn cost(usd: Option<f64>) -> String {
    match usd {
        Some(v) if v.is_finite() && v.abs() < 1.0 => format!("${v:.4}"),
        Some(v) if v.is_finite() => format!("${v:.2}"),
        _ => "unknown".to_owned(),
    }
}

/// A token count, shortened past a thousand (`950`, `12.3k`, `4.5M`).
pub fn tokens(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// A duration in seconds as minutes and seconds (`45s`, `2m 05s`, `1h 03m`), `—` without one.
pub fn duration(secs: Option<i64>) -> String {
    match secs {
        None => DASH.to_owned(),
        Some(s) if s < 60 => format!("{s}s"),
        Some(s) if s < 3600 => format!("{}m {:02}s", s / 60, s % 60),
        Some(s) => format!("{}h {:02}m", s / 3600, s % 3600 / 60),
    }
}

/// A spend total in one line: runs, tokens, known cost, and how many runs cost unknown.
pub fn spend(s: &SpendView) -> String {
    let runs = if s.runs == 1 { "run" } else { "runs" };
    let mut text = format!(
        "{} lane {runs} · {} tokens · {}",
        s.runs,
        tokens(s.tokens),
        cost(Some(s.cost_usd))
    );
    if s.unpriced_runs > 0 {
        text.push_str(&format!(" (+{} of unknown cost)", s.unpriced_runs));
    }
    text
}

/// A machine on the lane timeline, `unknown machine` when the checkpoint does not tell.
pub fn timeline_machine(machine: Option<&str>) -> String {
    machine.unwrap_or("unknown machine").to_owned()
}

/// A vendor on the lane timeline, `no vendor reported` for lanes that named none (raw argv
/// lanes, and lanes still running).
pub fn timeline_vendor(vendor: Option<&str>) -> String {
    vendor.unwrap_or("no vendor reported").to_owned()
}

/// Lanes running on average, to two decimals (`1.50`).
pub fn lanes_figure(lanes: f64) -> String {
    format!("{lanes:.2}")
}

/// `n` and the noun, singular for one (`1 lane`, `3 lanes`).
pub fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A window of `hours` in words (`1 hour`, `6 hours`, `7 days`).
pub fn window_label(hours: u32) -> String {
    match hours {
        1 => "1 hour".to_owned(),
        h if h >= 48 && h % 24 == 0 => format!("{} days", h / 24),
        h => format!("{h} hours"),
    }
}

/// What hovering a lane's bar says: the task, the lane, its vendor and model, its outcome,
/// and when it ran.
pub fn lane_bar_title(bar: &LaneBar) -> String {
    use agent_coord_shared::serde_name::WireName;
    let vendor = match (&bar.vendor, &bar.model) {
        (Some(v), Some(m)) => format!("{v} / {m}"),
        (Some(v), None) => v.clone(),
        (None, _) => "vendor not reported".to_owned(),
    };
    let until = match &bar.ended_at {
        Some(end) => timestamp(Some(end)),
        None => "now".to_owned(),
    };
    let mut lines = vec![
        format!("{}#{} · {}", bar.repo, bar.issue, bar.task_id),
        format!("{} ({}) · {}", bar.role, bar.slot, bar.phase),
        format!("{vendor} · {}", bar.outcome.wire_name()),
        format!(
            "{} – {until} ({})",
            timestamp(Some(&bar.started_at)),
            duration(Some(bar.duration_secs))
        ),
        format!("on {}", timeline_machine(bar.machine.as_deref())),
    ];
    if bar.taken_over {
        lines.push("its task was taken over by another machine since".to_owned());
    }
    if bar.clock_skew {
        lines.push("clocks disagree: drawn for its measured duration".to_owned());
    }
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_moment_is_added_to_links_once_and_removed_for_now() {
        use super::is_dashboard_link;
        use super::with_query_param as with;
        use super::without_query_param as without;
        let at = "2026-06-13T12:00:00Z";
        assert_eq!(
            with("/batches/b1", "at", at),
            "/batches/b1?at=2026-06-13T12%3A00%3A00Z"
        );
        assert_eq!(
            with("/operator?q=x&page=2", "at", "abc"),
            "/operator?q=x&page=2&at=abc"
        );
        assert_eq!(with("/?at=abc", "at", "def"), "/?at=abc");
        assert_eq!(with("/health#qa", "at", "abc"), "/health?at=abc#qa");
        // A parameter whose name only starts with "at" is another one.
        assert_eq!(with("/x?attr=1", "at", "abc"), "/x?attr=1&at=abc");
        assert_eq!(without("/batches/b1?at=abc", "at"), "/batches/b1");
        assert_eq!(
            without("/operator?q=x&at=abc&page=2", "at"),
            "/operator?q=x&page=2"
        );
        assert_eq!(without("/", "at"), "/");
        assert!(is_dashboard_link("/items/acme/app/7"));
        assert!(!is_dashboard_link("/api/doctor"));
        assert!(!is_dashboard_link("//evil.example/"));
        assert!(!is_dashboard_link("https://github.com/acme/app/pull/7"));
    }

    use super::*;

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
    fn query_strings_skip_empty_values_and_encode() {
        assert_eq!(query_string(&[("q", ""), ("state", "")]), "");
        assert_eq!(
            query_string(&[("q", "PR #1"), ("state", "dead")]),
            "?q=PR%20%231&state=dead"
        );
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
    fn costs_tokens_durations_and_spend_read_short() {
        assert_eq!(cost(Some(0.01234)), "$0.0123");
        assert_eq!(cost(Some(12.3)), "$12.30");
        assert_eq!(cost(None), "unknown");
        assert_eq!(tokens(950), "950");
        assert_eq!(tokens(12_345), "12.3k");
        assert_eq!(tokens(4_500_000), "4.5M");
        assert_eq!(duration(Some(45)), "45s");
        assert_eq!(duration(Some(125)), "2m 05s");
        assert_eq!(duration(Some(3_780)), "1h 03m");
        assert_eq!(duration(None), "—");
        let s = SpendView {
            runs: 3,
            tokens: 1_500,
            cost_usd: 0.5,
            unpriced_runs: 1,
            ..SpendView::default()
        };
        assert_eq!(
            spend(&s),
            "3 lane runs · 1.5k tokens · $0.5000 (+1 of unknown cost)"
        );
    }

    #[test]
    fn the_lane_timeline_reads_in_words() {
        use agent_coord_shared::coordinator::task::Phase;
        use agent_coord_shared::dashboard::model::LaneOutcome;
        assert_eq!(window_label(1), "1 hour");
        assert_eq!(window_label(6), "6 hours");
        assert_eq!(window_label(168), "7 days");
        assert_eq!(lanes_figure(1.5), "1.50");
        assert_eq!(counted(1, "lane", "lanes"), "1 lane");
        assert_eq!(counted(0, "lane", "lanes"), "0 lanes");
        assert_eq!(timeline_machine(None), "unknown machine");
        assert_eq!(timeline_vendor(Some("claude")), "claude");
        let bar = LaneBar {
            machine: Some("box-1".into()),
            slot_row: 0,
            row: 0,
            task_id: "w1-acme-app-7".into(),
            repo: "acme/app".into(),
            issue: 7,
            slot: "grok:implementer".into(),
            role: "implementer".into(),
            phase: Phase::Implement,
            round: Some(1),
            run: Some(1),
            vendor: Some("claude".into()),
            model: Some("claude-sonnet-4-5".into()),
            outcome: LaneOutcome::NoChange,
            started_at: "2026-11-29T09:00:00Z".into(),
            ended_at: Some("2026-11-29T10:00:05Z".into()),
            duration_secs: 3_605,
            offset_secs: 0,
            span_secs: 3_605,
            taken_over: true,
            clock_skew: false,
        };
        assert_eq!(
            lane_bar_title(&bar),
            "acme/app#7 · w1-acme-app-7\nimplementer (grok:implementer) · implement\nclaude / claude-sonnet-4-5 · no-change\n2026-11-29 09:00:00 UTC – 2026-11-29 10:00:05 UTC (1h 00m)\non box-1\nits task was taken over by another machine since"
        );
        let running = LaneBar {
            ended_at: None,
            vendor: None,
            taken_over: false,
            outcome: LaneOutcome::Running,
            ..bar
        };
        assert!(lane_bar_title(&running).contains("vendor not reported · running"));
        assert!(lane_bar_title(&running).contains("– now (1h 00m)"));
    }
}
