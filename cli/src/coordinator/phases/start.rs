//! The first two phases: accept the assigned issue (one comment) and check out the task's
//! worktree at its base.

use super::*;

pub(super) fn accept(
    engine: &mut Engine<'_>,
    task: &mut Task,
    assigned: &BTreeSet<(String, u64)>,
) -> Result<bool, Halt> {
    if !assigned.contains(&(task.repo.clone(), task.issue)) {
        checkpoint::park(engine, task, Phase::Accept, BLOCKER, "the issue is no longer assigned to this worker, so it was not accepted; assign it again and reply to resume".into())?;
        return Ok(true);
    }
    let login = engine.login.clone();
    let posted = effects::comment(engine, task, "accept", |id| {
        naming::accept_comment(&login, id)
    })?;
    task.phase = Phase::Checkout;
    task.updated_at = engine.ledger.now();
    engine.ledger.save(
        task,
        &[&posted.activity],
        Some(Note {
            kind: "coordinator.phase",
            message: format!("accepted: {}", posted.url),
            previous_phase: Some(Phase::Accept.wire_name().into()),
        }),
    )?;
    engine.observe(Some(&task.task_id), "accepted (comment posted)");
    Ok(true)
}

pub(super) fn checkout(engine: &mut Engine<'_>, task: &mut Task) -> Result<bool, Halt> {
    let publication = engine.setup.publication(task);
    let origin = engine
        .gh
        .repository(&task.repo)
        .map_err(|e| effects::github_halt(engine, task, "read the repository", e))?;
    let publication_url = if publication == task.repo {
        origin.clone_url.clone()
    } else {
        engine
            .gh
            .repository(&publication)
            .map_err(|e| effects::github_halt(engine, task, "read the publication repository", e))?
            .clone_url
    };
    let dir = engine.setup.worktree(task);
    let (signer_name, signer_email) = engine
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
    match git::prepare(&plan, &checkpoint::auth(engine)) {
        Ok(prepared) => {
            task.base_sha = Some(prepared.base_sha.clone());
            task.phase = Phase::Implement;
            checkpoint::commit(
                engine,
                task,
                "coordinator.phase",
                format!("worktree ready at base {}", prepared.base_sha),
                Some(Phase::Checkout),
            )?;
            Ok(true)
        }
        Err(e) => {
            let text = engine.secrets.scrub(&e.to_string());
            checkpoint::park(
                engine,
                task,
                Phase::Checkout,
                BLOCKER,
                format!("the checkout failed: {text}"),
            )?;
            Ok(true)
        }
    }
}
