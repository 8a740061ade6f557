//! Advancing one task: replies and checkpoints for a waiting task, then every phase — accept,
//! checkout, implement, inner review, publish (signed commit, push, draft pull request),
//! checks, the PR gates (`gates`), CI (`ci_phase`), Ready (`ready`) and the human merge
//! (`merge`). Every transition is saved (one commit, with an event) before the next effect
//! starts, so a crash resumes where it stopped.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

use agent_coord_shared::coordinator::config;
use agent_coord_shared::coordinator::config::LaneSlot;
use agent_coord_shared::coordinator::naming;
use agent_coord_shared::coordinator::protocol;
use agent_coord_shared::coordinator::protocol::Findings;
use agent_coord_shared::coordinator::protocol::HumanReply;
use agent_coord_shared::coordinator::protocol::ImplementPrompt;
use agent_coord_shared::coordinator::protocol::ProcessEnd;
use agent_coord_shared::coordinator::protocol::ReviewFocus;
use agent_coord_shared::coordinator::protocol::ReviewPrompt;
use agent_coord_shared::coordinator::redact;
use agent_coord_shared::coordinator::reply;
use agent_coord_shared::coordinator::task::Next;
use agent_coord_shared::coordinator::task::PendingLane;
use agent_coord_shared::coordinator::task::Phase;
use agent_coord_shared::coordinator::task::Task;
use agent_coord_shared::coordinator::task::TaskState;
use agent_coord_shared::serde_name::WireName;

use super::accounts;
use super::git;
mod ci_phase;
mod gates;
mod lanes;
mod merge;
mod publish;
mod ready;

use super::engine::Engine;
use super::engine::Halt;
use super::ledger::Note;
use crate::process;

/// Check output captured per stream; its tail (where failures are) is what gets routed.
const CHECK_CAPTURE: usize = 1 << 20;

/// Steps one task may take in one tick (a guard: every phase either moves on or waits).
const MAX_STEPS: usize = 64;

/// The comment kinds of published checkpoints.
const QUESTION: &str = "question";
const BLOCKER: &str = "blocker";
const FAILED: &str = "failed";
/// Set while the task waits on an identity-change blocker: a reply to it rebinds.
const REPIN: &str = "pending:repin";

