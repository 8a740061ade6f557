//! The lane output protocol (spec "Model output protocol" and "Lane outcomes"): how a lane's
//! process end and stdout become an outcome, and the prompts that ask for it.
//!
//! Parsing is strict and fails closed: anything but an exact, complete answer from a process
//! that exited 0 in time is [`ImplementerOutcome::Incomplete`] or
//! [`ReviewerOutcome::Incomplete`] — never approval, never zero findings. The reasons are short
//! lowercase sentences fit for a GitHub-visible blocker; model text appears in them only
//! sanitised and truncated.
//!
//! Callers redact stdout with the session's secrets before parsing; the bodies kept here are
//! cleaned of token shapes and bounded.

mod fault;
mod prompt;

use serde::Deserialize;
use serde::Serialize;

pub use self::fault::AnswerFault;
pub use self::fault::SummaryProblem;
pub use self::prompt::implement_prompt;
pub use self::prompt::review_prompt;
pub use self::prompt::Findings;
pub use self::prompt::HumanReply;
pub use self::prompt::ImplementPrompt;
pub use self::prompt::ReviewFocus;
pub use self::prompt::ReviewPrompt;
use super::redact::clean;
use super::redact::COMMENT_MAX;
use super::redact::LANE_BODY_MAX;
use crate::serde_name::WireName;

/// The longest summary sentence accepted, in chars.
pub const SUMMARY_MAX_CHARS: usize = 400;

/// The `STATUS:` word of a lane's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LaneStatus {
    /// The lane finished its work.
    Complete,
    /// The lane stopped before finishing.
    Partial,
    /// The lane ran out of time by its own account.
    Timeout,
    /// The lane's model or vendor was unavailable.
    Unavailable,
}

impl LaneStatus {
    /// Every status, in protocol order.
    pub const ALL: [Self; 4] = [
        Self::Complete,
        Self::Partial,
        Self::Timeout,
        Self::Unavailable,
    ];

    /// Returns the status whose wire word is exactly `word`.
    pub fn parse(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.wire_name() == word)
    }
}

/// The wire word (`complete`, …).
impl WireName for LaneStatus {}

/// The `RESULT:` word of a lane's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LaneResult {
    /// The implementer changed files.
    Done,
    /// The implementer cannot do the task.
    Blocked,
    /// The implementer needs a human answer.
    Ask,
    /// The reviewer approves.
    Approved,
    /// The reviewer rejects with findings.
    Rejected,
    /// The implementer found nothing to change.
    NoChange,
}

impl LaneResult {
    /// Every result, in protocol order.
    pub const ALL: [Self; 6] = [
        Self::Done,
        Self::Blocked,
        Self::Ask,
        Self::Approved,
        Self::Rejected,
        Self::NoChange,
    ];

    /// Returns the result whose wire word is exactly `word`.
    pub fn parse(word: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|r| r.wire_name() == word)
    }
}

/// The wire word (`done`, `no-change`, …).
impl WireName for LaneResult {}

/// How a lane's process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessEnd {
    /// The exit code; `None` when a signal ended the process or the code is unknown.
    pub exit_code: Option<i32>,
    /// Whether the runner killed the process at its timeout.
    pub timed_out: bool,
}

impl ProcessEnd {
    /// Returns the end of a process that exited 0 in time.
    pub fn success() -> Self {
        Self {
            exit_code: Some(0),
            timed_out: false,
        }
    }
}

/// What an implementer lane's answer means.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "outcome")]
pub enum ImplementerOutcome {
    /// The implementer changed files.
    Done {
        /// The English summary sentence.
        summary_en: String,
        /// The German summary sentence.
        summary_de: String,
        /// The rest of the answer, cleaned and bounded.
        body: String,
    },
    /// The implementer found nothing to change.
    NoChange {
        /// The English summary sentence.
        summary_en: String,
        /// The German summary sentence.
        summary_de: String,
        /// The rest of the answer, cleaned and bounded.
        body: String,
    },
    /// The implementer needs a human answer.
    Ask {
        /// The question, cleaned and bounded for a comment.
        question: String,
    },
    /// The implementer cannot do the task.
    Blocked {
        /// Why, cleaned and bounded for a comment.
        reason: String,
    },
    /// The answer is not a complete, valid one.
    Incomplete {
        /// What was wrong.
        reason: String,
    },
}

/// What a reviewer lane's answer means.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case", tag = "outcome")]
pub enum ReviewerOutcome {
    /// The reviewer approves.
    Approved {
        /// The rest of the answer, cleaned and bounded (may be empty).
        body: String,
    },
    /// The reviewer rejects.
    Rejected {
        /// The findings, cleaned and bounded; never empty.
        findings: String,
    },
    /// The answer is not a complete, valid one: never approval and never zero findings.
    Incomplete {
        /// What was wrong.
        reason: String,
    },
}

