//! Flags shared by several commands: claim metadata and terminal closeout options.

use agent_coord_shared::record::field as f;
use agent_coord_shared::record::Record;

/// Metadata carried on claims, heartbeats, releases and events.
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Metadata")]
pub(crate) struct MetadataArgs {
    /// Operator-facing thread handle or session label
    #[arg(long, value_name = "HANDLE")]
    pub(crate) thread_handle: Option<String>,
    /// Chat handle of the agent's conversation
    #[arg(long, value_name = "HANDLE")]
    pub(crate) chat_handle: Option<String>,
    /// Host app or runner surface, e.g. codex or claude (not a machine label)
    #[arg(long, value_name = "HOST")]
    pub(crate) host: Option<String>,
    /// Pull request URL
    #[arg(long, value_name = "URL")]
    pub(crate) pr_url: Option<String>,
    /// Dashboard URL for this work
    #[arg(long, value_name = "URL")]
    pub(crate) dashboard_url: Option<String>,
    /// Human or service operator responsible for the agent
    #[arg(long, value_name = "NAME")]
    pub(crate) operator: Option<String>,
    /// Current phase, e.g. implementing, validating, pushing
    #[arg(long, value_name = "PHASE")]
    pub(crate) phase: Option<String>,
    /// Caller-supplied generation number (a change re-emits claim.acquired)
    #[arg(long, value_name = "N")]
    pub(crate) generation: Option<i64>,
    /// Caller-supplied instance id of the agent process
    #[arg(long, value_name = "ID")]
    pub(crate) instance_id: Option<String>,
    /// Mark the record as synthetic (tests, demos); shortens retention
    #[arg(long)]
    pub(crate) synthetic: bool,
    /// Kind of synthetic record
    #[arg(long, value_name = "KIND")]
    pub(crate) synthetic_kind: Option<String>,
}

impl MetadataArgs {
    /// Returns the given metadata as record fields (present-only).
    pub(crate) fn to_record(&self) -> Record {
        let mut r = Record::new();
        let strings = [
            (f::THREAD_HANDLE, &self.thread_handle),
            (f::CHAT_HANDLE, &self.chat_handle),
            (f::HOST, &self.host),
            (f::PR_URL, &self.pr_url),
            (f::DASHBOARD_URL, &self.dashboard_url),
            (f::OPERATOR, &self.operator),
            (f::PHASE, &self.phase),
        ];
        for (key, value) in strings {
            if let Some(v) = value {
                key.set(&mut r, v.as_str());
            }
        }
        if let Some(g) = self.generation {
            f::GENERATION.set(&mut r, g);
        }
        if let Some(i) = &self.instance_id {
            f::INSTANCE_ID.set(&mut r, i.as_str());
        }
        if self.synthetic {
            f::SYNTHETIC.set(&mut r, true);
        }
        if let Some(k) = &self.synthetic_kind {
            f::SYNTHETIC_KIND.set(&mut r, k.as_str());
        }
        r
    }
}

/// Terminal closeout options (`release --terminal`, `record-event --type lane_closed`).
#[derive(clap::Args, Debug, Clone, Default)]
#[command(next_help_heading = "Terminal closeout")]
pub(crate) struct TerminalArgs {
    /// Close the lane for good: done, abandoned or superseded (writes a lane_closed event)
    #[arg(long, value_name = "STATE")]
    pub(crate) terminal: Option<String>,
    /// Final pull request state, e.g. merged or closed
    #[arg(long, value_name = "STATE")]
    pub(crate) pr_state: Option<String>,
    /// Evidence URL (http or https) for the closeout
    #[arg(long, value_name = "URL")]
    pub(crate) evidence_url: Option<String>,
    /// Coordination workspace [default: default]
    #[arg(long, value_name = "NAME")]
    pub(crate) workspace: Option<String>,
}

impl TerminalArgs {
    /// Returns the first terminal-only flag given, for "requires --terminal" errors.
    pub(crate) fn first_terminal_only_flag(&self) -> Option<&'static str> {
        [
            ("--pr-state", self.pr_state.is_some()),
            ("--evidence-url", self.evidence_url.is_some()),
            ("--workspace", self.workspace.is_some()),
        ]
        .into_iter()
        .find(|(_, given)| *given)
        .map(|(flag, _)| flag)
    }
}

/// Parses a positive TTL in seconds.
pub(crate) fn positive_ttl(raw: i64) -> Result<i64, crate::command_error::CommandError> {
    if raw > 0 {
        Ok(raw)
    } else {
        Err(crate::command_error::CommandError::usage(
            "--ttl must be positive",
        ))
    }
}
