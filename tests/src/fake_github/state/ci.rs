//! A repository's CI, typed: what one commit's workflow runs (with their jobs and logs), check
//! runs and commit statuses are, and the plan the fake makes them from — which [`CiOutcome`]
//! the next new commit gets. Making a [`Ci`] from an outcome is `ci::materialise`.

use std::collections::VecDeque;

use serde::Deserialize;
use serde::Serialize;

/// What one commit's CI looks like, named by the outcome it was made from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CiOutcome {
    /// Jobs `build` and `test` pass, status `ci/lint` passes.
    Success,
    /// Job `test` fails with a log.
    Failure,
    /// As [`CiOutcome::Failure`], but the failing job's logs have expired (410).
    FailureLogsGone,
    /// As [`CiOutcome::Failure`], but the failing job's log is whitespace.
    FailureLogsEmpty,
    /// As [`CiOutcome::Failure`] on a second attempt; the first attempt failed too.
    RerunFailure,
    /// A run waiting for approval: no jobs, check runs or statuses.
    ActionRequired,
    /// Everything still running.
    Pending,
    /// Job `test` was cancelled.
    Cancelled,
    /// Job `test` ended neutral.
    Neutral,
    /// Job `test` was skipped.
    Skipped,
    /// Job `test` timed out.
    TimedOut,
    /// No CI at all.
    None,
    /// As [`CiOutcome::Success`], but the runs list counts one run more than it returns.
    Truncated,
}

/// An outcome with its optional failing-job log: `"failure"` or `{outcome, log}` in JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "CiSpecInput")]
pub struct CiSpec {
    pub outcome: CiOutcome,
    /// Log text of the failing (or otherwise concluded) job; a default when absent.
    pub log: Option<String>,
}

impl CiSpec {
    /// Returns an outcome without a log of its own.
    pub fn of(outcome: CiOutcome) -> CiSpec {
        CiSpec { outcome, log: None }
    }
}

/// The two JSON spellings of a [`CiSpec`].
#[derive(Deserialize)]
#[serde(untagged)]
enum CiSpecInput {
    Name(CiOutcome),
    Full {
        outcome: CiOutcome,
        #[serde(default)]
        log: Option<String>,
    },
}

impl From<CiSpecInput> for CiSpec {
    fn from(input: CiSpecInput) -> CiSpec {
        match input {
            CiSpecInput::Name(outcome) => CiSpec::of(outcome),
            CiSpecInput::Full { outcome, log } => CiSpec { outcome, log },
        }
    }
}

/// Which outcome each new commit gets: the next of `outcomes`, else `default`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CiPlan {
    pub outcomes: VecDeque<CiSpec>,
    pub default: CiSpec,
}

impl Default for CiPlan {
    fn default() -> CiPlan {
        CiPlan {
            outcomes: VecDeque::new(),
            default: CiSpec::of(CiOutcome::None),
        }
    }
}

impl CiPlan {
    /// Takes the outcome for the next new commit.
    pub fn next(&mut self) -> CiSpec {
        self.outcomes
            .pop_front()
            .unwrap_or_else(|| self.default.clone())
    }
}

/// One commit's CI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ci {
    /// What it was made from.
    pub outcome: CiOutcome,
    pub runs: Vec<WorkflowRun>,
    pub check_runs: Vec<CheckRun>,
    pub statuses: Vec<CommitStatus>,
    /// Runs the runs list counts but does not return (a truncated inventory).
    pub hidden_runs: u64,
}

/// `status` of a workflow run, job or check run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    Queued,
    InProgress,
    Completed,
}

/// `conclusion` of a completed workflow run, job or check run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Conclusion {
    Success,
    Failure,
    Neutral,
    Cancelled,
    Skipped,
    TimedOut,
    ActionRequired,
}

/// `state` of a commit status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StatusState {
    Success,
    Failure,
    Error,
    Pending,
}

/// A GitHub Actions workflow run with the jobs of every attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkflowRun {
    pub id: u64,
    pub name: String,
    pub path: String,
    pub event: String,
    pub status: RunStatus,
    pub conclusion: Option<Conclusion>,
    pub head_sha: String,
    /// The latest attempt.
    pub run_attempt: u64,
    pub created_at: String,
    pub jobs: Vec<Job>,
}

/// A job of one attempt of a workflow run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Job {
    pub id: u64,
    pub run_attempt: u64,
    pub name: String,
    pub status: RunStatus,
    pub conclusion: Option<Conclusion>,
    pub started_at: Option<String>,
    pub completed_at: Option<String>,
    pub log: JobLog,
}

/// What downloading a job's logs gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobLog {
    /// The log text.
    Text(String),
    /// Expired: the logs route answers 410.
    Gone,
}

/// A check run (one per job of the latest attempt, as GitHub Actions makes them).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckRun {
    pub id: u64,
    pub name: String,
    pub head_sha: String,
    pub status: RunStatus,
    pub conclusion: Option<Conclusion>,
    pub started_at: Option<String>,
    pub completed_at: Option<String>,
    /// The workflow run and job it reports, for `details_url`.
    pub run_id: u64,
    pub job_id: u64,
}

/// A commit status, as an outside CI posts it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitStatus {
    pub id: u64,
    pub context: String,
    pub state: StatusState,
    pub description: String,
    pub created_at: String,
}

impl Ci {
    /// Returns a workflow run by id.
    pub fn run(&self, id: u64) -> Option<&WorkflowRun> {
        self.runs.iter().find(|r| r.id == id)
    }

    /// Returns a job by id with its workflow run.
    pub fn job(&self, id: u64) -> Option<(&WorkflowRun, &Job)> {
        self.runs
            .iter()
            .find_map(|r| r.jobs.iter().find(|j| j.id == id).map(|j| (r, j)))
    }
}
