//! The task checkpoint and its state machine: one record per admitted `repo#issue` at
//! `coordinator/tasks/<owner>/<repo>/<issue>.json`, and the activity records of its GitHub
//! effects at `coordinator/activities/<task>/<activity>.json` (DESIGN §6 "State").
//!
//! Every phase of the spec exists here, so a task moves through one machine from
//! acceptance to the verified human merge; the transitions are methods that take what the
//! I/O side observed (a lane outcome, a check result, a reply) and say where the task goes.
//! Nothing here decides on text a model wrote beyond the parsed protocol outcome.

use std::collections::BTreeMap;
use std::fmt;

use serde::Deserialize;
use serde::Serialize;

use super::protocol::ImplementerOutcome;
use super::protocol::ReviewerOutcome;
use crate::serde_name::WireName;

mod evidence;
mod intervention;
mod lane_run;
mod notices;
mod stages;

pub use self::evidence::Evidence;
pub use self::evidence::FormalApproval;
pub use self::evidence::Gate;
pub use self::evidence::MergeRecord;
pub use self::intervention::Intervention;
pub use self::intervention::OperatorAction;
pub use self::lane_run::LanePause;
pub use self::lane_run::LaneRun;
pub use self::lane_run::LaneVerdict;
pub use self::lane_run::RunFacts;
pub use self::lane_run::Spend;
pub use self::lane_run::TranscriptRef;
pub use self::lane_run::LANE_RUNS_MAX;
pub use self::notices::FailingNotice;
pub use self::notices::NoticeLog;
pub use self::stages::ChecklistError;
pub use self::stages::DoneItem;
pub use self::stages::Rejection;

/// The folder of task checkpoints on the state branch.
pub const TASKS_DIR: &str = "coordinator/tasks";
/// The folder of activity records on the state branch.
pub const ACTIVITIES_DIR: &str = "coordinator/activities";

/// Returns the path of a task's checkpoint.
pub fn task_path(repo: &str, issue: u64) -> String {
    format!("{TASKS_DIR}/{repo}/{issue}.json")
}

/// Returns the repository and issue a task checkpoint's path names (the inverse of
/// [`task_path`]), `None` for any other path.
pub fn task_key(path: &str) -> Option<(String, u64)> {
    let rest = path
        .strip_prefix(TASKS_DIR)?
        .strip_prefix('/')?
        .strip_suffix(".json")?;
    let (repo, issue) = rest.rsplit_once('/')?;
    Some((repo.to_owned(), issue.parse().ok()?))
}

/// Returns the path of an activity record.
pub fn activity_path(task_id: &str, activity_id: &str) -> String {
    format!("{ACTIVITIES_DIR}/{task_id}/{activity_id}.json")
}

/// Where a task is in the workflow (spec steps 2–10).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Step 2: post the acceptance comment.
    Accept,
    /// Step 3: prepare the worktree.
    Checkout,
    /// Step 4: run a fresh implementer.
    Implement,
    /// Step 4: run the inner reviewer on the implementer's change.
    InnerReview,
    /// Step 5: signed commit, push, draft pull request.
    Publish,
    /// Step 6: `check_argv` on the exact clean signed head.
    Checks,
    /// Step 7: Grok quality and logic reviews of the head.
    PrGatesGrok,
    /// Step 7: Codex quality and logic reviews, after both Grok approvals.
    PrGatesCodex,
    /// Step 8: GitHub CI on the exact head.
    Ci,
    /// Step 9: the trusted readiness script and re-verification.
    Ready,
    /// Step 9: the formal approval from the review account.
    FormalApprove,
    /// Step 9: leave draft.
    LeaveDraft,
    /// Step 10: wait for a verified human merge.
    AwaitMerge,
    /// The workflow is over (see [`TaskState`] for how it ended).
    Finished,
}

impl Phase {
    /// Every phase, in workflow order.
    pub const ALL: [Phase; 14] = [
        Phase::Accept,
        Phase::Checkout,
        Phase::Implement,
        Phase::InnerReview,
        Phase::Publish,
        Phase::Checks,
        Phase::PrGatesGrok,
        Phase::PrGatesCodex,
        Phase::Ci,
        Phase::Ready,
        Phase::FormalApprove,
        Phase::LeaveDraft,
        Phase::AwaitMerge,
        Phase::Finished,
    ];

