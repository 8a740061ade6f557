//! Step 10: wait for the human merge. Done only after a merge whose actor type is exactly
//! `User` (or GitHub's merge queue acting for a person who put it into the queue), on the
//! approved head, with its SHA, time and base, and the done checklist; then the assignment
//! acknowledgement. Closed unmerged, merged by anything else or on another head ends the task
//! for good. The timeline is read only for a merge-queue merge, so an ordinary tick costs one
//! (usually 304) request.

use agent_coord_shared::coordinator::merge;
use agent_coord_shared::coordinator::merge::Approved;
use agent_coord_shared::coordinator::merge::MergeVerdict;
use agent_coord_shared::coordinator::merge::PullEnd;
use agent_coord_shared::coordinator::task::MergeRecord;

use super::*;

pub(super) fn await_merge(
    engine: &mut Engine<'_>,
    task: &mut Task,
    assigned: &BTreeSet<(String, u64)>,
) -> Result<bool, Halt> {
    let pr = task.pr.unwrap_or_default();
    let pull = engine
        .gh
        .pull(&task.repo, pr)
        .map_err(|e| effects::github_halt(engine, task, "read the pull request", e))?;
    let end = PullEnd {
        state: pull.state.clone(),
        merged: pull.merged,
        merged_at: pull.merged_at.clone(),
        merged_by: pull.merged_by.clone(),
        merged_by_type: pull.merged_by_type.clone(),
        merge_commit_sha: pull.merge_commit_sha.clone(),
        base: pull.base_ref.clone(),
        head_sha: pull.head_sha.clone(),
    };
    let (base, head) = (task.base.clone(), task.head.clone().unwrap_or_default());
    let approved = Approved {
        base: &base,
        head: &head,
    };
    let mut verdict = merge::verdict(&end, approved, None);
    if verdict == MergeVerdict::NeedsTimeline {
        let timeline = engine.gh.timeline(&task.repo, pr).map_err(|e| {
            effects::github_halt(engine, task, "read the pull request's timeline", e)
        })?;
        verdict = merge::verdict(&end, approved, Some(&timeline));
    }
    match verdict {
        MergeVerdict::Open => {
            engine.observe(
                Some(&task.task_id),
                format!("pull request #{pr} waits for a human merge"),
            );
            Ok(false)
        }
        MergeVerdict::Settling(why) => {
            engine.observe(
                Some(&task.task_id),
                format!("#{pr}: {why}; looking again next tick"),
            );
            Ok(false)
        }
        MergeVerdict::NeedsTimeline => {
            // The verdict was asked again with the timeline; it never answers this twice.
            engine.observe(
                Some(&task.task_id),
                format!("#{pr}: merged by the merge queue; looking again next tick"),
            );
            Ok(false)
        }
        MergeVerdict::Refused(why) => {
            checkpoint::fail(engine, task, &why, why.clone(), Phase::AwaitMerge)
        }
        MergeVerdict::Human(record) => human_merge(engine, task, pr, record, assigned),
    }
}

/// Ends the task on a verified human merge: done, acknowledged on the issue while the
/// assignment stands; a merge record the checklist refuses fails the task instead.
fn human_merge(
    engine: &mut Engine<'_>,
    task: &mut Task,
    pr: u64,
    record: MergeRecord,
    assigned: &BTreeSet<(String, u64)>,
) -> Result<bool, Halt> {
    let (by, sha) = (record.merged_by.clone(), record.sha.clone());
    let how = match &record.queue {
        Some(queue) => format!("by {queue} for {by}, who put it into the merge queue,"),
        None => format!("by {by}"),
    };
    if let Err(lacks) = task.merged(record) {
        let why = lacks.to_string();
        return checkpoint::fail(engine, task, &why, why.clone(), Phase::AwaitMerge);
    }
    checkpoint::commit(
        engine,
        task,
        "coordinator.merged",
        format!("pull request #{pr} merged {how} as {sha}"),
        None,
    )?;
    if assigned.contains(&(task.repo.clone(), task.issue)) {
        let posted = effects::comment(engine, task, "ack", |id| {
            naming::ack_comment(pr, &by, &sha, id)
        })?;
        task.finish();
        checkpoint::save_published(engine, task, &posted, format!("done: {}", posted.url))?;
    } else {
        // The assignment was revoked: observation only, no acknowledgement.
        task.finish();
        checkpoint::commit(
            engine,
            task,
            "coordinator.phase",
            "done; the assignment was revoked, so no acknowledgement".into(),
            Some(Phase::AwaitMerge),
        )?;
    }
    engine.observe(Some(&task.task_id), format!("done: #{pr} merged {how}"));
    Ok(true)
}
