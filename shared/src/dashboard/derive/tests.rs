//! Whole-model derivations over small hand-built states.

use serde_json::json;

use super::pages;
use crate::dashboard::fixtures::ago;
use crate::dashboard::fixtures::ahead;
use crate::dashboard::fixtures::now;
use crate::dashboard::fixtures::Records;
use crate::dashboard::model::*;
use crate::serde_name::WireName;

fn row<'a>(m: &'a DashboardModel, id: &str) -> &'a Row {
    m.rows.iter().find(|r| r.id == id).unwrap_or_else(|| {
        panic!(
            "no row {id}: {:?}",
            m.rows.iter().map(|r| &r.id).collect::<Vec<_>>()
        )
    })
}

fn signals(m: &DashboardModel) -> Vec<&str> {
    m.health.iter().map(|h| h.signal.as_str()).collect()
}

const PROMPT: &str = "Repository: acme/app\nBatch id: b1\nBatch objective: Ship the fleet. Then rest.\nItems:\n- PR #1\n- PR #2\n- PR #3\nSuggested lanes:\n- one (owner: w1): PR #1\n- two (owner: w2): PR #2\n- three (owner: w3): PR #3\n";

fn manifest(s: &mut Records) {
    s.put(
        "batches/b1.json",
        json!({"batch_id": "b1", "repo": "acme/app", "objective": "Ship the fleet. Then rest.",
               "launch_prompt": PROMPT, "updated_at": ago(200),
               "targets": [{"type": "pull_request", "target": "1"}, {"type": "pull_request", "target": "2"},
                           {"type": "pull_request", "target": "3"}],
               "lanes": [
                   {"name": "one", "owner": "w1", "targets": ["1"], "status": "in_progress", "thread_handle": "t1", "host": "codex", "operator": "ops"},
                   {"name": "two", "owner": "w2", "targets": ["2"], "status": "in_progress", "depends_on": ["one"]},
                   {"name": "three", "owner": "w3", "targets": ["3"], "status": "queued"}
               ]}),
    );
}

#[test]
fn row_states_and_scheduling_follow_liveness_and_progress() {
    let mut s = Records::new();
    manifest(&mut s);
    s.claim("acme/app", "1", "w1", Some("b1"))
        .beat("w1", "acme/app", "1", Some("b1"), "implementing", 1)
        .event(
            "b1",
            "e1",
            "phase.changed",
            json!({"repo": "acme/app", "target": "1", "agent_id": "w1", "status": "implementing"}),
            2,
        )
        // Wedged: live, but the last transition is 30 minutes old; a QA event does not count.
        .claim("acme/api", "9", "w9", None)
        .beat("w9", "acme/api", "9", None, "implementing", 1)
        .event(
            "b9",
            "e9",
            "phase.changed",
            json!({"repo": "acme/api", "target": "9", "status": "implementing"}),
            30,
        )
        .event(
            "b9",
            "e9qa",
            "qa.validation_started",
            json!({"repo": "acme/api", "target": "9"}),
            1,
        )
        // Stale (expired 5 minutes ago) and dead (silent for an hour).
        .claim("acme/api", "10", "w10", None)
        .beat("w10", "acme/api", "10", None, "implementing", 15)
        .claim("acme/api", "11", "w11", None)
        .beat("w11", "acme/api", "11", None, "implementing", 60);
    let (_, m) = s.model();
    let r1 = row(&m, "target:acme/app#1");
    assert_eq!(r1.state, RowState::Running);
    assert_eq!(r1.scheduling, Scheduling::InProcess);
    assert_eq!(r1.kind, "pull_request");
    assert_eq!(r1.thread.as_deref(), Some("t1"), "lane metadata fills in");
    assert_eq!(row(&m, "target:acme/api#9").state, RowState::Wedged);
    assert_eq!(row(&m, "target:acme/api#10").state, RowState::Stale);
    let dead = row(&m, "target:acme/api#11");
    assert_eq!(dead.state, RowState::Dead);
    assert_eq!(dead.scheduling, Scheduling::StartedNotProcessing);
    assert_eq!(dead.attention, Some(AttentionKind::DeadHolder));
    // Lane two waits on lane one; lane three is queued with nobody on it.
    let r2 = row(&m, "target:acme/app#2");
    assert_eq!(r2.state, RowState::Blocked);
    assert_eq!(r2.blocked_on, vec!["one"]);
    assert_eq!(row(&m, "target:acme/app#3").state, RowState::Ready);
    assert_eq!(m.counts.rows_by_state["running"], 1);
    assert_eq!(m.counts.rows_by_state["wedged"], 1);
    assert_eq!(m.counts.rows_by_state["done"], 0);
    // Sorted by state rank.
    let states: Vec<RowState> = m.rows.iter().map(|r| r.state).collect();
    let mut sorted = states.clone();
    sorted.sort();
    assert_eq!(states, sorted);
}

