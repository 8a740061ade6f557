use proptest::prelude::*;

use super::*;
use crate::serde_name::WireName;

const OK: ProcessEnd = ProcessEnd {
    exit_code: Some(0),
    timed_out: false,
};

const DONE: &str = "STATUS: complete\nRESULT: done\nSUMMARY_EN: Fixes the parser.\nSUMMARY_DE: Repariert den Parser.\n\nDetails here.\n";

fn incomplete(outcome: ImplementerOutcome) -> String {
    match outcome {
        ImplementerOutcome::Incomplete { reason } => reason,
        other => panic!("expected incomplete, got {other:?}"),
    }
}

fn review_incomplete(outcome: ReviewerOutcome) -> String {
    match outcome {
        ReviewerOutcome::Incomplete { reason } => reason,
        other => panic!("expected incomplete, got {other:?}"),
    }
}

#[test]
fn wire_words_round_trip() {
    let names: Vec<&str> = LaneStatus::ALL.iter().map(WireName::wire_name).collect();
    assert_eq!(names, ["complete", "partial", "timeout", "unavailable"]);
    let names: Vec<&str> = LaneResult::ALL.iter().map(WireName::wire_name).collect();
    assert_eq!(
        names,
        [
            "done",
            "blocked",
            "ask",
            "approved",
            "rejected",
            "no-change"
        ]
    );
    for status in LaneStatus::ALL {
        assert_eq!(LaneStatus::parse(status.wire_name()), Some(status));
        let json = serde_json::to_string(&status).unwrap();
        assert_eq!(json, format!("\"{}\"", status.wire_name()));
    }
    for result in LaneResult::ALL {
        assert_eq!(LaneResult::parse(result.wire_name()), Some(result));
        let json = serde_json::to_string(&result).unwrap();
        assert_eq!(json, format!("\"{}\"", result.wire_name()));
    }
    assert_eq!(LaneResult::parse("No-Change"), None);
    assert_eq!(LaneStatus::parse("COMPLETE"), None);
}

#[test]
fn done_with_summaries_and_body() {
    assert_eq!(
        implementer(OK, DONE),
        ImplementerOutcome::Done {
            summary_en: "Fixes the parser.".into(),
            summary_de: "Repariert den Parser.".into(),
            body: "Details here.".into(),
        }
    );
}

#[test]
fn leading_blank_lines_and_crlf_are_accepted() {
    let text = "\n  \nSTATUS: complete\r\nRESULT: no-change\r\nSUMMARY_EN: Nothing to change.\r\nSUMMARY_DE: Nichts zu ändern.\r\n";
    assert_eq!(
        implementer(OK, text),
        ImplementerOutcome::NoChange {
            summary_en: "Nothing to change.".into(),
            summary_de: "Nichts zu ändern.".into(),
            body: String::new(),
        }
    );
}

#[test]
fn ask_and_blocked_carry_their_text() {
    let ask = implementer(OK, "STATUS: complete\nRESULT: ask\n\nWhich API version?\n");
    assert_eq!(
        ask,
        ImplementerOutcome::Ask {
            question: "Which API version?".into()
        }
    );
    let blocked = implementer(
        OK,
        "STATUS: complete\nRESULT: blocked\nThe repo is archived.",
    );
    assert_eq!(
        blocked,
        ImplementerOutcome::Blocked {
            reason: "The repo is archived.".into()
        }
    );
}

#[test]
fn process_failures_are_incomplete_even_when_stdout_claims_completion() {
    let cases = [
        (
            ProcessEnd {
                exit_code: Some(0),
                timed_out: true,
            },
            "lane timed out",
        ),
        (
            ProcessEnd {
                exit_code: Some(1),
                timed_out: false,
            },
            "lane exited with code 1",
        ),
        (
            ProcessEnd {
                exit_code: Some(-1),
                timed_out: false,
            },
            "lane exited with code -1",
        ),
        (
            ProcessEnd {
                exit_code: None,
                timed_out: false,
            },
            "lane ended without an exit code",
        ),
    ];
    for (end, reason) in cases {
        assert_eq!(incomplete(implementer(end, DONE)), reason);
        let approved = "STATUS: complete\nRESULT: approved\n";
        assert_eq!(review_incomplete(reviewer(end, approved)), reason);
    }
}

