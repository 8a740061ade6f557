//! The command tree: one file per command (`<Name>Args` + `cmd_<name>`), dispatched here.

use std::ffi::OsString;

use clap::error::ContextKind;
use clap::error::ContextValue;
use clap::error::ErrorKind as ClapKind;
use clap::parser::ValueSource;
use clap::CommandFactory;
use clap::FromArgMatches;
use clap::Parser;
use clap::Subcommand;

use crate::command_error::CommandError;
use crate::command_error::ErrorKind;
use crate::context::Context;
use crate::context::Env;
use crate::context::GlobalArgs;
use crate::output::Report;

pub(crate) mod args;
mod batch_audit;
mod claim;
mod completions;
mod coordinate;
mod demo;
mod doctor;
mod gc;
mod gc_machines;
mod heartbeat;
mod info;
mod init;
mod lane;
mod lane_supervisor;
mod record_event;
mod register_batch;
mod release;
mod serve;
mod status;
mod status_stream;
mod sync;
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
    /// Log diagnostics to stderr (-v: debug, -vv: trace; RUST_LOG takes precedence)
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    verbose: u8,
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
    Serve(serve::ServeArgs),
    Coordinate(coordinate::CoordinateArgs),
    Lane(lane::LaneArgs),
    Completions(completions::CompletionsArgs),
    #[command(hide = true)]
    Man(completions::ManArgs),
    #[command(hide = true)]
    LaneSupervisor(lane_supervisor::LaneSupervisorArgs),
}

