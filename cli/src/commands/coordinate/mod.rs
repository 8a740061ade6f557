//! `agent-coord coordinate`: run the issue coordinator — one tick, or a loop with `--follow`.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::sync::mpsc::Receiver;
use std::sync::mpsc::RecvTimeoutError;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

use agent_coord_shared::coordinator::config::CoordinatorConfig;
use agent_coord_shared::coordinator::webhook::route::Target;
use agent_coord_shared::coordinator::webhook::route::Wake;
use agent_coord_shared::output::coordinate::CoordinateReport;
use agent_coord_shared::output::coordinate::WorkerCheck;

use crate::command_error::CommandError;
use crate::command_error::ErrorKind;
use crate::context::Context;
use crate::coordinator::config_file::config_path;
use crate::coordinator::config_file::load;
use crate::coordinator::preflight;
use crate::coordinator::running;
use crate::coordinator::tick;
use crate::coordinator::webhook;
use crate::output::Report;

/// Drive assigned GitHub issues to approved, Ready pull requests a human merges
///
/// Each configured worker watches its repositories for open issues a human assigned to its
/// GitHub login, accepts each with a comment, checks it out under its workspace root, runs
/// its implementer and reviewer lanes, commits signed, pushes, opens a draft pull request,
/// runs the repository's checks, the four PR gate reviewers (Grok, then Codex), observes
/// GitHub CI and runs the trusted readiness script, all on the exact head; then the review
/// account approves it and the pull request leaves draft. A task is done after a verified
/// human merge. The coordinator never merges, and models never touch git or GitHub. Run
/// `coordinate --check-config --worker ID` first.
///
/// Lanes run on their own: a tick starts every lane the caps allow (`max_lanes`,
/// `max_vendor_lanes`, `machine_max_lanes`) under a detached supervisor and moves on; the
/// next tick, `--follow` as soon as a lane ends, or `--wait` collects them, also after a
/// restart. Machines configured with the same worker split its issues, and take over the
/// tasks of one whose heartbeat is dead. With `--listen`, a signed GitHub webhook delivery
/// wakes the task it points at between polls.
///
/// The configuration (default $XDG_CONFIG_HOME/agent-coord/coordinator.json) holds the
/// `workers` of the coordinator spec plus explicit `sessions` bindings (GitHub account and
/// where its token comes from, git signing identity, the six lane argv). Absent or empty =
/// no worker. Exit codes: 0 ok, 1 bad configuration or usage, 2 preflight failed, GitHub or
/// the state unreachable, or the worker already ticking.
///
/// The operator's commands (`coordinate tasks`, `explain`, `cancel`, `retry`, `pause`,
/// `resume`, `drain`) look at and steer what the coordinator does; each write is a
/// `human_intervention` event on the state branch naming who ran it.
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub(crate) struct CoordinateArgs {
    #[command(subcommand)]
    action: Option<ops::Action>,
    /// The worker session to tick (a key of `workers`)
    #[arg(long, value_name = "ID", conflicts_with = "all")]
    worker: Option<String>,
    /// Tick every configured worker
    #[arg(long)]
    all: bool,
    /// Keep ticking every `poll_seconds` until interrupted (Ctrl-C finishes the current step
    /// and exits 0)
    #[arg(long)]
    follow: bool,
    /// The configuration file
    #[arg(long, value_name = "PATH", env = "AGENT_COORD_COORDINATOR_CONFIG")]
    config: Option<PathBuf>,
    /// Only run the preflight and print each check with ok/failed and why
    #[arg(long)]
    check_config: bool,
    /// Print observations as JSON (one document per tick)
    #[arg(long)]
    json: bool,
    /// Wait for the lanes the tick starts or finds running, and advance each task as its
    /// lanes end, until none runs (without it a tick starts lanes and returns; a later tick
    /// or --follow collects them)
    #[arg(long, conflicts_with = "follow")]
    wait: bool,
    /// With --follow, also take GitHub webhook deliveries on ADDR (PORT, or HOST:PORT; a
    /// bare port binds 127.0.0.1, any other address only when named) at POST /webhook, and
    /// wake the task a delivery points at (issues, comments, pull requests, reviews, checks,
    /// workflow runs, statuses) at once instead of at the next poll; the task still re-reads
    /// GitHub, and polling stays the backstop
    #[arg(long, value_name = "ADDR", requires_all = ["follow", "webhook_secret_env"])]
    listen: Option<String>,
    /// The environment variable holding the webhook's secret: a delivery whose
    /// X-Hub-Signature-256 does not verify under it is refused (401)
    #[arg(long, value_name = "VAR", requires = "listen")]
    webhook_secret_env: Option<String>,
}

mod args;
mod explain;
mod hold;
mod ops;
mod task_ops;
mod tasks;

