//! Step 9, Ready: the trusted readiness script, the fresh re-verification of everything on
//! the exact head, the formal approval from the review account (discovered before it is
//! posted, verified after), the one evidence comment, and leaving draft only after a fresh
//! read still shows that approval on the exact head. A revoked assignment stops every new
//! effect here.

use agent_coord_shared::coordinator::readiness;
use agent_coord_shared::coordinator::readiness::Readiness;
use agent_coord_shared::coordinator::task::FormalApproval;

use agent_coord_shared::coordinator::ci;

use super::pr_state::PrHead;
use super::pr_state::Seen;
use super::*;
use crate::github::ReviewEvent;

/// What a fresh recheck found.
enum Recheck {
    /// Everything still holds.
    Holds,
    /// Not yet decidable (pending CI, GitHub computing mergeability, a transport error):
    /// the same phase tries again next tick.
    Wait(String),
    /// The task moved (back to CI, or parked on a blocker): keep stepping.
    Moved,
}

/// What the formal approval attempt found.
enum Approval {
    Verified(Box<(FormalApproval, super::super::effects::Posted)>),
    /// Dismissed, not APPROVED or bound to another head: needs an authorized reply.
    Revoked(String),
    /// Not visible yet: the same activity is checked again next tick.
    Unverified(String),
}

