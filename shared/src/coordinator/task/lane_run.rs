//! What a task keeps of every lane it ran (the "lane runs"): slot, vendor, model,
//! session, times, verdict, exit, tokens, cost and a pointer to the transcript — never the
//! transcript's text, which stays on the machine that ran the lane — and a vendor's
//! usage-limit pause that holds the task's next lane.

use serde::Deserialize;
use serde::Serialize;

use super::Phase;
use super::Task;
use crate::coordinator::lane::usage::CostSource;
use crate::coordinator::lane::usage::LaneUsage;
use crate::coordinator::protocol::ImplementerOutcome;
use crate::coordinator::protocol::ProcessEnd;
use crate::coordinator::protocol::ReviewerOutcome;
use crate::ids::is_segment;

/// What a lane run's answer meant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LaneVerdict {
    /// An implementer changed files.
    Done,
    /// An implementer found nothing to change.
    NoChange,
    /// An implementer asked a human.
    Ask,
    /// An implementer cannot do the task.
    Blocked,
    /// A reviewer approved.
    Approved,
    /// A reviewer rejected.
    Rejected,
    /// The answer was not usable (timeout, crash, malformed, unavailable).
    Incomplete,
    /// The vendor's usage limit was reached: the lane runs again after the reset.
    Paused,
}

impl LaneVerdict {
    /// The verdict of an implementer's outcome.
    pub fn of_implementer(outcome: &ImplementerOutcome) -> Self {
        match outcome {
            ImplementerOutcome::Done { .. } => Self::Done,
            ImplementerOutcome::NoChange { .. } => Self::NoChange,
            ImplementerOutcome::Ask { .. } => Self::Ask,
            ImplementerOutcome::Blocked { .. } => Self::Blocked,
            ImplementerOutcome::Incomplete { .. } => Self::Incomplete,
        }
    }

    /// The verdict of a reviewer's outcome.
    pub fn of_reviewer(outcome: &ReviewerOutcome) -> Self {
        match outcome {
            ReviewerOutcome::Approved { .. } => Self::Approved,
            ReviewerOutcome::Rejected { .. } => Self::Rejected,
            ReviewerOutcome::Incomplete { .. } => Self::Incomplete,
        }
    }
}

impl crate::serde_name::WireName for LaneVerdict {}

/// Where a lane's transcript is: on which machine, under the worker's workspace root.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TranscriptRef {
    /// The machine id of the machine that ran the lane (and holds the file).
    pub machine: String,
    /// The path relative to the workspace root, `/`-separated.
    pub path: String,
    /// Its size when the lane ended.
    pub bytes: u64,
    /// `sha256:<hex>` of its content when the lane ended.
    pub sha256: String,
}

impl TranscriptRef {
    /// Reports whether `path` is a safe relative path: segments that stay under the root
    /// (no `..`, no absolute path, no empty or hidden-trick segments beyond a leading dot).
    pub fn safe_path(path: &str) -> bool {
        !path.is_empty()
            && path.split('/').all(|seg| {
                is_segment(seg) || (seg.starts_with('.') && seg.len() > 1 && is_segment(&seg[1..]))
            })
    }
}

/// One lane run of a task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LaneRun {
    /// The lane slot (`grok:implementer`, …).
    pub slot: String,
    /// The phase that ran it.
    pub phase: Phase,
    /// The implementer round it belongs to.
    pub round: u32,
    /// The vendor CLI, when the lane reported usage.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vendor: Option<String>,
    /// The model, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The vendor's session id, when reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// When it started.
    pub started_at: String,
    /// When it ended.
    pub ended_at: String,
    /// What its answer meant.
    pub verdict: LaneVerdict,
    /// Its exit code (`None`: a signal, or it did not start).
    pub exit_code: Option<i32>,
    /// It was killed at its timeout or for silence.
    #[serde(default)]
    pub timed_out: bool,
    /// Uncached input tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// Output tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// Tokens read from the prompt cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Tokens written to the prompt cache.
    #[serde(default)]
    pub cache_write_tokens: u64,
    /// Its cost in US dollars, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// Where the cost comes from (`vendor`, `computed`, `unknown`).
    pub cost_source: CostSource,
    /// Its transcript, when the lane wrote one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transcript: Option<TranscriptRef>,
}

