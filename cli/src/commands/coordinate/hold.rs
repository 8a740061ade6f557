//! `coordinate pause|resume|drain [--worker W | --repo R | --all]`: the operator's holds,
//! recorded on the state branch for every machine of the fleet (`coordinator::controls`).

use agent_coord_shared::coordinator::controls::Change;
use agent_coord_shared::coordinator::controls::Hold;
use agent_coord_shared::coordinator::controls::HoldKind;
use agent_coord_shared::coordinator::controls::Scope;
use agent_coord_shared::coordinator::operator::Operator;
use agent_coord_shared::ids::RepoSlug;
use agent_coord_shared::output::coordinate_ops::HoldChange;

use super::args::Common;
use super::args::Who;
use crate::command_error::CommandError;
use crate::context::Context;
use crate::coordinator::desk::operator_name;
use crate::coordinator::desk::Desk;
use crate::output::Report;

/// Which hold command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verb {
    Pause,
    Resume,
    Drain,
}

impl Verb {
    fn name(self) -> &'static str {
        match self {
            Verb::Pause => "pause",
            Verb::Resume => "resume",
            Verb::Drain => "drain",
        }
    }
}

/// Which work a hold covers: exactly one of `--worker`, `--repo`, `--all`
#[derive(clap::Args, Debug)]
#[group(required = true, multiple = false)]
pub(crate) struct ScopeArgs {
    /// One worker (a key of `workers`), on every machine that runs it
    #[arg(long, value_name = "ID")]
    worker: Option<String>,
    /// One target repository, whichever worker works on it
    #[arg(long, value_name = "OWNER/REPO")]
    repo: Option<RepoSlug>,
    /// Every worker and repository
    #[arg(long)]
    all: bool,
}

impl ScopeArgs {
    fn scope(&self) -> Scope {
        match (&self.worker, &self.repo) {
            (Some(w), _) => Scope::Worker(w.clone()),
            (None, Some(r)) => Scope::Repo(r.to_string()),
            (None, None) => Scope::All,
        }
    }
}

/// Pause (no new lanes, no admissions), drain (no admissions) or resume (lift both)
#[derive(clap::Args, Debug)]
pub(crate) struct HoldArgs {
    #[command(flatten)]
    scope: ScopeArgs,
    #[command(flatten)]
    who: Who,
    #[command(flatten)]
    common: Common,
}

pub(crate) fn cmd_coordinate_hold(
    cx: &Context,
    args: &HoldArgs,
    verb: Verb,
) -> Result<Report, CommandError> {
    let scope = args.scope.scope();
    if let Scope::Worker(w) = &scope {
        if let Some(config) = super::args::configuration(&args.common)? {
            if !config.workers.contains_key(w) {
                return Err(CommandError::usage(format!(
                    "no worker {w} in the configuration (configured: {})",
                    config
                        .workers
                        .keys()
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(", ")
                )));
            }
        }
    }
    let by = operator_name(args.who.operator.as_deref())?;
    let desk = Desk::open(cx)?;
    let mut warnings = Vec::new();
    if let Err(e) = desk.sync() {
        warnings.push(format!(
            "warning: deciding on this machine's state: {}",
            e.message
        ));
    }
    let at = desk.now();
    let op = Operator {
        by: by.as_str(),
        at: &at,
        reason: args.who.reason.as_deref(),
    };
    let change = desk.hold(&op, verb.name(), &scope, |controls| match verb {
        Verb::Resume => controls
            .resume(&scope)
            .map_err(|e| CommandError::usage(e.to_string())),
        Verb::Pause | Verb::Drain => Ok(controls.set(Hold {
            kind: if verb == Verb::Pause {
                HoldKind::Pause
            } else {
                HoldKind::Drain
            },
            scope: scope.clone(),
            by: op.by.to_owned(),
            at: op.at.to_owned(),
            reason: op.reason.map(str::to_owned),
        })),
    })?;
    warnings.extend(desk.publish());
    let holds = desk.controls()?.holds;
    let (set, lifted) = match change {
        Change::Set { hold, replaced } => (Some(hold), replaced.into_iter().collect()),
        Change::Lifted(lifted) => (None, lifted),
    };
    let report = if args.common.json {
        Report::json(&HoldChange {
            action: verb.name(),
            set,
            lifted,
            holds,
        })
    } else {
        let mut text = match (&set, verb) {
            (Some(hold), Verb::Pause) => format!(
                "{hold}: no new lanes start and no issue is admitted there; running lanes finish\n"
            ),
            (Some(hold), _) => {
                format!("{hold}: no issue is admitted there; admitted tasks go on to their end\n")
            }
            (None, _) => lifted.iter().map(|h| format!("lifted: {h}\n")).collect(),
        };
        if holds.is_empty() {
            text.push_str("no hold is in force\n");
        } else {
            for h in &holds {
                text.push_str(&format!("in force: {h}\n"));
            }
        }
        Report::text(text)
    };
    Ok(report.with_stderr(warnings))
}
