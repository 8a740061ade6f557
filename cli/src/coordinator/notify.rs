//! Delivering notifications through the worker's `notify_argv` (`coordinator::notify`
//! decides which and what they say): each due one runs at the end of a tick, all at once on
//! threads of their own, each through the one bounded runner with [`NOTIFY_TIMEOUT`], the
//! document on stdin, no token in its environment; each outcome is saved in its task's
//! checkpoint, so it goes out once and a failure is retried on later ticks, a bounded
//! number of times.

use std::time::Duration;

use agent_coord_shared::coordinator::notify;
use agent_coord_shared::coordinator::notify::Delivery;
use agent_coord_shared::coordinator::notify::Notice;
use agent_coord_shared::coordinator::task::Task;

use super::accounts;
use super::engine::Engine;
use super::ledger::Note;
use super::preflight::control_dir;
use crate::process;

/// How long one notification command may run.
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(10);
/// How much of its output is kept (for the failure's message).
const NOTIFY_OUTPUT: usize = 4096;

/// Runs every notification the worker's tasks on this machine owe now and saves each
/// outcome; nothing when the worker has no `notify_argv`.
pub(super) fn deliver(engine: &mut Engine<'_>) {
    let Some(argv) = engine.setup.worker.notify_argv.clone() else {
        return;
    };
    let tasks = match engine.ledger.tasks() {
        Ok(tasks) => tasks,
        Err(e) => {
            engine.error(None, format!("notifications not sent: {}", e.message));
            return;
        }
    };
    let now = engine.ledger.now();
    let due: Vec<(Task, Notice, Vec<u8>)> = tasks
        .into_iter()
        .filter_map(|t| {
            let n = notify::due(&t)?;
            let doc = serde_json::to_vec(&notify::document(&t, &n, &now)).ok()?;
            Some((t, n, doc))
        })
        .collect();
    if due.is_empty() {
        return;
    }
    super::failpoint("before-notify");
    let cwd = control_dir(engine.setup.worker);
    let remove_env = accounts::token_variables(engine.setup.config);
    let outcomes: Vec<Result<(), String>> = std::thread::scope(|scope| {
        let runs: Vec<_> = due
            .iter()
            .map(|(_, _, doc)| {
                let (argv, cwd, remove_env) = (&argv, &cwd, &remove_env);
                scope.spawn(move || run(argv, cwd, remove_env, doc.clone()))
            })
            .collect();
        runs.into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err("the notification thread panicked".into()))
            })
            .collect()
    });
    for ((task, notice, _), outcome) in due.into_iter().zip(outcomes) {
        save(engine, &task, &notice, outcome);
    }
}

/// Runs the command once with `doc` on stdin: `Ok` on exit 0.
fn run(
    argv: &[String],
    cwd: &std::path::Path,
    remove_env: &[String],
    doc: Vec<u8>,
) -> Result<(), String> {
    let done = process::run(&process::Spec {
        argv,
        cwd,
        env: Vec::new(),
        remove_env: remove_env.to_vec(),
        stdin: Some(doc),
        timeout: NOTIFY_TIMEOUT,
        stall: None,
        watch: None,
        max_output: NOTIFY_OUTPUT,
        gh_config_dir: None,
    })
    .map_err(|e| e.to_string())?;
    if done.success() {
        return Ok(());
    }
    let why = if done.timed_out() {
        format!("timed out after {} s", NOTIFY_TIMEOUT.as_secs())
    } else {
        match done.exit_code() {
            Some(code) => format!("exit {code}"),
            None => "killed by a signal".into(),
        }
    };
    let said = done.stderr.trim();
    Err(if said.is_empty() {
        why
    } else {
        format!("{why}: {said}")
    })
}

/// Records one outcome in the task as it is stored now (a save the operator's fence refuses
/// is tried again next tick: the notification is still due then).
fn save(engine: &mut Engine<'_>, task: &Task, notice: &Notice, outcome: Result<(), String>) {
    let current = match engine.ledger.task(&task.repo, task.issue) {
        Ok(Some(t)) => t,
        Ok(None) => return,
        Err(e) => {
            engine.error(Some(&task.task_id), e.message);
            return;
        }
    };
    let mut current = current;
    let error = outcome.as_ref().err().cloned().unwrap_or_default();
    let delivery = notify::record(&mut current.notices, &notice.key, outcome);
    // A failure to be retried is logged; one given up is an error of the tick.
    let (kind, message, failed) = match delivery {
        Delivery::Sent => (
            "coordinator.notified",
            format!("notified: {}", notice.key),
            false,
        ),
        Delivery::WillRetry(n) => (
            "coordinator.notify_failed",
            format!(
                "the notification {} failed (attempt {n} of {}): {}; tried again next tick",
                notice.key,
                notify::MAX_ATTEMPTS,
                engine.secrets.scrub(&error)
            ),
            false,
        ),
        Delivery::GaveUp => (
            "coordinator.notify_failed",
            format!(
                "the notification {} failed {} times and is given up: {}",
                notice.key,
                notify::MAX_ATTEMPTS,
                engine.secrets.scrub(&error)
            ),
            true,
        ),
    };
    current.updated_at = engine.ledger.now();
    let note = Note {
        kind,
        message: message.clone(),
        previous_phase: None,
    };
    match engine.ledger.save(&current, &[], Some(note)) {
        Ok(()) if failed => engine.error(Some(&task.task_id), message),
        Ok(()) => engine.observe(Some(&task.task_id), message),
        Err(e) => engine.error(Some(&task.task_id), e.message),
    }
}
