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

/// What a task's checkout is made from, read once from GitHub and the configuration.
struct Parts {
    origin_url: String,
    publication_url: String,
    dir: std::path::PathBuf,
    signer_name: String,
    signer_email: String,
    protected: Vec<String>,
}

impl Parts {
    fn read(engine: &mut Engine<'_>, task: &Task) -> Result<Parts, Halt> {
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
                .map_err(|e| {
                    effects::github_halt(engine, task, "read the publication repository", e)
                })?
                .clone_url
        };
        let (signer_name, signer_email) = engine
            .setup
            .signer()
            .map(|s| (s.name, s.email))
            .unwrap_or_default();
        let mut protected = protected_branches(task);
        protected.push(origin.default_branch.clone());
        Ok(Parts {
            origin_url: origin.clone_url,
            publication_url,
            dir: engine.setup.worktree(task),
            signer_name,
            signer_email,
            protected,
        })
    }

    fn plan<'a>(&'a self, task: &'a Task) -> git::CheckoutPlan<'a> {
        git::CheckoutPlan {
            dir: &self.dir,
            task_id: &task.task_id,
            origin_url: &self.origin_url,
            publication_url: &self.publication_url,
            base: &task.base,
            branch: &task.branch,
            protected: &self.protected,
            user_name: &self.signer_name,
            user_email: &self.signer_email,
        }
    }
}

/// Rebuilds the worktree of a task this machine just took over (at its pinned base, and its
/// pushed head when it has one); a checkout that cannot be rebuilt parks the task with a
/// blocker at its phase.
pub(crate) fn adopt(engine: &mut Engine<'_>, task: &mut Task) -> Result<(), Halt> {
    let parts = Parts::read(engine, task)?;
    let Some(base_sha) = task.base_sha.clone() else {
        let resume = task.phase;
        return checkpoint::park(
            engine,
            task,
            resume,
            BLOCKER,
            "the task's worktree must be rebuilt here (a takeover from a dead machine, or a retry after it was removed) but its checkpoint has no pinned base; reply to check it out again".into(),
        );
    };
    let head = task.head.clone();
    match git::adopt(
        &parts.plan(task),
        &checkpoint::auth(engine),
        &base_sha,
        head.as_deref(),
    ) {
        Ok(prepared) => {
            engine.observe(
                Some(&task.task_id),
                format!(
                    "worktree rebuilt at {}",
                    &prepared.head[..12.min(prepared.head.len())]
                ),
            );
            Ok(())
        }
        Err(e) => {
            let text = engine.secrets.scrub(&e.to_string());
            let resume = task.phase;
            checkpoint::park(
                engine,
                task,
                resume,
                BLOCKER,
                format!("the task's worktree must be rebuilt here (a takeover from a dead machine, or a retry after it was removed) and cannot be: {text}"),
            )
        }
    }
}

pub(super) fn checkout(engine: &mut Engine<'_>, task: &mut Task) -> Result<bool, Halt> {
    let parts = Parts::read(engine, task)?;
    let plan = parts.plan(task);
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
