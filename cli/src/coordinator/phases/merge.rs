//! Step 10: wait for the human merge. Done only after a merge whose actor type is exactly
//! `User`, with its SHA, time and base, and the done checklist; then the assignment
//! acknowledgement. Closed unmerged or merged by anything else ends the task for good.

use agent_coord_shared::coordinator::merge;
use agent_coord_shared::coordinator::merge::MergeVerdict;
use agent_coord_shared::coordinator::merge::PullEnd;

use super::*;

impl Engine<'_> {
    pub(super) fn await_merge(
        &mut self,
        task: &mut Task,
        assigned: &BTreeSet<(String, u64)>,
    ) -> Result<bool, Halt> {
        let pr = task.pr.unwrap_or_default();
        let pull = self
            .gh
            .pull(&task.repo, pr)
            .map_err(|e| self.github_halt(task, "read the pull request", e))?;
        let end = PullEnd {
            state: pull.state.clone(),
            merged: pull.merged,
            merged_at: pull.merged_at.clone(),
            merged_by: pull.merged_by.clone(),
            merged_by_type: pull.merged_by_type.clone(),
            merge_commit_sha: pull.merge_commit_sha.clone(),
            base: pull.base_ref.clone(),
        };
        match merge::verdict(&end, &task.base) {
            MergeVerdict::Open => {
                self.observe(
                    Some(&task.task_id),
                    format!("pull request #{pr} waits for a human merge"),
                );
                Ok(false)
            }
            MergeVerdict::Settling(why) => {
                self.observe(
                    Some(&task.task_id),
                    format!("#{pr}: {why}; looking again next tick"),
                );
                Ok(false)
            }
            MergeVerdict::Refused(why) => {
                task.fail(&why);
                self.commit(task, "coordinator.failed", why, Some(Phase::AwaitMerge))?;
                Ok(true)
            }
            MergeVerdict::Human(record) => {
                let (by, sha) = (record.merged_by.clone(), record.sha.clone());
                if let Err(lacks) = task.merged(record) {
                    let why = lacks.to_string();
                    task.fail(&why);
                    self.commit(task, "coordinator.failed", why, Some(Phase::AwaitMerge))?;
                    return Ok(true);
                }
                self.commit(
                    task,
                    "coordinator.merged",
                    format!("pull request #{pr} merged by {by} as {sha}"),
                    None,
                )?;
                if assigned.contains(&(task.repo.clone(), task.issue)) {
                    let posted =
                        self.comment(task, "ack", |id| naming::ack_comment(pr, &by, &sha, id))?;
                    task.finish();
                    self.save_published(task, &posted, format!("done: {}", posted.url))?;
                } else {
                    // The assignment was revoked: observation only, no acknowledgement.
                    task.finish();
                    self.commit(
                        task,
                        "coordinator.phase",
                        "done; the assignment was revoked, so no acknowledgement".into(),
                        Some(Phase::AwaitMerge),
                    )?;
                }
                self.observe(Some(&task.task_id), format!("done: #{pr} merged by {by}"));
                Ok(true)
            }
        }
    }
}
