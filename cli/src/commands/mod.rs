//! The command tree: one file per command (`<Name>Args` + `cmd_<name>`), dispatched here.

use std::ffi::OsString;

use agent_coord_shared::rules::Ctx;
use agent_coord_shared::rules::Plan;
use agent_coord_shared::rules::RuleError;
use clap::error::ContextKind;
use clap::error::ContextValue;
use clap::error::ErrorKind as ClapKind;
use clap::Parser;
use clap::Subcommand;

use crate::command_error::CommandError;
use crate::command_error::ErrorKind;
use crate::context::Context;
use crate::context::Env;
use crate::context::GlobalArgs;
use crate::output::Report;
use crate::store::write::Committed;
use crate::store::Store;
use crate::store::TipSnapshot;
use crate::sync::SyncReport;

pub(crate) mod args;
mod batch_audit;
mod claim;
pub(crate) mod demo;
mod doctor;
mod gc;
mod heartbeat;
mod info;
mod init;
mod record_event;
mod register_batch;
mod release;
mod status;
mod status_stream;
pub(crate) mod sync;
mod transfer;

/// Git-native coordination for fleets of AI coding agents.
///
/// Agents record who owns which issue or pull request (claims), whether they are alive
/// (heartbeats), why work belongs together (batch manifests) and what happened (events).
/// Every write is a commit on a state branch of a git repository; `git log` is the audit
/// trail. Exit codes: 0 ok, 1 usage or validation, 2 operational (state UNKNOWN,
/// contention, unreadable), 3 CLAIM_REFUSED, 64 doctor --stack-json usage.
#[derive(Parser, Debug)]
#[command(
    name = "agent-coord",
    version,
    arg_required_else_help = true,
    disable_help_subcommand = false
)]
pub(crate) struct Cli {
    #[command(flatten)]
    globals: GlobalArgs,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// The commands. Parsed once per process, so variant sizes do not matter.
#[derive(Subcommand, Debug)]
#[allow(clippy::large_enum_variant)]
pub(crate) enum Command {
    Claim(claim::ClaimArgs),
    Release(release::ReleaseArgs),
    Heartbeat(heartbeat::HeartbeatArgs),
    RegisterBatch(register_batch::RegisterBatchArgs),
    RecordEvent(record_event::RecordEventArgs),
    Status(status::StatusArgs),
    BatchAudit(batch_audit::BatchAuditArgs),
    Version(info::VersionArgs),
    Config(info::ConfigArgs),
    Doctor(doctor::DoctorArgs),
    Demo(demo::DemoArgs),
    Import(transfer::ImportArgs),
    Export(transfer::ExportArgs),
    Sync(sync::SyncArgs),
    Init(init::InitArgs),
    Gc(gc::GcArgs),
    Serve(crate::serve::ServeArgs),
}

/// Parses `args` and runs the command.
pub(crate) fn dispatch(args: impl IntoIterator<Item = OsString>) -> Result<Report, CommandError> {
    let args: Vec<OsString> = args.into_iter().collect();
    if args.len() <= 1 {
        // No command at all: teach, successfully (env-provided options do not count).
        let help = <Cli as clap::CommandFactory>::command()
            .render_help()
            .to_string();
        return Ok(Report::text(help));
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        Err(e) => return clap_outcome(e, &args),
    };
    let mut cx = Context::new(cli.globals, Env::from_process())?;
    cx.direct_repo_dir = args.iter().any(|a| {
        a.to_str()
            .is_some_and(|a| a == "--repo-dir" || a.starts_with("--repo-dir="))
    });
    run_command(&cx, &cli.command)
}

/// Runs a parsed command in a context.
fn run_command(cx: &Context, command: &Command) -> Result<Report, CommandError> {
    match command {
        Command::Claim(a) => claim::cmd_claim(cx, a),
        Command::Serve(a) => crate::serve::cmd_serve(cx, a),
        Command::Release(a) => release::cmd_release(cx, a),
        Command::Heartbeat(a) => heartbeat::cmd_heartbeat(cx, a),
        Command::RegisterBatch(a) => register_batch::cmd_register_batch(cx, a),
        Command::RecordEvent(a) => record_event::cmd_record_event(cx, a),
        Command::Status(a) => status::cmd_status(cx, a),
        Command::BatchAudit(a) => batch_audit::cmd_batch_audit(cx, a),
        Command::Version(a) => info::cmd_version(a),
        Command::Config(a) => info::cmd_config(a),
        Command::Doctor(a) => doctor::cmd_doctor(cx, a),
        Command::Demo(a) => demo::cmd_demo(a),
        Command::Import(a) => transfer::cmd_import(cx, a),
        Command::Export(a) => transfer::cmd_export(cx, a),
        Command::Sync(a) => sync::cmd_sync(cx, a),
        Command::Init(a) => init::cmd_init(cx, a),
        Command::Gc(a) => gc::cmd_gc(cx, a),
    }
}

/// Turns a clap outcome into ours: help and version are successes on stdout; usage errors
/// exit 1 (64 under `doctor --stack-json`) with one sentence on stderr.
fn clap_outcome(e: clap::Error, args: &[OsString]) -> Result<Report, CommandError> {
    match e.kind() {
        ClapKind::DisplayHelp
        | ClapKind::DisplayVersion
        | ClapKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            return Ok(Report::text(e.render().to_string()))
        }
        _ => {}
    }
    let message = match (e.kind(), e.get(ContextKind::InvalidArg)) {
        (ClapKind::ValueValidation, _) => {
            match std::error::Error::source(&e).map(ToString::to_string) {
                // Our identifier types already say `invalid <field>: <value>`.
                Some(msg) if msg.starts_with("invalid ") && msg.contains(": ") => msg,
                _ => match (
                    e.get(ContextKind::InvalidArg),
                    e.get(ContextKind::InvalidValue),
                ) {
                    (Some(ContextValue::String(arg)), Some(ContextValue::String(value))) => {
                        let flag = arg.split(' ').next().unwrap_or(arg);
                        format!("invalid argument: {flag} {value}")
                    }
                    _ => first_line(&e),
                },
            }
        }
        (ClapKind::InvalidSubcommand, _) => match e.get(ContextKind::InvalidSubcommand) {
            Some(ContextValue::String(cmd)) => format!("unknown command: {cmd} (see --help)"),
            _ => first_line(&e),
        },
        (ClapKind::MissingRequiredArgument, Some(ContextValue::Strings(missing))) => {
            let flag = missing
                .first()
                .map(|m| m.split(' ').next().unwrap_or(m).to_owned())
                .unwrap_or_default();
            format!("missing required {flag}")
        }
        _ => first_line(&e),
    };
    let stack = args.iter().any(|a| a == "doctor") && args.iter().any(|a| a == "--stack-json");
    let kind = if stack {
        ErrorKind::StackUsage
    } else {
        ErrorKind::Usage
    };
    Err(CommandError { kind, message })
}

