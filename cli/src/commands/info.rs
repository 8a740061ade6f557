//! `agent-coord version` and `agent-coord config show`: what this build is and which
//! defaults it applies. Neither touches a repository.

use agent_coord_shared::rules::claim;
use agent_coord_shared::rules::heartbeat;
use agent_coord_shared::rules::liveness::DEAD_AFTER_TTL_MULTIPLIER;
use agent_coord_shared::rules::vocab;
use serde_json::json;
use serde_json::Map;
use serde_json::Value;

use crate::command_error::CommandError;
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

fn version_fields() -> Map<String, Value> {
    let v = json!({
        "version": env!("CARGO_PKG_VERSION"),
        "schema_version": 1,
        "lane_closed_schema_version": 2,
        "archive_schema_version": 1,
        "default_backend": "git",
        "default_ref": DEFAULT_REF,
    });
    v.as_object().cloned().unwrap_or_default()
}

fn render(fields: &Map<String, Value>, json: bool) -> Report {
    if json {
        return Report::json(&Value::Object(fields.clone()));
    }
    let mut out = String::new();
    for (k, v) in fields {
        let text = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        out.push_str(&format!("{k}: {text}\n"));
    }
    Report::text(out)
}

pub(crate) fn cmd_version(args: &VersionArgs) -> Result<Report, CommandError> {
    Ok(render(&version_fields(), args.json))
}

pub(crate) fn cmd_config(args: &ConfigArgs) -> Result<Report, CommandError> {
    let mut fields = version_fields();
    let aliases: Map<String, Value> = vocab::ALIASES
        .iter()
        .map(|(a, t)| ((*a).to_owned(), json!(t)))
        .collect();
    let extra = json!({
        "heartbeat_ref_prefix": HEARTBEAT_PREFIX,
        "default_claim_ttl_seconds": claim::DEFAULT_TTL_SECONDS,
        "default_heartbeat_ttl_seconds": heartbeat::DEFAULT_TTL_SECONDS,
        "heartbeat_dead_after_ttl_multiplier": DEAD_AFTER_TTL_MULTIPLIER,
        "retention_policy": {"hot_days": 7, "archive_days": 30, "synthetic_hot_days": 1},
        "dependency_terminal_statuses": vocab::DEPENDENCY_DONE,
        "heartbeat_status_vocabulary": {"working": vocab::WORKING, "terminal": vocab::TERMINAL, "aliases": aliases},
        "exit_codes": {"usage": 1, "stack_usage": 64, "operational": 2, "claim_refused": 3},
    });
    if let Value::Object(extra) = extra {
        fields.extend(extra);
    }
    Ok(render(&fields, args.json))
}
