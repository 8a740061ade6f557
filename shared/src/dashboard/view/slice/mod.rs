//! Slicing the model for one page, so a browser never downloads the whole fleet.
//!
//! `GET /api/dashboard?view=…` answers a [`DashboardModel`] cut down to what one page shows:
//! the operator table's one page of rows (searched and filtered on the server), the batches
//! board's one page of cards, the overview's first few of each list, machines with a bounded
//! number of agents each, health signals a bounded number per group. The counts the page
//! needs for chips, pagers and "N more" notes travel in [`Slice`]. The headline
//! [`Counts`](crate::dashboard::model::Counts) always describe the whole fleet.

use std::collections::BTreeSet;

use crate::dashboard::model::BatchTier;
use crate::dashboard::model::BatchView;
use crate::dashboard::model::DashboardModel;
use crate::dashboard::model::Row;
use crate::dashboard::model::RowState;
use crate::dashboard::view::row_search;

/// Operator rows per page.
pub const ROWS_PER_PAGE: usize = 100;
/// Batch cards per page.
pub const BATCHES_PER_PAGE: usize = 50;
/// Entries of each overview list.
pub const OVERVIEW_CAP: usize = 10;
/// Agents shown per machine.
pub const AGENTS_PER_MACHINE: usize = 100;
/// Health items shown per group (signal title).
pub const HEALTH_PER_GROUP: usize = 50;
/// Unreadable-record warnings shown.
pub const WARNINGS_CAP: usize = 100;

use crate::dashboard::model::Slice;
use crate::dashboard::model::SpendSummary;

/// Which page a slice is for, with that page's parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum View {
    /// Only the headline counts and recent events (pages with their own detail route).
    Summary,
    /// The overview's lists, the first few of each.
    Overview,
    /// One page of operator rows for a search and an optional state.
    Operator {
        /// The raw search text.
        q: String,
        /// The state filter.
        state: Option<RowState>,
        /// The 1-based page.
        page: usize,
    },
    /// One page of batch cards in a tier.
    Batches {
        /// The tier filter.
        tier: TierFilter,
        /// The 1-based page.
        page: usize,
    },
    /// Machines, with a bounded number of agents each.
    Machines,
    /// Health signals, a bounded number per group, and unreadable records.
    Health,
}

impl View {
    /// Reads a view from query parameters (`view`, `q`, `state`, `tier`, `page`); `None`
    /// when `view` is absent (the whole model) or names no view.
    pub fn from_params<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Option<View> {
        let page = page_number(get("page"));
        Some(match get("view")? {
            "summary" => View::Summary,
            "overview" => View::Overview,
            "operator" => View::Operator {
                q: get("q").unwrap_or_default().to_owned(),
                state: get("state").and_then(RowState::parse),
                page,
            },
            "batches" => View::Batches {
                tier: TierFilter::from_key(get("tier")),
                page,
            },
            "machines" => View::Machines,
            "health" => View::Health,
            _ => return None,
        })
    }

    /// The view's name, as `?view=` spells it.
    pub fn name(&self) -> &'static str {
        match self {
            View::Summary => "summary",
            View::Overview => "overview",
            View::Operator { .. } => "operator",
            View::Batches { .. } => "batches",
            View::Machines => "machines",
            View::Health => "health",
        }
    }

    /// The query string that asks for this view (`view=operator&q=…`), URL-encoded.
    pub fn query(&self) -> String {
        let mut pairs: Vec<(&str, String)> = vec![("view", self.name().to_owned())];
        match self {
            View::Operator { q, state, page } => {
                pairs.push(("q", q.clone()));
                pairs.push((
                    "state",
                    state.map(|s| s.as_str().to_owned()).unwrap_or_default(),
                ));
                pairs.push(("page", page.to_string()));
            }
            View::Batches { tier, page } => {
                pairs.push(("tier", tier.key().to_owned()));
                pairs.push(("page", page.to_string()));
            }
            _ => {}
        }
        pairs
            .into_iter()
            .filter(|(_, v)| !v.is_empty())
            .map(|(k, v)| format!("{k}={}", encode(&v)))
            .collect::<Vec<_>>()
            .join("&")
    }
}

