//! `update` (re-deriving only what new events, renewed heartbeats, changed claims, manifests
//! written, rewritten or removed, changed coordinator tasks and annotations touch) must equal
//! a full build.

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::json;
use serde_json::Value;

use super::build;
use super::build_with;
use super::update;
use super::update_with;
use crate::dashboard::fixtures::ago;
use crate::dashboard::fixtures::now;
use crate::dashboard::fixtures::task;
use crate::dashboard::inputs::records::parse_record;
use crate::dashboard::inputs::records::Inputs;
use crate::dashboard::inputs::records::Parsed;

const AGENTS: [&str; 4] = ["w1", "w2", "w3", "w4"];
const REPOS: [&str; 2] = ["acme/app", "acme/api"];
const KINDS: [&str; 8] = [
    "phase.changed",
    "qa.validation_failed",
    "qa.validation_passed",
    "qa.validation_requested",
    "batch.stop_requested",
    "lane.done",
    "claim.released",
    "note",
];

fn record(path: &str, v: &Value) -> (String, Vec<u8>) {
    (path.to_owned(), serde_json::to_vec(v).unwrap_or_default())
}

/// (agent, repo, target, batch, kind, minutes ago, status)
type Ev = (usize, usize, u8, u8, usize, i64, bool);

fn event(i: usize, e: &Ev) -> (String, Vec<u8>) {
    let (agent, repo, target, batch, kind, age, with_status) = *e;
    let batch = format!("b{}", batch % 3);
    let mut v = json!({"event_id": format!("e{i:04}"), "batch_id": batch, "type": KINDS[kind % KINDS.len()],
                       "agent_id": AGENTS[agent % 4], "repo": REPOS[repo % 2], "target": format!("{}", target % 6),
                       "at": ago(age)});
    if with_status {
        v["status"] = json!(if kind % 2 == 0 {
            "stop_requested"
        } else {
            "implementing"
        });
    }
    record(&format!("events/{batch}/e{i:04}.json"), &v)
}

fn base(
    claims: &[(usize, usize, u8, bool)],
    beats: &[(usize, usize, u8, i64)],
) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    files.push(record("batches/b0.json", &json!({"batch_id": "b0", "repo": "acme/app", "launch_prompt": "Repository: acme/app\nBatch id: b0\nItems:\n- PR #1\n- PR #2\n",
        "targets": [{"type": "pull_request", "target": "1"}, {"type": "pull_request", "target": "2"}],
        "lanes": [{"name": "a", "owner": "w1", "targets": ["1"], "status": "in_progress"},
                  {"name": "b", "owner": "w2", "targets": ["2"], "status": "queued", "depends_on": ["b0:a"]}]})));
    files.push(record("batches/b1.json", &json!({"batch_id": "b1", "repo": "acme/api",
        "lanes": [{"name": "c", "owner": "w3", "targets": ["3", "1"], "status": "in_progress", "depends_on": ["b0:b"]},
                  {"name": "d", "owner": "w4", "targets": ["4"], "status": "merged"}]})));
    for (agent, repo, target, released) in claims {
        let v = json!({"repo": REPOS[repo % 2], "target": format!("{}", target % 6), "agent_id": AGENTS[agent % 4],
                       "status": if *released { "released" } else { "active" }, "updated_at": ago(30), "machine_id": "box-1",
                       "batch_id": "b2"});
        files.push(record(
            &format!("claims/{}/{}.json", REPOS[repo % 2], target % 6),
            &v,
        ));
    }
    for (i, agent) in AGENTS.iter().enumerate() {
        // A beat names a saved batch, the claims' inferred one, one of its own, or none.
        let (repo, target, age, batch) = beats
            .get(i)
            .map(|(b, r, t, a)| (REPOS[r % 2], format!("{}", t % 6), *a, BEAT_BATCHES[b % 4]))
            .unwrap_or((REPOS[0], format!("{i}"), 1, None));
        let mut v = json!({"agent_id": agent, "repo": repo, "target": target, "status": "implementing",
                       "updated_at": ago(age), "expires_at": ago(age - 10), "machine_id": format!("box-{i}")});
        if let Some(b) = batch {
            v["batch_id"] = json!(b);
        }
        files.push(record(&format!("heartbeats/{agent}.json"), &v));
    }
    files
}

