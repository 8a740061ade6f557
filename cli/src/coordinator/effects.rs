//! GitHub effects with activity records (DESIGN §6 "State"): an intent is committed before
//! the call, the result after it, and every attempt discovers the effect on GitHub by its
//! hidden marker before it posts — so a crash or an unknown delivery never yields a second
//! comment or pull request.

use agent_coord_shared::coordinator::naming;
use agent_coord_shared::coordinator::task::Activity;
use agent_coord_shared::coordinator::task::ActivityStatus;
use agent_coord_shared::coordinator::task::Task;

use super::engine::Engine;
use super::engine::Halt;
use crate::github::GhError;
use crate::github::NewPull;
use crate::github::Review;
use crate::github::ReviewEvent;

/// A completed effect: the GitHub id, and the activity record to save with the transition.
pub(crate) struct Posted {
    pub(crate) id: u64,
    pub(crate) url: String,
    pub(crate) activity: Activity,
}

/// Returns the activity to work on for `kind`: the current occurrence if its intent is
/// still open (resume it: discover first), else a new occurrence, committed as an intent.
fn intent(
    engine: &mut Engine<'_>,
    task: &mut Task,
    kind: &str,
    number: Option<u64>,
) -> Result<Activity, Halt> {
    let current = task.occurrence(kind);
    if current > 0 {
        let id = naming::activity_id(&task.task_id, kind, current);
        if let Some(a) = engine.ledger.activity(&task.task_id, &id)? {
            if a.status == ActivityStatus::Intent {
                return Ok(a);
            }
        }
    }
    let n = task.next_occurrence(kind);
    let now = engine.ledger.now();
    let activity = Activity {
        schema_version: 1,
        activity_id: naming::activity_id(&task.task_id, kind, n),
        task_id: task.task_id.clone(),
        kind: kind.to_owned(),
        status: ActivityStatus::Intent,
        repo: task.repo.clone(),
        number,
        result_id: None,
        result_url: None,
        created_at: now.clone(),
        updated_at: now,
    };
    engine.ledger.save(task, &[&activity], None)?;
    super::failpoint(&format!("intent:{kind}"));
    Ok(activity)
}

fn done(engine: &Engine<'_>, mut activity: Activity, id: u64, url: String) -> Posted {
    activity.status = ActivityStatus::Done;
    activity.result_id = Some(id);
    activity.result_url = Some(url.clone());
    activity.updated_at = engine.ledger.now();
    Posted { id, url, activity }
}

/// Posts a comment on the task's issue (at most once per activity): `text` gets the
/// activity id and returns the body, which must end with the activity's marker.
pub(super) fn comment(
    engine: &mut Engine<'_>,
    task: &mut Task,
    kind: &str,
    text: impl Fn(&str) -> String,
) -> Result<Posted, Halt> {
    let issue = task.issue;
    comment_on(engine, task, kind, issue, text)
}

/// Posts a comment on issue or pull request `number` of the task's repository (at most
/// once per activity).
pub(super) fn comment_on(
    engine: &mut Engine<'_>,
    task: &mut Task,
    kind: &str,
    number: u64,
    text: impl Fn(&str) -> String,
) -> Result<Posted, Halt> {
    let activity = intent(engine, task, kind, Some(number))?;
    let id = activity.activity_id.clone();
    // Discover before POST: an earlier attempt may have landed.
    let comments = engine
        .gh
        .issue_comments(&task.repo, number)
        .map_err(|e| github_halt(engine, task, "list comments", e))?;
    if let Some(c) = comments.iter().find(|c| {
        naming::find_marker(&c.body) == Some(id.as_str())
            && c.author.eq_ignore_ascii_case(&engine.login)
    }) {
        let url = format!("{}#issuecomment-{}", task.repo, c.id);
        return Ok(done(engine, activity, c.id, url));
    }
    let body = engine.secrets.clean(
        &text(&id),
        agent_coord_shared::coordinator::redact::COMMENT_MAX,
    );
    match engine.gh.post_comment(&task.repo, number, &body) {
        Ok((cid, url)) => {
            super::failpoint(&format!("posted:{kind}"));
            Ok(done(engine, activity, cid, url))
        }
        Err(e) => Err(github_halt(
            engine,
            task,
            &format!("post the {kind} comment"),
            e,
        )),
    }
}

