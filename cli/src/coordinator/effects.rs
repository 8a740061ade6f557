//! GitHub effects with activity records (DESIGN §6 "State"): an intent is committed before
//! the call, the result after it, and every attempt discovers the effect on GitHub by its
//! hidden marker before it posts — so a crash or an unknown delivery never yields a second
//! comment or pull request.

use agent_coord_shared::coordinator::naming;
use agent_coord_shared::coordinator::task::Activity;
use agent_coord_shared::coordinator::task::ActivityStatus;
use agent_coord_shared::coordinator::task::Task;

use super::tick::Engine;
use super::tick::Halt;
use crate::github::GhError;
use crate::github::NewPull;

/// A completed effect: the GitHub id, and the activity record to save with the transition.
pub(crate) struct Posted {
    pub(crate) id: u64,
    pub(crate) url: String,
    pub(crate) activity: Activity,
}

impl Engine<'_> {
    /// Returns the activity to work on for `kind`: the current occurrence if its intent is
    /// still open (resume it: discover first), else a new occurrence, committed as an intent.
    fn intent(
        &mut self,
        task: &mut Task,
        kind: &str,
        number: Option<u64>,
    ) -> Result<Activity, Halt> {
        let current = task.occurrence(kind);
        if current > 0 {
            let id = naming::activity_id(&task.task_id, kind, current);
            if let Some(a) = self.ledger.activity(&task.task_id, &id)? {
                if a.status == ActivityStatus::Intent {
                    return Ok(a);
                }
            }
        }
        let n = task.next_occurrence(kind);
        let now = self.ledger.now();
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
        self.ledger.save(task, &[&activity], None)?;
        super::failpoint(&format!("intent:{kind}"));
        Ok(activity)
    }

    fn done(&self, mut activity: Activity, id: u64, url: String) -> Posted {
        activity.status = ActivityStatus::Done;
        activity.result_id = Some(id);
        activity.result_url = Some(url.clone());
        activity.updated_at = self.ledger.now();
        Posted { id, url, activity }
    }

    /// Posts a comment on the task's issue (at most once per activity): `text` gets the
    /// activity id and returns the body, which must end with the activity's marker.
    pub(crate) fn comment(
        &mut self,
        task: &mut Task,
        kind: &str,
        text: impl Fn(&str) -> String,
    ) -> Result<Posted, Halt> {
        let activity = self.intent(task, kind, Some(task.issue))?;
        let id = activity.activity_id.clone();
        // Discover before POST: an earlier attempt may have landed.
        let comments = self
            .gh
            .issue_comments(&task.repo, task.issue)
            .map_err(|e| self.github_halt(task, "list comments", e))?;
        if let Some(c) = comments.iter().find(|c| {
            naming::find_marker(&c.body) == Some(id.as_str())
                && c.author.eq_ignore_ascii_case(&self.login)
        }) {
            let url = format!("{}#issuecomment-{}", task.repo, c.id);
            return Ok(self.done(activity, c.id, url));
        }
        let body = self.secrets.clean(
            &text(&id),
            agent_coord_shared::coordinator::redact::COMMENT_MAX,
        );
        match self.gh.post_comment(&task.repo, task.issue, &body) {
            Ok((cid, url)) => {
                super::failpoint(&format!("posted:{kind}"));
                Ok(self.done(activity, cid, url))
            }
            Err(e) => Err(self.github_halt(task, &format!("post the {kind} comment"), e)),
        }
    }

    /// Opens the task's draft pull request on the target repository (at most once): an open
    /// pull request for the branch is adopted instead.
    pub(crate) fn draft(&mut self, task: &mut Task, publication: &str) -> Result<Posted, Halt> {
        let activity = self.intent(task, "pull_request", None)?;
        let owner = publication.split('/').next().unwrap_or(publication);
        let head = format!("{owner}:{}", task.branch);
        let existing = self
            .gh
            .pulls_for_head(&task.repo, &head)
            .map_err(|e| self.github_halt(task, "list pull requests", e))?;
        if let Some(pr) = existing
            .iter()
            .find(|p| p.state == "open" && p.author.eq_ignore_ascii_case(&self.login))
        {
            return Ok(self.done(activity, pr.number, pr.html_url.clone()));
        }
        let title = naming::pr_title(task.issue, &task.title);
        let body = naming::pr_body(
            task.issue,
            task.carry.summary_en.as_deref().unwrap_or_default(),
            task.carry.summary_de.as_deref().unwrap_or_default(),
            &activity.activity_id,
        );
        let body = self
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
        match self.gh.create_draft(&task.repo, &new) {
            Ok(pr) => {
                super::failpoint("posted:pull_request");
                Ok(self.done(activity, pr.number, pr.html_url))
            }
            Err(e) => Err(self.github_halt(task, "open the draft pull request", e)),
        }
    }

    /// Turns a GitHub failure into a halt for this task: the intent stays open and the next
    /// tick discovers before it tries again.
    pub(crate) fn github_halt(&mut self, task: &Task, what: &str, e: GhError) -> Halt {
        let detail = self.secrets.scrub(&e.to_string());
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
}