fn first_line(e: &clap::Error) -> String {
    let rendered = e.render().to_string();
    let line = rendered.lines().next().unwrap_or_default();
    let line = line.strip_prefix("error: ").unwrap_or(line);
    format!("{line} (see --help)")
}

/// What a write produced: the committed plan, notices for stderr, the store it was written
/// to, and (with `--sync`) what the publishing sync decided.
pub(crate) struct Written<T> {
    pub(crate) done: Committed<T>,
    pub(crate) notices: Vec<String>,
    pub(crate) store: Store,
    pub(crate) synced: Option<SyncReport>,
}

/// Opens the store and runs a write rule in a CAS transaction on it.
pub(crate) fn write<T>(
    cx: &Context,
    decide: impl Fn(&TipSnapshot<'_>, &Ctx) -> Result<Plan<T>, RuleError>,
) -> Result<Written<T>, CommandError> {
    write_synced(cx, &sync::SyncFlags::default(), decide)
}

/// Like [`write`], and with `--sync` (or `agent-coord.sync=true`): sync first so the rule
/// decides on the fleet's latest state, write, then publish. The write counts only once
/// the remote accepted it; the returned report says what reconciliation decided.
pub(crate) fn write_synced<T>(
    cx: &Context,
    flags: &sync::SyncFlags,
    decide: impl Fn(&TipSnapshot<'_>, &Ctx) -> Result<Plan<T>, RuleError>,
) -> Result<Written<T>, CommandError> {
    let (store, mut notices) = cx.open_store(true)?;
    let remote = flags.remote(&store);
    if let (Some(remote), false) = (&remote, flags.publish_only) {
        // Decide on the fleet's latest state, not on what this clone last fetched.
        sync::run_sync(cx, &store, remote)?;
    }
    let session = cx.identity(&store).session_id;
    let trailer: Vec<(&str, String)> = session
        .into_iter()
        .map(|s| ("Agent-Coord-Session", s))
        .collect();
    let committed = store.transact(&trailer, |snap| -> Result<_, CommandError> {
        Ok(decide(snap, &cx.rule_ctx(&store))?)
    })?;
    notices.extend(store.take_warnings());
    let report = match &remote {
        Some(remote) => Some(sync::run_sync(cx, &store, remote).map_err(|e| {
            CommandError::operational(format!(
                "written locally but not published: {}; run `agent-coord sync` to publish it",
                e.message
            ))
        })?),
        None => None,
    };
    Ok(Written {
        done: committed,
        notices,
        store,
        synced: report,
    })
}

/// Adds the plan's warnings to the notices, in order.
pub(crate) fn stderr_lines<T>(notices: Vec<String>, plan: &Plan<T>) -> Vec<String> {
    notices
        .into_iter()
        .chain(plan.warnings.iter().cloned())
        .collect()
}