#[test]
fn attention_queue_is_priority_ordered() {
    let mut s = Records::new();
    manifest(&mut s);
    s.claim("acme/app", "1", "w1", Some("b1"))
        .beat("w1", "acme/app", "1", Some("b1"), "implementing", 1)
        .event(
            "b1",
            "stop",
            "batch.stop_requested",
            json!({"status": "stop_requested"}),
            1,
        )
        .claim("acme/api", "11", "w11", None)
        .beat("w11", "acme/api", "11", None, "implementing", 60)
        .claim("acme/api", "12", "w12", None)
        .beat("w12", "acme/api", "12", None, "blocked_user_input", 1);
    let (_, m) = s.model();
    let kinds: Vec<AttentionKind> = m.attention.iter().map(|a| a.kind).collect();
    assert_eq!(kinds[0], AttentionKind::BatchStopRequested);
    assert!(kinds.contains(&AttentionKind::BlockedUserInput));
    assert_eq!(*kinds.last().expect("some"), AttentionKind::DeadHolder);
    assert!(m
        .attention
        .windows(2)
        .all(|w| w[0].priority <= w[1].priority));
    let stopped: Vec<&str> = m
        .attention
        .iter()
        .filter(|a| a.kind == AttentionKind::BatchStopRequested)
        .map(|a| a.subject.as_str())
        .collect();
    assert_eq!(
        stopped,
        ["acme/app#2", "acme/app#3", "acme/app#1"],
        "every lane of the batch, oldest activity first"
    );
    let b1 = m.batches.iter().find(|b| b.id == "b1").expect("b1");
    assert_eq!(b1.control, ControlStatus::StopRequested);
    assert_eq!(b1.tier, BatchTier::Blocked);
    assert!(b1.repairs.contains(&Repair::StopRequested));
    assert_eq!(b1.title, "Ship the fleet.");
}

#[test]
fn qa_status_per_pull_request_and_batch_counts() {
    let mut s = Records::new();
    manifest(&mut s);
    s.claim("acme/app", "1", "w1", Some("b1"))
        .beat("w1", "acme/app", "1", Some("b1"), "ready_for_qa", 1)
        .event(
            "b1",
            "q1",
            "qa.validation_failed",
            json!({"repo": "acme/app", "target": "1", "message": "did not pass smoke tests"}),
            1,
        )
        // A QA pass from another batch does not count for b1.
        .event(
            "old",
            "q2",
            "qa.validation_passed",
            json!({"repo": "acme/app", "target": "2"}),
            1,
        );
    let (_, m) = s.model();
    let qa = |id: &str| m.qa.iter().find(|q| q.id == id).map(|q| q.status);
    assert_eq!(qa("acme/app#1:b1:one"), Some(QaStatus::Failed));
    assert_eq!(qa("acme/app#2:b1:two"), Some(QaStatus::Missing));
    assert_eq!(
        row(&m, "target:acme/app#1").attention,
        Some(AttentionKind::QaMissing)
    );
    // Missing QA on work that is not ready for QA is a gap, not an attention item.
    assert_eq!(row(&m, "target:acme/app#3").attention, None);
    let b1 = m.batches.iter().find(|b| b.id == "b1").expect("b1");
    assert_eq!((b1.qa.total, b1.qa.failed, b1.qa.missing), (3, 1, 2));
    assert_eq!(m.counts.qa_gaps, 3);
}

