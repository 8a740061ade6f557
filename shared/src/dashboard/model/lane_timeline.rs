//! The lane timeline (`GET /api/lanes/timeline`, the Lanes page): which task's lane ran when
//! on which machine over the last hours, as Gantt bars packed onto one row per lane that ran
//! at once, and how busy each machine and each vendor was, bucket by bucket.

use serde::Deserialize;
use serde::Serialize;

use crate::coordinator::task::LaneVerdict;
use crate::coordinator::task::Phase;
use crate::serde_name::WireName;

/// The hours a timeline covers unless asked otherwise.
pub const TIMELINE_HOURS: u32 = 6;

/// The longest window a timeline covers, in hours (a week).
pub const TIMELINE_MAX_HOURS: u32 = 168;

/// The fleet's lane runs over a window that ends at the model's clock.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LaneTimeline {
    /// Where the window starts (RFC 3339).
    pub from: String,
    /// Where it ends: the clock the timeline was derived at (RFC 3339).
    pub to: String,
    /// How many hours it covers.
    pub hours: u32,
    /// Its length in seconds (`hours × 3600`).
    pub window_secs: i64,
    /// The length of one utilisation bucket in seconds; the last bucket ends at `to`.
    pub bucket_secs: i64,
    /// The machines that ran a lane in the window, by name (a lane whose machine the
    /// checkpoint does not tell comes last), each with its block of rows.
    pub machines: Vec<TimelineMachine>,
    /// Every lane that ran in the window, by machine, row and start.
    pub bars: Vec<LaneBar>,
    /// How many lanes ran on each machine, averaged over each bucket; in `machines` order.
    pub by_machine: Vec<Utilisation>,
    /// The same per vendor, by name (lanes that reported no vendor last).
    pub by_vendor: Vec<Utilisation>,
    /// Lane runs left out because their start or end time cannot be read.
    pub unreadable: u64,
}

/// A machine's block of Gantt rows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineMachine {
    /// The machine id (`None`: lanes whose machine the checkpoint does not tell).
    pub machine: Option<String>,
    /// The row of the whole chart its first row is.
    pub first_row: u32,
    /// Its rows: the most lanes that ran on it at once in the window.
    pub rows: u32,
    /// Its bars.
    pub lanes: u32,
    /// Its lanes still running at the window's end.
    pub running: u32,
}

/// One lane on the Gantt chart.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LaneBar {
    /// The machine that ran it (`None`: the checkpoint does not tell).
    pub machine: Option<String>,
    /// Its row within the machine's block, from 0.
    pub slot_row: u32,
    /// Its row in the whole chart, from 0.
    pub row: u32,
    /// The coordinator task (`naming::task_id`).
    pub task_id: String,
    /// The task's repository (`owner/repo`).
    pub repo: String,
    /// The task's issue.
    pub issue: u64,
    /// The lane slot (`grok:implementer`, …).
    pub slot: String,
    /// What the slot does, in words (`implementer`, `inner reviewer`, `grok quality`, …).
    pub role: String,
    /// The phase that ran it.
    pub phase: Phase,
    /// The implementer round (absent for a lane still running).
    pub round: Option<u32>,
    /// The run's number on the item page (absent for a lane still running).
    pub run: Option<u64>,
    /// The vendor its usage named, or for a running lane the one its start recorded (absent
    /// for a raw argv lane that reported none, and a start recorded before starts named one).
    pub vendor: Option<String>,
    /// The model its usage named.
    pub model: Option<String>,
    /// What its answer meant, or that it runs or its outcome is unknown.
    pub outcome: LaneOutcome,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// When it ended (`None` while it runs or its outcome is unknown).
    pub ended_at: Option<String>,
    /// How long it ran (until the window's end while running).
    pub duration_secs: i64,
    /// Where the bar starts, in seconds after the window's start (clipped to the window).
    pub offset_secs: i64,
    /// How long the bar is in seconds (clipped to the window).
    pub span_secs: i64,
    /// It ran on a machine that has since handed the task over (a takeover).
    pub taken_over: bool,
    /// Its end was recorded before its start, or its start after the window's end (clocks
    /// apart): the bar is drawn from its start for its measured duration.
    pub clock_skew: bool,
}

/// What became of a lane on the timeline: a recorded verdict, or not yet one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LaneOutcome {
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
    /// The answer was not usable.
    Incomplete,
    /// The vendor's usage limit was reached.
    Paused,
    /// Started and not collected yet.
    Running,
    /// Started, and nobody can know how it ended (the task is uncertain, or was taken over).
    Unknown,
}

/// Its name, as the JSON and the page's CSS classes spell it (`no-change`, `running`, …).
impl WireName for LaneOutcome {}

impl From<LaneVerdict> for LaneOutcome {
    fn from(v: LaneVerdict) -> Self {
        match v {
            LaneVerdict::Done => Self::Done,
            LaneVerdict::NoChange => Self::NoChange,
            LaneVerdict::Ask => Self::Ask,
            LaneVerdict::Blocked => Self::Blocked,
            LaneVerdict::Approved => Self::Approved,
            LaneVerdict::Rejected => Self::Rejected,
            LaneVerdict::Incomplete => Self::Incomplete,
            LaneVerdict::Paused => Self::Paused,
        }
    }
}

/// How busy one machine or vendor was over the window.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Utilisation {
    /// The machine or vendor (`None`: not told).
    pub key: Option<String>,
    /// Lane-seconds in each bucket, oldest first.
    pub busy_secs: Vec<i64>,
    /// Lanes running on average in each bucket (`busy_secs / bucket_secs`).
    pub lanes: Vec<f64>,
    /// The highest of `lanes`.
    pub peak: f64,
    /// Lanes running on average over the whole window.
    pub mean: f64,
}