    /// Reports whether an authorized reply may resume this phase: every phase a published
    /// checkpoint can name, never the end.
    pub fn resumable(self) -> bool {
        self != Phase::Finished
    }
}

/// The wire name (`pr_gates_grok`, …).
impl WireName for Phase {}

impl fmt::Display for Phase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.wire_name())
    }
}

/// Whether a task advances, waits for a human, or has ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// The coordinator advances it on every tick.
    Active,
    /// A question or blocker is published; an authorized reply resumes `resume_phase`.
    Waiting,
    /// A lane said `blocked` (or the task cannot continue): terminal, never advanced.
    Failed,
    /// A lane's outcome is unknown (the coordinator stopped while it ran): no second model
    /// starts for it, not even on a reply; an operator decides.
    Uncertain,
    /// Merged by a human and closed out.
    Done,
    /// An operator cancelled it (`coordinate cancel`): its lanes are stopped, one comment
    /// says so on the issue, its claim is released; terminal.
    Cancelled,
}

impl WireName for TaskState {}

impl TaskState {
    /// Reports whether the task holds its issue (one task and one PR per issue until then).
    pub fn terminal(self) -> bool {
        matches!(
            self,
            TaskState::Failed | TaskState::Done | TaskState::Cancelled
        )
    }
}

/// The human assignment the task's specification rests on (spec step 1).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assignment {
    /// The issue event id.
    pub event_id: u64,
    /// Who assigned (a `User`).
    pub actor: String,
    /// When.
    pub created_at: String,
}

/// A lane that was started and whose outcome is not recorded yet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PendingLane {
    /// The lane slot (`grok:implementer`, …).
    pub slot: String,
    /// Which phase started it.
    pub phase: Phase,
    /// When it started.
    pub started_at: String,
    /// How its processes can be found again, recorded before any starts (absent in
    /// checkpoints of earlier versions, whose lanes ran inside the tick: a lane pending
    /// without it has an unknown outcome).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launch: Option<LaneLaunch>,
}

/// Where the lanes of one start run and leave their outcome: each runs under a supervisor
/// process that outlives the coordinator (the lane's environment carries the nonce) and
/// writes `<stem>.result.json` in the task's control directory when the lane ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaneLaunch {
    /// The machine that started them (only it can find their processes and files).
    pub machine: String,
    /// A random token in every lane's environment (`AGENT_COORD_LANE_NONCE`), so a reused
    /// pid is never taken for the lane.
    pub nonce: String,
    /// The file stem of each lane, in the order the slots were given.
    pub stems: Vec<String>,
    /// The repository's fleet-wide lane slots the start holds (`repo_max_lanes`; see
    /// `coordinator::leases`), empty when the repository has no such cap.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub leases: Vec<u64>,
    /// The adapter vendor each lane counts under, in the same order (`None`: a raw argv
    /// lane); empty in starts recorded before vendors were. The dashboard's lane timeline
    /// counts running lanes under it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vendors: Vec<Option<String>>,
}

/// What the task carries from one phase to the next (persisted before anything is signed or
/// published, so a crash applies the recorded outcome instead of starting another model).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Carry {
    /// A reviewer's findings for the next implementer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub findings: Option<String>,
    /// Failed check output (bounded) for the next implementer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_output: Option<String>,
    /// The authorized human reply the next implementer gets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    /// Who wrote that reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply_login: Option<String>,
    /// The implementer's English summary of the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_en: Option<String>,
    /// The implementer's German summary of the change.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary_de: Option<String>,
    /// The implementer's bounded, redacted body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// A PR gate rejection whose COMMENT review is not posted yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rejection: Option<Rejection>,
}