/// Returns what an implementer's process end and stdout mean.
pub fn implementer(end: ProcessEnd, stdout: &str) -> ImplementerOutcome {
    match implementer_checked(end, stdout) {
        Ok(outcome) => outcome,
        Err(fault) => ImplementerOutcome::Incomplete {
            reason: fault.to_string(),
        },
    }
}

/// Returns what a reviewer's process end and stdout mean.
pub fn reviewer(end: ProcessEnd, stdout: &str) -> ReviewerOutcome {
    match reviewer_checked(end, stdout) {
        Ok(outcome) => outcome,
        Err(fault) => ReviewerOutcome::Incomplete {
            reason: fault.to_string(),
        },
    }
}

fn implementer_checked(end: ProcessEnd, stdout: &str) -> Result<ImplementerOutcome, AnswerFault> {
    let answer = header(end, stdout)?;
    let rest = answer.rest.as_slice();
    match answer.result {
        LaneResult::Done | LaneResult::NoChange => {
            let (summary_en, summary_de) = summaries(rest)?;
            let body = body(&rest[2..], LANE_BODY_MAX);
            Ok(if answer.result == LaneResult::Done {
                ImplementerOutcome::Done {
                    summary_en,
                    summary_de,
                    body,
                }
            } else {
                ImplementerOutcome::NoChange {
                    summary_en,
                    summary_de,
                    body,
                }
            })
        }
        LaneResult::Ask => match body(rest, COMMENT_MAX) {
            question if question.is_empty() => Err(AnswerFault::AskedNothing),
            question => Ok(ImplementerOutcome::Ask { question }),
        },
        LaneResult::Blocked => match body(rest, COMMENT_MAX) {
            reason if reason.is_empty() => Err(AnswerFault::BlockedWithoutReason),
            reason => Ok(ImplementerOutcome::Blocked { reason }),
        },
        result @ (LaneResult::Approved | LaneResult::Rejected) => {
            Err(AnswerFault::ReviewerResult { result })
        }
    }
}

fn reviewer_checked(end: ProcessEnd, stdout: &str) -> Result<ReviewerOutcome, AnswerFault> {
    let answer = header(end, stdout)?;
    match answer.result {
        LaneResult::Approved => Ok(ReviewerOutcome::Approved {
            body: body(&answer.rest, LANE_BODY_MAX),
        }),
        LaneResult::Rejected => match body(&answer.rest, LANE_BODY_MAX) {
            findings if findings.is_empty() => Err(AnswerFault::RejectedWithoutFindings),
            findings => Ok(ReviewerOutcome::Rejected { findings }),
        },
        result => Err(AnswerFault::ImplementerResult { result }),
    }
}

/// A complete answer's RESULT and the lines after it.
struct Header<'a> {
    result: LaneResult,
    rest: Vec<&'a str>,
}

fn header(end: ProcessEnd, stdout: &str) -> Result<Header<'_>, AnswerFault> {
    if end.timed_out {
        return Err(AnswerFault::TimedOut);
    }
    match end.exit_code {
        Some(0) => {}
        Some(code) => return Err(AnswerFault::Exited { code }),
        None => return Err(AnswerFault::NoExitCode),
    }
    let mut lines = stdout.lines().skip_while(|l| l.trim().is_empty());
    let Some(status_line) = lines.next() else {
        return Err(AnswerFault::NoOutput);
    };
    let status = field(status_line, "STATUS")?;
    let status = LaneStatus::parse(status).ok_or_else(|| AnswerFault::UnknownStatus {
        word: sanitize(status),
    })?;
    if status != LaneStatus::Complete {
        return Err(AnswerFault::NotComplete { status });
    }
    let result_line = match lines.next() {
        None => return Err(AnswerFault::NoResultLine),
        Some(l) if l.trim().is_empty() => return Err(AnswerFault::ResultNotNext),
        Some(l) => l,
    };
    let result = field(result_line, "RESULT")?;
    let result = LaneResult::parse(result).ok_or_else(|| AnswerFault::UnknownResult {
        word: sanitize(result),
    })?;
    let rest: Vec<&str> = lines.collect();
    for line in &rest {
        if let Some(name) = protocol_line(line) {
            return Err(AnswerFault::Duplicate { line: name });
        }
    }
    Ok(Header { result, rest })
}

/// Returns `STATUS` or `RESULT` when `line` reads, in any case and spacing, as that protocol
/// line with a protocol word: a second answer hidden in the body.
fn protocol_line(line: &str) -> Option<&'static str> {
    let (name, word) = line.trim().split_once(':')?;
    let word = word.trim().to_ascii_lowercase();
    let name = name.trim();
    if name.eq_ignore_ascii_case("STATUS") && LaneStatus::parse(&word).is_some() {
        Some("STATUS")
    } else if name.eq_ignore_ascii_case("RESULT") && LaneResult::parse(&word).is_some() {
        Some("RESULT")
    } else {
        None
    }
}