/// Percent-encodes a query value (unreserved characters stay).
fn encode(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for b in value.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The batches board's tier filters.
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

/// The operator table's selection: rows matching the search and state filter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// Indices into the rows that pass both the search and the state filter.
    pub rows: Vec<usize>,
    /// Rows matching the search, by state (for the chips).
    pub by_state: Vec<(RowState, usize)>,
    /// Rows matching the search, any state.
    pub matched: usize,
}

/// Selects the operator rows for a raw search query and an optional state.
pub fn select_rows(rows: &[Row], raw_query: &str, state: Option<RowState>) -> Selection {
    let query = row_search::parse_query(raw_query);
    let blank = raw_query.trim().is_empty();
    let mut selection = Selection::default();
    let mut counts = [0usize; RowState::ALL.len()];
    for (i, row) in rows.iter().enumerate() {
        if !blank && !row_search::matches(row, &query) {
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

/// Returns the model cut down to what `view` shows, with the totals in `slice`.
pub fn slice(model: &DashboardModel, view: &View) -> DashboardModel {
    let mut info = totals(model, view);
    let mut out = always_shown(model);
    match view {
        View::Summary => {}
        View::Overview => overview(model, &mut out),
        View::Operator { q, state, page } => operator(model, q, *state, *page, &mut info, &mut out),
        View::Batches { tier, page } => batches(model, *tier, *page, &mut info, &mut out),
        View::Machines => machines(model, &mut info, &mut out),
        View::Health => health(model, &mut info, &mut out),
    }
    out.slice = Some(info);
    out
}

/// The totals every view carries, before any is cut (page 1 of 1 until a paged view says
/// otherwise).
fn totals(model: &DashboardModel, view: &View) -> Slice {
    Slice {
        view: view.name().to_owned(),
        query: view.query(),
        page: 1,
        pages: 1,
        rows_total: model.rows.len(),
        batches_total: model.batches.len(),
        attention_total: model.attention.len(),
        active_work: model.rows.iter().filter(|r| r.is_active_work()).count(),
        recoverable: model.rows.iter().filter(|r| r.is_recoverable()).count(),
        batch_repairs: model
            .batches
            .iter()
            .filter(|b| !b.repairs.is_empty())
            .count(),
        qa_gaps: model.qa.iter().filter(|q| q.status.is_gap()).count(),
        warnings_total: model.warnings.len(),
        ..Slice::default()
    }
}

/// What every view keeps of the model: version, counts, recent events, notices, the
/// operators' holds and the first warnings.
fn always_shown(model: &DashboardModel) -> DashboardModel {
    DashboardModel {
        version: model.version.clone(),
        generated_at: model.generated_at.clone(),
        counts: model.counts.clone(),
        recent_events: model.recent_events.clone(),
        setup: model.setup.clone(),
        source_status: model.source_status.clone(),
        notices: model.notices.clone(),
        target_repos: model.target_repos.clone(),
        // Small, and the item page's actions and the snooze timer read them.
        annotations: model.annotations.clone(),
        // Small, and every view's top bar shows them.
        holds: model.holds.clone(),
        past: model.past.clone(),
        restored: model.restored.clone(),
        warnings: model.warnings.iter().take(WARNINGS_CAP).cloned().collect(),
        ..DashboardModel::default()
    }
}

/// The operator table: one page of the rows the search and state select.
fn operator(
    model: &DashboardModel,
    q: &str,
    state: Option<RowState>,
    page: usize,
    info: &mut Slice,
    out: &mut DashboardModel,
) {
    let sel = select_rows(&model.rows, q, state);
    let range = page_range(sel.rows.len(), ROWS_PER_PAGE, page);
    info.page = page.clamp(1, page_count(sel.rows.len(), ROWS_PER_PAGE));
    info.pages = page_count(sel.rows.len(), ROWS_PER_PAGE);
    info.first = range.start;
    info.selected = sel.rows.len();
    info.matched = sel.matched;
    info.rows_by_state = sel.by_state;
    out.rows = sel.rows[range]
        .iter()
        .filter_map(|i| model.rows.get(*i).cloned())
        .collect();
}

/// The batches board: one page of the batches in the tier, and every tier's count.
fn batches(
    model: &DashboardModel,
    tier: TierFilter,
    page: usize,
    info: &mut Slice,
    out: &mut DashboardModel,
) {
    info.batches_by_tier = TierFilter::ALL
        .into_iter()
        .map(|f| {
            let n = model.batches.iter().filter(|b| f.admits(b)).count();
            (f.key().to_owned(), n)
        })
        .collect();
    let shown: Vec<&BatchView> = model.batches.iter().filter(|b| tier.admits(b)).collect();
    let range = page_range(shown.len(), BATCHES_PER_PAGE, page);
    info.page = page.clamp(1, page_count(shown.len(), BATCHES_PER_PAGE));
    info.pages = page_count(shown.len(), BATCHES_PER_PAGE);
    info.first = range.start;
    info.selected = shown.len();
    out.batches = shown[range].iter().map(|b| (*b).clone()).collect();
}

/// Machines, each with its first agents, and the rows those agents work on.
fn machines(model: &DashboardModel, info: &mut Slice, out: &mut DashboardModel) {
    let mut wanted = BTreeSet::new();
    for machine in &model.machines {
        info.agents_by_machine
            .push((machine.id.clone(), machine.agents.len()));
        let mut m = machine.clone();
        m.agents.truncate(AGENTS_PER_MACHINE);
        wanted.extend(m.agents.iter().filter_map(|a| a.work_row.clone()));
        out.machines.push(m);
    }
    out.rows = rows_with_ids(model, &wanted);
}

/// Health items, the first few per title, and every title's count.
fn health(model: &DashboardModel, info: &mut Slice, out: &mut DashboardModel) {
    for item in &model.health {
        match info
            .health_by_title
            .iter_mut()
            .find(|(t, _)| *t == item.title)
        {
            Some((_, n)) => {
                *n += 1;
                if *n <= HEALTH_PER_GROUP {
                    out.health.push(item.clone());
                }
            }
            None => {
                info.health_by_title.push((item.title.clone(), 1));
                out.health.push(item.clone());
            }
        }
    }
}

/// The overview: the first few attention items, active and recoverable rows, batches in
/// need of repair and QA gaps, with the rows the attention items point at.
fn overview(model: &DashboardModel, out: &mut DashboardModel) {
    // The lane spend: the total, the costliest batches and workers, and the day chart.
    out.spend = SpendSummary {
        total: model.spend.total.clone(),
        batches: model
            .spend
            .batches
            .iter()
            .take(OVERVIEW_CAP)
            .cloned()
            .collect(),
        workers: model
            .spend
            .workers
            .iter()
            .take(OVERVIEW_CAP)
            .cloned()
            .collect(),
        days: model.spend.days.clone(),
    };
    out.attention = model.attention.iter().take(OVERVIEW_CAP).cloned().collect();
    let mut wanted: BTreeSet<String> = out.attention.iter().map(|a| a.row_id.clone()).collect();
    wanted.extend(
        model
            .rows
            .iter()
            .filter(|r| r.is_active_work())
            .take(OVERVIEW_CAP)
            .map(|r| r.id.clone()),
    );
    wanted.extend(
        model
            .rows
            .iter()
            .filter(|r| r.is_recoverable())
            .take(OVERVIEW_CAP)
            .map(|r| r.id.clone()),
    );
    out.rows = rows_with_ids(model, &wanted);
    out.batches = model
        .batches
        .iter()
        .filter(|b| !b.repairs.is_empty())
        .take(OVERVIEW_CAP)
        .cloned()
        .collect();
    out.qa = model
        .qa
        .iter()
        .filter(|q| q.status.is_gap())
        .take(OVERVIEW_CAP)
        .cloned()
        .collect();
}

/// The model's rows whose id is in `ids`, in model order.
fn rows_with_ids(model: &DashboardModel, ids: &BTreeSet<String>) -> Vec<Row> {
    model
        .rows
        .iter()
        .filter(|r| ids.contains(&r.id))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests;