#[test]
fn malformed_headers_are_incomplete_with_a_reason() {
    let cases = [
        ("", "lane produced no output"),
        ("  \n\n", "lane produced no output"),
        (
            "Sure! Here is my answer.\nSTATUS: complete",
            "first line of the answer is not a STATUS line",
        ),
        (
            "status: complete\nRESULT: done",
            "malformed STATUS line, expected exactly `STATUS: <word>`",
        ),
        (
            "STATUS:complete\nRESULT: done",
            "malformed STATUS line, expected exactly `STATUS: <word>`",
        ),
        (
            "STATUS:  complete\nRESULT: done",
            "malformed STATUS line, expected exactly `STATUS: <word>`",
        ),
        (
            " STATUS: complete\nRESULT: done",
            "malformed STATUS line, expected exactly `STATUS: <word>`",
        ),
        (
            "STATUS: Complete\nRESULT: done",
            "unknown STATUS word `Complete`",
        ),
        (
            "STATUS: finished <@x>\nRESULT: done",
            "malformed STATUS line, expected exactly `STATUS: <word>`",
        ),
        (
            "STATUS: fin`@x\nRESULT: done",
            "unknown STATUS word `fin??x`",
        ),
        (
            "STATUS: partial\nRESULT: done",
            "lane reported STATUS: partial",
        ),
        ("STATUS: timeout", "lane reported STATUS: timeout"),
        ("STATUS: unavailable\n", "lane reported STATUS: unavailable"),
        ("STATUS: complete", "missing RESULT line after STATUS"),
        (
            "STATUS: complete\n\nRESULT: done",
            "RESULT line must directly follow the STATUS line",
        ),
        (
            "STATUS: complete\nSUMMARY_EN: x.",
            "missing RESULT line after STATUS",
        ),
        (
            "STATUS: complete\nResult: done",
            "malformed RESULT line, expected exactly `RESULT: <word>`",
        ),
        (
            "STATUS: complete\nRESULT: DONE",
            "unknown RESULT word `DONE`",
        ),
        (
            "STATUS: complete\nRESULT: finished",
            "unknown RESULT word `finished`",
        ),
        (
            "STATUS: complete\nRESULT: ask\nQ?\nSTATUS: complete",
            "duplicate STATUS line",
        ),
        (
            "STATUS: complete\nRESULT: ask\nQ?\n  result: Blocked",
            "duplicate RESULT line",
        ),
    ];
    for (stdout, reason) in cases {
        assert_eq!(incomplete(implementer(OK, stdout)), reason, "{stdout:?}");
    }
}

#[test]
fn prose_that_merely_mentions_status_is_not_a_duplicate() {
    let text =
        "STATUS: complete\nRESULT: ask\nStatus: the build is red.\nResult: unclear. Which API?";
    assert!(matches!(
        implementer(OK, text),
        ImplementerOutcome::Ask { .. }
    ));
}

#[test]
fn implementer_results_of_a_reviewer_are_incomplete() {
    for word in ["approved", "rejected"] {
        let text = format!("STATUS: complete\nRESULT: {word}\n");
        assert_eq!(
            incomplete(implementer(OK, &text)),
            format!("implementer answered RESULT: {word}, which only a reviewer may answer")
        );
    }
    let empty_ask = "STATUS: complete\nRESULT: ask\n\n";
    assert_eq!(
        incomplete(implementer(OK, empty_ask)),
        "implementer asked without a question"
    );
    let empty_blocked = "STATUS: complete\nRESULT: blocked";
    assert_eq!(
        incomplete(implementer(OK, empty_blocked)),
        "implementer was blocked without a reason"
    );
}