/// A task checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// Always 1 for now.
    pub schema_version: u32,
    /// The task id (`naming::task_id`).
    pub task_id: String,
    /// The worker session that owns it (also its agent id).
    pub worker: String,
    /// The machine that runs it (several machines may run one worker; each task is one
    /// machine's). Absent in checkpoints from before: whichever machine ticks the worker.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    /// The machines that ran it before, oldest first (each a takeover from a dead machine).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub previous_machines: Vec<String>,
    /// The target repository (`owner/repo`): every PR and issue call goes here.
    pub repo: String,
    /// The issue number.
    pub issue: u64,
    /// The issue title.
    pub title: String,
    /// The issue body, redacted and bounded.
    pub body: String,
    /// Active, waiting, failed, uncertain or done.
    pub state: TaskState,
    /// The current phase.
    pub phase: Phase,
    /// The phase an authorized reply resumes (only while waiting).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resume_phase: Option<Phase>,
    /// The activity id of the published question or blocker checkpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question_activity_id: Option<String>,
    /// The comment id of that checkpoint: replies count only after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question_comment_id: Option<u64>,
    /// The URL of that checkpoint comment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub question_url: Option<String>,
    /// Why the task waits, failed or is uncertain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocker: Option<String>,
    /// The verified human assignment.
    pub assignment: Assignment,
    /// The execution identity pinned at acceptance (`config::PinnedIdentity`).
    pub pinned: serde_json::Value,
    /// The feature branch.
    pub branch: String,
    /// The base branch.
    pub base: String,
    /// The base revision pinned from origin at checkout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_sha: Option<String>,
    /// The latest signed head.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub head: Option<String>,
    /// The draft pull request's number (`task.ref`: never the issue number).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr: Option<u64>,
    /// The draft pull request's URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pr_url: Option<String>,
    /// How many implementers ran (no cap; shown to the operator).
    pub rounds: u32,
    /// A lane started and not yet recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<PendingLane>,
    /// What the next phase needs.
    #[serde(default)]
    pub carry: Carry,
    /// Per-head evidence.
    #[serde(default)]
    pub evidence: Evidence,
    /// The verified human merge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub merge: Option<MergeRecord>,
    /// How many times each activity kind was started (a new occurrence gets a new id).
    #[serde(default)]
    pub occurrences: BTreeMap<String, u32>,
    /// Every lane run, oldest first (bounded by [`LANE_RUNS_MAX`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lane_runs: Vec<LaneRun>,
    /// The totals of runs folded out of `lane_runs` by its bound.
    #[serde(default, skip_serializing_if = "spend_is_empty")]
    pub earlier_runs: Spend,
    /// The first run of `lane_runs` the budget counts (see [`Task::budgeted_runs`]).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub budget_from: usize,
    /// A vendor's usage limit holding the next lane (no GitHub blocker for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<LanePause>,
    /// What operators did to the task (`coordinate cancel`, `coordinate retry`), oldest
    /// first: the human evidence a retry rests on, and the fence a tick's save respects (a
    /// save that knows fewer interventions than the stored task is refused).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interventions: Vec<Intervention>,
    /// The notifications of its checkpoints delivered through the worker's `notify_argv`.
    #[serde(default, skip_serializing_if = "NoticeLog::is_empty")]
    pub notices: NoticeLog,
    /// When the task was admitted.
    pub created_at: String,
    /// When the checkpoint last changed.
    pub updated_at: String,
}

fn spend_is_empty(spend: &Spend) -> bool {
    spend.runs == 0
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What the I/O side must do after a transition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Keep advancing in this tick.
    Continue,
    /// Publish a question or blocker comment, then wait for an authorized reply.
    Publish {
        /// The comment kind (`question` or `blocker`).
        kind: &'static str,
        /// The text.
        text: String,
    },
    /// Publish a blocker and stop for good.
    Fail {
        /// Why.
        reason: String,
    },
}

/// What a newly admitted task starts from.
#[derive(Debug, Clone)]
pub struct Admitted {
    /// The task id.
    pub task_id: String,
    /// The worker session.
    pub worker: String,
    /// The target repository.
    pub repo: String,
    /// The issue number.
    pub issue: u64,
    /// The issue title (redacted, bounded).
    pub title: String,
    /// The issue body (redacted, bounded).
    pub body: String,
    /// The verified human assignment.
    pub assignment: Assignment,
    /// The pinned execution identity.
    pub pinned: serde_json::Value,
    /// The feature branch.
    pub branch: String,
    /// The base branch.
    pub base: String,
}