/// Why the readiness attestation failed closed; the blocker names it.
#[derive(Debug, thiserror::Error)]
enum ReadinessFailure {
    /// The task's repository left the worker's configuration.
    #[error("the repository is no longer configured")]
    Unconfigured,
    /// The readiness script could not be run.
    #[error("cannot run the readiness script: {0}")]
    Run(#[source] process::RunError),
    /// The script left the worktree other than the clean signed head.
    #[error("the readiness script changed the worktree")]
    ChangedWorktree,
    /// The script ran past the check timeout.
    #[error("the readiness script timed out after {seconds} s: {stderr}")]
    TimedOut {
        /// The timeout.
        seconds: u64,
        /// The tail of its stderr, redacted.
        stderr: String,
    },
    /// The script failed.
    #[error("the readiness script exited {code:?}: {stderr}")]
    Exited {
        /// Its exit code (`None`: a signal ended it).
        code: Option<i32>,
        /// The tail of its stderr, redacted.
        stderr: String,
    },
    /// Its JSON does not attest this head and base.
    #[error("{detail}")]
    Contract {
        /// What the contract check found, redacted.
        detail: String,
    },
}

fn revoked(engine: &mut Engine<'_>, task: &Task, assigned: &BTreeSet<(String, u64)>) -> bool {
    if assigned.contains(&(task.repo.clone(), task.issue)) {
        return false;
    }
    engine.observe(
            Some(&task.task_id),
            format!(
                "the assignment was revoked: no approval and no Ready mutation at {} until the issue is assigned again",
                task.phase
            ),
        );
    true
}

/// Reports whether `review` is a standing approval of exactly `head` by the review
/// account (what both the post-approval check and leave-draft's fresh read require).
fn approves(engine: &Engine<'_>, review: &crate::github::Review, head: &str) -> bool {
    review.state == "APPROVED"
        && review.commit_id == head
        && review.login.eq_ignore_ascii_case(&engine.review_login)
}

/// Where Ready's GitHub effects start: no new effect once the assignment is revoked
/// (`Err(false)`: wait), and only on the exact clean signed head (`Err(true)` after
/// sending the task back to publish what the worktree holds).
fn effect_head(
    engine: &mut Engine<'_>,
    task: &mut Task,
    assigned: &BTreeSet<(String, u64)>,
) -> Result<Result<String, bool>, Halt> {
    if revoked(engine, task, assigned) {
        return Ok(Err(false));
    }
    Ok(checkpoint::current_head(engine, task)?.ok_or(true))
}

/// Runs `readiness_argv` in the worktree (tokens cleared) and checks its JSON against
/// the head and the pinned base; `Err` is why it failed closed, for the blocker.
fn run_readiness(
    engine: &mut Engine<'_>,
    task: &Task,
    head: &str,
) -> Result<Result<Readiness, ReadinessFailure>, Halt> {
    let Some(rc) = engine.setup.repo_config(&task.repo) else {
        return Ok(Err(ReadinessFailure::Unconfigured));
    };
    let dir = engine.setup.worktree(task);
    let spec = process::Spec {
        argv: &rc.readiness_argv,
        cwd: &dir,
        env: engine.setup.trusted_env(task, head),
        remove_env: accounts::token_variables(engine.setup.config),
        stdin: None,
        timeout: Duration::from_secs(engine.setup.worker.check_timeout),
        stall: None,
        watch: None,
        max_output: redact::LANE_BODY_MAX,
        gh_config_dir: None,
    };
    let done = match process::run(&spec) {
        Ok(done) => done,
        Err(e) => return Ok(Err(ReadinessFailure::Run(e))),
    };
    let still = git::is_clean(&dir).map_err(|e| checkpoint::git_halt(engine, task, e))?
        && git::head(&dir).map_err(|e| checkpoint::git_halt(engine, task, e))? == head;
    if !still {
        return Ok(Err(ReadinessFailure::ChangedWorktree));
    }
    if !done.success() {
        let stderr = redact::bound_tail(&engine.secrets.scrub(&done.stderr), 2048);
        return Ok(Err(if done.timed_out() {
            ReadinessFailure::TimedOut {
                seconds: engine.setup.worker.check_timeout,
                stderr,
            }
        } else {
            ReadinessFailure::Exited {
                code: done.exit_code(),
                stderr,
            }
        }));
    }
    let base = task.base_sha.clone().unwrap_or_default();
    Ok(
        readiness::verify(&done.stdout, head, &base, &engine.setup.worker.reply_logins).map_err(
            |e| ReadinessFailure::Contract {
                detail: engine.secrets.scrub(&e.to_string()),
            },
        ),
    )
}

/// Re-verifies on a fresh read: CI on the head, the pull request's head, author, base,
/// state and mergeability, and the tests and four gates on the head.
fn recheck(engine: &mut Engine<'_>, task: &mut Task, head: &str) -> Result<Recheck, Halt> {
    if !task.evidence.tested_and_reviewed(head) {
        checkpoint::back_to(
            engine,
            task,
            Phase::Checks,
            "tests or gates are missing for this head",
        )?;
        return Ok(Recheck::Moved);
    }
    match pr_state::observe_ci(engine, task, head) {
        Ok(Seen::Verdict(ci::Verdict::Green)) => {}
        Ok(Seen::Verdict(ci::Verdict::Pending { .. })) => {
            return Ok(Recheck::Wait(format!(
                "CI is pending again on {}",
                short(head)
            )))
        }
        Ok(Seen::Verdict(_)) => {
            // Failed or waiting on a human: the CI phase routes logs or publishes the blocker.
            task.ci_regressed();
            checkpoint::commit(
                engine,
                task,
                "coordinator.phase",
                "a fresh CI recheck is not green".into(),
                None,
            )?;
            return Ok(Recheck::Moved);
        }
        Ok(Seen::Fault(fault)) => {
            checkpoint::park(engine, task, Phase::Ci, BLOCKER, format!(
                    "GitHub CI could not be observed reliably ({fault}); nothing counts as green, and a reply resumes CI observation once GitHub answers properly"
                ))?;
            return Ok(Recheck::Moved);
        }
        Err(Halt::Retry { message, .. }) => return Ok(Recheck::Wait(message)),
        Err(fatal) => return Err(fatal),
    }
    recheck_pull(engine, task, head)
}

/// The fresh read of the pull request: its head (ours, behind, or someone else's), author,
/// base, state and mergeability.
fn recheck_pull(engine: &mut Engine<'_>, task: &mut Task, head: &str) -> Result<Recheck, Halt> {
    let pr = task.pr.unwrap_or_default();
    let pull = match engine.gh.pull(&task.repo, pr) {
        Ok(p) => p,
        Err(e) => {
            let detail = engine.secrets.scrub(&e.to_string());
            return Ok(Recheck::Wait(format!(
                "cannot read pull request #{pr}: {detail}"
            )));
        }
    };
    match pr_state::classify_pr_head(engine, task, head, &pull.head_sha) {
        PrHead::Ours => {}
        PrHead::Behind(why) => return Ok(Recheck::Wait(why)),
        PrHead::Foreign(text) => {
            let resume = task.phase;
            checkpoint::park(engine, task, resume, BLOCKER, text)?;
            return Ok(Recheck::Moved);
        }
    }
    let mut wrong = Vec::new();
    if !pull.author.eq_ignore_ascii_case(&engine.login) {
        wrong.push(format!(
            "its author is {}, not {}",
            pull.author, engine.login
        ));
    }
    if pull.base_ref != task.base {
        wrong.push(format!("its base is {}, not {}", pull.base_ref, task.base));
    }
    if pull.state != "open" {
        wrong.push(format!("it is {}", pull.state));
    }
    if !wrong.is_empty() {
        let resume = task.phase;
        checkpoint::park(
            engine,
            task,
            resume,
            BLOCKER,
            format!(
                "pull request #{pr} no longer matches the task: {}; fix it, then reply to resume",
                wrong.join("; ")
            ),
        )?;
        return Ok(Recheck::Moved);
    }
    match pull.mergeable {
        Some(true) => Ok(Recheck::Holds),
        None => Ok(Recheck::Wait(format!(
            "GitHub is still computing whether #{pr} is mergeable"
        ))),
        Some(false) => {
            let resume = task.phase;
            checkpoint::park(engine, task, resume, BLOCKER, format!(
                    "pull request #{pr} is not mergeable into {} (conflicts); resolve them, then reply to resume",
                    task.base
                ))?;
            Ok(Recheck::Moved)
        }
    }
}

/// The readiness script, the signature and the rechecks; `Err(keep_going)` when the task
/// moved (`true`: keep stepping) or waits for the next tick (`false`).
fn ready_gate(
    engine: &mut Engine<'_>,
    task: &mut Task,
    head: &str,
) -> Result<Result<Readiness, bool>, Halt> {
    let readiness = match run_readiness(engine, task, head)? {
        Ok(r) => r,
        Err(text) => {
            checkpoint::park(engine, task, Phase::Ready, BLOCKER, format!(
                    "the readiness attestation failed closed: {text}; fix it, then reply to resume Ready"
                ))?;
            return Ok(Err(true));
        }
    };
    if let Some(signer) = engine.setup.signer() {
        let dir = engine.setup.worktree(task);
        if let Err(e) = git::verify(&dir, head, &signer) {
            let text = engine.secrets.scrub(&e.to_string());
            checkpoint::park(
                engine,
                task,
                Phase::Ready,
                BLOCKER,
                format!("the head's signature no longer verifies: {text}"),
            )?;
            return Ok(Err(true));
        }
    }
    match recheck(engine, task, head)? {
        Recheck::Holds => Ok(Ok(readiness)),
        Recheck::Wait(why) => {
            engine.observe(
                Some(&task.task_id),
                format!("{why}; trying again next tick"),
            );
            Ok(Err(false))
        }
        Recheck::Moved => Ok(Err(true)),
    }
}

pub(super) fn ready(engine: &mut Engine<'_>, task: &mut Task) -> Result<bool, Halt> {
    let Some(head) = checkpoint::current_head(engine, task)? else {
        return Ok(true);
    };
    let readiness = match ready_gate(engine, task, &head)? {
        Ok(r) => r,
        Err(keep_going) => return Ok(keep_going),
    };
    task.readiness_verified(readiness);
    checkpoint::commit(
        engine,
        task,
        "coordinator.phase",
        format!("readiness verified on {head}"),
        Some(Phase::Ready),
    )?;
    Ok(true)
}

pub(super) fn formal_approve(
    engine: &mut Engine<'_>,
    task: &mut Task,
    assigned: &BTreeSet<(String, u64)>,
) -> Result<bool, Halt> {
    let head = match effect_head(engine, task, assigned)? {
        Ok(head) => head,
        Err(keep_going) => return Ok(keep_going),
    };
    if task
        .evidence
        .readiness
        .as_ref()
        .is_none_or(|r| r.head != head)
    {
        return checkpoint::back_to(
            engine,
            task,
            Phase::Ready,
            "no readiness attestation for this head",
        );
    }
    match recheck(engine, task, &head)? {
        Recheck::Holds => {}
        Recheck::Wait(why) => {
            engine.observe(
                Some(&task.task_id),
                format!("{why}; trying again next tick"),
            );
            return Ok(false);
        }
        Recheck::Moved => return Ok(true),
    }
    if !task.has_formal_approval() {
        if let Some(keep_going) = obtain_approval(engine, task, &head)? {
            return Ok(keep_going);
        }
    }
    if task.evidence.ready_comment.as_deref() == Some(head.as_str()) {
        return checkpoint::back_to(
            engine,
            task,
            Phase::LeaveDraft,
            "evidence comment already posted",
        );
    }
    post_ready_evidence(engine, task, &head)
}

/// Obtains and saves the formal approval of `head`; `None` once it is verified, else
/// whether to keep going in this tick (a revoked approval parks, an unverified one waits).
fn obtain_approval(
    engine: &mut Engine<'_>,
    task: &mut Task,
    head: &str,
) -> Result<Option<bool>, Halt> {
    match approve(engine, task, head)? {
        Approval::Verified(verified) => {
            let (approval, posted) = *verified;
            let url = approval.url.clone();
            task.formally_approved(approval);
            checkpoint::save_published(
                engine,
                task,
                &posted,
                format!("formal approval verified: {url}"),
            )?;
            engine.observe(
                Some(&task.task_id),
                format!(
                    "formally approved {} by {}",
                    short(head),
                    engine.review_login
                ),
            );
            Ok(None)
        }
        Approval::Revoked(why) => {
            task.approval_revoked();
            checkpoint::park(engine, task, Phase::FormalApprove, BLOCKER, why)?;
            Ok(Some(true))
        }
        Approval::Unverified(why) => {
            engine.observe(Some(&task.task_id), why);
            Ok(Some(false))
        }
    }
}

/// Posts the Ready evidence comment on the pull request: the checklist for `head`, the
/// declared deviation and the formal approval.
fn post_ready_evidence(engine: &mut Engine<'_>, task: &mut Task, head: &str) -> Result<bool, Halt> {
    let pr = task.pr.unwrap_or_default();
    let checklist = task.evidence.checklist(head);
    let deviation = match task.evidence.readiness.as_ref().map(|r| &r.deviation) {
        Some(d) if d.declared => format!(
            "declared, granted by @{} ({})",
            d.granted_by.as_deref().unwrap_or("?"),
            d.evidence.as_deref().unwrap_or("")
        ),
        _ => "none declared".to_owned(),
    };
    let approval_url = task
        .evidence
        .formal_approval
        .as_ref()
        .map(|a| a.url.clone())
        .unwrap_or_default();
    let posted = effects::comment_on(engine, task, "ready_comment", pr, |id| {
        let shown: Vec<(&str, bool)> = checklist
            .iter()
            .filter(|(item, _)| !matches!(*item, "ready_comment" | "left_draft"))
            .copied()
            .collect();
        naming::ready_comment(head, &shown, &deviation, &approval_url, id)
    })?;
    task.ready_commented();
    checkpoint::save_published(
        engine,
        task,
        &posted,
        format!("Ready evidence posted: {}", posted.url),
    )?;
    Ok(true)
}

/// The formal APPROVE from the review account bound to `head`: discovered before the
/// POST, verified on a fresh read after it.
fn approve(engine: &mut Engine<'_>, task: &mut Task, head: &str) -> Result<Approval, Halt> {
    let (activity, review) =
        effects::review(engine, task, "approve", head, ReviewEvent::Approve, |id| {
            naming::approval_body(head, id)
        })?;
    let id = activity.activity_id.clone();
    let Some(fresh) = effects::find_review(engine, task, &id, true)? else {
        return Ok(Approval::Unverified(format!(
            "the formal approval {} is not visible yet; checking the same attempt next tick",
            review.id
        )));
    };
    let bound = fresh.id == review.id && approves(engine, &fresh, head);
    if bound {
        let approval = FormalApproval {
            head: head.to_owned(),
            review_id: fresh.id,
            url: fresh.html_url.clone(),
        };
        let posted = effects::review_done(engine, activity, &fresh);
        return Ok(Approval::Verified(Box::new((approval, posted))));
    }
    let void = effects::void(engine, activity);
    task.updated_at = engine.ledger.now();
    engine.ledger.save(task, &[&void], None)?;
    Ok(Approval::Revoked(format!(
            "the formal approval (review {}) is {} on {}, not APPROVED on {}; it no longer counts, and an authorized reply allows a new approval",
            fresh.id,
            fresh.state,
            short(&fresh.commit_id),
            short(head)
        )))
}

/// Completes an earlier Ready mutation whose answer was lost ([`Engine::reconcile_ready`]):
/// the task left draft and awaits the merge. `false` when there was none to complete.
fn reconciled_ready(engine: &mut Engine<'_>, task: &mut Task) -> Result<bool, Halt> {
    let Some(posted) = effects::reconcile_ready(engine, task)? else {
        return Ok(false);
    };
    let pr = posted.id;
    task.left_draft();
    checkpoint::save_published(
        engine,
        task,
        &posted,
        format!("pull request #{pr} had left draft (the Ready mutation's answer was lost)"),
    )?;
    engine.observe(
        Some(&task.task_id),
        format!("pull request #{pr} left draft; the lost answer is reconciled"),
    );
    Ok(true)
}

pub(super) fn leave_draft(
    engine: &mut Engine<'_>,
    task: &mut Task,
    assigned: &BTreeSet<(String, u64)>,
) -> Result<bool, Halt> {
    // A lost answer to an applied Ready mutation is reconciled before the gate re-checks
    // an open pull request: a human may have merged it meanwhile.
    if reconciled_ready(engine, task)? {
        return Ok(true);
    }
    let head = match effect_head(engine, task, assigned)? {
        Ok(head) => head,
        Err(keep_going) => return Ok(keep_going),
    };
    if !task.has_formal_approval() {
        return checkpoint::back_to(
            engine,
            task,
            Phase::FormalApprove,
            "no formal approval of this head",
        );
    }
    if let Err(keep_going) = ready_gate(engine, task, &head)? {
        return Ok(keep_going);
    }
    crate::coordinator::failpoint("before-leave-draft");
    // The stored approval is not proof: a fresh read must still show it on this head.
    let Some(approval) = task.evidence.formal_approval.clone() else {
        return Ok(true);
    };
    let pr = task.pr.unwrap_or_default();
    let reviews = engine.review_gh.reviews(&task.repo, pr);
    let reviews = reviews.map_err(|e| effects::github_halt(engine, task, "list reviews", e))?;
    let still = reviews
        .iter()
        .find(|r| r.id == approval.review_id)
        .is_some_and(|r| approves(engine, r, &head));
    if !still {
        let state = reviews
            .iter()
            .find(|r| r.id == approval.review_id)
            .map_or("gone".to_owned(), |r| r.state.clone());
        let current = task.occurrence("approve");
        let id = naming::activity_id(&task.task_id, "approve", current.max(1));
        if let Some(a) = engine.ledger.activity(&task.task_id, &id)? {
            let void = effects::void(engine, a);
            engine.ledger.save(task, &[&void], None)?;
        }
        task.approval_revoked();
        checkpoint::park(engine, task, Phase::FormalApprove, BLOCKER, format!(
                "the formal approval (review {}) is {state} now, so the pull request stays a draft; an authorized reply allows a new approval of {}",
                approval.review_id,
                short(&head)
            ))?;
        return Ok(true);
    }
    let posted = effects::leave_draft_effect(engine, task)?;
    task.left_draft();
    checkpoint::save_published(
        engine,
        task,
        &posted,
        format!("pull request #{pr} left draft on {head}"),
    )?;
    engine.observe(
        Some(&task.task_id),
        format!("pull request #{pr} is ready for a human merge"),
    );
    Ok(true)
}