/// Returns the word of a `NAME: word` line, which must be spelled exactly so (trailing
/// whitespace aside).
fn field<'a>(line: &'a str, name: &'static str) -> Result<&'a str, AnswerFault> {
    let line = line.trim_end();
    if let Some(word) = line.strip_prefix(name).and_then(|r| r.strip_prefix(": ")) {
        if !word.is_empty() && !word.contains(char::is_whitespace) {
            return Ok(word);
        }
    }
    if starts_with_ignore_case(line.trim_start(), name) {
        Err(AnswerFault::Malformed { line: name })
    } else if name == "STATUS" {
        Err(AnswerFault::NoStatusLine)
    } else {
        Err(AnswerFault::NoResultLine)
    }
}

/// Returns the two summary sentences that must open `rest`.
fn summaries(rest: &[&str]) -> Result<(String, String), AnswerFault> {
    let en = summary(rest.first().copied(), "SUMMARY_EN")?;
    let de = summary(rest.get(1).copied(), "SUMMARY_DE")?;
    for line in &rest[2..] {
        for name in ["SUMMARY_EN", "SUMMARY_DE"] {
            if starts_with_ignore_case(line.trim_start(), name) {
                return Err(AnswerFault::SummaryRepeated { line: name });
            }
        }
    }
    Ok((en, de))
}

fn summary(line: Option<&str>, name: &'static str) -> Result<String, AnswerFault> {
    let missing = || AnswerFault::SummaryMissing { line: name };
    let line = line.ok_or_else(missing)?;
    let Some(text) = line.strip_prefix(name).and_then(|r| r.strip_prefix(':')) else {
        return Err(missing());
    };
    if !text.is_empty() && !text.starts_with(' ') {
        return Err(missing());
    }
    let text = text.trim();
    let problem = if text.is_empty() {
        Some(SummaryProblem::Empty)
    } else if !text.ends_with('.') {
        Some(SummaryProblem::NoPeriod)
    } else if text.chars().count() > SUMMARY_MAX_CHARS {
        Some(SummaryProblem::TooLong)
    } else if has_sentence_break(text) {
        Some(SummaryProblem::TwoSentences)
    } else {
        None
    };
    match problem {
        Some(problem) => Err(AnswerFault::SummaryUnfit {
            line: name,
            problem,
        }),
        None => Ok(clean(text, &[], SUMMARY_MAX_CHARS * 4)),
    }
}

/// Reports whether `text` reads as two sentences: a lowercase word of three or more letters
/// that is not a known abbreviation, a terminator, a space and an uppercase letter. Shorter
/// words pass, so "z. B. Der" or "e.g. The" do not count as breaks.
fn has_sentence_break(text: &str) -> bool {
    let chars: Vec<char> = text.chars().collect();
    chars.windows(3).enumerate().any(|(at, w)| {
        if !(matches!(w[0], '.' | '!' | '?') && w[1] == ' ' && w[2].is_uppercase()) {
            return false;
        }
        let len = chars[..at]
            .iter()
            .rev()
            .take_while(|c| c.is_alphabetic())
            .count();
        let word: String = chars[at - len..at].iter().collect();
        len >= 3 && word.chars().all(char::is_lowercase) && !ABBREVIATIONS.contains(&word.as_str())
    })
}

/// Lowercase abbreviations of three or more letters that end with a period mid-sentence.
const ABBREVIATIONS: [&str; 14] = [
    "etc", "approx", "incl", "resp", "bzw", "usw", "ggf", "vgl", "sog", "inkl", "evtl", "bspw",
    "zzgl", "eig",
];

/// Returns the lines as one text without leading or trailing blank lines, cleaned of token
/// shapes and bounded.
fn body(lines: &[&str], max_bytes: usize) -> String {
    let start = lines
        .iter()
        .position(|l| !l.trim().is_empty())
        .unwrap_or(lines.len());
    let text = lines[start..].join("\n");
    clean(text.trim_end(), &[], max_bytes)
}

fn starts_with_ignore_case(text: &str, prefix: &str) -> bool {
    text.get(..prefix.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(prefix))
}

/// Returns model text fit for a GitHub-visible reason: at most 24 chars, anything but
/// `[A-Za-z0-9_-]` shown as `?`.
fn sanitize(word: &str) -> String {
    let mut out: String = word
        .chars()
        .take(24)
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-') {
                c
            } else {
                '?'
            }
        })
        .collect();
    if word.chars().count() > 24 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests;
