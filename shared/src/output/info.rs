//! What `version --json` and `config show --json` print.

use serde::Serialize;

use super::OrderedMap;
use crate::rules::gc::Policy;

/// `version --json`: this build and the schema versions it writes.
#[derive(Debug, Clone, Serialize)]
pub struct VersionInfo {
    /// The crate version.
    pub version: &'static str,
    /// The schema version of claims, heartbeats, batches and events.
    pub schema_version: u32,
    /// The schema version of `lane_closed` events.
    pub lane_closed_schema_version: u32,
    /// The schema version of archive envelopes.
    pub archive_schema_version: u32,
    /// Always `git`.
    pub default_backend: &'static str,
    /// The state branch's default ref.
    pub default_ref: &'static str,
}

/// `config show --json`: the version fields, then the built-in defaults.
#[derive(Debug, Clone, Serialize)]
pub struct ConfigInfo {
    /// What `version` prints.
    #[serde(flatten)]
    pub version: VersionInfo,
    /// Where machines' heartbeat refs live.
    pub heartbeat_ref_prefix: &'static str,
    /// A claim's TTL unless `--ttl-seconds` says otherwise.
    pub default_claim_ttl_seconds: i64,
    /// A heartbeat's TTL unless `--ttl-seconds` says otherwise.
    pub default_heartbeat_ttl_seconds: i64,
    /// How many TTLs past expiry a heartbeat counts as dead.
    pub heartbeat_dead_after_ttl_multiplier: i32,
    /// gc's default windows.
    pub retention_policy: Policy,
    /// Lane statuses that satisfy a dependency.
    pub dependency_terminal_statuses: &'static [&'static str],
    /// The heartbeat status words.
    pub heartbeat_status_vocabulary: Vocabulary,
    /// The process exit codes.
    pub exit_codes: ExitCodes,
}

/// The heartbeat status vocabulary: working and terminal words, and aliases.
#[derive(Debug, Clone, Serialize)]
pub struct Vocabulary {
    /// Statuses of an agent at work.
    pub working: &'static [&'static str],
    /// Statuses of finished work.
    pub terminal: &'static [&'static str],
    /// Accepted spellings and the status each stands for.
    pub aliases: OrderedMap<&'static str>,
}

/// The exit codes every command uses.
#[derive(Debug, Clone, Serialize)]
pub struct ExitCodes {
    /// Bad arguments.
    pub usage: u8,
    /// A misuse of the stacked-PR workflow.
    pub stack_usage: u8,
    /// The command could not do its work.
    pub operational: u8,
    /// A live agent holds the target.
    pub claim_refused: u8,
}
