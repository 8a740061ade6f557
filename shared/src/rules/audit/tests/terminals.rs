//! Unit tests for terminal markers, rendering, verdicts and closeout authorization.

use super::*;
use crate::serde_name::WireName;

#[test]
fn terminal() {
    let acq = |agent: &str, second| ev("claim.acquired", agent, "1", second);
    let rel = ev("claim.released", "a", "1", 3);
    let valid = closed("a", "1", 5);
    let cases: Vec<(&str, Vec<Value>, Vec<&str>)> = vec![
        (
            "valid lane_closed",
            vec![acq("a", 1), valid.clone()],
            vec![],
        ),
        (
            "takeover closer",
            vec![acq("a", 1), acq("b", 2), closed("b", "1", 5)],
            vec![],
        ),
        (
            "identical duplicates",
            vec![
                acq("a", 1),
                valid.clone(),
                with(
                    &valid,
                    json!({"event_id": "copy", "at": at(6), "closed_by": {"agent_id": "a", "machine": "other"}}),
                ),
            ],
            vec![],
        ),
        (
            "invalid lane_closed does not fall back to release",
            vec![
                acq("a", 1),
                rel.clone(),
                with(&valid, json!({"terminal": "merged"})),
            ],
            vec!["terminal"],
        ),
        (
            "conflicting lane_closed",
            vec![
                acq("a", 1),
                valid.clone(),
                with(
                    &valid,
                    json!({"event_id": "copy", "at": at(6), "terminal": "abandoned"}),
                ),
            ],
            vec!["terminal"],
        ),
        (
            "conflicting workspace default",
            vec![
                acq("a", 1),
                valid.clone(),
                with(
                    &valid,
                    json!({"event_id": "copy", "at": at(6), "workspace": "team"}),
                ),
            ],
            vec!["terminal"],
        ),
        (
            "agent differs from closer",
            vec![
                acq("a", 1),
                acq("b", 2),
                with(&closed("b", "1", 5), json!({"agent_id": "a"})),
            ],
            vec!["terminal"],
        ),
        (
            "unauthorized closer",
            vec![acq("a", 1), closed("c", "1", 5)],
            vec!["terminal"],
        ),
        (
            "closer before admission",
            vec![acq("a", 1), closed("b", "1", 2), acq("b", 3)],
            vec!["terminal"],
        ),
        (
            "unknown nested fact",
            vec![
                acq("a", 1),
                with(
                    &valid,
                    json!({"closed_by": {"agent_id": "a", "machine": " uNkNoWn "}}),
                ),
            ],
            vec!["terminal"],
        ),
        (
            "extra closed_by key",
            vec![
                acq("a", 1),
                with(
                    &valid,
                    json!({"closed_by": {"agent_id": "a", "machine": "m", "x": "y"}}),
                ),
            ],
            vec!["terminal"],
        ),
        (
            "blank optional fact",
            vec![acq("a", 1), with(&valid, json!({"pr_state": " \t "}))],
            vec!["terminal"],
        ),
        (
            "other lane",
            vec![
                acq("a", 1),
                rel.clone(),
                with(&valid, json!({"lane": "docs", "target": "1"})),
            ],
            vec!["terminal"],
        ),
        (
            "other batch",
            vec![acq("a", 1), with(&valid, json!({"batch_id": "b2"}))],
            vec!["terminal"],
        ),
        ("release only", vec![acq("a", 1), rel], vec![]),
        ("lane_closed alone", vec![valid], vec!["claim.acquired"]),
    ];
    for (name, events, want) in cases {
        assert_eq!(missing(&run(one_lane(), &events), 0), want, "{name}");
    }
}