#[test]
fn summaries_are_required_and_strict() {
    let head = "STATUS: complete\nRESULT: done\n";
    let cases = [
        (
            "",
            "missing SUMMARY_EN/SUMMARY_DE: expected a SUMMARY_EN line here",
        ),
        (
            "Body first.\n",
            "missing SUMMARY_EN/SUMMARY_DE: expected a SUMMARY_EN line here",
        ),
        (
            "SUMMARY_EN: Fixes it.\n",
            "missing SUMMARY_EN/SUMMARY_DE: expected a SUMMARY_DE line here",
        ),
        (
            "SUMMARY_DE: Repariert.\nSUMMARY_EN: Fixes.",
            "missing SUMMARY_EN/SUMMARY_DE: expected a SUMMARY_EN line here",
        ),
        (
            "SUMMARY_EN: Fixes it.\n\nSUMMARY_DE: Repariert.",
            "missing SUMMARY_EN/SUMMARY_DE: expected a SUMMARY_DE line here",
        ),
        (
            "summary_en: Fixes it.\nSUMMARY_DE: Repariert.",
            "missing SUMMARY_EN/SUMMARY_DE: expected a SUMMARY_EN line here",
        ),
        (
            "SUMMARY_EN:Fixes it.\nSUMMARY_DE: Repariert.",
            "missing SUMMARY_EN/SUMMARY_DE: expected a SUMMARY_EN line here",
        ),
        (
            "SUMMARY_EN: \nSUMMARY_DE: Repariert.",
            "missing SUMMARY_EN/SUMMARY_DE: SUMMARY_EN is empty",
        ),
        (
            "SUMMARY_EN: Fixes it\nSUMMARY_DE: Repariert.",
            "missing SUMMARY_EN/SUMMARY_DE: SUMMARY_EN does not end with a period",
        ),
        (
            "SUMMARY_EN: Fixes it!\nSUMMARY_DE: Repariert.",
            "missing SUMMARY_EN/SUMMARY_DE: SUMMARY_EN does not end with a period",
        ),
        (
            "SUMMARY_EN: Fixes it.\nSUMMARY_DE: Repariert",
            "missing SUMMARY_EN/SUMMARY_DE: SUMMARY_DE does not end with a period",
        ),
        (
            "SUMMARY_EN: Fixes the parser. Adds tests.\nSUMMARY_DE: Repariert.",
            "missing SUMMARY_EN/SUMMARY_DE: SUMMARY_EN holds more than one sentence",
        ),
        (
            "SUMMARY_EN: Fixes it.\nSUMMARY_DE: Repariert.\nSUMMARY_EN: Again.",
            "missing SUMMARY_EN/SUMMARY_DE: more than one SUMMARY_EN line",
        ),
        (
            "SUMMARY_EN: Fixes it.\nSUMMARY_DE: Repariert.\nsummary_de: nochmal.",
            "missing SUMMARY_EN/SUMMARY_DE: more than one SUMMARY_DE line",
        ),
    ];
    for (tail, reason) in cases {
        let text = format!("{head}{tail}");
        assert_eq!(incomplete(implementer(OK, &text)), reason, "{text:?}");
    }
    let long = format!(
        "{head}SUMMARY_EN: {}.\nSUMMARY_DE: Lang.",
        "a".repeat(SUMMARY_MAX_CHARS)
    );
    assert_eq!(
        incomplete(implementer(OK, &long)),
        "missing SUMMARY_EN/SUMMARY_DE: SUMMARY_EN is too long for one sentence"
    );
}

#[test]
fn abbreviations_do_not_split_a_sentence() {
    for sentence in [
        "Fügt Tests hinzu, z. B. Der Parser wird geprüft.",
        "Handles inputs, e.g. CSV and JSON.",
        "Updates docs etc. For users.",
        "Ändert die Doku bzw. Die Tests.",
        "Bumps version 1.2. Nothing else.",
    ] {
        assert!(!has_sentence_break(sentence), "{sentence}");
    }
    assert!(has_sentence_break("Fixes the bug. Adds tests."));
    assert!(has_sentence_break("Behebt den fehler! Und mehr."));
}