/// Each command's name and the function that defines its arguments, in [`Command`]'s order
/// (a test checks both against the derived command line).
type Definition = (&'static str, fn(clap::Command) -> clap::Command);

/// The commands as [`runnable`] defines them.
const COMMANDS: [Definition; 22] = [
    ("claim", <claim::ClaimArgs as clap::Args>::augment_args),
    (
        "release",
        <release::ReleaseArgs as clap::Args>::augment_args,
    ),
    (
        "heartbeat",
        <heartbeat::HeartbeatArgs as clap::Args>::augment_args,
    ),
    (
        "register-batch",
        <register_batch::RegisterBatchArgs as clap::Args>::augment_args,
    ),
    (
        "record-event",
        <record_event::RecordEventArgs as clap::Args>::augment_args,
    ),
    ("status", <status::StatusArgs as clap::Args>::augment_args),
    (
        "batch-audit",
        <batch_audit::BatchAuditArgs as clap::Args>::augment_args,
    ),
    ("version", <info::VersionArgs as clap::Args>::augment_args),
    ("config", <info::ConfigArgs as clap::Args>::augment_args),
    ("doctor", <doctor::DoctorArgs as clap::Args>::augment_args),
    ("demo", <demo::DemoArgs as clap::Args>::augment_args),
    ("import", <transfer::ImportArgs as clap::Args>::augment_args),
    ("export", <transfer::ExportArgs as clap::Args>::augment_args),
    ("sync", <sync::SyncArgs as clap::Args>::augment_args),
    ("init", <init::InitArgs as clap::Args>::augment_args),
    ("gc", <gc::GcArgs as clap::Args>::augment_args),
    ("serve", <serve::ServeArgs as clap::Args>::augment_args),
    (
        "coordinate",
        <coordinate::CoordinateArgs as clap::Args>::augment_args,
    ),
    ("lane", <lane::LaneArgs as clap::Args>::augment_args),
    (
        "completions",
        <completions::CompletionsArgs as clap::Args>::augment_args,
    ),
    ("man", <completions::ManArgs as clap::Args>::augment_args),
    (
        "lane-supervisor",
        <lane_supervisor::LaneSupervisorArgs as clap::Args>::augment_args,
    ),
];

/// The command line as a command that runs needs it: the global options, and each
/// command's arguments defined only if it is the one invoked (clap's `defer`). Defining all
/// twenty-two commands' arguments, then dropping them, was a third of a claim's
/// instructions. Only a successful parse is taken from it: help, versions and every usage
/// error come from the full [`Cli`], so what they print is unchanged.
fn runnable() -> clap::Command {
    let top = <GlobalArgs as clap::Args>::augment_args(clap::Command::new("agent-coord"))
        .arg(
            clap::Arg::new("verbose")
                .short('v')
                .long("verbose")
                .global(true)
                .action(clap::ArgAction::Count),
        )
        .subcommand_required(true);
    COMMANDS.iter().fold(top, |cmd, (name, define)| {
        cmd.subcommand(clap::Command::new(*name).defer(*define))
    })
}

/// Parses `args` (program name first) with [`runnable`], else with the full [`Cli`].
fn parse(args: &[OsString]) -> Result<(Cli, clap::ArgMatches), clap::Error> {
    let quick = runnable()
        .try_get_matches_from(args)
        .and_then(|m| Cli::from_arg_matches(&m).map(|cli| (cli, m)));
    if quick.is_ok() {
        return quick;
    }
    Cli::command()
        .try_get_matches_from(args)
        .and_then(|m| Cli::from_arg_matches(&m).map(|cli| (cli, m)))
}

/// Parses `args` and runs the command.
pub(crate) fn dispatch(args: impl IntoIterator<Item = OsString>) -> Result<Report, CommandError> {
    let args: Vec<OsString> = args.into_iter().collect();
    if args.len() <= 1 {
        // No command at all: teach, successfully (env-provided options do not count).
        let help = Cli::command().render_help().to_string();
        return Ok(Report::text(help));
    }
    let (cli, matches) = match parse(&args) {
        Ok(parsed) => parsed,
        Err(e) => return clap_outcome(e, &args),
    };
    crate::logging::init(cli.verbose);
    let mut cx = Context::new(cli.globals, Env::from_process())?;
    // Only the flag selects a repository for `doctor --stack-json`, not the environment.
    cx.direct_repo_dir = matches.value_source("repo_dir") == Some(ValueSource::CommandLine);
    crate::phase::mark("parse");
    run_command(&cx, &cli.command)
}

/// Runs a parsed command in a context.
fn run_command(cx: &Context, command: &Command) -> Result<Report, CommandError> {
    match command {
        Command::Claim(a) => claim::cmd_claim(cx, a),
        Command::Serve(a) => serve::cmd_serve(cx, a),
        Command::Coordinate(a) => coordinate::cmd_coordinate(cx, a),
        Command::Lane(a) => lane::cmd_lane(cx, a),
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
        Command::Completions(a) => completions::cmd_completions(a),
        Command::Man(a) => completions::cmd_man(a),
        Command::LaneSupervisor(a) => lane_supervisor::cmd_lane_supervisor(a),
    }
}

/// Parses `argv` (without the program name) as a command line and runs it in `cx`: the
/// outer error is a malformed command line, the inner one the command's own result.
pub(crate) fn run_argv(
    cx: &Context,
    argv: &[&str],
) -> Result<Result<Report, CommandError>, CommandError> {
    let cli = Cli::try_parse_from(std::iter::once("agent-coord").chain(argv.iter().copied()))
        .map_err(|e| CommandError::operational(format!("demo step is malformed: {e}")))?;
    Ok(run_command(cx, &cli.command))
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
    let kind = if stack_json_given(args) {
        ErrorKind::StackUsage
    } else {
        ErrorKind::Usage
    };
    Err(CommandError::new(kind, message))
}

/// Reports whether the command line is `doctor --stack-json` (read leniently: it did not
/// parse).
fn stack_json_given(args: &[OsString]) -> bool {
    let lenient = Cli::command()
        .ignore_errors(true)
        .try_get_matches_from(args);
    lenient.ok().is_some_and(|m| {
        m.subcommand_matches("doctor")
            .is_some_and(|d| d.value_source("stack_json") == Some(ValueSource::CommandLine))
    })
}

fn first_line(e: &clap::Error) -> String {
    let rendered = e.render().to_string();
    let line = rendered.lines().next().unwrap_or_default();
    let line = line.strip_prefix("error: ").unwrap_or(line);
    format!("{line} (see --help)")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The quick command line names the derived commands, in order.
    #[test]
    fn runnable_names_every_command() {
        let derived: Vec<String> = Cli::command()
            .get_subcommands()
            .map(|c| c.get_name().to_owned())
            .collect();
        let quick: Vec<String> = COMMANDS.iter().map(|(n, _)| (*n).to_owned()).collect();
        assert_eq!(quick, derived);
    }

    /// Every command line the quick parse accepts gives what the full one gives; what it
    /// refuses (help, versions, usage errors) it leaves to the full one.
    #[test]
    fn runnable_parses_as_the_full_command_line() {
        let lines: &[&[&str]] = &[
            &[
                "claim",
                "--agent-id",
                "a",
                "--repo",
                "acme/app",
                "--target",
                "7",
            ],
            &[
                "--repo-dir",
                "/r",
                "claim",
                "--agent-id",
                "a",
                "--repo",
                "acme/app",
                "--target",
                "7",
                "--batch-id",
                "b1",
                "--branch",
                "x",
                "--ttl",
                "60",
                "--json",
                "--sync",
            ],
            &["-vv", "--ref", "state", "status", "--json"],
            &["status", "--batch-id", "b1", "-v", "--repo-dir", "/r"],
            &[
                "status",
                "--repo",
                "acme/app",
                "--target",
                "7",
                "--at",
                "2026-01-01T00:00:00Z",
            ],
            &["heartbeat", "--agent-id", "a", "--status", "in_progress"],
            &[
                "release",
                "--agent-id",
                "a",
                "--repo",
                "acme/app",
                "--target",
                "7",
                "--terminal",
                "done",
            ],
            &[
                "record-event",
                "--batch-id",
                "b1",
                "--type",
                "note",
                "--agent-id",
                "a",
            ],
            &["batch-audit", "--batch-id", "b1", "--json"],
            &["import", "--from", "/x"],
            &["sync"],
            &["gc", "--dry-run"],
            &["version"],
            &["coordinate", "tasks"],
            &["completions", "bash"],
        ];
        for line in lines {
            let args: Vec<OsString> = std::iter::once("agent-coord")
                .chain(line.iter().copied())
                .map(OsString::from)
                .collect();
            let full = Cli::command()
                .try_get_matches_from(&args)
                .and_then(|m| Cli::from_arg_matches(&m).map(|cli| (cli, m)));
            let quick = runnable()
                .try_get_matches_from(&args)
                .and_then(|m| Cli::from_arg_matches(&m).map(|cli| (cli, m)));
            let (full, full_matches) = full.unwrap_or_else(|e| panic!("{line:?}: {e}"));
            let (quick, quick_matches) = quick.unwrap_or_else(|e| panic!("{line:?} (quick): {e}"));
            assert_eq!(format!("{quick:?}"), format!("{full:?}"), "{line:?}");
            assert_eq!(
                quick_matches.value_source("repo_dir"),
                full_matches.value_source("repo_dir"),
                "{line:?}"
            );
        }
        for refused in [
            &["--version"][..],
            &["--help"],
            &["claim", "--help"],
            &["help", "claim"],
            &["-v"],
            &["claim", "--bogus"],
        ] {
            let args: Vec<OsString> = std::iter::once("agent-coord")
                .chain(refused.iter().copied())
                .map(OsString::from)
                .collect();
            assert!(
                runnable().try_get_matches_from(&args).is_err(),
                "{refused:?}"
            );
        }
    }
}