impl Engine<'_> {
    /// Saves the task with an event saying what changed.
    fn commit(
        &mut self,
        task: &mut Task,
        kind: &'static str,
        message: String,
        previous: Option<Phase>,
    ) -> Result<(), Halt> {
        task.updated_at = self.ledger.now();
        let note = Note {
            kind,
            message: self.secrets.scrub(&message),
            previous_phase: previous
                .filter(|p| *p != task.phase)
                .map(|p| p.wire_name().to_owned()),
        };
        self.ledger.save(task, &[], Some(note))?;
        Ok(())
    }

    /// Advances `task` until it waits, ends, or the tick is interrupted.
    pub(super) fn advance(
        &mut self,
        mut task: Task,
        assigned: &BTreeSet<(String, u64)>,
    ) -> Result<(), Halt> {
        if config::upgrade_stored(&mut task.pinned) {
            // A checkpoint from before signing paths were digested: save it without them
            // once, whatever its state (see `config::pin`).
            self.commit(
                &mut task,
                "coordinator.phase",
                "the pinned identity now holds digests, not the signing paths".into(),
                None,
            )?;
        }
        for _ in 0..MAX_STEPS {
            if self.stop.load(Ordering::SeqCst) {
                return Ok(());
            }
            match task.state {
                TaskState::Done => return Ok(()),
                TaskState::Failed => return self.publish_failure(&mut task),
                TaskState::Uncertain => {
                    self.publish_uncertain(&mut task)?;
                    let why = task.blocker.clone().unwrap_or_default();
                    self.observe(
                        Some(&task.task_id),
                        format!("uncertain, no model starts until an operator decides: {why}"),
                    );
                    return Ok(());
                }
                TaskState::Waiting => {
                    if !self.waiting(&mut task)? {
                        return Ok(());
                    }
                }
                TaskState::Active => {
                    if let Some(changes) = self.setup.pin_changes(&task) {
                        let resume = task.phase;
                        task.occurrences.insert(REPIN.to_owned(), 1);
                        self.park(&mut task, resume, BLOCKER, format!(
                            "the pinned execution identity changed ({}); restore the configuration, or reply to run this task with the new one",
                            changes.join(", ")
                        ))?;
                        continue;
                    }
                    if !self.step(&mut task, assigned)? {
                        return Ok(());
                    }
                }
            }
        }
        self.observe(
            Some(&task.task_id),
            "step limit reached; continuing next tick",
        );
        Ok(())
    }

    /// One phase step; `true` to keep going in this tick.
    fn step(&mut self, task: &mut Task, assigned: &BTreeSet<(String, u64)>) -> Result<bool, Halt> {
        match task.phase {
            Phase::Accept => self.accept(task, assigned),
            Phase::Checkout => self.checkout(task),
            Phase::Implement => self.implement(task),
            Phase::InnerReview => self.inner_review(task),
            Phase::Publish => self.publish(task),
            Phase::Checks => self.checks(task),
            Phase::PrGatesGrok => self.pr_gates(task, Phase::PrGatesGrok),
            Phase::PrGatesCodex => self.pr_gates(task, Phase::PrGatesCodex),
            Phase::Ci => self.ci(task),
            Phase::Ready => self.ready(task),
            Phase::FormalApprove => self.formal_approve(task, assigned),
            Phase::LeaveDraft => self.leave_draft(task, assigned),
            Phase::AwaitMerge => self.await_merge(task, assigned),
            Phase::Finished => Ok(false),
        }
    }

    /// The exact clean signed head the worktree is on, or `None` after sending the task back
    /// to publish what the worktree holds.
    fn current_head(&mut self, task: &mut Task) -> Result<Option<String>, Halt> {
        let dir = self.setup.worktree(task);
        let clean = git::is_clean(&dir).map_err(|e| self.git_halt(task, e))?;
        let head = git::head(&dir).map_err(|e| self.git_halt(task, e))?;
        if clean && task.head.as_deref() == Some(head.as_str()) {
            return Ok(Some(head));
        }
        let previous = task.phase;
        task.phase = Phase::Publish;
        self.commit(
            task,
            "coordinator.phase",
            "worktree differs from the published head".into(),
            Some(previous),
        )?;
        Ok(None)
    }

    /// Moves the task to `phase` with a saved reason; `true` to keep going.
    fn back_to(&mut self, task: &mut Task, phase: Phase, why: &str) -> Result<bool, Halt> {
        let previous = task.phase;
        task.phase = phase;
        self.commit(task, "coordinator.phase", why.to_owned(), Some(previous))?;
        Ok(true)
    }

    /// Marks the task waiting on `resume` (persisted first, so no model re-runs), then
    /// publishes the checkpoint comment.
    fn park(
        &mut self,
        task: &mut Task,
        resume: Phase,
        kind: &'static str,
        text: String,
    ) -> Result<(), Halt> {
        task.pending = None;
        task.state = TaskState::Waiting;
        task.resume_phase = Some(resume);
        task.question_activity_id = None;
        task.question_comment_id = None;
        task.blocker = Some(self.secrets.clean(&text, redact::COMMENT_MAX));
        task.occurrences
            .entry(format!("pending:{kind}"))
            .or_insert(0);
        self.commit(task, "coordinator.waiting", format!("{kind}: {text}"), None)?;
        Ok(())
    }

    /// A waiting task: publish its checkpoint if not yet published, else look for an
    /// authorized reply after it. `true` when it resumed.
    fn waiting(&mut self, task: &mut Task) -> Result<bool, Halt> {
        if task.question_comment_id.is_none() {
            self.publish_checkpoint(task)?;
            return Ok(false);
        }
        if !task.reply_eligible() {
            return Ok(false);
        }
        match self.authorized_reply(task)? {
            Some(reply) => self.resume_on(task, &reply),
            None => {
                self.observe(
                    Some(&task.task_id),
                    format!(
                        "waiting for an authorized reply to resume {}",
                        task.resume_phase
                            .as_ref()
                            .map(Phase::wire_name)
                            .unwrap_or("?")
                    ),
                );
                Ok(false)
            }
        }
    }

    /// Posts the waiting task's question or blocker comment and saves the task as waiting
    /// for a reply to it.
    fn publish_checkpoint(&mut self, task: &mut Task) -> Result<(), Halt> {
        let kind = if task.occurrences.contains_key("pending:question") {
            QUESTION
        } else {
            BLOCKER
        };
        let text = task.blocker.clone().unwrap_or_default();
        let logins = self.setup.worker.reply_logins.clone();
        let resume = task.resume_phase.as_ref().map(Phase::wire_name);
        let posted = self.comment(task, kind, |id| match kind {
            QUESTION => naming::question_comment(&text, &logins, id),
            _ => naming::blocker_comment(&text, resume, &logins, id),
        })?;
        task.occurrences.remove("pending:question");
        task.occurrences.remove("pending:blocker");
        let resume = task.resume_phase.unwrap_or(Phase::Implement);
        task.wait_for_reply(resume, &text, &posted.activity.activity_id, posted.id);
        task.question_url = Some(posted.url.clone());
        self.save_published(task, &posted, format!("{kind} published: {}", posted.url))?;
        self.observe(
            Some(&task.task_id),
            format!(
                "waiting for an authorized reply to resume {}: {text}",
                resume
            ),
        );
        Ok(())
    }

    /// Returns the first authorized reply after the task's checkpoint, saying why each
    /// other comment after it does not count.
    fn authorized_reply(&mut self, task: &Task) -> Result<Option<reply::IssueComment>, Halt> {
        let comments = self
            .gh
            .issue_comments(&task.repo, task.issue)
            .map_err(|e| self.github_halt(task, "list comments", e))?;
        let after = task.question_comment_id.unwrap_or(u64::MAX);
        let scan = reply::scan_replies(&comments, &self.setup.worker.reply_logins, after);
        for ignored in &scan.ignored {
            self.observe(
                Some(&task.task_id),
                format!(
                    "ignored comment {} by {}: {}",
                    ignored.id, ignored.author, ignored.why
                ),
            );
        }
        Ok(scan.reply)
    }

    /// Resumes the task on an authorized reply (rebinding its pinned identity only when the
    /// reply answers the identity-change blocker). `true` when it resumed.
    fn resume_on(&mut self, task: &mut Task, reply: &reply::IssueComment) -> Result<bool, Halt> {
        let text = self.secrets.clean(&reply.body, redact::COMMENT_MAX);
        let author = reply.author.clone();
        let resumed = task.resume_phase;
        if !task.resume(&author, &text) {
            return Ok(false);
        }
        // Only a reply to the identity-change blocker rebinds the task, never any other.
        if task.occurrences.remove(REPIN).is_some() && self.setup.pin_changes(task).is_some() {
            if let Some(current) = self.setup.pin_of(&task.repo) {
                task.pinned = serde_json::to_value(current).unwrap_or_default();
            }
        }
        self.commit(
            task,
            "coordinator.resumed",
            format!(
                "reply by {author} resumes {}",
                resumed.as_ref().map(Phase::wire_name).unwrap_or("?")
            ),
            None,
        )?;
        self.observe(
            Some(&task.task_id),
            format!("authorized reply by {author}: resuming {}", task.phase),
        );
        Ok(true)
    }

    fn publish_failure(&mut self, task: &mut Task) -> Result<(), Halt> {
        if self.publish_final(task, FAILED)? {
            let reason = task.blocker.clone().unwrap_or_default();
            self.observe(Some(&task.task_id), format!("failed: {reason}"));
        }
        Ok(())
    }

    fn publish_uncertain(&mut self, task: &mut Task) -> Result<(), Halt> {
        self.publish_final(task, "uncertain").map(|_| ())
    }

    /// Publishes the final blocker of a failed or uncertain task once (an open intent is
    /// resumed); `true` when it was posted now.
    fn publish_final(&mut self, task: &mut Task, kind: &str) -> Result<bool, Halt> {
        let current = task.occurrence(kind);
        let id = naming::activity_id(&task.task_id, kind, current.max(1));
        let open = current == 0
            || self.ledger.activity(&task.task_id, &id)?.is_some_and(|a| {
                a.status == agent_coord_shared::coordinator::task::ActivityStatus::Intent
            });
        if !open {
            return Ok(false);
        }
        let reason = task.blocker.clone().unwrap_or_default();
        let posted = self.comment(task, kind, |id| {
            naming::blocker_comment(&reason, None, &[], id)
        })?;
        self.save_published(task, &posted, format!("{kind} published: {}", posted.url))?;
        Ok(true)
    }

    /// Saves the task with the completed activity of a GitHub effect and its event.
    fn save_published(
        &mut self,
        task: &mut Task,
        posted: &super::effects::Posted,
        message: String,
    ) -> Result<(), Halt> {
        task.updated_at = self.ledger.now();
        self.ledger.save(
            task,
            &[&posted.activity],
            Some(Note {
                kind: "coordinator.published",
                message,
                previous_phase: None,
            }),
        )?;
        Ok(())
    }

    fn accept(
        &mut self,
        task: &mut Task,
        assigned: &BTreeSet<(String, u64)>,
    ) -> Result<bool, Halt> {
        if !assigned.contains(&(task.repo.clone(), task.issue)) {
            self.park(task, Phase::Accept, BLOCKER, "the issue is no longer assigned to this worker, so it was not accepted; assign it again and reply to resume".into())?;
            return Ok(true);
        }
        let login = self.login.clone();
        let posted = self.comment(task, "accept", |id| naming::accept_comment(&login, id))?;
        task.phase = Phase::Checkout;
        task.updated_at = self.ledger.now();
        self.ledger.save(
            task,
            &[&posted.activity],
            Some(Note {
                kind: "coordinator.phase",
                message: format!("accepted: {}", posted.url),
                previous_phase: Some(Phase::Accept.wire_name().into()),
            }),
        )?;
        self.observe(Some(&task.task_id), "accepted (comment posted)");
        Ok(true)
    }

    fn auth(&self) -> git::GitAuth {
        git::GitAuth {
            token: Some(self.token.expose().to_owned()),
        }
    }

    fn checkout(&mut self, task: &mut Task) -> Result<bool, Halt> {
        let publication = self.setup.publication(task);
        let origin = self
            .gh
            .repository(&task.repo)
            .map_err(|e| self.github_halt(task, "read the repository", e))?;
        let publication_url = if publication == task.repo {
            origin.clone_url.clone()
        } else {
            self.gh
                .repository(&publication)
                .map_err(|e| self.github_halt(task, "read the publication repository", e))?
                .clone_url
        };
        let dir = self.setup.worktree(task);
        let (signer_name, signer_email) = self
            .setup
            .signer()
            .map(|s| (s.name, s.email))
            .unwrap_or_default();
        let mut protected = protected_branches(task);
        protected.push(origin.default_branch.clone());
        let plan = git::CheckoutPlan {
            dir: &dir,
            task_id: &task.task_id,
            origin_url: &origin.clone_url,
            publication_url: &publication_url,
            base: &task.base,
            branch: &task.branch,
            protected: &protected,
            user_name: &signer_name,
            user_email: &signer_email,
        };
        match git::prepare(&plan, &self.auth()) {
            Ok(prepared) => {
                task.base_sha = Some(prepared.base_sha.clone());
                task.phase = Phase::Implement;
                self.commit(
                    task,
                    "coordinator.phase",
                    format!("worktree ready at base {}", prepared.base_sha),
                    Some(Phase::Checkout),
                )?;
                Ok(true)
            }
            Err(e) => {
                let text = self.secrets.scrub(&e.to_string());
                self.park(
                    task,
                    Phase::Checkout,
                    BLOCKER,
                    format!("the checkout failed: {text}"),
                )?;
                Ok(true)
            }
        }
    }

    fn git_halt(&self, task: &Task, e: git::GitError) -> Halt {
        Halt::Retry {
            task: task.task_id.clone(),
            message: self.secrets.scrub(&e.to_string()),
        }
    }
}

/// The branches a task's push never touches: its base, `main` and `master`.
fn protected_branches(task: &Task) -> Vec<String> {
    let mut p = vec![task.base.clone(), "main".into(), "master".into()];
    p.dedup();
    p
}