#[test]
fn reviewer_outcomes() {
    assert_eq!(
        reviewer(OK, "STATUS: complete\nRESULT: approved\n"),
        ReviewerOutcome::Approved {
            body: String::new()
        }
    );
    assert_eq!(
        reviewer(
            OK,
            "STATUS: complete\nRESULT: rejected\n- src/a.rs: off by one.\n"
        ),
        ReviewerOutcome::Rejected {
            findings: "- src/a.rs: off by one.".into()
        }
    );
    assert_eq!(
        review_incomplete(reviewer(OK, "STATUS: complete\nRESULT: rejected\n \n")),
        "reviewer rejected without findings"
    );
    for word in ["ask", "blocked", "done", "no-change"] {
        let text = format!("STATUS: complete\nRESULT: {word}\nSomething.");
        assert_eq!(
            review_incomplete(reviewer(OK, &text)),
            format!(
                "reviewer answered RESULT: {word}, but a reviewer must answer approved or rejected"
            )
        );
    }
    assert_eq!(
        review_incomplete(reviewer(OK, "STATUS: partial\nRESULT: approved\n")),
        "lane reported STATUS: partial"
    );
    assert_eq!(
        review_incomplete(reviewer(OK, "")),
        "lane produced no output"
    );
}

#[test]
fn bodies_are_bounded_and_cleaned() {
    let token = format!("ghp_{}", "a".repeat(30));
    let big = format!(
        "STATUS: complete\nRESULT: rejected\n{token}\n{}",
        "x".repeat(LANE_BODY_MAX)
    );
    let ReviewerOutcome::Rejected { findings } = reviewer(OK, &big) else {
        panic!("expected rejected");
    };
    assert!(findings.starts_with("[redacted]\nxxx"));
    assert!(findings.ends_with(" bytes]"));
    assert!(findings.len() < LANE_BODY_MAX + 40);
    let question = format!(
        "STATUS: complete\nRESULT: ask\n{}",
        "q".repeat(COMMENT_MAX + 10)
    );
    let ImplementerOutcome::Ask { question } = implementer(OK, &question) else {
        panic!("expected ask");
    };
    assert!(question.ends_with("[… truncated 10 bytes]"));
}

#[test]
fn outcomes_serialize_with_a_tag() {
    let json = serde_json::to_string(&implementer(OK, "")).unwrap();
    assert_eq!(
        json,
        r#"{"outcome":"incomplete","reason":"lane produced no output"}"#
    );
    let json = serde_json::to_string(&ImplementerOutcome::NoChange {
        summary_en: "a.".into(),
        summary_de: "b.".into(),
        body: String::new(),
    })
    .unwrap();
    assert_eq!(
        json,
        r#"{"outcome":"no-change","summary_en":"a.","summary_de":"b.","body":""}"#
    );
}

proptest! {
    #[test]
    fn no_output_without_exit_zero_is_ever_approval(
        stdout in "(STATUS: complete\nRESULT: approved\n)?\\PC{0,80}",
        code in proptest::option::of(-3i32..3),
        timed_out in any::<bool>(),
    ) {
        let end = ProcessEnd { exit_code: code, timed_out };
        let outcome = reviewer(end, &stdout);
        if code != Some(0) || timed_out {
            let incomplete = matches!(outcome, ReviewerOutcome::Incomplete { .. });
            prop_assert!(incomplete);
        }
    }

    #[test]
    fn approval_needs_the_exact_header(stdout in "[A-Za-z: \n]{0,60}") {
        if let ReviewerOutcome::Approved { .. } = reviewer(OK, &stdout) {
            let mut lines = stdout.lines().skip_while(|l| l.trim().is_empty());
            prop_assert_eq!(lines.next().map(str::trim_end), Some("STATUS: complete"));
            prop_assert_eq!(lines.next().map(str::trim_end), Some("RESULT: approved"));
        }
    }

    #[test]
    fn parsing_never_panics_and_reasons_stay_short(stdout in "\\PC{0,300}") {
        if let ImplementerOutcome::Incomplete { reason } = implementer(OK, &stdout) {
            prop_assert!(reason.len() < 120, "{}", reason);
            prop_assert!(!reason.contains('\n'));
        }
        let _ = reviewer(OK, &stdout);
    }
}
