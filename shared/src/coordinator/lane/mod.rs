//! Lane adapters' pure rules (`agent-coord lane VENDOR --role ROLE`): which vendor CLIs exist,
//! the hardened argv per vendor and role and the refusal of unsafe extra flags ([`argv`]), the
//! environment allowlist per vendor ([`env`]), the parsing of each vendor's event stream into a
//! final message, usage, session id, errors and usage-limit information ([`events`] and one
//! module per vendor), the `USAGE:` document and its price table ([`usage`]), `RETRY_AFTER`
//! times from vendor messages ([`retry`]) and the adapter's answer on stdout ([`answer`]).
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
pub mod retry;
mod stream;
pub mod usage;

use serde::Deserialize;
use serde::Serialize;

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

    /// Returns the vendor's name as typed on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Claude => "claude",
            Self::Codex => "codex",
            Self::Gemini => "gemini",
            Self::Grok => "grok",
        }
    }

    /// Returns the vendor whose name is exactly `name`.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == name)
    }

    /// Returns the program name looked up on `PATH` when no override is set.
    pub fn program(self) -> &'static str {
        self.as_str()
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

impl std::fmt::Display for Vendor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
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

impl Role {
    /// Returns the role's name as typed on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Implementer => "implementer",
            Self::Reviewer => "reviewer",
        }
    }
}
