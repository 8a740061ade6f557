//! The pure per-record rules: row state precedence, wedged, QA status, stop control,
//! lane state, machine inference. [`super::build`] applies them to the whole state.

use chrono::Duration;

use crate::dashboard::derive::words;
use crate::dashboard::derive::words::Terminal;
use crate::dashboard::inputs::records::EventIn;
use crate::dashboard::model::ControlStatus;
use crate::dashboard::model::QaStatus;
use crate::dashboard::model::RowState;
use crate::rules::liveness::Liveness;
use crate::rules::vocab;
use crate::time::Instant;

/// A live holder with no non-QA transition for this long is wedged.
pub const WEDGED_AFTER_MINUTES: i64 = 15;

/// What the row state is decided from.
#[derive(Debug, Clone, Copy)]
pub struct RowFacts<'a> {
    /// The chosen heartbeat's status.
    pub heartbeat_status: Option<&'a str>,
    /// The chosen heartbeat's liveness; `None` without a heartbeat.
    pub liveness: Option<Liveness>,
    /// An active claim exists.
    pub claim_active: bool,
    /// The (heartbeat-overridden) status of the first lane scheduling the item.
    pub lane_status: Option<&'a str>,
    /// That lane is terminal and its manifest is no older than the heartbeat.
    pub lane_terminal_current: bool,
    /// The newest timestamped lifecycle status (heartbeat, claim, lane or event).
    pub current_status: Option<&'a str>,
    /// Some dependency is unfinished.
    pub blocked_on: bool,
    /// The latest non-QA event time, else the heartbeat's `updated_at`.
    pub progress_at: Option<Instant>,
    /// The clock.
    pub now: Instant,
}

/// How long terminal work, or a dead holder's, stays in view before it moves to history.
pub const ARCHIVE_AFTER_HOURS: i64 = 24;

/// Reports whether a row in `state` moves to history (reference §1.3 "Archive window"):
/// terminal work idle for over [`ARCHIVE_AFTER_HOURS`], or work whose holder's heartbeat is
/// dead, idle as long, with no pull request that may still be open. Unknown activity never
/// archives.
pub fn archives(
    state: RowState,
    liveness: Option<Liveness>,
    last_activity: Option<Instant>,
    possible_open_pr: bool,
    now: Instant,
) -> bool {
    let idle = last_activity.is_some_and(|t| now - t > Duration::hours(ARCHIVE_AFTER_HOURS));
    match state {
        RowState::Done => idle,
        RowState::Archived => true,
        _ => idle && liveness == Some(Liveness::Dead) && !possible_open_pr,
    }
}

/// Decides a row's state (reference §1.4 precedence; QA events never count as progress).
pub fn row_state(f: &RowFacts<'_>) -> RowState {
    let current_text = [f.heartbeat_status, f.lane_status, f.current_status]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase();
    let current = f.current_status.and_then(words::terminal);
    let completion = current == Some(Terminal::Completion) || f.lane_terminal_current;
    if words::is_paused(&current_text) && !completion {
        return RowState::Paused;
    }
    if completion {
        return RowState::Done;
    }
    if f.blocked_on || words::is_blocked(&current_text) {
        return RowState::Blocked;
    }
    if current == Some(Terminal::Release) {
        return RowState::Done;
    }
    match f.liveness {
        Some(Liveness::Dead) => return RowState::Dead,
        Some(Liveness::Stale) => return RowState::Stale,
        Some(Liveness::Live) => {
            return if is_wedged(f.progress_at, f.now) {
                RowState::Wedged
            } else {
                RowState::Running
            }
        }
        Some(Liveness::Unknown) | None => {}
    }
    let lane = f.lane_status.unwrap_or_default().to_lowercase();
    let ready_signal = words::is_ready(&lane);
    if ready_signal && !f.claim_active && f.liveness.is_none() {
        return RowState::Ready;
    }
    if f.liveness.is_none() && words::is_active_lane(&lane) {
        return RowState::Dead;
    }
    if f.claim_active && f.liveness.is_none() {
        return RowState::Dead;
    }
    if f.liveness.is_some() {
        return RowState::Unknown;
    }
    if ready_signal {
        return RowState::Ready;
    }
    RowState::Unknown
}

/// Reports whether progress last happened at least [`WEDGED_AFTER_MINUTES`] ago (an
/// unknown time counts as wedged: a live holder with no recorded progress at all).
pub fn is_wedged(progress_at: Option<Instant>, now: Instant) -> bool {
    progress_at.is_none_or(|t| now - t >= Duration::minutes(WEDGED_AFTER_MINUTES))
}