#[test]
fn terminal_markers() {
    let fixture = json!({"schema_version":2,"event_id":"lane_closed-0f5a0caebfed6139",
        "batch_id":"ac-a-0712-0107","lane":"ac-a-i51","type":"lane_closed",
        "repo":"shakacode/agent-coordination","target":"51",
        "branch":"codex/ac-a-i51-terminal-lifecycle","terminal":"done",
        "pr_url":"https://github.com/shakacode/agent-coordination/pull/52","pr_state":"merged",
        "evidence_url":"https://github.com/shakacode/agent-coordination/pull/52#issuecomment-1",
        "workspace":"default","closed_by":{"agent_id":"ac-a-0712-0107-i51","machine":"codex"},
        "at":"2026-07-12T01:07:00Z"});
    let cases: Vec<(Value, bool)> = vec![
        (json!({}), true),
        (json!({"schema_version": 2.0}), true),
        (json!({"pr_url": "HtTpS://example.test"}), true),
        (
            json!({"pr_url": "https://user@example.test:8080/x?y#z"}),
            true,
        ),
        (json!({"pr_url": "http://[::1]:80/"}), true),
        (json!({"at": "1582-10-10T00:00:00.5+05:30"}), true),
        (
            json!({"lane": null, "batch_id": null, "branch": null}),
            true,
        ),
        (
            json!({"closed_by": {"agent_id": "a", "machine": " uNkNoWn "}}),
            true,
        ),
        (json!({"schema_version": "2"}), false),
        (json!({"schema_version": 1}), false),
        (json!({"type": "lane-closed"}), false),
        (json!({"terminal": "merged"}), false),
        (json!({"event_id": 123}), false),
        (json!({"target": ""}), false),
        (json!({"repo": "a/b/c"}), false),
        (json!({"repo": "ab"}), false),
        (json!({"repo": "/b"}), false),
        (json!({"workspace": ""}), false),
        (json!({"workspace": ["default"]}), false),
        (json!({"closed_by": "worker-a"}), false),
        (json!({"closed_by": {"agent_id": "a"}}), false),
        (
            json!({"closed_by": {"agent_id": "a", "machine": ""}}),
            false,
        ),
        (
            json!({"closed_by": {"agent_id": "a", "machine": "m", "x": "y"}}),
            false,
        ),
        (json!({"at": "2026-07-12T01:07:00"}), false),
        (json!({"at": "2026-02-29T00:00:00Z"}), false),
        (json!({"at": "2026-01-01T12:00:00+09:60"}), false),
        (json!({"branch": ""}), false),
        (json!({"pr_state": 3}), false),
        (json!({"lane": ""}), false),
        (json!({"evidence_url": "javascript:alert(1)"}), false),
        (
            json!({"evidence_url": "https://example.test/evidence /1"}),
            false,
        ),
        (json!({"evidence_url": 123}), false),
        (json!({"pr_url": "https://"}), false),
        (json!({"pr_url": "https://user@/x"}), false),
        (json!({"pr_url": "https://host:abc/"}), false),
        (json!({"pr_url": "ftp://example.test/"}), false),
        (json!({"pr_url": "https://exa<mple.test/"}), false),
    ];
    for (patch, want) in cases {
        let marker = rec(with(&fixture, patch.clone()));
        assert_eq!(is_valid_terminal_marker(&marker), want, "{patch}");
    }
    let mut missing_required = rec(fixture);
    missing_required.remove("workspace");
    assert!(!is_valid_terminal_marker(&missing_required));
}

#[test]
fn malformed_lane_rows() {
    let lanes = json!([null, lane("code", "a", &["1"]), "docs"]);
    let events = [
        ev("claim.acquired", "a", "1", 1),
        ev("claim.released", "a", "1", 2),
    ];
    let a = run(lanes, &events);
    assert_eq!(a.verdict, Verdict::Incomplete);
    assert_eq!(a.lanes.len(), 3);
    assert_eq!(a.lanes[0], LaneAudit::malformed());
    assert_eq!(a.lanes[2], a.lanes[0]);
    assert_eq!(
        serde_json::to_value(&a.lanes[0]).unwrap(),
        json!({"name": "UNKNOWN", "owner": "UNKNOWN", "targets": [], "event_count": 0,
            "missing": ["claim.acquired", "terminal"], "complete": false, "malformed": true})
    );
    assert!(a.lanes[1].complete);
    assert!(!a.lanes[1].malformed);

    let hash_lanes = run(json!({"code": {"owner": "a"}}), &[]);
    assert_eq!(hash_lanes.lanes, [LaneAudit::malformed()]);
}

#[test]
fn verdicts_and_exit_codes() {
    for (v, s, code) in [
        (Verdict::Complete, "complete", 0),
        (Verdict::Incomplete, "incomplete", 1),
        (Verdict::Unknown, "unknown", 2),
    ] {
        assert_eq!((v.wire_name(), v.exit_code()), (s, code));
    }
    let two = json!([lane("code", "a", &["1"]), lane("docs", "b", &["2"])]);
    let code_done = [
        ev("claim.acquired", "a", "1", 1),
        ev("claim.released", "a", "1", 2),
    ];
    let docs_done = [
        ev("claim.acquired", "b", "2", 3),
        ev("claim.released", "b", "2", 4),
    ];
    let all: Vec<Value> = code_done.iter().chain(&docs_done).cloned().collect();
    assert_eq!(run(two.clone(), &all).verdict, Verdict::Complete);
    assert_eq!(run(two, &code_done).verdict, Verdict::Incomplete);
}

