//! `coordinate explain OWNER/REPO#N`: why an issue is or is not a task. Gathers what
//! admission looks at — the configuration, the issue and its assignment events on GitHub
//! (through each watching worker's own account), the task, claim and holds in the
//! coordination state, the room under `max_lanes` — and lets
//! `coordinator::explain` say it.

use std::str::FromStr;

use agent_coord_shared::coordinator::config::CoordinatorConfig;
use agent_coord_shared::coordinator::evidence;
use agent_coord_shared::coordinator::explain;
use agent_coord_shared::coordinator::explain::ClaimFacts;
use agent_coord_shared::coordinator::explain::Facts;
use agent_coord_shared::coordinator::explain::IssueFacts;
use agent_coord_shared::coordinator::explain::Verdict;
use agent_coord_shared::coordinator::explain::WorkerFacts;
use agent_coord_shared::coordinator::slots;
use agent_coord_shared::ids::RepoSlug;

use super::args::Common;
use crate::command_error::CommandError;
use crate::context::Context;
use crate::coordinator::accounts;
use crate::coordinator::desk::Desk;
use crate::github::EtagCache;
use crate::github::GitHub;
use crate::output::Report;

/// Say why an issue is or is not a task
///
/// Walks admission's branches in order: the repository configured for a worker, the issue
/// open and assigned to a configured login, a human's assignment event, nobody else's claim,
/// no pause or drain, room under `max_lanes`. Exit 0 when it is a task or the next tick
/// admits it, 1 when it will not be admitted as things stand, 2 when GitHub or the state
/// could not be read.
#[derive(clap::Args, Debug)]
pub(crate) struct ExplainArgs {
    /// The issue, as OWNER/REPO#N
    #[arg(value_name = "OWNER/REPO#N")]
    issue: String,
    #[command(flatten)]
    common: Common,
}

pub(crate) fn cmd_coordinate_explain(
    cx: &Context,
    args: &ExplainArgs,
) -> Result<Report, CommandError> {
    let (repo, number) = parse_issue(&args.issue)?;
    let config = match super::args::configuration(&args.common)? {
        Some(c) => c,
        None => agent_coord_shared::coordinator::config::parse("")
            .map_err(|e| CommandError::operational(format!("an empty configuration: {e}")))?,
    };
    let desk = Desk::open(cx)?;
    let mut warnings = Vec::new();
    if let Err(e) = desk.sync() {
        warnings.push(format!(
            "warning: answering from this machine's state: {}",
            e.message
        ));
    }
    let (tasks, _) = desk.tasks()?;
    let controls = desk.controls()?;
    let task = tasks
        .iter()
        .find(|t| t.repo.eq_ignore_ascii_case(&repo) && t.issue == number);
    let watching: Vec<String> = config
        .workers
        .iter()
        .filter(|(_, w)| {
            w.repositories
                .keys()
                .any(|r| r.to_string().eq_ignore_ascii_case(&repo))
        })
        .map(|(id, _)| id.clone())
        .collect();
    let mut configured: Vec<String> = config
        .workers
        .values()
        .flat_map(|w| w.repositories.keys().map(ToString::to_string))
        .collect();
    configured.sort();
    configured.dedup();
    let here = desk.machine();
    let mut github: Result<IssueFacts, String> = Err("no worker could read it".into());
    let mut workers = Vec::new();
    if task.is_none() {
        for id in &watching {
            let (facts, issue) = worker_facts(&config, id, &repo, number, &tasks, &here);
            if github.is_err() {
                github = issue;
            }
            workers.push(facts);
        }
    }
    let claim = desk
        .claim_on(&repo, number)?
        .map(|(holder, expires_at)| ClaimFacts { holder, expires_at });
    let facts = Facts {
        repo: &repo,
        issue: number,
        configured,
        workers,
        github,
        task,
        claim,
        controls: &controls,
    };
    let answer = explain::explain(&facts);
    let mut report = if args.common.json {
        Report::json(&answer)
    } else {
        let mut text = format!("{}: {}\n", answer.issue, verdict_words(answer.verdict));
        for r in &answer.reasons {
            text.push_str(&format!("  {r}\n"));
        }
        Report::text(text)
    };
    report.exit = match answer.verdict {
        Verdict::Task | Verdict::Admissible => 0,
        Verdict::NotAdmitted => 1,
        Verdict::Unknown => 2,
    };
    Ok(report.with_stderr(warnings))
}

fn verdict_words(v: Verdict) -> &'static str {
    match v {
        Verdict::Task => "is a task",
        Verdict::Admissible => "is not a task yet; the next tick admits it",
        Verdict::NotAdmitted => "is not a task",
        Verdict::Unknown => "unknown",
    }
}

/// `OWNER/REPO#N` read into its parts.
fn parse_issue(text: &str) -> Result<(String, u64), CommandError> {
    let bad = || {
        CommandError::usage(format!(
            "{text:?} is not OWNER/REPO#N (for example acme/widget#7)"
        ))
    };
    let (repo, n) = text.trim().rsplit_once('#').ok_or_else(bad)?;
    let slug = RepoSlug::from_str(repo).map_err(|_| bad())?;
    let number = n.parse::<u64>().ok().filter(|n| *n > 0).ok_or_else(bad)?;
    Ok((slug.to_string(), number))
}

/// What one watching worker's account sees of the issue: its facts, and the issue itself.
fn worker_facts(
    config: &CoordinatorConfig,
    id: &str,
    repo: &str,
    number: u64,
    tasks: &[agent_coord_shared::coordinator::task::Task],
    here: &str,
) -> (WorkerFacts, Result<IssueFacts, String>) {
    let worker = config.workers.get(id);
    let login = config
        .sessions
        .get(id)
        .map(|s| s.github.login.clone())
        .unwrap_or_default();
    let mine: Vec<_> = tasks
        .iter()
        .filter(|t| t.worker == id && t.machine.as_deref().is_none_or(|m| m == here))
        .cloned()
        .collect();
    let max_lanes = worker.and_then(|w| w.max_lanes);
    let mut facts = WorkerFacts {
        worker: id.to_owned(),
        login: login.clone(),
        evidence: None,
        room: slots::admission_room(max_lanes, &mine),
        max_lanes,
    };
    let mut gh = match client(config, id) {
        Ok(gh) => gh,
        Err(e) => return (facts, Err(e)),
    };
    let issue = match gh.issue(repo, number) {
        Ok(i) => i,
        Err(e) => {
            return (
                facts,
                Err(format!("worker {id} could not read the issue: {e}")),
            )
        }
    };
    if issue
        .assignees
        .iter()
        .any(|a| a.eq_ignore_ascii_case(&login))
    {
        facts.evidence = Some(match gh.issue_events(repo, number) {
            Ok(events) => evidence::assignment_evidence(&events, &login).map_err(|e| e.to_string()),
            Err(e) => Err(format!("its events could not be read: {e}")),
        });
    }
    let github = Ok(IssueFacts {
        open: issue.state == "open",
        pull_request: issue.pull_request,
        assignees: issue.assignees,
    });
    (facts, github)
}

/// A GitHub client on worker `id`'s own account (its token never leaves this process).
fn client(config: &CoordinatorConfig, id: &str) -> Result<GitHub, String> {
    let session = config
        .sessions
        .get(id)
        .ok_or_else(|| format!("worker {id} has no session binding"))?;
    let token = accounts::resolve(id, &session.github).map_err(|e| e.to_string())?;
    GitHub::new(&config.api_url, token.expose(), EtagCache::default())
        .map_err(|e| format!("worker {id}'s GitHub client: {e}"))
}
