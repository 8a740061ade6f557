//! Operator rows: one per work item — its state, scheduling, provenance, QA records,
//! attention and warnings (reference §1.2–§1.6, §3) — and one per lane no item backs.

use std::collections::BTreeSet;

use super::event_index::Control;
use super::github_rules;
use super::items::Item;
use super::rules;
use super::rules::RowFacts;
use super::sources::BatchSrc;
use super::sources::LaneSrc;
use super::words;
use crate::dashboard::inputs::records::EventIn;
use crate::dashboard::inputs::records::HeartbeatIn;
use crate::dashboard::inputs::records::Meta;
use crate::dashboard::model::AttentionKind;
use crate::dashboard::model::ControlStatus;
use crate::dashboard::model::LivenessView;
use crate::dashboard::model::QaItem;
use crate::dashboard::model::QaStatus;
use crate::dashboard::model::Row;
use crate::dashboard::model::RowState;
use crate::dashboard::model::Scheduling;
use crate::rules::liveness::Liveness;
use crate::time;
use crate::time::Instant;

/// Rows and the QA records derived with them.
#[derive(Debug, Default)]
pub(crate) struct RowSet {
    pub(crate) rows: Vec<Row>,
    pub(crate) qa: Vec<QaItem>,
}

impl RowSet {
    /// Adds the row of one work item and its QA records.
    pub(crate) fn push_item(
        &mut self,
        repo: &str,
        target: &str,
        item: &Item<'_>,
        srcs: &[BatchSrc],
        controls: &[Control],
        now: Instant,
    ) {
        let (row, mut qa) = item_row(repo, target, item, srcs, controls, now);
        self.rows.push(row);
        self.qa.append(&mut qa);
    }

    /// Adds the row of a lane that no work item backs.
    pub(crate) fn push_lane(
        &mut self,
        srcs: &[BatchSrc],
        (bi, li): (usize, usize),
        controls: &[Control],
        now: Instant,
    ) {
        let b = &srcs[bi];
        self.rows
            .push(lane_row(b, &b.lanes[li], controls[bi].status, now));
    }

    /// Sorts rows by state, repo, target and id, and QA records by repo, target and id.
    pub(crate) fn sorted(mut self) -> Self {
        self.rows.sort_by(row_order);
        self.qa.sort_by(qa_order);
        self
    }

    /// Merges `fresh` into these sorted rows and QA records, as [`RowSet::sorted`] would
    /// order them all, moving only the rows after the first place a fresh one goes (rows
    /// are large: sorting them all again moved every one through a scratch copy).
    pub(crate) fn merged(mut self, fresh: RowSet) -> Self {
        let RowSet { mut rows, qa } = fresh;
        rows.sort_by(row_order);
        let kept = self.rows.len();
        self.rows.resize_with(kept + rows.len(), blank_row);
        let (mut a, mut at) = (kept, self.rows.len());
        while let Some(row) = rows.pop() {
            // The larger of the last kept row not yet placed and `row` goes at `at - 1`.
            loop {
                at -= 1;
                if a > 0 && row_order(&self.rows[a - 1], &row) == std::cmp::Ordering::Greater {
                    self.rows.swap(a - 1, at);
                    a -= 1;
                } else {
                    self.rows[at] = row;
                    break;
                }
            }
        }
        self.qa.extend(qa);
        self.qa.sort_by(qa_order);
        self
    }
}

/// Rows by state, repo, target (numbers by value) and id: a total order (ids are unique).
fn row_order(a: &Row, b: &Row) -> std::cmp::Ordering {
    a.state
        .cmp(&b.state)
        .then_with(|| a.repo.cmp(&b.repo))
        .then_with(|| numeric_key(&a.target).cmp(&numeric_key(&b.target)))
        .then_with(|| a.id.cmp(&b.id))
}

/// QA records by repo, target (numbers by value) and id.
fn qa_order(a: &QaItem, b: &QaItem) -> std::cmp::Ordering {
    (a.repo.as_str(), numeric_key(&a.target), a.id.as_str()).cmp(&(
        b.repo.as_str(),
        numeric_key(&b.target),
        b.id.as_str(),
    ))
}