/// Opens the task's draft pull request on the target repository (at most once): an open
/// pull request for the branch is adopted instead.
pub(super) fn draft(
    engine: &mut Engine<'_>,
    task: &mut Task,
    publication: &str,
) -> Result<Posted, Halt> {
    let activity = intent(engine, task, "pull_request", None)?;
    let owner = publication.split('/').next().unwrap_or(publication);
    let head = format!("{owner}:{}", task.branch);
    let existing = engine
        .gh
        .pulls_for_head(&task.repo, &head)
        .map_err(|e| github_halt(engine, task, "list pull requests", e))?;
    if let Some(pr) = existing
        .iter()
        .find(|p| p.state == "open" && p.author.eq_ignore_ascii_case(&engine.login))
    {
        return Ok(done(engine, activity, pr.number, pr.html_url.clone()));
    }
    let title = naming::pr_title(task.issue, &task.title);
    let body = naming::pr_body(
        task.issue,
        task.carry.summary_en.as_deref().unwrap_or_default(),
        task.carry.summary_de.as_deref().unwrap_or_default(),
        &activity.activity_id,
    );
    let body = engine
        .secrets
        .clean(&body, agent_coord_shared::coordinator::redact::COMMENT_MAX);
    let head_param = if publication == task.repo {
        task.branch.clone()
    } else {
        head
    };
    let new = NewPull {
        title: &title,
        head: &head_param,
        base: &task.base,
        body: &body,
    };
    match engine.gh.create_draft(&task.repo, &new) {
        Ok(pr) => {
            super::failpoint("posted:pull_request");
            Ok(done(engine, activity, pr.number, pr.html_url))
        }
        Err(e) => Err(github_halt(engine, task, "open the draft pull request", e)),
    }
}

/// Finds the review on the task's pull request that carries `activity_id`'s marker and
/// was written by the account (`as_reviewer`: the review account, else the worker).
pub(super) fn find_review(
    engine: &mut Engine<'_>,
    task: &Task,
    activity_id: &str,
    as_reviewer: bool,
) -> Result<Option<Review>, Halt> {
    let pr = task.pr.unwrap_or_default();
    let (gh, login) = if as_reviewer {
        (&mut engine.review_gh, engine.review_login.clone())
    } else {
        (&mut engine.gh, engine.login.clone())
    };
    let reviews = gh.reviews(&task.repo, pr);
    let reviews = reviews.map_err(|e| github_halt(engine, task, "list reviews", e))?;
    Ok(reviews.into_iter().find(|r| {
        naming::find_marker(&r.body) == Some(activity_id) && r.login.eq_ignore_ascii_case(&login)
    }))
}

/// Submits a review bound to `head` on the task's pull request, at most once per
/// activity: an earlier attempt found by its marker is returned instead of posting again
/// (whatever its state; the caller judges it). Returns the open activity and the review.
pub(super) fn review(
    engine: &mut Engine<'_>,
    task: &mut Task,
    kind: &str,
    head: &str,
    event: ReviewEvent,
    text: impl Fn(&str) -> String,
) -> Result<(Activity, Review), Halt> {
    let pr = task.pr.unwrap_or_default();
    let as_reviewer = event == ReviewEvent::Approve;
    let activity = intent(engine, task, kind, Some(pr))?;
    let id = activity.activity_id.clone();
    if let Some(r) = find_review(engine, task, &id, as_reviewer)? {
        return Ok((activity, r));
    }
    let body = engine.secrets.clean(
        &text(&id),
        agent_coord_shared::coordinator::redact::COMMENT_MAX,
    );
    let gh = if as_reviewer {
        &mut engine.review_gh
    } else {
        &mut engine.gh
    };
    match gh.post_review(&task.repo, pr, head, event, &body) {
        Ok(r) => {
            super::failpoint(&format!("posted:{kind}"));
            Ok((activity, r))
        }
        Err(e) => Err(github_halt(
            engine,
            task,
            &format!("post the {kind} review"),
            e,
        )),
    }
}