/// The next tip: the same records (the same Arcs, as the server's cache shares them) plus
/// `new` events.
fn with_events(before: &Inputs, new: &[Ev]) -> Inputs {
    let mut after = before.clone();
    for (i, e) in new.iter().enumerate() {
        let (path, bytes) = event(1000 + i, e);
        after.push(parse_record(&path, &bytes));
    }
    after.finish();
    after
}

/// The batch a heartbeat names: saved `b0`, `b2` inferred from the claims, `b5` its own.
const BEAT_BATCHES: [Option<&str>; 4] = [None, Some("b0"), Some("b2"), Some("b5")];

/// A tree holds one blob per path: the last write of a path wins.
fn inputs(files: &[(String, Vec<u8>)]) -> Inputs {
    let unique: std::collections::BTreeMap<&str, &[u8]> = files
        .iter()
        .map(|(p, b)| (p.as_str(), b.as_slice()))
        .collect();
    Inputs::from_files(unique)
}

const TASK_STATES: [(&str, &str); 5] = [
    ("waiting", "implement"),
    ("active", "await_merge"),
    ("uncertain", "ci"),
    ("failed", "finished"),
    ("active", "checks"),
];

/// (repo, issue, state and phase, minutes ago); a few issues are malformed records.
type TaskRec = (usize, u8, usize, i64);

fn task_record(t: &TaskRec) -> (String, Vec<u8>) {
    let (repo, issue, state, age) = *t;
    let (state, phase) = TASK_STATES[state % TASK_STATES.len()];
    let mut v = task(REPOS[repo % 2], u64::from(issue % 6), state, phase, age);
    // Most tasks ran lanes (the spend totals and the day chart follow them); some cost
    // nothing known.
    v["worker"] = json!(AGENTS[usize::from(issue) % 4]);
    v["lane_runs"] = json!((0..age % 4)
        .map(
            |i| json!({"slot": "grok:implementer", "phase": "implement", "round": 1,
            "vendor": "grok", "started_at": ago(age + i * 600), "ended_at": ago(age + i * 600),
            "verdict": "done", "exit_code": 0, "input_tokens": 10 * i, "output_tokens": age,
            "cost_usd": if i % 2 == 0 { json!(0.01 * age as f64) } else { Value::Null },
            "cost_source": if i % 2 == 0 { "computed" } else { "unknown" }})
        )
        .collect::<Vec<_>>());
    let path = format!("coordinator/tasks/{}/{}.json", REPOS[repo % 2], issue % 6);
    record(&path, &v)
}

/// Writes tasks into `inputs` as a new tip would: a task at an existing path replaces it.
fn put_tasks(inputs: &mut Inputs, tasks: &[TaskRec]) {
    for t in tasks {
        let (path, bytes) = task_record(t);
        if let Parsed::Task(task) = parse_record(&path, &bytes) {
            inputs.tasks.retain(|old| old.path != path);
            inputs.tasks.push(task);
        }
    }
    inputs.tasks.sort_by(|a, b| a.path.cmp(&b.path));
}

fn task_rec() -> impl Strategy<Value = TaskRec> {
    (0..2usize, 0..6u8, 0..5usize, 0..90i64)
}