#[test]
fn every_health_signal_fires_on_its_trigger() {
    let mut s = Records::new();
    // H5: a manifest without a prompt; H9: its lane has no heartbeat; H8: no events.
    s.put(
        "batches/noprompt.json",
        json!({"batch_id": "noprompt", "repo": "acme/app",
        "lanes": [{"name": "l", "owner": "ghost", "targets": ["5"], "status": "in_progress"}]}),
    );
    // H6: an unparseable prompt.
    s.put("batches/badprompt.json", json!({"batch_id": "badprompt", "repo": "acme/app",
        "launch_prompt": "Batch id: badprompt\nItems:\n- PR #7: https://github.com/acme/app/pull/8\n",
        "lanes": [{"name": "l", "owner": "w6", "targets": ["7"], "status": "done"}]}));
    // H7: prompt lists #1 and #2, the plan #1 and #4.
    s.put("batches/drift.json", json!({"batch_id": "drift", "repo": "acme/app",
        "launch_prompt": "Repository: acme/app\nBatch id: drift\nItems:\n- PR #1\n- PR #2\n",
        "targets": [{"type": "pull_request", "target": "1"}, {"type": "pull_request", "target": "4"}],
        "lanes": [{"name": "l", "owner": "w7", "targets": ["1", "4"], "status": "done"}]}));
    s.event("drift", "e", "lane.done", json!({}), 1);
    // H4: a claim names a batch with no manifest. H2: no heartbeat on the claimed work.
    s.claim("acme/api", "3", "w3", Some("ghost-batch"));
    // H1: a heartbeat with no machine anywhere.
    s.put(
        "heartbeats/anon.json",
        json!({"agent_id": "anon", "status": "x", "updated_at": ago(1), "expires_at": ahead(9)}),
    );
    // R1: an unreadable record.
    s.0.push(("claims/acme/app/99.json".into(), b"{not json".to_vec()));
    let (_, m) = s.model();
    let found = signals(&m);
    for want in ["H1", "H2", "H3", "H4", "H5", "H6", "H7", "H8", "H9", "R1"] {
        assert!(found.contains(&want), "{want} missing from {found:?}");
    }
    let detail = |sig: &str| {
        m.health
            .iter()
            .find(|h| h.signal.as_str() == sig)
            .map(|h| h.detail.clone())
            .unwrap_or_default()
    };
    assert_eq!(
        detail("H1"),
        "anon does not report machine_id, so machine ownership cannot be shown reliably."
    );
    assert_eq!(
        detail("H2"),
        "w3 holds acme/api#3, but no heartbeat currently points at that work."
    );
    assert_eq!(
        detail("H4"),
        "ghost-batch was inferred from coordination records because no saved batch plan was found."
    );
    assert_eq!(
        detail("H5"),
        "noprompt has a saved batch plan, but no coordination prompt was saved."
    );
    assert!(detail("H6").starts_with(
        "badprompt saved coordination prompt could not be parsed: Target reference PR #7"
    ));
    assert_eq!(
        detail("H7"),
        "drift saved coordination prompt and batch plan targets differ: prompt has acme/app:pull_request#2; plan has acme/app:pull_request#4."
    );
    assert_eq!(
        detail("H9"),
        "noprompt:l is in_progress, but owner ghost has no matching heartbeat."
    );
    assert!(m
        .health
        .iter()
        .any(|h| h.signal == Signal::H8 && h.severity == Severity::Info));
    assert!(!m
        .health
        .iter()
        .any(|h| h.signal == Signal::H8 && h.batch_id.as_deref() == Some("drift")));
    assert_eq!(m.counts.malformed, 1);
    assert_eq!(m.warnings.len(), 1);
}

#[test]
fn healthy_state_has_no_warnings() {
    let mut s = Records::new();
    manifest(&mut s);
    s.claim("acme/app", "1", "w1", Some("b1"))
        .beat("w1", "acme/app", "1", Some("b1"), "implementing", 1)
        .beat("w2", "acme/app", "2", Some("b1"), "queued", 1)
        .beat("w3", "acme/app", "3", Some("b1"), "queued", 1)
        .event(
            "b1",
            "e1",
            "phase.changed",
            json!({"repo": "acme/app", "target": "1"}),
            1,
        );
    let (_, m) = s.model();
    let warnings: Vec<&HealthItem> = m
        .health
        .iter()
        .filter(|h| h.severity == Severity::Warning)
        .collect();
    assert!(warnings.is_empty(), "{warnings:#?}");
}