/// Completes an activity with a review.
pub(super) fn review_done(engine: &Engine<'_>, activity: Activity, review: &Review) -> Posted {
    done(engine, activity, review.id, review.html_url.clone())
}

/// Marks an activity void: its effect was revoked on GitHub and never counts again.
pub(super) fn void(engine: &Engine<'_>, mut activity: Activity) -> Activity {
    activity.status = ActivityStatus::Void;
    activity.updated_at = engine.ledger.now();
    activity
}

/// Takes the task's pull request out of draft (at most once per activity): discovery
/// first (already not a draft: done), then the GraphQL mutation, then a fresh read that
/// must show `draft: false`.
pub(super) fn leave_draft_effect(engine: &mut Engine<'_>, task: &mut Task) -> Result<Posted, Halt> {
    let pr = task.pr.unwrap_or_default();
    let activity = intent(engine, task, "ready", Some(pr))?;
    let pull = engine
        .gh
        .pull(&task.repo, pr)
        .map_err(|e| github_halt(engine, task, "read the pull request", e))?;
    let url = pull.html_url.clone();
    if !pull.draft {
        return Ok(done(engine, activity, pr, url));
    }
    match engine.gh.mark_ready(&pull.node_id) {
        Ok(_) => super::failpoint("posted:ready"),
        Err(e) => return Err(github_halt(engine, task, "mark the pull request ready", e)),
    }
    let after = engine
        .gh
        .pull(&task.repo, pr)
        .map_err(|e| github_halt(engine, task, "read the pull request", e))?;
    if after.draft {
        return Err(Halt::Retry {
                task: task.task_id.clone(),
                message: format!("pull request #{pr} is still a draft after the Ready mutation; the next tick checks again"),
            });
    }
    Ok(done(engine, activity, pr, url))
}

/// Reconciles the Ready mutation of an earlier attempt whose answer was lost: when the
/// `ready` intent is still open and a fresh read shows the pull request out of draft on
/// the task's head, the effect applied and is completed — whatever happened to the pull
/// request since (a human may have merged it already). `None`: no open intent, or the
/// pull request is still a draft (the normal path tries again).
pub(super) fn reconcile_ready(
    engine: &mut Engine<'_>,
    task: &Task,
) -> Result<Option<Posted>, Halt> {
    let current = task.occurrence("ready");
    if current == 0 {
        return Ok(None);
    }
    let id = naming::activity_id(&task.task_id, "ready", current);
    let Some(activity) = engine.ledger.activity(&task.task_id, &id)? else {
        return Ok(None);
    };
    if activity.status != ActivityStatus::Intent {
        return Ok(None);
    }
    let pr = task.pr.unwrap_or_default();
    let pull = engine
        .gh
        .pull(&task.repo, pr)
        .map_err(|e| github_halt(engine, task, "read the pull request", e))?;
    if pull.draft || task.head.as_deref() != Some(pull.head_sha.as_str()) {
        return Ok(None);
    }
    Ok(Some(done(engine, activity, pr, pull.html_url)))
}

/// Turns a GitHub failure into a halt for this task: the intent stays open and the next
/// tick discovers before it tries again.
pub(super) fn github_halt(engine: &mut Engine<'_>, task: &Task, what: &str, e: GhError) -> Halt {
    let detail = engine.secrets.scrub(&e.to_string());
    let message = if e.unknown_delivery() {
        format!("could not {what} ({detail}); the next tick checks GitHub before trying again")
    } else {
        format!("could not {what}: {detail}")
    };
    Halt::Retry {
        task: task.task_id.clone(),
        message,
    }
}