/// What the I/O side knows of a lane run besides its usage.
#[derive(Debug, Clone)]
pub struct RunFacts {
    /// The lane slot.
    pub slot: String,
    /// The phase.
    pub phase: Phase,
    /// The round.
    pub round: u32,
    /// Start and end times (RFC 3339).
    pub started_at: String,
    /// End time.
    pub ended_at: String,
    /// How the process ended.
    pub end: ProcessEnd,
    /// What the answer meant.
    pub verdict: LaneVerdict,
    /// The transcript, if one was written.
    pub transcript: Option<TranscriptRef>,
}

impl LaneRun {
    /// A run from its facts and the lane's `USAGE:` document (absent for a raw argv lane
    /// that prints none); `cost` is the cost the coordinator's price table settles on.
    pub fn of(facts: RunFacts, usage: Option<&LaneUsage>, cost: (Option<f64>, CostSource)) -> Self {
        let figure = |f: fn(&LaneUsage) -> u64| usage.map(f).unwrap_or(0);
        LaneRun {
            slot: facts.slot,
            phase: facts.phase,
            round: facts.round,
            vendor: usage.map(|u| u.vendor.to_string()),
            model: usage.and_then(|u| u.model.clone()),
            session_id: usage.and_then(|u| u.session_id.clone()),
            started_at: facts.started_at,
            ended_at: facts.ended_at,
            verdict: facts.verdict,
            exit_code: facts.end.exit_code,
            timed_out: facts.end.timed_out,
            input_tokens: figure(|u| u.input_tokens),
            output_tokens: figure(|u| u.output_tokens),
            cache_read_tokens: figure(|u| u.cache_read_tokens),
            cache_write_tokens: figure(|u| u.cache_write_tokens),
            cost_usd: cost.0,
            cost_source: cost.1,
            transcript: facts.transcript,
        }
    }

    /// All four token counts.
    pub fn tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens
    }
}

/// A vendor's usage limit that holds the task's next lane until `until`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LanePause {
    /// The vendor (or, for a lane that reported none, its slot).
    pub vendor: String,
    /// When the limit resets (RFC 3339): the exact lane runs again then.
    pub until: String,
}

/// Lane runs added up: how many, their tokens and their known cost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Spend {
    /// Lane runs counted.
    pub runs: u64,
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Tokens read from the prompt cache.
    pub cache_read_tokens: u64,
    /// Tokens written to the prompt cache.
    pub cache_write_tokens: u64,
    /// The known cost in US dollars (runs of unknown cost add nothing).
    pub cost_usd: f64,
    /// Runs whose cost is unknown (a model outside the price table, no usage reported).
    pub unpriced_runs: u64,
}

impl Spend {
    /// Adds one run.
    pub fn add(&mut self, run: &LaneRun) {
        self.runs += 1;
        self.input_tokens += run.input_tokens;
        self.output_tokens += run.output_tokens;
        self.cache_read_tokens += run.cache_read_tokens;
        self.cache_write_tokens += run.cache_write_tokens;
        match run.cost_usd {
            Some(usd) => self.cost_usd += usd,
            None => self.unpriced_runs += 1,
        }
    }

    /// Adds another total.
    pub fn merge(&mut self, other: &Spend) {
        self.runs += other.runs;
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
        self.cost_usd += other.cost_usd;
        self.unpriced_runs += other.unpriced_runs;
    }

    /// All four token counts.
    pub fn tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens
    }

    /// The total of `runs`.
    pub fn of<'a>(runs: impl IntoIterator<Item = &'a LaneRun>) -> Spend {
        let mut spend = Spend::default();
        for run in runs {
            spend.add(run);
        }
        spend
    }
}