#[test]
fn inferred_batches_have_one_lane_per_agent() {
    let mut s = Records::new();
    s.claim("acme/app", "1", "w1", Some("adhoc"))
        .claim("acme/app", "2", "w1", Some("adhoc"))
        .claim("acme/app", "3", "w2", Some("adhoc"))
        .beat("w1", "acme/app", "2", Some("adhoc"), "implementing", 1)
        .beat("w2", "acme/app", "3", Some("adhoc"), "implementing", 1);
    let (_, m) = s.model();
    let b = m
        .batches
        .iter()
        .find(|b| b.id == "adhoc")
        .expect("inferred");
    assert_eq!(b.source, BatchSource::Inferred);
    assert_eq!(b.path, "inferred-batches/acme__app/adhoc.json");
    assert_eq!(b.repo.as_deref(), Some("acme/app"));
    let lanes: Vec<(&str, Vec<String>)> = b
        .lanes
        .iter()
        .map(|l| (l.name.as_str(), l.targets.clone()))
        .collect();
    assert_eq!(
        lanes,
        vec![
            ("w1", vec!["1".to_owned(), "2".to_owned()]),
            ("w2", vec!["3".to_owned()])
        ]
    );
    assert_eq!(b.repairs, vec![Repair::BatchPlanMissing]);
    assert_eq!(
        row(&m, "target:acme/app#3").batch_id.as_deref(),
        Some("adhoc")
    );
}

#[test]
fn lane_notes_follow_chains_to_their_root() {
    let mut s = Records::new();
    s.put("batches/chain.json", json!({"batch_id": "chain", "repo": "acme/app", "launch_prompt": "x",
        "lanes": [
            {"name": "a", "owner": "wa", "targets": ["1"], "status": "in_progress"},
            {"name": "b", "owner": "wb", "targets": ["2"], "status": "blocked", "depends_on": ["a"]},
            {"name": "c", "owner": "wc", "targets": ["3"], "status": "queued", "depends_on": ["b"]},
            {"name": "d", "owner": "wd", "targets": ["4"], "status": "queued", "depends_on": ["chain:zz"]}
        ]}));
    s.claim("acme/app", "1", "wa", Some("chain")).beat(
        "wa",
        "acme/app",
        "1",
        Some("chain"),
        "in_progress",
        60,
    );
    let (_, m) = s.model();
    let b = m.batches.iter().find(|b| b.id == "chain").expect("chain");
    let note = |n: &str| {
        b.lanes
            .iter()
            .find(|l| l.name == n)
            .and_then(|l| l.note.clone())
            .unwrap_or_default()
    };
    assert_eq!(b.lanes[0].state, RowState::Dead);
    assert_eq!(note("b"), "blocked by a, which is dead");
    assert_eq!(
        note("c"),
        "blocked by b → root a, which is dead — relaunch or drop a"
    );
    assert_eq!(
        note("d"),
        "blocked by chain:zz, which is not in coordination state"
    );
    assert_eq!(b.tier, BatchTier::Blocked);
    assert_eq!(b.audit.dead, 1);
}

#[test]
fn archive_tier_when_every_lane_is_done() {
    let mut s = Records::new();
    s.put("batches/fin.json", json!({"batch_id": "fin", "repo": "acme/app", "launch_prompt": "x",
        "lanes": [{"name": "a", "owner": "wa", "targets": ["1"], "status": "merged"},
                  {"name": "b", "owner": "wb", "targets": ["2"], "status": "queued", "terminal": {"status": "done"}}]}));
    let (_, m) = s.model();
    let b = &m.batches[0];
    assert_eq!(b.tier, BatchTier::Archive);
    assert_eq!((b.audit.done, b.audit.closed), (2, 1));
    assert_eq!(m.counts.rows_by_state["done"], 2);
}

