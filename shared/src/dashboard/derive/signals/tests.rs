//! One table per health signal: small record states, and the details the signal reports
//! on each (none when it must stay quiet).

use serde_json::json;
use serde_json::Value;

use crate::dashboard::fixtures::ago;
use crate::dashboard::fixtures::ahead;
use crate::dashboard::fixtures::Records;

/// The details `signal` reports on the records `setup` writes.
fn details(signal: &str, setup: impl Fn(&mut Records)) -> Vec<String> {
    let mut records = Records::new();
    setup(&mut records);
    let (_, m) = records.model();
    m.health
        .into_iter()
        .filter(|h| h.signal.as_str() == signal)
        .map(|h| h.detail)
        .collect()
}

/// One case of a signal's table: what it shows, the records, the details expected.
type Case<'a> = (&'a str, &'a dyn Fn(&mut Records), &'a [&'a str]);

/// Checks every case of a signal's table.
fn table(signal: &str, cases: &[Case<'_>]) {
    for (case, setup, want) in cases {
        assert_eq!(details(signal, setup), *want, "{signal}: {case}");
    }
}

/// A heartbeat of `agent` on `acme/app#target`, `age` minutes old, without a machine id.
fn anonymous_beat(r: &mut Records, agent: &str, target: &str, status: &str, age: i64) {
    r.put(
        &format!("heartbeats/{agent}.json"),
        json!({"agent_id": agent, "repo": "acme/app", "target": target, "status": status,
               "updated_at": ago(age), "expires_at": ahead(10 - age)}),
    );
}

/// A saved plan `b` for `acme/app` with one lane on #1 (owner `w1`, `status`) and `extra`
/// fields.
fn plan(r: &mut Records, b: &str, status: &str, extra: Value) {
    let mut m = json!({"batch_id": b, "repo": "acme/app",
        "targets": [{"type": "pull_request", "target": "1"}],
        "lanes": [{"name": "l", "owner": "w1", "targets": ["1"], "status": status}]});
    if let (Value::Object(m), Value::Object(extra)) = (&mut m, extra) {
        m.extend(extra);
    }
    r.put(&format!("batches/{b}.json"), m);
}

const PROMPT: &str = "Repository: acme/app\nBatch id: b\nItems:\n- PR #1\n";

#[test]
fn h1_heartbeat_missing_machine_id() {
    table(
        "H1",
        &[
            (
                "no machine anywhere",
                &|r| anonymous_beat(r, "anon", "1", "implementing", 1),
                &["anon does not report machine_id, so machine ownership cannot be shown reliably."],
            ),
            (
                "reported by the heartbeat",
                &|r| {
                    r.beat("w1", "acme/app", "1", None, "implementing", 1);
                },
                &[],
            ),
            (
                "reported by the agent's claim",
                &|r| {
                    anonymous_beat(r, "w1", "1", "implementing", 1);
                    r.claim("acme/app", "1", "w1", None);
                },
                &[],
            ),
            (
                "a legacy m<N> token in the agent id",
                &|r| anonymous_beat(r, "worker-m5", "1", "implementing", 1),
                &[],
            ),
            (
                "the work is done",
                &|r| anonymous_beat(r, "anon", "1", "merged", 1),
                &[],
            ),
        ],
    );
}

#[test]
fn h2_active_claim_without_heartbeat() {
    table(
        "H2",
        &[
            (
                "no heartbeat",
                &|r| {
                    r.claim("acme/app", "1", "w1", None);
                },
                &["w1 holds acme/app#1, but no heartbeat currently points at that work."],
            ),
            (
                "the holder beats on it",
                &|r| {
                    r.claim("acme/app", "1", "w1", None).beat(
                        "w1",
                        "acme/app",
                        "1",
                        None,
                        "implementing",
                        1,
                    );
                },
                &[],
            ),
            (
                "only another agent beats on it",
                &|r| {
                    r.claim("acme/app", "1", "w1", None).beat(
                        "w2",
                        "acme/app",
                        "1",
                        None,
                        "implementing",
                        1,
                    );
                },
                &["w1 holds acme/app#1, but no heartbeat currently points at that work."],
            ),
            (
                "the holder beats on other work",
                &|r| {
                    r.claim("acme/app", "1", "w1", None).beat(
                        "w1",
                        "acme/app",
                        "2",
                        None,
                        "implementing",
                        1,
                    );
                },
                &["w1 holds acme/app#1, but no heartbeat currently points at that work."],
            ),
        ],
    );
}

#[test]
fn h3_work_started_but_not_processing() {
    table(
        "H3",
        &[
            (
                "the holder's heartbeat is dead",
                &|r| {
                    r.claim("acme/app", "1", "w1", None).beat(
                        "w1",
                        "acme/app",
                        "1",
                        None,
                        "implementing",
                        100,
                    );
                },
                &["acme/app#1 has coordination state but no live/stale holder."],
            ),
            (
                "the holder is live",
                &|r| {
                    r.claim("acme/app", "1", "w1", None).beat(
                        "w1",
                        "acme/app",
                        "1",
                        None,
                        "implementing",
                        1,
                    );
                },
                &[],
            ),
            (
                "the work is done",
                &|r| {
                    r.beat("w1", "acme/app", "1", None, "merged", 100);
                },
                &[],
            ),
        ],
    );
}

#[test]
fn h4_batch_plan_missing() {
    table(
        "H4",
        &[
            (
                "a claim names a batch with no plan",
                &|r| {
                    r.claim("acme/app", "1", "w1", Some("b9"));
                },
                &["b9 was inferred from coordination records because no saved batch plan was found."],
            ),
            (
                "the plan is saved",
                &|r| {
                    plan(r, "b9", "in_progress", json!({}));
                    r.claim("acme/app", "1", "w1", Some("b9"));
                },
                &[],
            ),
        ],
    );
}

#[test]
fn h5_prompt_missing() {
    table(
        "H5",
        &[
            (
                "a plan without its prompt",
                &|r| plan(r, "b", "in_progress", json!({})),
                &["b has a saved batch plan, but no coordination prompt was saved."],
            ),
            (
                "a plan with its prompt",
                &|r| plan(r, "b", "in_progress", json!({"launch_prompt": PROMPT})),
                &[],
            ),
            (
                "an inferred batch (H4 instead)",
                &|r| {
                    r.claim("acme/app", "1", "w1", Some("b9"));
                },
                &[],
            ),
        ],
    );
}

#[test]
fn h6_prompt_parse_failed() {
    let contradicting = "Batch id: b\nItems:\n- PR #7: https://github.com/acme/app/pull/8\n";
    let fired = details("H6", |r| {
        plan(
            r,
            "b",
            "in_progress",
            json!({"launch_prompt": contradicting}),
        )
    });
    assert_eq!(fired.len(), 1, "{fired:?}");
    assert!(
        fired[0].starts_with("b saved coordination prompt could not be parsed: "),
        "{fired:?}"
    );
    table(
        "H6",
        &[(
            "a prompt that parses",
            &|r| plan(r, "b", "in_progress", json!({"launch_prompt": PROMPT})),
            &[],
        )],
    );
}

#[test]
fn h7_prompt_target_mismatch() {
    table(
        "H7",
        &[
            (
                "prompt and plan agree",
                &|r| plan(r, "b", "in_progress", json!({"launch_prompt": PROMPT})),
                &[],
            ),
            (
                "the prompt names another target",
                &|r| {
                    let prompt = "Repository: acme/app\nBatch id: b\nItems:\n- PR #2\n";
                    plan(r, "b", "in_progress", json!({"launch_prompt": prompt}));
                },
                &[
                    "b saved coordination prompt and batch plan targets differ: prompt has \
                   acme/app:pull_request#2; plan has acme/app:pull_request#1.",
                ],
            ),
        ],
    );
}

#[test]
fn h8_batch_has_no_history_events() {
    table(
        "H8",
        &[
            (
                "a plan without events",
                &|r| plan(r, "b", "in_progress", json!({})),
                &["b has a saved batch plan, but no events/history records were found."],
            ),
            (
                "an inferred batch without events",
                &|r| {
                    r.claim("acme/app", "1", "w1", Some("b9"));
                },
                &["b9 has inferred lanes, but no events/history records were found."],
            ),
            (
                "a plan with an event",
                &|r| {
                    plan(r, "b", "in_progress", json!({}));
                    r.event("b", "e1", "note", json!({}), 1);
                },
                &[],
            ),
        ],
    );
}

#[test]
fn h9_batch_lane_has_no_heartbeat() {
    table(
        "H9",
        &[
            (
                "the owner has no heartbeat",
                &|r| plan(r, "b", "in_progress", json!({})),
                &["b:l is in_progress, but owner w1 has no matching heartbeat."],
            ),
            (
                "the owner beats on the lane",
                &|r| {
                    plan(r, "b", "in_progress", json!({}));
                    r.beat("w1", "acme/app", "1", Some("b"), "implementing", 1);
                },
                &[],
            ),
            (
                "the lane is complete (`ready` counts)",
                &|r| plan(r, "b", "ready", json!({})),
                &[],
            ),
            (
                "`ready_gates_clean` is not complete on the dashboard",
                &|r| plan(r, "b", "ready_gates_clean", json!({})),
                &["b:l is ready_gates_clean, but owner w1 has no matching heartbeat."],
            ),
        ],
    );
}

#[test]
fn r1_unreadable_record() {
    table(
        "R1",
        &[
            (
                "a record that is not JSON",
                &|r| r.0.push(("claims/acme/app/9.json".into(), b"{not json".to_vec())),
                &["Malformed JSON in claims/acme/app/9.json: key must be a string at line 1 column 2"],
            ),
            ("nothing unreadable", &|_| {}, &[]),
        ],
    );
}
