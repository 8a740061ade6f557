//! Advancing one task: replies and checkpoints for a waiting task, then the phases this
//! release drives — accept, checkout, implement, inner review, publish (signed commit, push,
//! draft pull request) and checks. Every transition is saved (one commit, with an event)
//! before the next effect starts, so a crash resumes where it stopped.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

use agent_coord_shared::coordinator::config;
use agent_coord_shared::coordinator::config::LaneSlot;
use agent_coord_shared::coordinator::config::PinnedIdentity;
use agent_coord_shared::coordinator::config::SigningFormat;
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

use super::git;
use super::ledger::Note;
use super::preflight::control_dir;
use super::process;
use super::tick::Engine;
use super::tick::Halt;

/// Steps one task may take in one tick (a guard: every phase either moves on or waits).
const MAX_STEPS: usize = 64;

/// The comment kinds of published checkpoints.
const QUESTION: &str = "question";
const BLOCKER: &str = "blocker";
const FAILED: &str = "failed";
/// Set while the task waits on an identity-change blocker: a reply to it rebinds.
const REPIN: &str = "pending:repin";

impl Engine<'_> {
    fn worktree(&self, task: &Task) -> PathBuf {
        PathBuf::from(&self.worker.workspace_root).join(&task.task_id)
    }

    fn task_control(&self, task: &Task) -> PathBuf {
        control_dir(self.worker).join(&task.task_id)
    }

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
                .map(|p| p.as_str().to_owned()),
        };
        self.ledger.save(task, &[], Some(note))?;
        Ok(())
    }

    /// Advances `task` until it waits, ends, or the tick is interrupted.
    pub(crate) fn advance(
        &mut self,
        mut task: Task,
        assigned: &BTreeSet<(String, u64)>,
    ) -> Result<(), Halt> {
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
                    if let Some(changes) = self.pin_changes(&task) {
                        let resume = task.phase;
                        task.occurrences.insert(REPIN.to_owned(), 1);
                        self.park(&mut task, resume, BLOCKER, format!(
                            "the pinned execution identity changed ({}); restore the configuration, or reply to run this task with the new one",
                            changes.join(", ")
                        ))?;
                        continue;
                    }
                    if !task.phase.driven() {
                        self.observe(Some(&task.task_id), format!(
                            "draft pull request #{} has passing checks on {}; it waits at {} (PR gates, CI, Ready and merge are not driven by this release)",
                            task.pr.unwrap_or_default(),
                            task.head.as_deref().map(|h| &h[..h.len().min(12)]).unwrap_or("?"),
                            task.phase
                        ));
                        return Ok(());
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

    /// Returns the keys of the pinned identity that changed since acceptance, if any.
    fn pin_changes(&self, task: &Task) -> Option<Vec<String>> {
        let pinned: PinnedIdentity = serde_json::from_value(task.pinned.clone()).ok()?;
        let current = self.pin_of(&task.repo);
        let changes = match current {
            Some(current) => pinned.changes(&current),
            None => vec![format!(
                "workers.{}.repositories.{}",
                self.worker_id, task.repo
            )],
        };
        (!changes.is_empty()).then_some(changes)
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
            _ => Ok(false),
        }
    }

    /// Marks the task waiting on `resume` (persisted first, so no model re-runs), then
    /// publishes the checkpoint comment.
    pub(crate) fn park(
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
        task.carry.body = task.carry.body.take();
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
            let kind = if task.occurrences.contains_key("pending:question") {
                QUESTION
            } else {
                BLOCKER
            };
            let text = task.blocker.clone().unwrap_or_default();
            let logins = self.worker.reply_logins.clone();
            let resume = task.resume_phase.map(Phase::as_str);
            let posted = self.comment(task, kind, |id| match kind {
                QUESTION => naming::question_comment(&text, &logins, id),
                _ => naming::blocker_comment(&text, resume, &logins, id),
            })?;
            task.occurrences.remove("pending:question");
            task.occurrences.remove("pending:blocker");
            let resume = task.resume_phase.unwrap_or(Phase::Implement);
            task.wait_for_reply(resume, &text, &posted.activity.activity_id, posted.id);
            task.updated_at = self.ledger.now();
            self.ledger.save(
                task,
                &[&posted.activity],
                Some(Note {
                    kind: "coordinator.published",
                    message: format!("{kind} published: {}", posted.url),
                    previous_phase: None,
                }),
            )?;
            self.observe(
                Some(&task.task_id),
                format!(
                    "waiting for an authorized reply to resume {}: {text}",
                    resume
                ),
            );
            return Ok(false);
        }
        if !task.reply_eligible() {
            return Ok(false);
        }
        let comments = self
            .gh
            .issue_comments(&task.repo, task.issue)
            .map_err(|e| self.github_halt(task, "list comments", e))?;
        let after = task.question_comment_id.unwrap_or(u64::MAX);
        let scan = reply::scan_replies(&comments, &self.worker.reply_logins, after);
        for ignored in &scan.ignored {
            self.observe(
                Some(&task.task_id),
                format!(
                    "ignored comment {} by {}: {}",
                    ignored.id, ignored.author, ignored.why
                ),
            );
        }
        let Some(r) = scan.reply else {
            self.observe(
                Some(&task.task_id),
                format!(
                    "waiting for an authorized reply to resume {}",
                    task.resume_phase.map(Phase::as_str).unwrap_or("?")
                ),
            );
            return Ok(false);
        };
        let text = self.secrets.clean(&r.body, redact::COMMENT_MAX);
        let author = r.author.clone();
        let resumed = task.resume_phase;
        if !task.resume(&author, &text) {
            return Ok(false);
        }
        // Only a reply to the identity-change blocker rebinds the task, never any other.
        if task.occurrences.remove(REPIN).is_some() && self.pin_changes(task).is_some() {
            if let Some(current) = self.pin_of(&task.repo) {
                task.pinned = serde_json::to_value(current).unwrap_or_default();
            }
        }
        self.commit(
            task,
            "coordinator.resumed",
            format!(
                "reply by {author} resumes {}",
                resumed.map(Phase::as_str).unwrap_or("?")
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
        let current = task.occurrence(FAILED);
        let id = naming::activity_id(&task.task_id, FAILED, current.max(1));
        let open = current == 0
            || self.ledger.activity(&task.task_id, &id)?.is_some_and(|a| {
                a.status == agent_coord_shared::coordinator::task::ActivityStatus::Intent
            });
        if !open {
            return Ok(());
        }
        let reason = task.blocker.clone().unwrap_or_default();
        let posted = self.comment(task, FAILED, |id| {
            naming::blocker_comment(&reason, None, &[], id)
        })?;
        task.updated_at = self.ledger.now();
        self.ledger.save(
            task,
            &[&posted.activity],
            Some(Note {
                kind: "coordinator.published",
                message: format!("failure published: {}", posted.url),
                previous_phase: None,
            }),
        )?;
        self.observe(Some(&task.task_id), format!("failed: {reason}"));
        Ok(())
    }

    fn publish_uncertain(&mut self, task: &mut Task) -> Result<(), Halt> {
        const UNCERTAIN: &str = "uncertain";
        let current = task.occurrence(UNCERTAIN);
        let id = naming::activity_id(&task.task_id, UNCERTAIN, current.max(1));
        let open = current == 0
            || self.ledger.activity(&task.task_id, &id)?.is_some_and(|a| {
                a.status == agent_coord_shared::coordinator::task::ActivityStatus::Intent
            });
        if !open {
            return Ok(());
        }
        let reason = task.blocker.clone().unwrap_or_default();
        let posted = self.comment(task, UNCERTAIN, |id| {
            naming::blocker_comment(&reason, None, &[], id)
        })?;
        task.updated_at = self.ledger.now();
        self.ledger.save(task, &[&posted.activity], None)?;
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
                kind: "phase.changed",
                message: format!("accepted: {}", posted.url),
                previous_phase: Some(Phase::Accept.as_str().into()),
            }),
        )?;
        self.observe(Some(&task.task_id), "accepted (comment posted)");
        Ok(true)
    }

    fn publication(&self, task: &Task) -> String {
        self.repo_config(&task.repo)
            .map(|r| r.publication_repo.to_string())
            .unwrap_or_else(|| task.repo.clone())
    }

    fn auth(&self) -> git::GitAuth {
        git::GitAuth {
            token: Some(self.token.expose().to_owned()),
        }
    }

    fn protected(&self, task: &Task) -> Vec<String> {
        let mut p = vec![task.base.clone(), "main".into(), "master".into()];
        p.dedup();
        p
    }

    fn checkout(&mut self, task: &mut Task) -> Result<bool, Halt> {
        let publication = self.publication(task);
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
        let dir = self.worktree(task);
        let (signer_name, signer_email) =
            self.signer().map(|s| (s.name, s.email)).unwrap_or_default();
        let mut protected = self.protected(task);
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
                    "phase.changed",
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

    fn lane_argv(&self, slot: LaneSlot) -> Vec<String> {
        self.config
            .sessions
            .get(&self.worker_id)
            .and_then(|s| s.lanes.get(&slot))
            .cloned()
            .unwrap_or_default()
    }

    /// Environment variable names that hold tokens in this configuration: removed from
    /// every child.
    fn token_vars(&self) -> Vec<String> {
        self.config
            .sessions
            .values()
            .filter_map(|s| match &s.github.token {
                config::TokenSource::Env { token_env } => Some(token_env.clone()),
                config::TokenSource::Argv { .. } => None,
            })
            .collect()
    }

    /// Runs a lane with `prompt` on stdin in the worktree; the prompt and the (redacted)
    /// output are kept in the control directory.
    fn run_lane(
        &mut self,
        task: &mut Task,
        slot: LaneSlot,
        prompt: &str,
    ) -> Result<(ProcessEnd, String), Halt> {
        if task.pending.is_some() {
            return Err(Halt::Retry {
                task: task.task_id.clone(),
                message: "a lane is already recorded as running".into(),
            });
        }
        task.pending = Some(PendingLane {
            slot: slot.as_str().to_owned(),
            phase: task.phase,
            started_at: self.ledger.now(),
        });
        self.commit(
            task,
            "coordinator.lane_started",
            format!("{} started", slot.as_str()),
            None,
        )?;
        let control = self.task_control(task);
        let _ = std::fs::create_dir_all(&control);
        let stem = format!(
            "{}-{}-{}",
            task.phase,
            task.rounds,
            slot.as_str().replace(':', "-")
        );
        let _ = std::fs::write(control.join(format!("{stem}.prompt")), prompt);
        let argv = self.lane_argv(slot);
        let dir = self.worktree(task);
        let spec = process::Spec {
            argv: &argv,
            cwd: &dir,
            env: Vec::new(),
            remove_env: self.token_vars(),
            stdin: Some(prompt.as_bytes().to_vec()),
            timeout: Duration::from_secs(self.worker.lane_timeout),
            max_output: redact::LANE_BODY_MAX * 4,
            gh_config_dir: None,
        };
        let (end, stdout, elapsed) = match process::run(&spec) {
            Ok(done) => (
                ProcessEnd {
                    exit_code: done.exit_code(),
                    timed_out: done.timed_out(),
                },
                done.stdout,
                done.elapsed,
            ),
            Err(e) => (
                ProcessEnd {
                    exit_code: None,
                    timed_out: false,
                },
                format!("cannot start the lane: {e}"),
                Duration::ZERO,
            ),
        };
        let _ = std::fs::write(
            control.join(format!("{stem}.out")),
            self.secrets.scrub(&stdout),
        );
        super::failpoint("lane-finished");
        self.observe(
            Some(&task.task_id),
            format!("{} ran for {} s", slot.as_str(), elapsed.as_secs()),
        );
        Ok((end, stdout))
    }

    /// An implementer or reviewer started in an earlier tick never reported: its outcome is
    /// unknown, and no second model starts for it.
    fn refuse_uncertain(&mut self, task: &mut Task) -> Result<bool, Halt> {
        let Some(p) = task.pending.clone() else {
            return Ok(false);
        };
        task.mark_uncertain(&format!(
            "the coordinator stopped while {} ran (started {}); its outcome is unknown, so no second model starts; an operator must inspect the worktree",
            p.slot, p.started_at
        ));
        self.commit(
            task,
            "coordinator.uncertain",
            "lane outcome unknown".into(),
            None,
        )?;
        Ok(true)
    }

    fn has_patch(&self, task: &Task) -> Result<bool, Halt> {
        if task.pr.is_some() {
            return Ok(true);
        }
        let dir = self.worktree(task);
        let clean = git::is_clean(&dir).map_err(|e| self.git_halt(task, e))?;
        let head = git::head(&dir).map_err(|e| self.git_halt(task, e))?;
        Ok(!clean || task.base_sha.as_deref() != Some(head.as_str()))
    }

    fn git_halt(&self, task: &Task, e: git::GitError) -> Halt {
        Halt::Retry {
            task: task.task_id.clone(),
            message: self.secrets.scrub(&e.to_string()),
        }
    }

    fn implement(&mut self, task: &mut Task) -> Result<bool, Halt> {
        if self.refuse_uncertain(task)? {
            return Ok(true);
        }
        task.rounds += 1;
        let prompt = protocol::implement_prompt(&ImplementPrompt {
            repo: &task.repo,
            issue: task.issue,
            title: &task.title,
            body: &task.body,
            branch: &task.branch,
            findings: match (&task.carry.findings, &task.carry.check_output) {
                (Some(f), _) => Some(Findings::Review(f)),
                (None, Some(c)) => Some(Findings::Checks(c)),
                (None, None) => None,
            },
            reply: match (&task.carry.reply, &task.carry.reply_login) {
                (Some(body), Some(login)) => Some(HumanReply { login, body }),
                _ => None,
            },
            round: task.rounds,
        });
        let (end, stdout) = self.run_lane(task, LaneSlot::GrokImplementer, &prompt)?;
        let outcome = protocol::implementer(end, &self.secrets.scrub(&stdout));
        let has_patch = self.has_patch(task)?;
        let next = task.apply_implementer(&outcome, has_patch);
        self.follow(task, next, Phase::Implement, "implementer")
    }

    fn follow(
        &mut self,
        task: &mut Task,
        next: Next,
        phase: Phase,
        who: &str,
    ) -> Result<bool, Halt> {
        match next {
            Next::Continue => {
                self.commit(
                    task,
                    "phase.changed",
                    format!("{who} finished; next {}", task.phase),
                    Some(phase),
                )?;
                self.observe(
                    Some(&task.task_id),
                    format!("{who} finished; next {}", task.phase),
                );
                Ok(true)
            }
            Next::Publish { kind, text } => {
                let kind = if kind == QUESTION { QUESTION } else { BLOCKER };
                self.park(task, phase, kind, text)?;
                Ok(true)
            }
            Next::Fail { reason } => {
                let reason = self.secrets.clean(&reason, redact::COMMENT_MAX);
                task.fail(&format!("{who} reported blocked: {reason}"));
                self.commit(
                    task,
                    "coordinator.failed",
                    format!("{who} blocked: {reason}"),
                    Some(phase),
                )?;
                Ok(true)
            }
        }
    }

    /// Stages the worktree and writes the base→worktree diff outside it.
    fn diff_artifact(&self, task: &Task) -> Result<PathBuf, Halt> {
        let dir = self.worktree(task);
        let base = task.base_sha.clone().unwrap_or_default();
        let diff = git::staged_diff(&dir, &base).map_err(|e| self.git_halt(task, e))?;
        let control = self.task_control(task);
        let _ = std::fs::create_dir_all(&control);
        let path = control.join(format!("review-{}.diff", task.rounds));
        std::fs::write(&path, diff).map_err(|e| Halt::Retry {
            task: task.task_id.clone(),
            message: format!("cannot write the diff artifact: {e}"),
        })?;
        Ok(path)
    }

    fn inner_review(&mut self, task: &mut Task) -> Result<bool, Halt> {
        if self.refuse_uncertain(task)? {
            return Ok(true);
        }
        let diff = self.diff_artifact(task)?;
        let diff_path = diff.to_string_lossy().into_owned();
        let prompt = protocol::review_prompt(&ReviewPrompt {
            repo: &task.repo,
            issue: task.issue,
            title: &task.title,
            body: &task.body,
            diff_path: &diff_path,
            summary_en: task.carry.summary_en.as_deref().unwrap_or_default(),
            summary_de: task.carry.summary_de.as_deref().unwrap_or_default(),
            focus: ReviewFocus::Inner,
        });
        let (end, stdout) = self.run_lane(task, LaneSlot::GrokReviewer, &prompt)?;
        let outcome = protocol::reviewer(end, &self.secrets.scrub(&stdout));
        let next = task.apply_reviewer(&outcome);
        self.follow(task, next, Phase::InnerReview, "inner reviewer")
    }

    fn signer(&self) -> Option<git::Signer> {
        let git = self.config.sessions.get(&self.worker_id)?.git.as_ref()?;
        Some(git::Signer {
            name: git.name.clone(),
            email: git.email.clone(),
            format: match git.signing_format {
                SigningFormat::Ssh => git::SignFormat::Ssh,
                SigningFormat::OpenPgp => git::SignFormat::OpenPgp,
            },
            key: git.signing_key.to_string(),
            allowed_signers: git.allowed_signers.clone(),
        })
    }

    fn publish(&mut self, task: &mut Task) -> Result<bool, Halt> {
        let dir = self.worktree(task);
        let Some(signer) = self.signer() else {
            self.park(
                task,
                Phase::Publish,
                BLOCKER,
                "the worker has no git identity to sign with".into(),
            )?;
            return Ok(true);
        };
        let message = format!(
            "{}\n\n{}\n{}\n\nRefs #{}",
            naming::pr_title(task.issue, &task.title),
            task.carry.summary_en.as_deref().unwrap_or_default(),
            task.carry.summary_de.as_deref().unwrap_or_default(),
            task.issue
        );
        if let Err(e) = git::commit_all(&dir, &message, &signer) {
            let text = self.secrets.scrub(&e.to_string());
            self.park(
                task,
                Phase::Publish,
                BLOCKER,
                format!("the signed commit failed: {text}"),
            )?;
            return Ok(true);
        }
        super::failpoint("committed");
        let head = git::head(&dir).map_err(|e| self.git_halt(task, e))?;
        if let Err(e) = git::verify(&dir, &head, &signer) {
            let text = self.secrets.scrub(&e.to_string());
            self.park(
                task,
                Phase::Publish,
                BLOCKER,
                format!("the commit signature does not verify: {text}"),
            )?;
            return Ok(true);
        }
        let protected = self.protected(task);
        let published = git::remote_branch(&dir, "publication", &task.branch, &self.auth())
            .map_err(|e| self.git_halt(task, e))?;
        if published.as_deref() == Some(head.as_str()) {
            // Already pushed (the coordinator stopped after the push): nothing to send.
        } else if let Err(e) = git::push(&dir, &task.branch, &task.base, &protected, &self.auth()) {
            let text = self.secrets.scrub(&e.to_string());
            return Err(Halt::Retry {
                task: task.task_id.clone(),
                message: format!("push failed: {text}"),
            });
        }
        super::failpoint("pushed");
        if task.head.as_deref() != Some(head.as_str()) {
            task.set_head(&head);
            self.commit(
                task,
                "coordinator.pushed",
                format!("pushed signed head {head}"),
                None,
            )?;
        }
        if task.pr.is_none() {
            let publication = self.publication(task);
            let posted = self.draft(task, &publication)?;
            task.pr = Some(posted.id);
            task.pr_url = Some(posted.url.clone());
            task.updated_at = self.ledger.now();
            self.ledger.save(
                task,
                &[&posted.activity],
                Some(Note {
                    kind: "coordinator.published",
                    message: format!("draft pull request #{} opened: {}", posted.id, posted.url),
                    previous_phase: None,
                }),
            )?;
            self.observe(
                Some(&task.task_id),
                format!("draft pull request #{} opened", posted.id),
            );
        }
        task.phase = Phase::Checks;
        self.commit(
            task,
            "phase.changed",
            format!("head {head} published"),
            Some(Phase::Publish),
        )?;
        Ok(true)
    }

    fn checks(&mut self, task: &mut Task) -> Result<bool, Halt> {
        let dir = self.worktree(task);
        let clean = git::is_clean(&dir).map_err(|e| self.git_halt(task, e))?;
        let head = git::head(&dir).map_err(|e| self.git_halt(task, e))?;
        if !clean || task.head.as_deref() != Some(head.as_str()) {
            // Not the exact clean signed head: publish what is there first.
            task.phase = Phase::Publish;
            self.commit(
                task,
                "phase.changed",
                "worktree differs from the published head".into(),
                Some(Phase::Checks),
            )?;
            return Ok(true);
        }
        let Some(rc) = self.repo_config(&task.repo) else {
            return Ok(false);
        };
        let env = vec![
            ("AGENT_COORDINATOR_HEAD".to_owned(), head.clone()),
            (
                "AGENT_COORDINATOR_BASE".to_owned(),
                task.base_sha.clone().unwrap_or_default(),
            ),
            ("AGENT_COORDINATOR_REPO".to_owned(), task.repo.clone()),
            (
                "AGENT_COORDINATOR_PR".to_owned(),
                task.pr.map(|p| p.to_string()).unwrap_or_default(),
            ),
            (
                "AGENT_COORDINATOR_SESSION".to_owned(),
                self.worker_id.clone(),
            ),
            (
                "AGENT_COORDINATOR_WORKTREE".to_owned(),
                dir.to_string_lossy().into_owned(),
            ),
        ];
        let spec = process::Spec {
            argv: &rc.check_argv,
            cwd: &dir,
            env,
            remove_env: self.token_vars(),
            stdin: None,
            timeout: Duration::from_secs(self.worker.check_timeout),
            max_output: redact::CHECK_OUTPUT_MAX,
            gh_config_dir: None,
        };
        let (passed, output) = match process::run(&spec) {
            Ok(done) => {
                let why = if done.timed_out() {
                    format!("timed out after {} s\n", self.worker.check_timeout)
                } else {
                    String::new()
                };
                let cut = if done.stdout_truncated || done.stderr_truncated {
                    "[output truncated]\n"
                } else {
                    ""
                };
                (
                    done.success(),
                    format!("{why}{}\n{}{cut}", done.stdout, done.stderr),
                )
            }
            Err(e) => (false, format!("cannot run the checks: {e}")),
        };
        // A check that changed the worktree did not test the published head.
        let still_clean = git::is_clean(&dir).map_err(|e| self.git_halt(task, e))?;
        let (passed, output) = if still_clean {
            (passed, output)
        } else {
            (false, format!("the checks changed the worktree\n{output}"))
        };
        let output = self.secrets.clean(&output, redact::CHECK_OUTPUT_MAX);
        task.apply_checks(&head, passed, &output);
        let verdict = if passed { "passed" } else { "failed" };
        self.commit(
            task,
            "phase.changed",
            format!("checks {verdict} on {head}"),
            Some(Phase::Checks),
        )?;
        self.observe(
            Some(&task.task_id),
            format!("checks {verdict} on {}", &head[..head.len().min(12)]),
        );
        Ok(true)
    }
}
