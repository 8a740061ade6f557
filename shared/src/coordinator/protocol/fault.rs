//! Why a lane's answer is not a complete, valid one: each fault names what was wrong, worded
//! as the short lowercase sentence a GitHub-visible blocker shows (model text only sanitised
//! and truncated).

use super::LaneResult;
use super::LaneStatus;
use crate::serde_name::WireName;

/// Why a lane's answer is incomplete (never approval, never zero findings).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerFault {
    /// The lane ran past its timeout.
    #[error("lane timed out")]
    TimedOut,
    /// The lane exited with a non-zero code.
    #[error("lane exited with code {code}")]
    Exited {
        /// Its exit code.
        code: i32,
    },
    /// A signal ended the lane.
    #[error("lane ended without an exit code")]
    NoExitCode,
    /// The lane printed nothing but blank lines.
    #[error("lane produced no output")]
    NoOutput,
    /// The first line is not a `STATUS:` line.
    #[error("first line of the answer is not a STATUS line")]
    NoStatusLine,
    /// No `RESULT:` line follows the status.
    #[error("missing RESULT line after STATUS")]
    NoResultLine,
    /// A blank line separates `STATUS:` from `RESULT:`.
    #[error("RESULT line must directly follow the STATUS line")]
    ResultNotNext,
    /// A protocol line that is not spelled exactly `NAME: word`.
    #[error("malformed {line} line, expected exactly `{line}: <word>`")]
    Malformed {
        /// `STATUS` or `RESULT`.
        line: &'static str,
    },
    /// The `STATUS:` word is none of the protocol's.
    #[error("unknown STATUS word `{word}`")]
    UnknownStatus {
        /// The word, sanitised and truncated.
        word: String,
    },
    /// The lane reported that it did not complete.
    #[error("lane reported STATUS: {}", status.wire_name())]
    NotComplete {
        /// The status it reported.
        status: LaneStatus,
    },
    /// The `RESULT:` word is none of the protocol's.
    #[error("unknown RESULT word `{word}`")]
    UnknownResult {
        /// The word, sanitised and truncated.
        word: String,
    },
    /// A second protocol line hides in the body.
    #[error("duplicate {line} line")]
    Duplicate {
        /// `STATUS` or `RESULT`.
        line: &'static str,
    },
    /// A summary line is missing where it must be.
    #[error("missing SUMMARY_EN/SUMMARY_DE: expected a {line} line here")]
    SummaryMissing {
        /// `SUMMARY_EN` or `SUMMARY_DE`.
        line: &'static str,
    },
    /// A summary line is there but not one fitting sentence.
    #[error("missing SUMMARY_EN/SUMMARY_DE: {line} {problem}")]
    SummaryUnfit {
        /// `SUMMARY_EN` or `SUMMARY_DE`.
        line: &'static str,
        /// What is wrong with its sentence.
        problem: SummaryProblem,
    },
    /// A summary line appears a second time in the body.
    #[error("missing SUMMARY_EN/SUMMARY_DE: more than one {line} line")]
    SummaryRepeated {
        /// `SUMMARY_EN` or `SUMMARY_DE`.
        line: &'static str,
    },
    /// The implementer answered `ask` with no question.
    #[error("implementer asked without a question")]
    AskedNothing,
    /// The implementer answered `blocked` with no reason.
    #[error("implementer was blocked without a reason")]
    BlockedWithoutReason,
    /// The implementer answered a reviewer's result.
    #[error("implementer answered RESULT: {}, which only a reviewer may answer", result.wire_name())]
    ReviewerResult {
        /// The result it answered.
        result: LaneResult,
    },
    /// The reviewer rejected with no findings.
    #[error("reviewer rejected without findings")]
    RejectedWithoutFindings,
    /// The reviewer answered an implementer's result.
    #[error("reviewer answered RESULT: {}, but a reviewer must answer approved or rejected", result.wire_name())]
    ImplementerResult {
        /// The result it answered.
        result: LaneResult,
    },
}

/// What is wrong with a summary sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SummaryProblem {
    /// It has no text.
    #[error("is empty")]
    Empty,
    /// It does not end with a period.
    #[error("does not end with a period")]
    NoPeriod,
    /// It is longer than one sentence may be.
    #[error("is too long for one sentence")]
    TooLong,
    /// It reads as two sentences.
    #[error("holds more than one sentence")]
    TwoSentences,
}