#[test]
fn machines_group_agents_and_infer_legacy_ids() {
    let mut s = Records::new();
    s.beat("w1", "acme/app", "1", None, "implementing", 1)
        .put(
            "heartbeats/worker-m5-max.json",
            json!({"agent_id": "worker-m5-max", "updated_at": ago(1), "expires_at": ahead(9)}),
        )
        .put(
            "heartbeats/nobody.json",
            json!({"agent_id": "nobody", "updated_at": ago(100), "expires_at": ago(90)}),
        );
    let (_, m) = s.model();
    let ids: Vec<(&str, bool)> = m
        .machines
        .iter()
        .map(|x| (x.id.as_str(), x.inferred))
        .collect();
    assert_eq!(
        ids,
        vec![("box-1", false), ("m5", true), ("unassigned", false)]
    );
    assert_eq!(m.machines[0].agents[0].work.as_deref(), Some("acme/app#1"));
    assert_eq!(m.machines[2].dead, 1);
    assert_eq!(m.counts.agents_live, 2);
    assert_eq!(
        m.health.iter().filter(|h| h.signal == Signal::H1).count(),
        1,
        "only the agent with no id at all"
    );
}

#[test]
fn custody_timeline_tells_the_story_oldest_first() {
    let mut s = Records::new();
    s.event(
        "b",
        "1",
        "claim.acquired",
        json!({"repo": "acme/app", "target": "7", "agent_id": "w1", "machine_id": "box-1"}),
        50,
    )
    .event(
        "b",
        "2",
        "phase.changed",
        json!({"repo": "acme/app", "target": "7", "agent_id": "w1", "status": "implementing"}),
        40,
    )
    .event(
        "b",
        "3",
        "phase.changed",
        json!({"repo": "acme/app", "target": "7", "agent_id": "w1", "status": "implementing"}),
        35,
    )
    .event(
        "b",
        "4",
        "claim.acquired",
        json!({"repo": "acme/app", "target": "7", "agent_id": "w2"}),
        30,
    )
    .event(
        "b",
        "5",
        "claim.released",
        json!({"repo": "acme/app", "target": "7", "agent_id": "w2"}),
        10,
    );
    let (inputs, m) = s.model();
    let d = pages::item_detail(&inputs, &m, "acme/app", "7", now());
    let labels: Vec<&str> = d.timeline.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "acquired by w1",
            "implementing",
            "w1 → w2",
            "released by w2"
        ]
    );
    assert_eq!(d.timeline[2].previous_agent.as_deref(), Some("w1"));
    assert_eq!(d.timeline[0].machine.as_deref(), Some("box-1"));
    assert_eq!(d.holder, None);
    // A claim with no acquisition event on record: ownership is unproven.
    let mut s = Records::new();
    s.claim("acme/app", "8", "w8", None)
        .beat("w8", "acme/app", "8", None, "implementing", 1);
    let (inputs, m) = s.model();
    let d = pages::item_detail(&inputs, &m, "acme/app", "8", now());
    assert_eq!(d.timeline[0].label, "UNKNOWN ownership by w8");
    assert_eq!(d.timeline[1].kind, TimelineKind::Liveness);
    assert_eq!(d.holder.as_deref(), Some("w8"));
}

#[test]
fn batch_detail_lists_events_newest_first() {
    let mut s = Records::new();
    manifest(&mut s);
    s.event("b1", "a", "lane.started", json!({}), 30)
        .event("b1", "b", "lane.done", json!({}), 5);
    let (inputs, m) = s.model();
    let d = pages::batch_detail(&inputs, &m, "b1").expect("exists");
    assert_eq!(
        d.events.iter().map(|e| e.id.as_str()).collect::<Vec<_>>(),
        ["b", "a"]
    );
    assert_eq!(d.batch.event_count, 2);
    assert_eq!(d.rows.len(), 3);
    assert!(pages::batch_detail(&inputs, &m, "nope").is_none());
}