impl Task {
    /// A task admitted at `now`: active, about to accept, nothing done yet.
    pub fn admitted(a: Admitted, now: &str) -> Task {
        Task {
            schema_version: 1,
            task_id: a.task_id,
            worker: a.worker,
            machine: None,
            previous_machines: Vec::new(),
            repo: a.repo,
            issue: a.issue,
            title: a.title,
            body: a.body,
            state: TaskState::Active,
            phase: Phase::Accept,
            resume_phase: None,
            question_activity_id: None,
            question_comment_id: None,
            question_url: None,
            blocker: None,
            assignment: a.assignment,
            pinned: a.pinned,
            branch: a.branch,
            base: a.base,
            base_sha: None,
            head: None,
            pr: None,
            pr_url: None,
            rounds: 0,
            pending: None,
            carry: Carry::default(),
            evidence: Evidence::default(),
            merge: None,
            occurrences: BTreeMap::new(),
            lane_runs: Vec::new(),
            earlier_runs: Spend::default(),
            budget_from: 0,
            paused: None,
            interventions: Vec::new(),
            notices: NoticeLog::default(),
            created_at: now.to_owned(),
            updated_at: now.to_owned(),
        }
    }

    /// Reports whether an authorized reply can resume this task (`reply_checkpoint_eligible`):
    /// waiting, a resumable `resume_phase`, a pinned checkpoint, and not failed, done or
    /// uncertain. A missing `resume_phase` never defaults to implement.
    pub fn reply_eligible(&self) -> bool {
        self.state == TaskState::Waiting
            && self.resume_phase.is_some_and(Phase::resumable)
            && self.question_activity_id.is_some()
    }

    /// Returns the next activity id for `kind` and counts the occurrence.
    pub fn next_occurrence(&mut self, kind: &str) -> u32 {
        let n = self.occurrences.entry(kind.to_owned()).or_insert(0);
        *n += 1;
        *n
    }

    /// Returns the current occurrence of `kind` (0 if never started).
    pub fn occurrence(&self, kind: &str) -> u32 {
        self.occurrences.get(kind).copied().unwrap_or(0)
    }

    /// Parks the task on a published checkpoint until an authorized reply resumes `resume`.
    pub fn wait_for_reply(
        &mut self,
        resume: Phase,
        reason: &str,
        activity_id: &str,
        comment_id: u64,
    ) {
        self.state = TaskState::Waiting;
        self.resume_phase = Some(resume);
        self.blocker = Some(reason.to_owned());
        self.question_activity_id = Some(activity_id.to_owned());
        self.question_comment_id = Some(comment_id);
    }

    /// Ends the task as failed: `resume_phase` and the checkpoint are cleared, so no reply
    /// and no later tick advances it.
    pub fn fail(&mut self, reason: &str) {
        self.state = TaskState::Failed;
        self.phase = Phase::Finished;
        self.resume_phase = None;
        self.question_activity_id = None;
        self.question_comment_id = None;
        self.question_url = None;
        self.blocker = Some(reason.to_owned());
    }

    /// Marks the running lane's outcome unknown: no second model starts for it.
    pub fn mark_uncertain(&mut self, reason: &str) {
        self.state = TaskState::Uncertain;
        self.resume_phase = None;
        self.question_activity_id = None;
        self.question_comment_id = None;
        self.question_url = None;
        self.blocker = Some(reason.to_owned());
    }

    /// Resumes the exact `resume_phase` after an authorized reply; `false` (and no change)
    /// when the task is not eligible.
    pub fn resume(&mut self, login: &str, reply: &str) -> bool {
        if !self.reply_eligible() {
            return false;
        }
        let Some(phase) = self.resume_phase.take() else {
            return false;
        };
        self.state = TaskState::Active;
        self.phase = phase;
        self.question_activity_id = None;
        self.question_comment_id = None;
        self.question_url = None;
        self.blocker = None;
        if phase == Phase::Implement {
            self.carry.reply = Some(reply.to_owned());
            self.carry.reply_login = Some(login.to_owned());
        }
        true
    }