/// The most lane runs a checkpoint keeps; the oldest are folded into `earlier_runs`.
pub const LANE_RUNS_MAX: usize = 500;

impl Task {
    /// Records a lane run (bounded: beyond [`LANE_RUNS_MAX`] the oldest run's figures are
    /// folded into [`Task::earlier_runs`], so totals never lose a token or a cent).
    pub fn record_lane_run(&mut self, run: LaneRun) {
        self.lane_runs.push(run);
        while self.lane_runs.len() > LANE_RUNS_MAX {
            let oldest = self.lane_runs.remove(0);
            self.earlier_runs.add(&oldest);
            self.budget_from = self.budget_from.saturating_sub(1);
        }
    }

    /// The runs the budget counts: those since acceptance, or since the last authorized
    /// reply to a budget checkpoint.
    pub fn budgeted_runs(&self) -> &[LaneRun] {
        &self.lane_runs[self.budget_from.min(self.lane_runs.len())..]
    }

    /// An authorized reply to a budget checkpoint: the budget counts anew from here.
    pub fn continue_budget(&mut self) {
        self.budget_from = self.lane_runs.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(tokens: u64, cost: Option<f64>) -> LaneRun {
        LaneRun {
            slot: "grok:implementer".into(),
            phase: Phase::Implement,
            round: 1,
            vendor: Some("claude".into()),
            model: None,
            session_id: None,
            started_at: "2026-01-01T00:00:00Z".into(),
            ended_at: "2026-01-01T00:01:00Z".into(),
            verdict: LaneVerdict::Done,
            exit_code: Some(0),
            timed_out: false,
            input_tokens: tokens,
            output_tokens: 1,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            cost_usd: cost,
            cost_source: if cost.is_some() {
                CostSource::Vendor
            } else {
                CostSource::Unknown
            },
            transcript: None,
        }
    }

    #[test]
    fn spend_adds_tokens_and_known_costs_and_counts_the_unpriced() {
        let runs = [run(10, Some(0.5)), run(20, None), run(30, Some(0.25))];
        let spend = Spend::of(&runs);
        assert_eq!(spend.runs, 3);
        assert_eq!(spend.input_tokens, 60);
        assert_eq!(spend.tokens(), 63);
        assert!((spend.cost_usd - 0.75).abs() < 1e-12);
        assert_eq!(spend.unpriced_runs, 1);
    }

    #[test]
    fn runs_beyond_the_bound_fold_into_earlier_runs_without_losing_totals() {
        let mut task = crate::coordinator::task::tests::task();
        for _ in 0..LANE_RUNS_MAX + 3 {
            task.record_lane_run(run(1, Some(0.01)));
        }
        assert_eq!(task.lane_runs.len(), LANE_RUNS_MAX);
        assert_eq!(task.earlier_runs.runs, 3);
        let mut all = Spend::of(&task.lane_runs);
        all.merge(&task.earlier_runs);
        assert_eq!(all.runs as usize, LANE_RUNS_MAX + 3);
        assert!((all.cost_usd - 0.01 * (LANE_RUNS_MAX + 3) as f64).abs() < 1e-9);
    }

    #[test]
    fn the_budget_window_restarts_after_a_reply_to_a_budget_checkpoint() {
        let mut task = crate::coordinator::task::tests::task();
        task.record_lane_run(run(1, Some(1.0)));
        task.record_lane_run(run(1, Some(1.0)));
        assert_eq!(task.budgeted_runs().len(), 2);
        task.continue_budget();
        assert!(task.budgeted_runs().is_empty());
        task.record_lane_run(run(1, Some(1.0)));
        assert_eq!(task.budgeted_runs().len(), 1);
    }

    #[test]
    fn transcript_paths_stay_under_the_root() {
        assert!(TranscriptRef::safe_path(
            ".coordinator-control/o-r-1/implement-1-grok-implementer.transcript.jsonl"
        ));
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "a//b",
            "a/./b",
            "..",
        ] {
            assert!(!TranscriptRef::safe_path(bad), "{bad}");
        }
    }
}