/// A row that holds a place while [`RowSet::merged`] moves rows; never left in a model.
fn blank_row() -> Row {
    Row {
        id: String::new(),
        repo: String::new(),
        target: String::new(),
        kind: String::new(),
        title: None,
        state: RowState::Blocked,
        scheduling: Scheduling::InProcess,
        liveness: None,
        agent: None,
        machine: None,
        host: None,
        thread: None,
        operator: None,
        branch: None,
        pr_url: None,
        batch_id: None,
        lane: None,
        status: None,
        blocked_on: Vec::new(),
        attention: None,
        last_activity: None,
        message: None,
        qa: None,
        warnings: Vec::new(),
        github: None,
    }
}

/// One item with the records that speak for it, looked up once.
struct Subject<'s, 'a> {
    repo: &'s str,
    target: &'s str,
    item: &'s Item<'a>,
    srcs: &'s [BatchSrc],
    hb: Option<&'a HeartbeatIn>,
    liveness: Option<Liveness>,
    first_signal: Option<(&'s BatchSrc, &'s LaneSrc)>,
}

/// Who works on an item, where, and with what.
struct Provenance {
    agent: Option<String>,
    machine: Option<String>,
    host: Option<String>,
    thread: Option<String>,
    operator: Option<String>,
    branch: Option<String>,
    pr_url: Option<String>,
}

fn item_row(
    repo: &str,
    target: &str,
    item: &Item<'_>,
    srcs: &[BatchSrc],
    controls: &[Control],
    now: Instant,
) -> (Row, Vec<QaItem>) {
    let hb = item.chosen_heartbeat(now);
    let s = Subject {
        repo,
        target,
        item,
        srcs,
        hb,
        liveness: hb.map(|h| h.liveness(now)),
        first_signal: item.first_signal(srcs),
    };
    let latest_non_qa = item.newest(|e| !rules::is_qa_type(&e.kind));
    let (current_at, current_status) = s.current_status(latest_non_qa);
    let blocked_on = s.blocked_on();
    let state = s.telemetry_state(latest_non_qa, current_status.as_deref(), &blocked_on, now);
    let scheduling = s.scheduling();
    let who = s.provenance();
    let gh = s.github(&who, state, current_at, current_status.as_deref());
    let state = gh.as_ref().map_or(state, |g| g.state);
    let (kind, title) = s.kind_and_title(gh.as_ref());
    let state = s.archived_or(state, &kind, &who, gh.as_ref(), now);
    // QA: one record per batch signal, else one for the item.
    let qas = if kind == "pull_request" && !state.is_terminal() && !item.github_only {
        s.qa_items()
    } else {
        Vec::new()
    };
    let attention = s.attention(state, controls, current_status.as_deref(), &qas);
    // Coordination warnings are cleared once the item is terminal.
    let warnings = if state.is_terminal() {
        Vec::new()
    } else {
        s.warnings(state, scheduling, &kind, &who)
    };
    let row = Row {
        id: format!("target:{repo}#{target}"),
        repo: repo.to_owned(),
        target: target.to_owned(),
        kind,
        title,
        state,
        scheduling,
        liveness: s.liveness.map(|l| LivenessView::of(Some(l))),
        agent: who.agent,
        machine: who.machine,
        host: who.host,
        thread: who.thread,
        operator: who.operator,
        branch: who.branch,
        pr_url: who.pr_url,
        batch_id: s
            .first_signal
            .map(|(b, _)| b.id.clone())
            .or_else(|| item.claim.and_then(|c| c.batch_id.clone()))
            .or_else(|| hb.and_then(|h| h.batch_id.clone())),
        lane: s.first_signal.map(|(_, l)| l.name.clone()),
        status: current_status,
        blocked_on,
        attention,
        last_activity: fmt(s
            .last_activity()
            .max(gh.as_ref().and_then(|g| g.applied).and_then(|c| c.at))),
        message: item.newest_with(|e| e.message.clone()),
        qa: qas.first().map(|q| q.status),
        warnings,
        github: gh.and_then(|g| g.view),
    };
    (row, qas)
}

