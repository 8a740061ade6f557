//! A lane run's transcript as the item page opens it
//! (`GET /api/items/{owner}/{repo}/{issue}/lane-runs/{n}/transcript`), and the answer when
//! another machine holds the file.

use serde::Deserialize;
use serde::Serialize;

use crate::coordinator::lane::render::RenderedTranscript;

/// One lane run's transcript, rendered.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LaneTranscript {
    /// The run's number ([`super::LaneRunView::n`]).
    pub n: u64,
    /// Its lane slot.
    pub slot: String,
    /// The machine that holds the file (this server's).
    pub machine: String,
    /// Its messages, tool calls and notes.
    pub transcript: RenderedTranscript,
}

/// The 409 answer: the transcript is on another machine, which the page names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptElsewhere {
    /// The sentence the page shows.
    pub error: String,
    /// The machine id that holds the transcript.
    pub held_by: String,
}

/// What the answer of a transcript held by `machine` says.
pub fn transcript_elsewhere(n: u64, machine: &str) -> String {
    format!(
        "The transcript of lane run {n} is on machine {machine}: open this page on the dashboard of that machine."
    )
}