/// Reports whether an event type is a QA/validation event.
pub fn is_qa_type(kind: &str) -> bool {
    let k = kind.to_lowercase();
    k == "qa"
        || k == "validation"
        || [
            "qa.",
            "qa_",
            "qa-",
            "validation.",
            "validation_",
            "validation-",
        ]
        .iter()
        .any(|p| k.starts_with(p))
}

const QA_GROUPS: [(QaStatus, &[&str]); 4] = [
    (QaStatus::Failed, &vocab::QA_FAILED),
    (QaStatus::Passed, &vocab::QA_PASSED),
    (QaStatus::InProgress, &vocab::QA_IN_PROGRESS),
    (QaStatus::Requested, &vocab::QA_REQUESTED),
];

/// The QA status a latest QA event says (reference §3).
pub fn qa_status(latest: Option<&EventIn>) -> QaStatus {
    let Some(e) = latest else {
        return QaStatus::Missing;
    };
    let structured =
        format!("{} {}", e.kind, e.status.as_deref().unwrap_or_default()).to_lowercase();
    for (status, tokens) in QA_GROUPS {
        if tokens.iter().any(|t| words::has_qa_token(&structured, t)) {
            return status;
        }
    }
    let broad = format!("{structured} {}", e.message.as_deref().unwrap_or_default()).to_lowercase();
    for (status, tokens) in QA_GROUPS {
        if words::has_any_word(&broad, tokens) {
            return status;
        }
    }
    QaStatus::Unknown
}

/// The UI sentence for a QA status.
pub fn qa_detail(status: QaStatus, at: Option<&str>) -> String {
    let suffix = at.map(|t| format!(" at {t}")).unwrap_or_default();
    match status {
        QaStatus::Missing => "No separate QA validation event found.".into(),
        QaStatus::Passed => format!("Latest separate QA validation passed{suffix}."),
        QaStatus::Failed => format!("Latest separate QA validation failed{suffix}."),
        QaStatus::InProgress => format!("Separate QA validation is in progress{suffix}."),
        QaStatus::Requested => format!("Separate QA validation was requested{suffix}."),
        QaStatus::Unknown => format!("Latest separate QA validation status is unknown{suffix}."),
    }
}

/// What one event says about a batch's stop control, if anything (messages never count).
pub fn control_of(e: &EventIn) -> Option<ControlStatus> {
    let t = format!("{} {}", e.kind, e.status.as_deref().unwrap_or_default()).to_lowercase();
    if vocab::STOP_REQUESTED.iter().any(|p| t.contains(p)) {
        Some(ControlStatus::StopRequested)
    } else if words::has_any_word(&t, &vocab::STOPPED) {
        Some(ControlStatus::Stopped)
    } else {
        None
    }
}

/// The state of a lane that no operator row backs, from its status text alone.
pub fn lane_status_state(status: &str) -> RowState {
    let s = status.to_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| s.contains(w));
    if words::terminal(&s).is_some() {
        RowState::Done
    } else if words::is_paused(&s) {
        RowState::Paused
    } else if has(&vocab::LANE_TEXT_BLOCKED) {
        RowState::Blocked
    } else if has(&vocab::LANE_TEXT_STUCK) {
        RowState::Stale
    } else if has(&vocab::LANE_TEXT_READY) {
        RowState::Ready
    } else if has(&vocab::LANE_TEXT_RUNNING) {
        RowState::Running
    } else {
        RowState::Unknown
    }
}

/// A machine id inferred from a legacy agent id: the single distinct `m<N>` token.
pub fn legacy_machine(agent: &str) -> Option<String> {
    let lower = agent.to_lowercase();
    let mut found: Vec<&str> = lower
        .split('-')
        .filter(|t| t.len() > 1 && t.starts_with('m') && t[1..].bytes().all(|b| b.is_ascii_digit()))
        .collect();
    found.sort_unstable();
    found.dedup();
    match found.as_slice() {
        [one] => Some((*one).to_owned()),
        _ => None,
    }
}

/// Whether the newest non-QA event of event-only work closes it.
pub fn event_closes_work(status_or_type: &str) -> bool {
    let s = status_or_type.to_lowercase();
    vocab::EVENT_CLOSES_WORK
        .iter()
        .any(|w| words::contains_bounded(&s, w, |c| !matches!(c, '.' | '_' | '-')))
}

#[cfg(test)]
mod tests;
