//! Publishing and testing a head: the signed, verified commit, the push (never forced), the
//! draft pull request, and `check_argv` on the exact clean signed head.

use std::path::Path;

use super::*;

pub(super) fn publish(engine: &mut Engine<'_>, task: &mut Task) -> Result<bool, Halt> {
    let dir = engine.setup.worktree(task);
    let Some(head) = signed_head(engine, task, &dir)? else {
        return Ok(true);
    };
    push_head(engine, task, &dir, &head)?;
    if task.pr.is_none() {
        open_draft(engine, task)?;
    }
    task.phase = Phase::Checks;
    checkpoint::commit(
        engine,
        task,
        "coordinator.phase",
        format!("head {head} published"),
        Some(Phase::Publish),
    )?;
    Ok(true)
}

/// Commits the worktree signed and verifies the signature; returns the head, or `None`
/// after parking on the blocker that stopped it (no identity, a failed commit, a
/// signature that does not verify).
fn signed_head(
    engine: &mut Engine<'_>,
    task: &mut Task,
    dir: &Path,
) -> Result<Option<String>, Halt> {
    let Some(signer) = engine.setup.signer() else {
        checkpoint::park(
            engine,
            task,
            Phase::Publish,
            BLOCKER,
            "the worker has no git identity to sign with".into(),
        )?;
        return Ok(None);
    };
    let message = format!(
        "{}\n\n{}\n{}\n\nRefs #{}",
        naming::pr_title(task.issue, &task.title),
        task.carry.summary_en.as_deref().unwrap_or_default(),
        task.carry.summary_de.as_deref().unwrap_or_default(),
        task.issue
    );
    if let Err(e) = git::commit_all(dir, &message, &signer) {
        let text = engine.secrets.scrub(&e.to_string());
        checkpoint::park(
            engine,
            task,
            Phase::Publish,
            BLOCKER,
            format!("the signed commit failed: {text}"),
        )?;
        return Ok(None);
    }
    crate::coordinator::failpoint("committed");
    let head = git::head(dir).map_err(|e| checkpoint::git_halt(engine, task, e))?;
    if let Err(e) = git::verify(dir, &head, &signer) {
        let text = engine.secrets.scrub(&e.to_string());
        checkpoint::park(
            engine,
            task,
            Phase::Publish,
            BLOCKER,
            format!("the commit signature does not verify: {text}"),
        )?;
        return Ok(None);
    }
    Ok(Some(head))
}

/// Pushes `head` to the publication branch unless it is there already (never forced),
/// and saves it as the task's head.
fn push_head(engine: &mut Engine<'_>, task: &mut Task, dir: &Path, head: &str) -> Result<(), Halt> {
    let protected = protected_branches(task);
    let published = git::remote_branch(dir, "publication", &task.branch, &checkpoint::auth(engine))
        .map_err(|e| checkpoint::git_halt(engine, task, e))?;
    if published.as_deref() == Some(head) {
        // Already pushed (the coordinator stopped after the push): nothing to send.
    } else if let Err(e) = git::push(
        dir,
        &task.branch,
        &task.base,
        &protected,
        &checkpoint::auth(engine),
    ) {
        let text = engine.secrets.scrub(&e.to_string());
        return Err(Halt::Retry {
            task: task.task_id.clone(),
            message: format!("push failed: {text}"),
        });
    }
    crate::coordinator::failpoint("pushed");
    if task.head.as_deref() != Some(head) {
        task.set_head(head);
        checkpoint::commit(
            engine,
            task,
            "coordinator.pushed",
            format!("pushed signed head {head}"),
            None,
        )?;
    }
    Ok(())
}

/// Opens the task's draft pull request on the publication repository and saves it.
fn open_draft(engine: &mut Engine<'_>, task: &mut Task) -> Result<(), Halt> {
    let publication = engine.setup.publication(task);
    let posted = effects::draft(engine, task, &publication)?;
    task.pr = Some(posted.id);
    task.pr_url = Some(posted.url.clone());
    let message = format!("draft pull request #{} opened: {}", posted.id, posted.url);
    checkpoint::save_published(engine, task, &posted, message)?;
    engine.observe(
        Some(&task.task_id),
        format!("draft pull request #{} opened", posted.id),
    );
    Ok(())
}

pub(super) fn checks(engine: &mut Engine<'_>, task: &mut Task) -> Result<bool, Halt> {
    let dir = engine.setup.worktree(task);
    let clean = git::is_clean(&dir).map_err(|e| checkpoint::git_halt(engine, task, e))?;
    let head = git::head(&dir).map_err(|e| checkpoint::git_halt(engine, task, e))?;
    if !clean || task.head.as_deref() != Some(head.as_str()) {
        // Not the exact clean signed head: publish what is there first.
        task.phase = Phase::Publish;
        checkpoint::commit(
            engine,
            task,
            "coordinator.phase",
            "worktree differs from the published head".into(),
            Some(Phase::Checks),
        )?;
        return Ok(true);
    }
    let Some(rc) = engine.setup.repo_config(&task.repo) else {
        return Ok(false);
    };
    let env = engine.setup.trusted_env(task, &head);
    let spec = process::Spec {
        argv: &rc.check_argv,
        cwd: &dir,
        env,
        remove_env: accounts::token_variables(engine.setup.config),
        stdin: None,
        timeout: Duration::from_secs(engine.setup.worker.check_timeout),
        stall: None,
        watch: None,
        max_output: CHECK_CAPTURE,
        gh_config_dir: None,
    };
    let (passed, output) = match process::run(&spec) {
        Ok(done) => {
            let why = if done.timed_out() {
                format!("timed out after {} s\n", engine.setup.worker.check_timeout)
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
    let still_clean = git::is_clean(&dir).map_err(|e| checkpoint::git_halt(engine, task, e))?;
    let (passed, output) = if still_clean {
        (passed, output)
    } else {
        (false, format!("the checks changed the worktree\n{output}"))
    };
    let output = redact::bound_tail(&engine.secrets.scrub(&output), redact::CHECK_OUTPUT_MAX);
    task.apply_checks(&head, passed, &output);
    let verdict = if passed { "passed" } else { "failed" };
    checkpoint::commit(
        engine,
        task,
        "coordinator.phase",
        format!("checks {verdict} on {head}"),
        Some(Phase::Checks),
    )?;
    engine.observe(
        Some(&task.task_id),
        format!("checks {verdict} on {}", &head[..head.len().min(12)]),
    );
    Ok(true)
}