#[test]
fn coordinator_tasks_join_the_attention_queue_and_the_item_page() {
    use crate::coordinator::task::Phase;
    use crate::dashboard::fixtures::task;
    let mut s = Records::new();
    // A dead holder (priority 5) and a lane waiting for input (priority 3) around the tasks.
    s.claim("acme/api", "11", "w11", None)
        .beat("w11", "acme/api", "11", None, "implementing", 60)
        .claim("acme/api", "12", "w12", None)
        .beat("w12", "acme/api", "12", None, "blocked_user_input", 1);
    let mut waiting = task("acme/app", 7, "waiting", "implement", 30);
    waiting["resume_phase"] = json!("implement");
    waiting["blocker"] = json!("Should the flag default to on?");
    waiting["question_url"] = json!("https://github.com/acme/app/issues/7#issuecomment-1");
    let mut merge = task("acme/app", 8, "active", "await_merge", 10);
    merge["pr_url"] = json!("https://github.com/acme/app/pull/80");
    s.task(waiting)
        .task(merge)
        .task(task("acme/app", 9, "failed", "finished", 5))
        .task(task("acme/app", 10, "active", "implement", 5))
        .put(
            "coordinator/tasks/acme/app/11.json",
            json!({"state": "waiting"}),
        )
        .put(
            "coordinator/activities/t/a.json",
            json!({"kind": "comment"}),
        );
    let (inputs, m) = s.model();
    let queue: Vec<(&str, AttentionKind)> = m
        .attention
        .iter()
        .map(|a| (a.subject.as_str(), a.kind))
        .collect();
    assert_eq!(
        queue,
        [
            ("acme/app#7", AttentionKind::TaskWaitingReply),
            ("acme/api#12", AttentionKind::BlockedUserInput),
            ("acme/api#11", AttentionKind::DeadHolder),
            ("acme/app#8", AttentionKind::TaskAwaitingMerge),
        ],
        "by priority, then oldest activity; failed and advancing tasks stay out"
    );
    assert_eq!(m.counts.needs_attention, 4);
    assert_eq!(m.attention[0].resume_phase, Some(Phase::Implement));
    assert_eq!(
        m.attention[3].link.as_deref(),
        Some("https://github.com/acme/app/pull/80")
    );
    // The malformed checkpoint is a warning, not a broken model; activities are not read.
    assert_eq!(m.counts.malformed, 1);
    assert!(m.warnings[0].contains("coordinator/tasks/acme/app/11.json"));
    assert_eq!(inputs.tasks.len(), 4);
    // Panels stay out of the overview payload.
    let payload = serde_json::to_string(&m).expect("json");
    assert!(!payload.contains("checklist"), "{payload}");

    let d = pages::item_detail(&inputs, &m, "acme/app", "7", now());
    let p = d.coordinator.expect("the task's panel");
    assert_eq!(
        (p.phase, p.resume_phase),
        (Phase::Implement, Some(Phase::Implement))
    );
    assert_eq!(p.blocker.as_deref(), Some("Should the flag default to on?"));
    let failed = pages::item_detail(&inputs, &m, "acme/app", "9", now());
    assert_eq!(
        failed.coordinator.map(|p| p.state.wire_name()),
        Some("failed")
    );
    let broken = pages::item_detail(&inputs, &m, "acme/app", "11", now());
    assert_eq!(broken.coordinator, None);
    assert!(broken
        .coordinator_warning
        .is_some_and(|w| w.contains("missing field")));
    let none = pages::item_detail(&inputs, &m, "acme/api", "12", now());
    assert_eq!((none.coordinator, none.coordinator_warning), (None, None));
}

/// Row attention entries always had `link: None`, though the field is documented as the
/// pull request to act on: a row's pull request (GitHub's implementation PR, else the
/// claim's or heartbeat's `pr_url`) is its entry's link; a row without one has none.
#[test]
fn regression_attention_entries_never_link_the_pull_request() {
    let pr = "https://github.com/acme/app/pull/70";
    let mut s = Records::new();
    s.put(
        "claims/acme/app/7.json",
        json!({"repo": "acme/app", "target": "7", "agent_id": "w7", "status": "active",
               "pr_url": pr, "claimed_at": ago(120), "updated_at": ago(60)}),
    )
    .beat("w7", "acme/app", "7", None, "implementing", 60)
    .claim("acme/app", "8", "w8", None)
    .beat("w8", "acme/app", "8", None, "implementing", 60);
    let (_, m) = s.model();
    let links: Vec<(&str, Option<&str>)> = m
        .attention
        .iter()
        .map(|a| (a.subject.as_str(), a.link.as_deref()))
        .collect();
    assert_eq!(links, [("acme/app#7", Some(pr)), ("acme/app#8", None)]);
}
