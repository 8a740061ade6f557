//! Lane adapters' pure rules (`agent-coord lane VENDOR --role ROLE`): which vendor CLIs exist,
//! the hardened argv per vendor and role and the refusal of unsafe extra flags ([`argv`]), the
//! environment allowlist per vendor ([`env`]), the parsing of each vendor's event stream into a
//! final message, usage, session id, errors and usage-limit information ([`events`] and one
//! module per vendor), the `USAGE:` document and its price table ([`usage`]), `RETRY_AFTER`
//! times from vendor messages ([`retry`]), the adapter's answer on stdout ([`answer`]) and how
//! the coordinator reads it back ([`reading`]), and a transcript rendered for the dashboard
//! ([`render`]).
//!
//! No I/O: `cli/src/commands/lane.rs` spawns the vendor, tees its events into the transcript
//! and prints what [`answer::compose`] returns.

pub mod answer;
pub mod argv;
mod claude;
mod codex;
pub mod env;
pub mod events;
mod gemini;
mod grok;
pub mod reading;
pub mod render;
pub mod retry;
mod stream;
pub mod usage;

use serde::Deserialize;
use serde::Serialize;

use crate::serde_name::WireName;

/// A vendor model CLI the adapter can drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Vendor {
    /// Claude Code (`claude -p --output-format stream-json`).
    Claude,
    /// OpenAI Codex CLI (`codex exec --json`).
    Codex,
    /// Gemini CLI (`gemini -p … --output-format stream-json`).
    Gemini,
    /// xAI's Grok CLI (`grok --prompt-file … --output-format json`).
    Grok,
}

impl Vendor {
    /// Every vendor, in documentation order.
    pub const ALL: [Self; 4] = [Self::Claude, Self::Codex, Self::Gemini, Self::Grok];

    /// Returns the vendor whose name is exactly `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.wire_name() == name)
    }

    /// Returns the program name looked up on `PATH` when no override is set.
    pub fn program(self) -> &'static str {
        self.wire_name()
    }

    /// Returns the variable that overrides the vendor binary, `AGENT_COORD_<VENDOR>_BIN`.
    pub fn bin_variable(self) -> &'static str {
        match self {
            Self::Claude => "AGENT_COORD_CLAUDE_BIN",
            Self::Codex => "AGENT_COORD_CODEX_BIN",
            Self::Gemini => "AGENT_COORD_GEMINI_BIN",
            Self::Grok => "AGENT_COORD_GROK_BIN",
        }
    }
}

/// The vendor's name as typed on the command line.
impl WireName for Vendor {}

impl std::fmt::Display for Vendor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.wire_name())
    }
}

/// What a lane may do in the worktree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Role {
    /// May read and edit files in the worktree, nothing else.
    Implementer,
    /// May only read.
    Reviewer,
}

/// The role's name as typed on the command line.
impl WireName for Role {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vendors_and_roles_are_named_as_typed_on_the_command_line() {
        let names: Vec<&str> = Vendor::ALL.iter().map(WireName::wire_name).collect();
        assert_eq!(names, ["claude", "codex", "gemini", "grok"]);
        assert_eq!(Vendor::parse("grok"), Some(Vendor::Grok));
        assert_eq!(Role::Implementer.wire_name(), "implementer");
        assert_eq!(Role::Reviewer.wire_name(), "reviewer");
    }
}