fn ev() -> impl Strategy<Value = Ev> {
    (
        0..4usize,
        0..2usize,
        0..6u8,
        0..3u8,
        0..8usize,
        0..60i64,
        any::<bool>(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn update_equals_a_full_build(
        claims in prop::collection::vec((0..4usize, 0..2usize, 0..6u8, any::<bool>()), 0..6),
        beats in prop::collection::vec((0..4usize, 0..2usize, 0..6u8, 0..80i64), 0..4),
        old in prop::collection::vec(ev(), 0..12),
        new in prop::collection::vec(ev(), 0..4),
        old_tasks in prop::collection::vec(task_rec(), 0..4),
        new_tasks in prop::collection::vec(task_rec(), 0..3),
    ) {
        let now = now();
        let mut files = base(&claims, &beats);
        files.extend(old.iter().enumerate().map(|(i, e)| event(i, e)));
        files.extend(old_tasks.iter().map(task_record));
        let before = inputs(&files);
        let (model, derivation) = build_with(&before, now, "v1");
        // The next tip: new events, and tasks written or rewritten.
        let mut after = with_events(&before, &new);
        put_tasks(&mut after, &new_tasks);
        let full = build(&after, now, "v2");
        let updated = update(model, &derivation, &before, &after, now, "v2");
        let incremental = updated.expect("only events were added, by known agents, and tasks");
        prop_assert_eq!(incremental, full);
    }

    #[test]
    fn update_after_renewed_heartbeats_equals_a_full_build(
        claims in prop::collection::vec((0..4usize, 0..2usize, 0..6u8, any::<bool>()), 0..6),
        beats in prop::collection::vec((0..4usize, 0..2usize, 0..6u8, 0..80i64), 0..4),
        old in prop::collection::vec(ev(), 0..12),
        new in prop::collection::vec(ev(), 0..3),
        renewals in prop::collection::vec((0..4usize, 0..6usize, -5..90i64), 1..4),
    ) {
        let now = now();
        let mut files = base(&claims, &beats);
        files.extend(old.iter().enumerate().map(|(i, e)| event(i, e)));
        let before = inputs(&files);
        let (model, derivation) = build_with(&before, now, "v1");
        let mut after = with_events(&before, &new);
        for (agent, status, age) in &renewals {
            let i = agent % after.heartbeats.len();
            let mut h = after.heartbeats[i].as_ref().clone();
            h.status = BEAT_STATUSES[status % BEAT_STATUSES.len()].to_owned();
            h.updated_at = crate::time::parse(&ago(*age));
            h.expires_at = crate::time::parse(&ago(age - 10));
            after.heartbeats[i] = Arc::new(h);
        }
        let (full, full_derivation) = build_with(&after, now, "v2");
        let mut derivation = derivation;
        let incremental = update_with(model, &mut derivation, &before, &after, now, "v2")
            .expect("only renewed heartbeats and events by known agents");
        prop_assert_eq!(incremental, full);
        // The lanes were brought up to date in place: the next update starts from what a
        // full build would have kept.
        prop_assert_eq!(
            format!("{:?}", derivation.srcs),
            format!("{:?}", full_derivation.srcs)
        );
    }
}

/// The batches a claim in the claims test is on: none, or a saved one.
const CLAIM_BATCHES: [Option<&str>; 3] = [None, Some("b0"), Some("b1")];

/// A claim write: (agent, repo, target, batch, status: 0 active, 1 released, 2 path deleted).
type ClaimWrite = (usize, usize, u8, usize, u8);

fn claim_record(w: &ClaimWrite) -> (String, Vec<u8>) {
    let (agent, repo, target, batch, status) = *w;
    let mut v = json!({"repo": REPOS[repo % 2], "target": format!("{}", target % 6),
        "agent_id": AGENTS[agent % 4], "status": if status == 1 { "released" } else { "active" },
        "updated_at": ago(i64::from(target) + 3), "machine_id": "box-1"});
    if let Some(b) = CLAIM_BATCHES[batch % CLAIM_BATCHES.len()] {
        v["batch_id"] = json!(b);
    }
    record(
        &format!("claims/{}/{}.json", REPOS[repo % 2], target % 6),
        &v,
    )
}

/// The next tip after claim writes, as the server's cache reads it: every other record the
/// very same (the same Arcs).
fn with_claims(before: &Inputs, writes: &[ClaimWrite]) -> Inputs {
    let mut after = before.clone();
    for w in writes {
        let (path, bytes) = claim_record(w);
        after.claims.retain(|c| c.path != path);
        if w.4 != 2 {
            after.push(parse_record(&path, &bytes));
        }
    }
    after.sort();
    after
}

fn claim_write() -> impl Strategy<Value = ClaimWrite> {
    (0..4usize, 0..2usize, 0..6u8, 0..3usize, 0..3u8)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Claims, releases and deleted claim paths, on no batch or a saved one, with the
    /// lifecycle events that come with them: an update, equal to a full build.
    #[test]
    fn update_after_claim_writes_equals_a_full_build(
        initial in prop::collection::vec(claim_write(), 0..8),
        beats in prop::collection::vec((0..4usize, 0..2usize, 0..6u8, 0..80i64), 0..4),
        old in prop::collection::vec(ev(), 0..12),
        writes in prop::collection::vec(claim_write(), 1..4),
        new in prop::collection::vec(ev(), 0..3),
        renewals in prop::collection::vec((0..4usize, 0..6usize, -5..90i64), 0..2),
    ) {
        let now = now();
        let mut files = base(&[], &beats);
        files.extend(initial.iter().map(claim_record));
        files.extend(old.iter().enumerate().map(|(i, e)| event(i, e)));
        let before = inputs(&files);
        let (model, derivation) = build_with(&before, now, "v1");
        let mut after = with_claims(&with_events(&before, &new), &writes);
        for (agent, status, age) in &renewals {
            let i = agent % after.heartbeats.len();
            let mut h = after.heartbeats[i].as_ref().clone();
            h.status = BEAT_STATUSES[status % BEAT_STATUSES.len()].to_owned();
            h.updated_at = crate::time::parse(&ago(*age));
            after.heartbeats[i] = Arc::new(h);
        }
        let full = build(&after, now, "v2");
        let mut derivation = derivation;
        let incremental = update_with(model, &mut derivation, &before, &after, now, "v2")
            .expect("claims on saved batches by agents on known machines are an update");
        prop_assert_eq!(incremental, full);
    }
}

#[test]
fn a_claim_on_an_inferred_batch_or_by_a_new_agent_falls_back_to_a_full_build() {
    let now = now();
    let before = inputs(&base(&[(0, 0, 1, false)], &[]));
    let (model, derivation) = build_with(&before, now, "v1");
    // base's claims are on b2, a batch inferred from them.
    let mut after = before.clone();
    let mut c = after.claims[0].as_ref().clone();
    c.status = "released".into();
    after.claims[0] = Arc::new(c);
    assert!(update(model.clone(), &derivation, &before, &after, now, "v2").is_none());
    // A claim by an agent nobody has seen: a new agent on the machines view.
    let mut after = before.clone();
    let (p, b) = record(
        "claims/acme/app/5.json",
        &json!({"repo": "acme/app", "target": "5", "agent_id": "stranger", "status": "active",
                "machine_id": "box-9"}),
    );
    after.push(parse_record(&p, &b));
    after.sort();
    assert!(update(model.clone(), &derivation, &before, &after, now, "v2").is_none());
    // The same claim by a known agent is an update, equal to a full build.
    let mut after = before.clone();
    let (p, b) = record(
        "claims/acme/app/5.json",
        &json!({"repo": "acme/app", "target": "5", "agent_id": "w2", "status": "active",
                "machine_id": "box-1", "batch_id": "b0"}),
    );
    after.push(parse_record(&p, &b));
    after.sort();
    let updated = update(model, &derivation, &before, &after, now, "v2").expect("an update");
    assert_eq!(updated, build(&after, now, "v2"));
    assert!(updated.rows.iter().any(|r| r.id == "target:acme/app#5"));
}

/// Statuses a renewed heartbeat reports: working, done, merged, waiting on a person, blocked.
const BEAT_STATUSES: [&str; 6] = [
    "implementing",
    "done",
    "merged",
    "waiting for user input",
    "blocked",
    "ready for qa",
];

#[test]
fn a_heartbeat_that_moved_to_other_work_falls_back_to_a_full_build() {
    let now = now();
    let before = inputs(&base(&[(0, 0, 1, false)], &[]));
    let (model, derivation) = build_with(&before, now, "v1");
    for change in [
        |h: &mut crate::dashboard::inputs::records::HeartbeatIn| h.target = Some("5".into()),
        |h: &mut crate::dashboard::inputs::records::HeartbeatIn| h.batch_id = Some("b9".into()),
        |h: &mut crate::dashboard::inputs::records::HeartbeatIn| {
            h.meta.machine = Some("box-9".into())
        },
    ] {
        let mut after = before.clone();
        let mut h = after.heartbeats[0].as_ref().clone();
        change(&mut h);
        after.heartbeats[0] = Arc::new(h);
        assert!(update(model.clone(), &derivation, &before, &after, now, "v2").is_none());
    }
    // A renewal alone is an update, and equals a full build.
    let mut after = before.clone();
    let mut h = after.heartbeats[0].as_ref().clone();
    h.status = "verifying".into();
    after.heartbeats[0] = Arc::new(h);
    let updated = update(model, &derivation, &before, &after, now, "v2").expect("an update");
    assert_eq!(updated, build(&after, now, "v2"));
}

#[test]
fn anything_but_new_events_falls_back_to_a_full_build() {
    let now = now();
    let files = base(&[(0, 0, 1, false)], &[]);
    let before = inputs(&files);
    let (model, derivation) = build_with(&before, now, "v1");
    // More manifests written at once than an update takes.
    let mut after = before.clone();
    for i in 0..=64 {
        let (p, b) = manifest_record(0, 0, &(1, 1, 0, 0, 1, false));
        after.push(parse_record(&p.replace("b0", &format!("x{i}")), &b));
    }
    after.sort();
    assert!(update(model.clone(), &derivation, &before, &after, now, "v2").is_none());
    // A malformed record (a task checkpoint too) is a new warning and a health signal.
    let mut after = before.clone();
    after.push(parse_record(
        "coordinator/tasks/acme/app/1.json",
        b"{\"state\": \"waiting\"}",
    ));
    after.finish();
    assert_eq!(after.malformed.len(), 1);
    assert!(update(model.clone(), &derivation, &before, &after, now, "v2").is_none());
    // An event by an agent nobody has seen.
    let mut after = before.clone();
    let (p, b) = record(
        "events/b0/x.json",
        &json!({"type": "note", "agent_id": "stranger", "batch_id": "b0"}),
    );
    after.push(parse_record(&p, &b));
    after.finish();
    assert!(update(model.clone(), &derivation, &before, &after, now, "v2").is_none());
}

#[test]
fn a_tip_that_changed_only_coordinator_tasks_reuses_every_row() {
    let now = now();
    let before = inputs(&base(&[(0, 0, 1, false)], &[]));
    let (model, derivation) = build_with(&before, now, "v1");
    let mut after = before.clone();
    put_tasks(&mut after, &[(0, 1, 0, 3), (1, 2, 1, 4)]);
    let updated =
        update(model.clone(), &derivation, &before, &after, now, "v2").expect("an update");
    assert_eq!(updated, build(&after, now, "v2"));
    assert_eq!(updated.rows, model.rows);
    assert_eq!(
        updated.counts.needs_attention,
        model.counts.needs_attention + 2
    );
    // The tasks' lane runs are in the spend the update assembled.
    assert!(model.spend.is_empty());
    assert_eq!(updated.spend.total.runs, 3);
    // Nothing the dashboard reads changed at all (say only activity records did).
    let same = update(model.clone(), &derivation, &before, &before, now, "v2").expect("update");
    assert_eq!(same, build(&before, now, "v2"));
}

#[test]
fn a_renewal_that_completes_a_lane_unblocks_the_batches_waiting_on_it() {
    let now = now();
    // w2 beats on acme/app#2, lane b0:b, which b1's lane c waits for.
    let before = inputs(&base(&[], &[(0, 0, 1, 1), (1, 0, 2, 1)]));
    let (model, derivation) = build_with(&before, now, "v1");
    let blocked = |m: &crate::dashboard::model::DashboardModel| {
        m.rows
            .iter()
            .find(|r| r.id == "target:acme/api#3")
            .map(|r| r.blocked_on.clone())
    };
    assert_eq!(blocked(&model), Some(vec!["b0:b".to_owned()]));
    let mut after = before.clone();
    let i = after
        .heartbeats
        .iter()
        .position(|h| h.agent == "w2")
        .expect("w2 beats");
    let mut h = after.heartbeats[i].as_ref().clone();
    h.status = "done".into();
    after.heartbeats[i] = Arc::new(h);
    let updated = update(model, &derivation, &before, &after, now, "v2").expect("an update");
    assert_eq!(blocked(&updated), Some(Vec::new()));
    assert_eq!(updated, build(&after, now, "v2"));
}

#[test]
fn an_annotation_written_or_removed_is_an_update_equal_to_a_full_build() {
    let now = now();
    // w1 holds acme/app#1 without a heartbeat on it: a needs-attention row.
    let before = inputs(&base(&[(0, 0, 1, false)], &[(0, 0, 5, 1)]));
    let (model, derivation) = build_with(&before, now, "v1");
    let mut after = before.clone();
    let (p, b) = record(
        "annotations/acme/app/1.json",
        &json!({"repo": "acme/app", "target": "1", "kind": "dismiss", "updated_at": ago(1)}),
    );
    after.push(parse_record(&p, &b));
    after.sort();
    assert_eq!(after.annotations.len(), 1, "the annotation parses");
    let updated =
        update(model.clone(), &derivation, &before, &after, now, "v2").expect("an update");
    assert_eq!(updated, build(&after, now, "v2"));
    assert_eq!(updated.rows, model.rows, "rows are reused");
    // Removed again: the same as before.
    let back = update(updated, &derivation, &after, &before, now, "v3").expect("an update");
    assert_eq!(back, build(&before, now, "v3"));
}

/// A manifest's content: (lane count, first owner, second lane's target, statuses,
/// dependency, first lane closed).
type ManifestWrite = (usize, usize, u8, usize, usize, bool);

/// The batch ids manifests are written for: the saved `b0` and `b1`, and `b2` and `b5`,
/// which heartbeats (and, for `b2`, claims) name while no manifest saves them.
const MANIFEST_IDS: [&str; 4] = ["b0", "b1", "b2", "b5"];

const LANE_STATUSES: [&str; 4] = ["in_progress", "merged", "queued", "done"];
const DEPENDENCIES: [Option<&str>; 4] = [None, Some("b0:a"), Some("b1:c"), Some("acme/app#1")];

/// `batches/<MANIFEST_IDS[which]>.json` saving batch `MANIFEST_IDS[id]` (another id: the
/// batch renamed): lanes added, removed, renamed, re-owned, re-targeted (one on a target no
/// repository backs when the batch has none), completed or closed, and depending on another
/// batch.
fn manifest_record(which: usize, id: usize, w: &ManifestWrite) -> (String, Vec<u8>) {
    let (lanes, owner, target, statuses, dep, closed) = *w;
    let path = format!("batches/{}.json", MANIFEST_IDS[which % 4]);
    let id = MANIFEST_IDS[id % 4];
    let names = ["a", "b", "z"];
    let lanes: Vec<Value> = (0..lanes % 4)
        .map(|i| {
            let mut lane = json!({"name": if which % 2 == 1 && i == 0 { "c" } else { names[i % 3] },
                "owner": AGENTS[(owner + i) % 4],
                "targets": [format!("{}", (usize::from(target) + i) % 6)],
                "status": LANE_STATUSES[(statuses + i) % 4]});
            if i == 1 {
                if let Some(d) = DEPENDENCIES[dep % 4] {
                    lane["depends_on"] = json!([d]);
                }
            }
            if i == 0 && closed {
                lane["closed"] = json!(true);
            }
            lane
        })
        .collect();
    let mut v = json!({"batch_id": id, "lanes": lanes});
    // b1 sometimes loses its repository: its lanes become rows of their own.
    if which.is_multiple_of(2) || dep.is_multiple_of(2) {
        v["repo"] = json!(REPOS[which % 2]);
    }
    record(&path, &v)
}

/// A manifest write: (which path, what it does: 0 rewrite, 1 remove, 2 rename to the next
/// id, its content).
type ManifestOp = (usize, u8, ManifestWrite);

fn manifest_write() -> impl Strategy<Value = ManifestOp> {
    (
        0..4usize,
        0..3u8,
        (
            0..4usize,
            0..4usize,
            0..6u8,
            0..4usize,
            0..4usize,
            any::<bool>(),
        ),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Manifests written, rewritten, renamed or removed — over saved batches and over
    /// batches inferred from claims and heartbeats — with claims, events and renewals
    /// beside them: an update, equal to a full build.
    #[test]
    fn update_after_manifest_writes_equals_a_full_build(
        initial in prop::collection::vec(claim_write(), 0..6),
        beats in prop::collection::vec((0..4usize, 0..2usize, 0..6u8, 0..80i64), 0..4),
        old in prop::collection::vec(ev(), 0..10),
        rewrites in prop::collection::vec(manifest_write(), 1..3),
        writes in prop::collection::vec(claim_write(), 0..2),
        new in prop::collection::vec(ev(), 0..2),
        renewals in prop::collection::vec((0..4usize, 0..6usize, -5..90i64), 0..2),
    ) {
        let now = now();
        let mut files = base(&[], &beats);
        files.extend(initial.iter().map(claim_record));
        files.extend(old.iter().enumerate().map(|(i, e)| event(i, e)));
        let before = inputs(&files);
        let (model, derivation) = build_with(&before, now, "v1");
        let mut after = with_claims(&with_events(&before, &new), &writes);
        for (which, op, w) in &rewrites {
            let id = if *op == 2 { which + 1 } else { *which };
            let (path, bytes) = manifest_record(*which, id, w);
            after.manifests.retain(|m| m.path != path);
            if *op != 1 {
                after.push(parse_record(&path, &bytes));
            }
        }
        for (agent, status, age) in &renewals {
            let i = agent % after.heartbeats.len();
            let mut h = after.heartbeats[i].as_ref().clone();
            h.status = BEAT_STATUSES[status % BEAT_STATUSES.len()].to_owned();
            h.updated_at = crate::time::parse(&ago(*age));
            after.heartbeats[i] = Arc::new(h);
        }
        after.sort();
        let full = build(&after, now, "v2");
        let mut derivation = derivation;
        let incremental = update_with(model, &mut derivation, &before, &after, now, "v2")
            .expect("manifests written or removed are an update");
        prop_assert_eq!(incremental, full);
    }
}
