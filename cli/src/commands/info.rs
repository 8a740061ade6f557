//! `agent-coord version` and `agent-coord config show`: what this build is and which
//! defaults it applies. Neither touches a repository.

use agent_coord_shared::output::info::ConfigInfo;
use agent_coord_shared::output::info::ExitCodes;
use agent_coord_shared::output::info::VersionInfo;
use agent_coord_shared::output::info::Vocabulary;
use agent_coord_shared::output::OrderedMap;
use agent_coord_shared::rules::claim;
use agent_coord_shared::rules::gc::Policy;
use agent_coord_shared::rules::heartbeat;
use agent_coord_shared::rules::liveness::DEAD_AFTER_TTL_MULTIPLIER;
use agent_coord_shared::rules::vocab;
use serde_json::Value;

use crate::command_error::CommandError;
use crate::command_error::ErrorKind;
use crate::output::to_json_value;
use crate::output::Report;
use crate::store::DEFAULT_REF;
use crate::store::HEARTBEAT_PREFIX;

/// Print the version and schema versions
#[derive(clap::Args, Debug)]
pub(crate) struct VersionArgs {
    /// Print as JSON
    #[arg(long)]
    json: bool,
}

/// Show the built-in defaults (TTLs, status vocabulary, exit codes)
#[derive(clap::Args, Debug)]
pub(crate) struct ConfigArgs {
    /// What to do (only `show`)
    #[arg(value_parser = ["show"], default_value = "show")]
    action: String,
    /// Print as JSON
    #[arg(long)]
    json: bool,
}

fn version_info() -> VersionInfo {
    VersionInfo {
        version: env!("CARGO_PKG_VERSION"),
        schema_version: 1,
        lane_closed_schema_version: 2,
        archive_schema_version: 1,
        default_backend: "git",
        default_ref: DEFAULT_REF,
    }
}

/// Prints `doc` as JSON, or as one `key: value` line per top-level field.
fn render(doc: &impl serde::Serialize, json: bool) -> Report {
    if json {
        return Report::json(doc);
    }
    let mut out = String::new();
    if let Value::Object(fields) = to_json_value(doc) {
        for (k, v) in fields {
            let text = match v {
                Value::String(s) => s,
                other => other.to_string(),
            };
            out.push_str(&format!("{k}: {text}\n"));
        }
    }
    Report::text(out)
}

pub(crate) fn cmd_version(args: &VersionArgs) -> Result<Report, CommandError> {
    Ok(render(&version_info(), args.json))
}

pub(crate) fn cmd_config(args: &ConfigArgs) -> Result<Report, CommandError> {
    let config = ConfigInfo {
        version: version_info(),
        heartbeat_ref_prefix: HEARTBEAT_PREFIX,
        default_claim_ttl_seconds: claim::DEFAULT_TTL_SECONDS,
        default_heartbeat_ttl_seconds: heartbeat::DEFAULT_TTL_SECONDS,
        heartbeat_dead_after_ttl_multiplier: DEAD_AFTER_TTL_MULTIPLIER,
        retention_policy: Policy::default(),
        dependency_terminal_statuses: &vocab::DEPENDENCY_DONE,
        heartbeat_status_vocabulary: Vocabulary {
            working: &vocab::WORKING,
            terminal: &vocab::TERMINAL,
            aliases: OrderedMap(vocab::ALIASES.to_vec()),
        },
        exit_codes: ExitCodes {
            usage: ErrorKind::Usage.exit_code(),
            stack_usage: ErrorKind::StackUsage.exit_code(),
            operational: ErrorKind::Operational.exit_code(),
            claim_refused: ErrorKind::ClaimRefused.exit_code(),
        },
    };
    Ok(render(&config, args.json))
}