impl Subject<'_, '_> {
    /// The row state the coordination records alone give (before GitHub and the archive).
    fn telemetry_state(
        &self,
        latest_non_qa: Option<&EventIn>,
        current_status: Option<&str>,
        blocked_on: &[String],
        now: Instant,
    ) -> RowState {
        rules::row_state(&RowFacts {
            heartbeat_status: self.hb.map(|h| h.status.as_str()),
            liveness: self.liveness,
            claim_active: self.item.claim.is_some_and(|c| c.status == "active"),
            lane_status: self.first_signal.map(|(_, l)| l.status.as_str()),
            lane_terminal_current: self.lane_terminal_current(),
            current_status,
            blocked_on: !blocked_on.is_empty(),
            progress_at: latest_non_qa
                .and_then(|e| e.at)
                .or_else(|| self.hb.and_then(|h| h.updated_at)),
            now,
        })
    }

    /// GitHub's facts, when it answered: a completion that stands, a ready unclaimed item.
    fn github(
        &self,
        who: &Provenance,
        state: RowState,
        current_at: Option<Instant>,
        current_status: Option<&str>,
    ) -> Option<github_rules::RowDecision> {
        self.item.github.map(|facts| {
            let link = github_rules::link(
                facts,
                self.repo,
                self.target,
                who.branch.as_deref(),
                who.pr_url.as_deref(),
            );
            let newest = current_at.map(|at| github_rules::Newest {
                at,
                terminal: current_status.and_then(words::terminal).is_some(),
            });
            github_rules::decide(&link, state, newest, self.item.github_only)
        })
    }

    /// The item's kind and title: its batches' first, else GitHub's.
    fn kind_and_title(&self, gh: Option<&github_rules::RowDecision>) -> (String, Option<String>) {
        let (kind, title) = self
            .item
            .signals
            .iter()
            .find_map(|(b, _)| self.srcs[*b].kind_of(self.target))
            .unwrap_or_else(|| ("unknown".into(), None));
        let kind = match gh.and_then(|g| g.kind.clone()) {
            Some(k) if kind == "unknown" => k,
            _ => kind,
        };
        let title = title.or_else(|| gh.and_then(|g| g.title.clone()));
        (kind, title)
    }

    /// `state`, or archived when the item sits idle in the archive window.
    fn archived_or(
        &self,
        state: RowState,
        kind: &str,
        who: &Provenance,
        gh: Option<&github_rules::RowDecision>,
        now: Instant,
    ) -> RowState {
        let open_pr = github_rules::possible_open_pr(
            kind,
            who.pr_url.is_some(),
            gh.and_then(|g| g.view.as_ref()),
        );
        if rules::archives(state, self.liveness, self.last_activity(), open_pr, now) {
            RowState::Archived
        } else {
            state
        }
    }
}

impl Subject<'_, '_> {
    /// The newest timestamped lifecycle status among heartbeat, claim, lanes and the latest
    /// non-QA event (a terminal status wins a tie), else the first one.
    fn current_status(&self, latest_non_qa: Option<&EventIn>) -> (Option<Instant>, Option<String>) {
        let mut candidates: Vec<(Option<Instant>, &str)> = Vec::new();
        if let Some(h) = self.hb {
            candidates.push((h.updated_at, &h.status));
        }
        if let Some(c) = self.item.claim {
            candidates.push((c.updated_at, &c.status));
        }
        for (b, l) in &self.item.signals {
            candidates.push((self.srcs[*b].updated_at, &self.srcs[*b].lanes[*l].status));
        }
        if let Some(e) = latest_non_qa {
            candidates.push((e.at, e.status_or_type()));
        }
        candidates
            .iter()
            .filter(|c| c.0.is_some())
            .max_by(|a, b| {
                a.0.cmp(&b.0).then_with(|| {
                    words::terminal(a.1)
                        .is_some()
                        .cmp(&words::terminal(b.1).is_some())
                })
            })
            .or_else(|| candidates.first())
            .map_or((None, None), |c| (c.0, Some(c.1.to_owned())))
    }

