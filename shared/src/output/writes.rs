//! What the write commands print with `--json`: `claim`, `release`, `heartbeat`,
//! `register-batch` and `record-event`.

use serde::Serialize;

use crate::record::Claim;
use crate::record::Heartbeat;
use crate::record::Manifest;
use crate::record::Record;

/// `claim --json`.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimAnswer<'a> {
    /// `acquired`, `renewed`, `unchanged`, `lane_change` or `takeover`.
    pub result: &'static str,
    /// The claim's path.
    pub path: &'a str,
    /// Who held the target before a takeover or lane change.
    pub previous_holder: Option<&'a str>,
    /// The commit written, `null` when nothing changed.
    pub commit: Option<String>,
    /// The claim as stored.
    pub claim: &'a Claim,
}

/// `release --json` without `--terminal`.
#[derive(Debug, Clone, Serialize)]
pub struct ReleaseAnswer<'a> {
    /// Always `released`.
    pub result: &'static str,
    /// The claim's path.
    pub path: &'a str,
    /// The claim as stored.
    pub claim: &'a Claim,
}

/// A terminal closeout's answer: `release --terminal --json` and
/// `record-event --type lane_closed --json`.
#[derive(Debug, Clone, Serialize)]
pub struct CloseoutAnswer<'a> {
    /// `released` or `recorded` (a closeout written), `reconciled` or `already_closed`.
    pub result: &'static str,
    /// The terminal state (`release --terminal` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub terminal: Option<&'a str>,
    /// The commit written, `null` when nothing changed.
    pub commit: Option<String>,
}

/// `heartbeat --json`.
#[derive(Debug, Clone, Serialize)]
pub struct HeartbeatAnswer<'a> {
    /// Always `recorded`.
    pub result: &'static str,
    /// The heartbeat ref written.
    #[serde(rename = "ref")]
    pub heartbeat_ref: String,
    /// Whether the beat moved the agent to another target.
    pub lane_change: bool,
    /// The heartbeat as stored.
    pub heartbeat: &'a Heartbeat,
}

/// `register-batch --json`.
#[derive(Debug, Clone, Serialize)]
pub struct BatchAnswer<'a> {
    /// `registered`, or `updated` when a manifest was replaced.
    pub result: &'static str,
    /// The batch id.
    pub batch_id: &'a str,
    /// The manifest as stored.
    pub batch: &'a Manifest,
}

/// `record-event --json` for an ordinary event.
#[derive(Debug, Clone, Serialize)]
pub struct EventAnswer<'a> {
    /// Always `recorded`.
    pub result: &'static str,
    /// The event's path.
    pub path: &'a str,
    /// The event as stored.
    pub event: Option<&'a Record>,
}