#[test]
fn rendering() {
    let lanes = json!([lane("code", "a", &["1"]), lane("docs", "b", &["2"])]);
    let a = run(
        lanes,
        &[ev("claim.acquired", "a", "1", 1), closed("a", "1", 2)],
    );
    assert_eq!(
        a.to_text(),
        "batch-audit b1 incomplete\n\
         - lane code owner a complete\n\
         - lane docs owner b incomplete missing claim.acquired, terminal\n"
    );
    assert_eq!(
        serde_json::to_string(&a).unwrap(),
        r#"{"batch_id":"b1","verdict":"incomplete","lanes":[{"name":"code","owner":"a","targets":["1"],"event_count":2,"missing":[],"complete":true,"malformed":false},{"name":"docs","owner":"b","targets":["2"],"event_count":0,"missing":["claim.acquired","terminal"],"complete":false,"malformed":false}]}"#
    );

    let u = audit(&MemorySnapshot::default(), "../evil");
    assert_eq!(
        u.to_text(),
        "batch-audit ../evil unknown\n- coordination state unreadable: invalid batch-id: ../evil\n"
    );
    assert_eq!(
        serde_json::to_string(&u).unwrap(),
        r#"{"batch_id":"../evil","verdict":"unknown","reason":"coordination state unreadable: invalid batch-id: ../evil","lanes":[]}"#
    );
    let empty = Audit {
        batch_id: "b".into(),
        verdict: Verdict::Complete,
        lanes: vec![],
        reason: None,
    };
    assert_eq!(
        empty.to_text(),
        "batch-audit b complete\n- no lanes registered\n"
    );
}

#[test]
fn lineage_authorization_for_closeout() {
    let batch = rec(json!({"batch_id": "b1", "repo": REPO, "lanes": one_lane()}));
    let acq = |agent: &str, second| ev("claim.acquired", agent, "1", second);
    let takeover = [acq("a", 1), acq("b", 2)];
    // (case, batch, lane, events, authorized agents)
    type Case<'a> = (&'a str, Record, &'a str, Vec<Value>, Option<Vec<&'a str>>);
    let cases: Vec<Case> = vec![
        ("owner only", batch.clone(), "code", vec![], Some(vec!["a"])),
        (
            "unknown owner",
            rec(json!({"batch_id": "b1", "lanes": [lane("code", "", &["1"])]})),
            "code",
            vec![],
            Some(vec![]),
        ),
        (
            "takeover",
            batch.clone(),
            "code",
            takeover.to_vec(),
            Some(vec!["a", "b"]),
        ),
        (
            "other repo ignored",
            batch.clone(),
            "code",
            vec![
                acq("a", 1),
                with(&acq("b", 2), json!({"repo": "other/app"})),
            ],
            Some(vec!["a"]),
        ),
        ("no such lane", batch.clone(), "docs", vec![], None),
        (
            "duplicate lane name",
            rec(
                json!({"batch_id": "b1", "lanes": [lane("code", "a", &["1"]), lane("code", "b", &["2"])]}),
            ),
            "code",
            vec![],
            None,
        ),
        (
            "invalid ordinary event",
            batch.clone(),
            "code",
            vec![acq("a", 1), ev("claim.released", "c", "1", 2), acq("b", 3)],
            None,
        ),
        (
            "unordered",
            batch.clone(),
            "code",
            vec![acq("a", 1), with(&acq("b", 2), json!({"at": "soon"}))],
            None,
        ),
        (
            "conflicting closeouts",
            batch.clone(),
            "code",
            vec![
                acq("a", 1),
                acq("b", 2),
                closed("a", "1", 3),
                with(
                    &closed("a", "1", 4),
                    json!({"event_id": "x", "pr_state": "closed"}),
                ),
            ],
            None,
        ),
        (
            "invalid closeout",
            batch.clone(),
            "code",
            vec![
                acq("a", 1),
                acq("b", 2),
                with(&closed("b", "1", 3), json!({"closed_by": "b"})),
            ],
            None,
        ),
        (
            "valid closeout replays",
            batch,
            "code",
            vec![acq("a", 1), acq("b", 2), closed("b", "1", 3)],
            Some(vec!["a", "b"]),
        ),
    ];
    for (name, batch, lane_name, events, want) in cases {
        let got = lineage_authorized(&batch, lane_name, &pairs(&events));
        assert_eq!(got, want.map(|w| set(&w)), "{name}");
    }

    // Without a manifest batch_id, the events folder names the batch.
    let anonymous = rec(json!({"lanes": one_lane()}));
    assert_eq!(
        lineage_authorized(&anonymous, "code", &pairs(&takeover)),
        Some(set(&["a", "b"]))
    );
    let mut elsewhere = pairs(&takeover);
    elsewhere[1].0 = "events/b2/001.json".into();
    assert_eq!(lineage_authorized(&anonymous, "code", &elsewhere), None);
}