    /// Every unfinished dependency of the lanes scheduling the item, sorted.
    fn blocked_on(&self) -> Vec<String> {
        self.item
            .signals
            .iter()
            .flat_map(|(b, l)| self.srcs[*b].lanes[*l].blocked_on.iter().cloned())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect()
    }

    /// The first lane is terminal and its manifest is no older than the heartbeat.
    fn lane_terminal_current(&self) -> bool {
        self.first_signal.is_some_and(|(b, l)| {
            l.terminal() && self.hb.is_none_or(|h| b.updated_at >= h.updated_at)
        })
    }

    fn scheduling(&self) -> Scheduling {
        let item = self.item;
        match self.liveness {
            Some(Liveness::Live | Liveness::Stale) => Scheduling::InProcess,
            _ if item.claim.is_some()
                || self.hb.is_some()
                || !item.signals.is_empty()
                || !item.events.is_empty() =>
            {
                Scheduling::StartedNotProcessing
            }
            _ => Scheduling::ReadyForBatch,
        }
    }

    /// A metadata field: claim, heartbeat, first lane, then the newest event that has it.
    fn meta(&self, f: fn(&Meta) -> &Option<String>) -> Option<String> {
        [
            self.item.claim.map(|c| &c.meta),
            self.hb.map(|h| &h.meta),
            self.first_signal.map(|(_, l)| &l.meta),
        ]
        .into_iter()
        .flatten()
        .find_map(|m| f(m).clone())
        .or_else(|| self.item.newest_with(|e| f(&e.meta).clone()))
    }

    fn provenance(&self) -> Provenance {
        let item = self.item;
        Provenance {
            agent: item
                .claim
                .map(|c| c.agent.clone())
                .or_else(|| self.hb.map(|h| h.agent.clone()))
                .or_else(|| self.first_signal.and_then(|(_, l)| l.owner.clone()))
                .or_else(|| item.newest_with(|e| e.agent.clone())),
            // The machine never comes from a lane.
            machine: self
                .hb
                .and_then(|h| h.meta.machine.clone())
                .or_else(|| item.claim.and_then(|c| c.meta.machine.clone()))
                .or_else(|| item.newest_with(|e| e.meta.machine.clone())),
            host: self.meta(|m| &m.host),
            thread: self.meta(|m| &m.thread),
            operator: self.meta(|m| &m.operator),
            branch: self.meta(|m| &m.branch),
            pr_url: self.meta(|m| &m.pr_url),
        }
    }

    fn last_activity(&self) -> Option<Instant> {
        [
            self.hb.and_then(|h| h.updated_at),
            self.item.claim.and_then(|c| c.updated_at),
            self.item.events.last().and_then(|e| e.at),
        ]
        .into_iter()
        .flatten()
        .chain(
            self.item
                .signals
                .iter()
                .filter_map(|(b, _)| self.srcs[*b].updated_at),
        )
        .max()
    }

    /// One QA record per batch lane scheduling the item, else one for the item.
    fn qa_items(&self) -> Vec<QaItem> {
        let (repo, target) = (self.repo, self.target);
        let scopes: Vec<Option<(&str, &str)>> = if self.item.signals.is_empty() {
            vec![None]
        } else {
            self.item
                .signals
                .iter()
                .map(|(b, l)| {
                    let b = &self.srcs[*b];
                    Some((b.id.as_str(), b.lanes[*l].name.as_str()))
                })
                .collect()
        };
        scopes
            .into_iter()
            .map(|scope| {
                let latest = self.item.newest(|e| {
                    rules::is_qa_type(&e.kind)
                        && scope.is_none_or(|(b, _)| e.batch_id.as_deref() == Some(b))
                });
                let status = rules::qa_status(latest);
                let at = latest.and_then(|e| e.at.map(time::format).or_else(|| e.at_raw.clone()));
                QaItem {
                    id: match scope {
                        Some((b, l)) => format!("{repo}#{target}:{b}:{l}"),
                        None => format!("{repo}#{target}"),
                    },
                    repo: repo.to_owned(),
                    target: target.to_owned(),
                    batch_id: scope.map(|s| s.0.to_owned()),
                    lane: scope.map(|s| s.1.to_owned()),
                    status,
                    detail: rules::qa_detail(status, at.as_deref()),
                    at,
                }
            })
            .collect()
    }

