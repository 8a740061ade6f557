//! Fuzz invariants for the text parsers: launch prompts and batch imports, the lane
//! STATUS/RESULT protocol, readiness JSON, git porcelain output and dashboard search.

use std::str::FromStr;

use serde_json::Value;

use crate::coordinator::protocol::implementer;
use crate::coordinator::protocol::reviewer;
use crate::coordinator::protocol::ImplementerOutcome;
use crate::coordinator::protocol::ProcessEnd;
use crate::coordinator::protocol::ReviewerOutcome;
use crate::coordinator::redact::LANE_BODY_MAX;
use crate::dashboard::fixtures;
use crate::dashboard::view::row_search::filter;
use crate::dashboard::view::row_search::parse_query;
use crate::dashboard::view::row_search::Query;
use crate::git_porcelain::first_error_line;
use crate::git_porcelain::parse_ls_remote;
use crate::git_porcelain::parse_push_porcelain;
use crate::ids::BatchId;
use crate::manifest::import_request as import;
use crate::manifest::parse_launch_prompt;
use crate::manifest::validate_draft;

const NOW: &str = "2026-07-12T01:07:00Z";

/// A manifest the import accepted names a batch id that is a safe path segment.
fn assert_manifest(manifest: &Value) {
    let id = manifest
        .get("batch_id")
        .and_then(Value::as_str)
        .expect("an accepted manifest has a batch_id");
    assert!(
        BatchId::from_str(id).is_ok(),
        "accepted unsafe batch id {id:?}"
    );
    assert!(manifest.is_object());
}

/// A launch prompt parses or fails without a panic; what validates is a safe manifest.
pub fn launch_prompt(data: &[u8]) {
    let (sel, text) = super::split(data);
    let now = (sel % 2 == 0).then_some(NOW);
    if let Ok(draft) = parse_launch_prompt(&text, now) {
        if let Ok(manifest) = validate_draft(&draft, NOW, "box") {
            assert_manifest(&manifest);
        }
        // The draft survives its own JSON form (the dashboard posts it back).
        let json = serde_json::to_value(&draft).expect("a draft serialises");
        let back: crate::manifest::BatchDraft =
            serde_json::from_value(json).expect("a draft's JSON parses back");
        assert_eq!(back, draft);
    }
}

/// An import request body (any JSON) is accepted only as a safe manifest.
pub fn import_request(data: &[u8]) {
    let Ok(body) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    if let Ok(manifest) = import(&body, NOW, "box") {
        assert_manifest(&manifest);
    }
}

/// Returns a process end chosen by `sel`.
fn end(sel: u8) -> ProcessEnd {
    ProcessEnd {
        exit_code: match sel % 4 {
            0 | 1 => Some(0),
            2 => Some(1),
            _ => None,
        },
        timed_out: sel % 8 == 1,
    }
}

/// The lane protocol never approves or completes on a failed process, never rejects with
/// no findings, and bounds what it keeps.
pub fn lane_protocol(data: &[u8]) {
    let (sel, stdout) = super::split(data);
    let end = end(sel);
    let ok = end.exit_code == Some(0) && !end.timed_out;
    let bound = LANE_BODY_MAX + 64;
    match implementer(end, &stdout) {
        ImplementerOutcome::Done {
            summary_en,
            summary_de,
            body,
        }
        | ImplementerOutcome::NoChange {
            summary_en,
            summary_de,
            body,
        } => {
            assert!(ok, "a failed process counted as an answer");
            assert!(!summary_en.trim().is_empty() && !summary_de.trim().is_empty());
            assert!(body.len() <= bound, "body of {} bytes", body.len());
        }
        ImplementerOutcome::Ask { question } => assert!(!question.trim().is_empty() && ok),
        ImplementerOutcome::Blocked { reason } => assert!(!reason.trim().is_empty() && ok),
        ImplementerOutcome::Incomplete { .. } => {}
    }
    match reviewer(end, &stdout) {
        ReviewerOutcome::Approved { body } => {
            assert!(ok, "a failed process approved");
            assert!(body.len() <= bound);
        }
        ReviewerOutcome::Rejected { findings } => {
            assert!(
                ok && !findings.trim().is_empty(),
                "rejected with no findings"
            );
            assert!(findings.len() <= bound);
        }
        ReviewerOutcome::Incomplete { .. } => {}
    }
}

/// Readiness JSON counts only for the exact head and base.
pub fn readiness(data: &[u8]) {
    let (sel, stdout) = super::split(data);
    let head = "a".repeat(40);
    let base = "b".repeat(40);
    let logins = ["alice".to_owned()];
    let allowed: &[String] = if sel % 2 == 0 { &logins } else { &[] };
    if let Ok(r) = crate::coordinator::readiness::verify(&stdout, &head, &base, allowed) {
        assert_eq!(r.head, head);
        assert_eq!(r.base, base);
        assert!(r.contributing_ok);
        if r.deviation.declared {
            let by = r.deviation.granted_by.as_deref().unwrap_or_default();
            assert!(
                allowed.iter().any(|l| l.eq_ignore_ascii_case(by)),
                "grant by {by:?}"
            );
        }
    }
}

/// Porcelain parsers yield at most one result per line, each without line breaks.
pub fn git_porcelain(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let lines = text.lines().count();
    let pushed = parse_push_porcelain(&text);
    assert!(pushed.len() <= lines);
    for r in &pushed {
        assert!(!r.refname.contains(['\n', '\t']) && !r.summary.contains('\n'));
        let _ = (r.accepted(), r.lost_race());
    }
    let listed = parse_ls_remote(&text);
    assert!(listed.len() <= lines);
    for (name, oid) in &listed {
        assert!(!name.contains('\n') && !oid.contains(['\n', '\t']));
    }
    assert!(!first_error_line(&text).contains('\n'));
}

/// Search queries parse to a normalised form, and filtering never panics.
pub fn dashboard_search(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let query = parse_query(&text);
    match &query {
        Query::All => assert!(text.trim().is_empty()),
        Query::Number(n) | Query::Pr(n) | Query::Issue(n) => {
            assert!(!n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        }
        Query::RepoNumber { number, .. } => assert!(number.bytes().all(|b| b.is_ascii_digit())),
        Query::Text(t) => assert_eq!(parse_query(t), query, "text query not normalised"),
    }
    let mut issue = fixtures::row("acme/app", "12");
    issue.kind = "issue".into();
    let rows = [fixtures::row("acme/app", "7"), issue];
    let _ = filter(&rows, &text);
}