    /// Applies an implementer's outcome (`has_patch`: the worktree differs from the base or
    /// a pull request exists).
    pub fn apply_implementer(&mut self, outcome: &ImplementerOutcome, has_patch: bool) -> Next {
        self.pending = None;
        match outcome {
            ImplementerOutcome::Done {
                summary_en,
                summary_de,
                body,
            }
            | ImplementerOutcome::NoChange {
                summary_en,
                summary_de,
                body,
            } => {
                self.carry.findings = None;
                self.carry.check_output = None;
                self.carry.reply = None;
                self.carry.reply_login = None;
                self.carry.summary_en = Some(summary_en.clone());
                self.carry.summary_de = Some(summary_de.clone());
                self.carry.body = Some(body.clone());
                if has_patch {
                    self.phase = Phase::InnerReview;
                    Next::Continue
                } else {
                    // No empty PR: a human says what to do when nothing needs changing.
                    Next::Publish {
                        kind: "question",
                        text: format!(
                            "the implementer changed nothing and there is no pull request yet: {summary_en}"
                        ),
                    }
                }
            }
            ImplementerOutcome::Ask { question } => Next::Publish {
                kind: "question",
                text: question.clone(),
            },
            ImplementerOutcome::Blocked { reason } => Next::Fail {
                reason: reason.clone(),
            },
            ImplementerOutcome::Incomplete { reason } => Next::Publish {
                kind: "blocker",
                text: format!("the implementer's output was not usable: {reason}"),
            },
        }
    }

    /// Applies the inner reviewer's outcome: approval publishes, a rejection routes the
    /// findings to a fresh implementer (no round cap), incomplete output waits for a human.
    pub fn apply_reviewer(&mut self, outcome: &ReviewerOutcome) -> Next {
        self.pending = None;
        match outcome {
            ReviewerOutcome::Approved { .. } => {
                self.phase = Phase::Publish;
                Next::Continue
            }
            ReviewerOutcome::Rejected { findings } => {
                self.carry.findings = Some(findings.clone());
                self.carry.check_output = None;
                self.phase = Phase::Implement;
                Next::Continue
            }
            ReviewerOutcome::Incomplete { reason } => Next::Publish {
                kind: "blocker",
                text: format!("the inner review did not complete: {reason}"),
            },
        }
    }

    /// Records a published head: evidence for any other head is dropped.
    pub fn set_head(&mut self, head: &str) {
        if self.head.as_deref() != Some(head) {
            self.evidence = Evidence::default();
        }
        self.head = Some(head.to_owned());
    }

    /// Applies a `check_argv` result on `head`: a pass is evidence for that head only and
    /// moves on to the PR gates; a failure routes the bounded output to a fresh implementer.
    pub fn apply_checks(&mut self, head: &str, passed: bool, output: &str) {
        if self.head.as_deref() != Some(head) {
            // A result for another head is stale: run the checks again.
            self.phase = Phase::Checks;
            return;
        }
        if passed {
            self.evidence.checks_passed = Some(head.to_owned());
            self.phase = Phase::PrGatesGrok;
        } else {
            self.carry.check_output = Some(output.to_owned());
            self.carry.findings = None;
            self.phase = Phase::Implement;
        }
    }
}

/// The status of a GitHub effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActivityStatus {
    /// Written before the call: a crash leaves it, and the next tick discovers first.
    Intent,
    /// The effect exists on GitHub (`result` says where).
    Done,
    /// The effect was revoked on GitHub (a dismissed approval): it never counts again, and
    /// the next attempt is a new occurrence.
    Void,
}

/// One GitHub effect of a task (intent before the call, result after).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Activity {
    /// Always 1 for now.
    pub schema_version: u32,
    /// The activity id (carried as a hidden marker in what it posts).
    pub activity_id: String,
    /// The task.
    pub task_id: String,
    /// `comment`, `pull_request`, ….
    pub kind: String,
    /// Intent or done.
    pub status: ActivityStatus,
    /// The repository the effect goes to.
    pub repo: String,
    /// The issue or pull request it is posted on (absent for a new pull request).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub number: Option<u64>,
    /// The GitHub id of the result (comment id, pull request number).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_id: Option<u64>,
    /// The result's URL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result_url: Option<String>,
    /// When the intent was written.
    pub created_at: String,
    /// When it last changed.
    pub updated_at: String,
}

#[cfg(test)]
pub(crate) mod tests;