    /// The strongest stop control among the item's batches.
    fn control(&self, controls: &[Control]) -> ControlStatus {
        self.item
            .signals
            .iter()
            .map(|(b, _)| controls[*b].status)
            .min_by_key(|c| match c {
                ControlStatus::Stopped => 0,
                ControlStatus::StopRequested => 1,
                ControlStatus::Running => 2,
            })
            .unwrap_or(ControlStatus::Running)
    }

    /// Attention, first match wins (reference §1.5).
    fn attention(
        &self,
        state: RowState,
        controls: &[Control],
        current_status: Option<&str>,
        qas: &[QaItem],
    ) -> Option<AttentionKind> {
        if state.is_terminal() {
            return None;
        }
        let status_text = [
            self.hb.map(|h| h.status.as_str()),
            self.first_signal.map(|(_, l)| l.status.as_str()),
            current_status,
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
        let ready_for_qa = words::has_qa_token(&status_text, "qa");
        let control = self.control(controls);
        if control == ControlStatus::Stopped {
            Some(AttentionKind::BatchStopped)
        } else if control == ControlStatus::StopRequested {
            Some(AttentionKind::BatchStopRequested)
        } else if words::is_user_input(&status_text) {
            Some(AttentionKind::BlockedUserInput)
        } else if qas.iter().any(|q| {
            q.status == QaStatus::Failed || (q.status == QaStatus::Missing && ready_for_qa)
        }) {
            Some(AttentionKind::QaMissing)
        } else if self.liveness == Some(Liveness::Dead) {
            Some(AttentionKind::DeadHolder)
        } else if state == RowState::Wedged {
            Some(AttentionKind::Wedged)
        } else {
            None
        }
    }

    /// Coordination warnings of an item that is not done.
    fn warnings(
        &self,
        state: RowState,
        scheduling: Scheduling,
        kind: &str,
        who: &Provenance,
    ) -> Vec<String> {
        let item = self.item;
        let mut warnings = Vec::new();
        if let Some(elsewhere) = item
            .holder_beat
            .and_then(|h| points_elsewhere(h, self.repo, self.target))
        {
            warnings.push(format!(
                "Claim holder heartbeat currently points at {elsewhere}."
            ));
        }
        if let (Some(c), Some(h)) = (item.claim, self.hb) {
            if h.agent != c.agent {
                warnings.push(format!(
                    "Work has a heartbeat from {} but the claim is held by {}.",
                    h.agent, c.agent
                ));
            }
        }
        if item.heartbeats.len() > 1 {
            warnings.push(format!(
                "Work has {} heartbeat records for the same target.",
                item.heartbeats.len()
            ));
        }
        for (b, l) in &item.signals {
            let lane = &self.srcs[*b].lanes[*l];
            warnings.extend(lane_mismatch(&self.srcs[*b], lane));
            if !lane.blocked_on.is_empty() {
                warnings.push(format!(
                    "batch {}:{} is blocked on {}.",
                    self.srcs[*b].id,
                    lane.name,
                    lane.blocked_on.join(", ")
                ));
            }
        }
        if scheduling == Scheduling::StartedNotProcessing && state != RowState::Ready {
            warnings.push("Work was started but the holder is not currently live or stale.".into());
        } else if item.claim.is_some() && self.hb.is_none() {
            warnings.push("Active claim has no matching heartbeat.".into());
        }
        if state.is_active() && scheduling == Scheduling::InProcess {
            for (name, v) in [
                ("Operator", &who.operator),
                ("Thread", &who.thread),
                ("Host", &who.host),
                ("Machine", &who.machine),
            ] {
                if v.is_none() {
                    warnings.push(format!("{name} UNKNOWN"));
                }
            }
            if kind == "pull_request" && who.pr_url.is_none() {
                warnings.push("PR URL UNKNOWN".into());
            }
        }
        warnings
    }
}

/// The row of a lane no work item backs: its target's repository is not known.
fn lane_row(b: &BatchSrc, lane: &LaneSrc, control: ControlStatus, now: Instant) -> Row {
    let state = rules::row_state(&RowFacts {
        heartbeat_status: lane.liveness.map(|_| lane.status.as_str()),
        liveness: lane.liveness,
        claim_active: false,
        lane_status: Some(&lane.status),
        lane_terminal_current: lane.terminal(),
        current_status: Some(&lane.status),
        blocked_on: !lane.blocked_on.is_empty(),
        progress_at: None,
        now,
    });
    let attention = match (state, control) {
        (RowState::Done | RowState::Archived, _) => None,
        (_, ControlStatus::Stopped) => Some(AttentionKind::BatchStopped),
        (_, ControlStatus::StopRequested) => Some(AttentionKind::BatchStopRequested),
        (RowState::Dead, _) if lane.liveness == Some(Liveness::Dead) => {
            Some(AttentionKind::DeadHolder)
        }
        _ => None,
    };
    let warnings = lane
        .targets
        .first()
        .map(|t| {
            format!(
                "Target repository UNKNOWN: lane target #{t} has no explicit repository evidence."
            )
        })
        .into_iter()
        .chain(lane_mismatch(b, lane))
        .collect();
    Row {
        id: format!("lane:{}:{}", b.id, lane.name),
        repo: "UNKNOWN".into(),
        target: lane.targets.first().cloned().unwrap_or_default(),
        kind: "unknown".into(),
        title: None,
        state,
        scheduling: Scheduling::StartedNotProcessing,
        liveness: lane.liveness.map(|l| LivenessView::of(Some(l))),
        agent: lane.owner.clone(),
        machine: lane.meta.machine.clone(),
        host: lane.meta.host.clone(),
        thread: lane.meta.thread.clone(),
        operator: lane.meta.operator.clone(),
        branch: lane.meta.branch.clone(),
        pr_url: lane.meta.pr_url.clone(),
        batch_id: Some(b.id.clone()),
        lane: Some(lane.name.clone()),
        status: Some(lane.status.clone()),
        blocked_on: lane.blocked_on.clone(),
        attention,
        last_activity: fmt(b.updated_at),
        message: None,
        qa: None,
        warnings,
        github: None,
    }
}

/// `owner/repo#N` of a heartbeat that reports other work than `repo#target`.
fn points_elsewhere(h: &HeartbeatIn, repo: &str, target: &str) -> Option<String> {
    match (h.repo.as_deref(), h.target.as_deref()) {
        (Some(r), Some(t)) if (r, t) != (repo, target) => Some(format!("{r}#{t}")),
        _ => None,
    }
}

/// The warning of a lane whose owner's heartbeat points at other work (reference §2.2).
fn lane_mismatch(b: &BatchSrc, lane: &LaneSrc) -> Option<String> {
    lane.mismatch.as_ref().map(|work| {
        format!(
            "Lane {}:{} owner heartbeat points at {work} and was not applied.",
            b.id, lane.name
        )
    })
}

/// Sorts targets numerically when they are numbers, after them by text.
pub(crate) fn numeric_key(target: &str) -> (u8, u64, String) {
    match target.parse::<u64>() {
        Ok(n) => (0, n, String::new()),
        Err(_) => (1, 0, target.to_owned()),
    }
}

/// Formats an optional instant the way the model writes times.
pub(crate) fn fmt(t: Option<Instant>) -> Option<String> {
    t.map(time::format)
}