pub(crate) fn cmd_coordinate(cx: &Context, args: &CoordinateArgs) -> Result<Report, CommandError> {
    if let Some(action) = &args.action {
        return ops::run(cx, action);
    }
    let at = config_path(args.config.as_deref())?;
    let path = &at.path;
    let config = match load(&at)? {
        Some(c) if !c.workers.is_empty() => c,
        _ => {
            let notice = format!(
                "notice: no coordinator workers configured in {}; nothing to do",
                path.display()
            );
            return Ok(if args.json {
                Report::json(&CoordinateReport {
                    workers: Vec::new(),
                    notice: Some(notice),
                })
            } else {
                Report::line(notice)
            });
        }
    };
    let workers: Vec<String> = match (&args.worker, args.all) {
        (Some(w), _) => {
            if !config.workers.contains_key(w) {
                return Err(CommandError::usage(format!(
                    "no worker {w} in {} (configured: {})",
                    path.display(),
                    config
                        .workers
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
            vec![w.clone()]
        }
        (None, true) => config.workers.keys().cloned().collect(),
        (None, false) => {
            return Err(CommandError::usage(
                "pass --worker ID or --all (see coordinate --help)",
            ))
        }
    };
    if args.check_config {
        return check_config(&config, &workers, args.json);
    }
    let stop = Arc::new(AtomicBool::new(false));
    if args.follow {
        for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            signal_hook::flag::register(signal, Arc::clone(&stop))
                .map_err(|e| CommandError::operational(format!("cannot watch for Ctrl-C: {e}")))?;
        }
    }
    // Deliveries wake tasks between polls; the listener stops when this is dropped.
    let (mut wakes, _listener) = match &args.listen {
        Some(at) => {
            let (rx, listener) = listen(&config, &workers, at, args.webhook_secret_env.as_deref())?;
            (Some(rx), Some(listener))
        }
        None => (None, None),
    };
    let mut failed = false;
    // Tokens seen to authenticate as their logins, kept across the ticks of a `--follow` loop
    // so an idle tick asks GitHub only for its polls; forgotten after any failed tick.
    let mut verified = preflight::Verified::default();
    // What each worker's last full tick saw assigned: a collecting or woken tick goes on
    // with it.
    let mut assigned: BTreeMap<String, BTreeSet<(String, u64)>> = BTreeMap::new();
    let mut next = Next::Full;
    let mut started = Instant::now();
    loop {
        if next == Next::Full {
            started = Instant::now();
        }
        for w in &workers {
            let last = || assigned.get(w).cloned().unwrap_or_default();
            let wait = match &next {
                Next::Collect => tick::Wait::Collect(last()),
                Next::Woken(woken) => {
                    let targets = targets_of(&config, w, woken);
                    if targets.is_empty() {
                        continue;
                    }
                    tick::Wait::Woken(tick::Woken {
                        assigned: last(),
                        targets,
                    })
                }
                Next::Full if args.wait => tick::Wait::ForLanes,
                Next::Full => tick::Wait::No,
            };
            let report = tick::tick(cx, &config, w, &stop, &mut verified, wait)?;
            if report.failed() {
                verified.forget();
            }
            failed |= report.failed();
            if next == Next::Full {
                assigned.insert(w.clone(), report.assigned.clone());
            }
            print_report(&report, args.json);
            if stop.load(Ordering::SeqCst) {
                break;
            }
        }
        if !args.follow {
            break;
        }
        failed = false;
        let poll = workers
            .iter()
            .filter_map(|w| config.workers.get(w))
            .map(|w| w.poll_seconds)
            .min()
            .unwrap_or(30);
        // The next full tick comes after poll_seconds; as soon as a lane ends before that, a
        // collecting tick advances its task (and those waiting for a slot) without polling
        // the others, and as soon as a webhook delivery arrives, a woken tick advances the
        // tasks it points at (an assignment: a full tick, to discover it).
        next = Next::Full;
        while started.elapsed() < Duration::from_secs(poll) {
            if stop.load(Ordering::SeqCst) {
                return Ok(Report::default());
            }
            if lane_ended(&config, &workers) {
                next = Next::Collect;
                break;
            }
            if let Some(woken) = pause(&mut wakes) {
                next = woken;
                break;
            }
        }
        if stop.load(Ordering::SeqCst) {
            return Ok(Report::default());
        }
    }
    if failed {
        return Err(CommandError::new(
            ErrorKind::Operational,
            "the tick did not complete everything (see the observations above)",
        ));
    }
    Ok(Report::default())
}

/// What the `--follow` loop's next tick is.
#[derive(Debug, PartialEq, Eq)]
enum Next {
    /// Discovery and every task (after `poll_seconds`, or an assignment's delivery).
    Full,
    /// The tasks whose lanes ended, and those waiting for a slot.
    Collect,
    /// The tasks these webhook deliveries point at.
    Woken(Vec<Wake>),
}

/// How long the loop waits between its looks for an ended lane.
const LOOK_EVERY: Duration = Duration::from_millis(100);

/// Waits up to [`LOOK_EVERY`] for webhook deliveries (only sleeps without a listener);
/// returns the tick they ask for, every wake that arrived meanwhile taken with it.
fn pause(wakes: &mut Option<Receiver<Wake>>) -> Option<Next> {
    let Some(rx) = wakes.as_ref() else {
        std::thread::sleep(LOOK_EVERY);
        return None;
    };
    let first = match rx.recv_timeout(LOOK_EVERY) {
        Ok(wake) => wake,
        Err(RecvTimeoutError::Timeout) => return None,
        Err(RecvTimeoutError::Disconnected) => {
            // The listener is gone (it only stops when dropped): poll on.
            *wakes = None;
            return None;
        }
    };
    let all: Vec<Wake> = std::iter::once(first).chain(rx.try_iter()).collect();
    if all.iter().any(|w| matches!(w, Wake::Rediscover { .. })) {
        return Some(Next::Full);
    }
    Some(Next::Woken(all))
}

/// The targets among `wakes` in worker `w`'s repositories.
fn targets_of(config: &CoordinatorConfig, w: &str, wakes: &[Wake]) -> BTreeSet<(String, Target)> {
    let Some(worker) = config.workers.get(w) else {
        return BTreeSet::new();
    };
    let mut out = BTreeSet::new();
    for wake in wakes {
        let Wake::Tasks { repo, targets } = wake else {
            continue;
        };
        let mine = worker
            .repositories
            .keys()
            .any(|r| r.to_string().eq_ignore_ascii_case(repo));
        if mine {
            out.extend(targets.iter().map(|t| (repo.clone(), t.clone())));
        }
    }
    out
}

/// Starts the webhook listener of `--listen AT` with the secret in `secret_env`, for the
/// repositories of `workers`; returns where its wakes arrive, and the listener.
fn listen(
    config: &CoordinatorConfig,
    workers: &[String],
    at: &str,
    secret_env: Option<&str>,
) -> Result<(Receiver<Wake>, webhook::listen::Listener), CommandError> {
    let at = webhook::addr::parse(at).map_err(CommandError::usage)?;
    let name = secret_env.ok_or_else(|| {
        CommandError::usage("--listen needs --webhook-secret-env VAR (the webhook's secret)")
    })?;
    let secret = std::env::var_os(name).unwrap_or_default();
    if secret.is_empty() {
        return Err(CommandError::usage(format!(
            "--webhook-secret-env {name}: the variable is unset or empty; set it to the webhook's secret"
        )));
    }
    let repos: BTreeSet<String> = workers
        .iter()
        .filter_map(|w| config.workers.get(w))
        .flat_map(|w| w.repositories.keys().map(ToString::to_string))
        .collect();
    let (tx, rx) = std::sync::mpsc::sync_channel(webhook::router::WAKES_QUEUED);
    let hooks = webhook::router::Hooks::new(
        secret.as_encoded_bytes().to_vec(),
        repos.into_iter().collect(),
        webhook::router::Limits::default(),
        tx,
    );
    let listener = webhook::listen::start(at, hooks)?;
    Ok((rx, listener))
}

/// Whether a lane of one of `workers` ended and waits to be collected.
fn lane_ended(config: &CoordinatorConfig, workers: &[String]) -> bool {
    workers.iter().any(|w| {
        config
            .workers
            .get(w)
            .is_some_and(|c| running::any_settled(&preflight::control_dir(c), w))
    })
}

/// Prints a tick's report as it happens (a `--follow` loop streams).
fn print_report(report: &tick::TickReport, json: bool) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if json {
        let _ = writeln!(out, "{}", report.to_json());
    } else {
        for line in report.lines() {
            let _ = writeln!(out, "{line}");
        }
    }
    let _ = out.flush();
}

fn check_config(
    config: &CoordinatorConfig,
    workers: &[String],
    json: bool,
) -> Result<Report, CommandError> {
    let mut docs = Vec::new();
    let mut text = String::new();
    let mut all_ok = true;
    for w in workers {
        let outcome = preflight::run(config, w, &mut preflight::Verified::default());
        all_ok &= outcome.checks.iter().all(|c| c.ok);
        text.push_str(&format!("worker {w}\n"));
        for c in &outcome.checks {
            let verdict = if c.ok { "ok" } else { "FAILED" };
            text.push_str(&format!("  {verdict:<6} {}: {}\n", c.name, c.detail));
        }
        docs.push(WorkerCheck {
            worker: w.clone(),
            ok: outcome.checks.iter().all(|c| c.ok),
            checks: outcome.checks.iter().map(|c| c.to_output()).collect(),
        });
    }
    let mut report = if json {
        Report::json(&CoordinateReport {
            workers: docs,
            notice: None,
        })
    } else {
        Report::text(text)
    };
    if !all_ok {
        report.exit = 2;
    }
    Ok(report)
}
