//! `agent-coord serve` over real sockets: live updates after CLI writes, the guards, the
//! two writes landing as commits the CLI reads back, and coordinator task checkpoints on the
//! item page and in the attention queue.

use std::time::Duration;
use std::time::Instant;

use agent_coord_shared::coordinator::task::task_path;
use agent_coord_shared::coordinator::task::Admitted;
use agent_coord_shared::coordinator::task::Assignment;
use agent_coord_shared::coordinator::task::Evidence;
use agent_coord_shared::coordinator::task::MergeRecord;
use agent_coord_shared::coordinator::task::Phase;
use agent_coord_shared::coordinator::task::Task;
use agent_coord_shared::coordinator::task::TaskState;
use agent_coord_tests::env::TestEnv;
use agent_coord_tests::server::Server;
use serde_json::json;
use serde_json::Value;

const PROMPT: &str = "Repository: acme/app\nBatch id: b-live\nBatch objective: Live import.\nItems:\n- PR #7: https://github.com/acme/app/pull/7\nSuggested lanes:\n- one (owner: w1): PR #7\n";

/// Returns the batch view `id` of a dashboard model.
fn batch<'m>(model: &'m Value, id: &str) -> &'m Value {
    model["batches"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["id"] == json!(id))
        .unwrap()
}

#[test]
fn the_stream_announces_a_cli_write_and_the_model_follows() {
    let env = TestEnv::new();
    env.claim("w1", "acme/app", "1").run().success();
    let server = Server::start(&env, &[]);
    let versions = server.versions();
    let first = versions
        .recv_timeout(Duration::from_secs(10))
        .expect("initial version");
    let (code, body) = server.get("/api/dashboard");
    assert_eq!(code, 200);
    let model: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(model["version"], json!(first));
    assert_eq!(model["counts"]["rows"], json!(1));

    env.claim("w2", "acme/app", "2").run().success();
    let next = versions
        .recv_timeout(Duration::from_secs(10))
        .expect("a version after the write");
    assert_ne!(next, first);
    let model: Value = serde_json::from_str(&server.get("/api/dashboard").1).unwrap();
    assert_eq!(model["version"], json!(next));
    assert_eq!(model["counts"]["rows"], json!(2));
    let ids: Vec<&str> = model["rows"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert!(ids.contains(&"target:acme/app#2"), "{ids:?}");

    // A heartbeat moves only its machine's heartbeat ref; that is a new version too.
    env.beat("w2")
        .on("acme/app", "2")
        .status("implementing")
        .run()
        .success();
    let after_beat = versions
        .recv_timeout(Duration::from_secs(10))
        .expect("a version after the heartbeat");
    assert_ne!(after_beat, next);
}

#[test]
fn guards_over_real_sockets_and_writes_the_cli_reads_back() {
    let env = TestEnv::new();
    env.claim("w1", "acme/app", "1").run().success();
    let server = Server::start(&env, &[]);
    let (code, body) = server.get_with_host("/api/dashboard", "attacker.example");
    assert_eq!(
        (code, body.as_str()),
        (403, r#"{"error":"Forbidden host"}"#)
    );
    assert_eq!(server.get_with_host("/api/health", "localhost").0, 200);

    let tip = env.state_tip();
    let (code, body) = server.post_json("/api/batches/import", &json!({"launch_prompt": PROMPT}));
    assert_eq!(code, 201, "{body}");
    assert_ne!(env.state_tip(), tip, "one commit on the state branch");
    let subject = env.git(&["log", "-1", "--format=%s", "refs/heads/agent-coord"]);
    assert_eq!(subject.trim(), "dashboard: import batch plan b-live");
    let manifest = env.record("batches/b-live.json").expect("manifest");
    assert_eq!(manifest["lanes"][0]["owner"], json!("w1"));
    // The CLI reads what the dashboard wrote.
    let audit = env.run(["batch-audit", "--batch-id", "b-live", "--json"]);
    assert!(
        audit.json()["batch_id"] == json!("b-live"),
        "{:?}",
        audit.json()
    );

    let (code, body) = server.post_json("/api/batches/import", &json!({"launch_prompt": PROMPT}));
    assert_eq!(
        (code, body.as_str()),
        (
            409,
            r#"{"error":"Batch plan batches/b-live.json already exists."}"#
        )
    );

    let (code, body) = server.post_json("/api/batches/stop", &json!({"batch_id": "b-live"}));
    assert_eq!(code, 201, "{body}");
    let event: Value = serde_json::from_str(&body).unwrap();
    let path = event["path"].as_str().unwrap();
    let stored = env.record(path).expect("event stored");
    assert_eq!(stored["type"], json!("batch.stop_requested"));
    assert_eq!(
        stored["message"],
        json!("Stop requested from dashboard so this batch can be restarted.")
    );
    assert_eq!(stored["machine_id"], json!("box-1"));
    let model: Value = serde_json::from_str(&server.get("/api/dashboard").1).unwrap();
    assert_eq!(batch(&model, "b-live")["control"], json!("stop_requested"));
    // Claims and heartbeats are untouched by a stop.
    assert_eq!(
        env.record("claims/acme/app/1.json").unwrap()["status"],
        json!("active")
    );

    let tip = env.state_tip();
    let (code, _) = server.post_json("/api/batches/stop", &json!({"batch_id": "nope"}));
    assert_eq!(code, 404);
    assert_eq!(env.state_tip(), tip, "a refused write commits nothing");
}

#[test]
fn the_demo_fleet_shows_every_state_and_keeps_moving() {
    let env = TestEnv::new();
    let server = Server::start(&env, &["--demo"]);
    let model: Value = serde_json::from_str(&server.get("/api/dashboard").1).unwrap();
    let state = |target: &str| {
        model["rows"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["target"] == json!(target))
            .map(|r| r["state"].as_str().unwrap_or_default().to_owned())
            .unwrap_or_default()
    };
    assert_eq!(state("101"), "running");
    assert_eq!(state("102"), "wedged");
    assert_eq!(state("103"), "blocked");
    assert_eq!(state("104"), "dead");
    assert_eq!(state("202"), "done");
    assert_eq!(
        batch(&model, "demo-release")["control"],
        json!("stop_requested")
    );
    assert!(
        model["qa"]
            .as_array()
            .unwrap()
            .iter()
            .any(|q| q["status"] == json!("requested")),
        "a QA event"
    );
    // The fleet keeps moving: a new version within a few ticks.
    let versions = server.versions();
    let first = versions
        .recv_timeout(Duration::from_secs(10))
        .expect("a version");
    let next = versions
        .recv_timeout(Duration::from_secs(15))
        .expect("the fleet moved");
    assert_ne!(first, next);
    // The demo never touches the user's repository.
    assert_eq!(env.state_tip(), None);
}

#[test]
fn a_stop_of_an_inferred_batch_is_decided_on_the_state_it_writes_on() {
    let env = TestEnv::new();
    let server = Server::start(&env, &[]);
    // Nothing names the batch yet: refused, nothing written.
    let (code, body) = server.post_json("/api/batches/stop", &json!({"batch_id": "b-inf"}));
    assert_eq!(
        (code, body.as_str()),
        (
            404,
            r#"{"error":"Batch b-inf is not in the coordination state."}"#
        )
    );
    // A claim naming it makes it known at once (no waiting for the cached model).
    env.run([
        "claim",
        "--agent-id",
        "w1",
        "--repo",
        "acme/app",
        "--target",
        "3",
        "--batch-id",
        "b-inf",
    ])
    .success();
    let (code, body) = server.post_json("/api/batches/stop", &json!({"batch_id": "b-inf"}));
    assert_eq!(code, 201, "{body}");
    let written: Value = serde_json::from_str(&body).unwrap();
    let stored = env
        .record(written["path"].as_str().unwrap())
        .expect("event");
    assert_eq!(stored["type"], json!("batch.stop_requested"));
    assert_eq!(stored["repo"], json!("acme/app"));
    assert_eq!(stored, written["event"]);
}

/// The head the coordinator tasks of [`seed_coordinator_tasks`] are on.
pub(crate) const HEAD: &str = "c0ffee1c0ffee1c0ffee1c0ffee1c0ffee1c0ffe";
/// An older head some of their evidence was recorded on.
pub(crate) const OLD_HEAD: &str = "0dead000dead000dead000dead000dead000dead";
/// The published question of task #7.
pub(crate) const QUESTION: &str = "https://github.com/acme/app/issues/7#issuecomment-701";

/// A coordinator task of `acme/app#issue`, as `coordinate` admits it, then in `state` and
/// `phase`.
fn task(issue: u64, state: TaskState, phase: Phase) -> Task {
    let mut t = Task::admitted(
        Admitted {
            task_id: format!("w-coord-acme-app-{issue}"),
            worker: "w-coord".into(),
            repo: "acme/app".into(),
            issue,
            title: format!("Issue {issue}"),
            body: "Make it so.".into(),
            assignment: Assignment {
                event_id: issue,
                actor: "octo".into(),
                created_at: "2026-06-13T10:00:00Z".into(),
            },
            pinned: json!({}),
            branch: format!("agent/{issue}"),
            base: "main".into(),
        },
        "2026-06-13T10:00:00Z",
    );
    t.state = state;
    t.phase = phase;
    t.pr = Some(issue * 10 + 1);
    t.pr_url = Some(format!(
        "https://github.com/acme/app/pull/{}",
        issue * 10 + 1
    ));
    t.head = Some(HEAD.into());
    t.rounds = 2;
    t.updated_at = format!("2026-06-13T11:{:02}:00Z", issue);
    t
}

/// Puts coordinator task checkpoints on the state branch with git plumbing, on top of its
/// tip: #7 waits on a reply at the Codex gates (checks and both Grok gates on the head, a
/// Codex quality pass and CI only on an older head), #8 is Ready and waits for its merge, #9
/// is uncertain, #10 failed, #11 merged; an activity record beside them is not a task.
pub(crate) fn seed_coordinator_tasks(env: &TestEnv) {
    let mut waiting = task(7, TaskState::Waiting, Phase::PrGatesCodex);
    waiting.resume_phase = Some(Phase::PrGatesCodex);
    waiting.blocker = Some("Codex logic found a race in the cache. Lock or channel?".into());
    waiting.question_activity_id = Some("w-coord-acme-app-7.question.1".into());
    waiting.question_url = Some(QUESTION.into());
    // It was taken over from a dead machine.
    waiting.machine = Some("box-1".into());
    waiting.previous_machines = vec!["box-0".into()];
    waiting.evidence = Evidence {
        checks_passed: Some(HEAD.into()),
        grok_quality: Some(HEAD.into()),
        grok_logic: Some(HEAD.into()),
        codex_quality: Some(OLD_HEAD.into()),
        ci_green: Some(OLD_HEAD.into()),
        ..Evidence::default()
    };
    let ready = task(8, TaskState::Active, Phase::AwaitMerge);
    let mut uncertain = task(9, TaskState::Uncertain, Phase::Implement);
    uncertain.blocker = Some("the grok:implementer lane's outcome is unknown".into());
    let mut failed = task(10, TaskState::Failed, Phase::Finished);
    failed.blocker = Some("the implementer says the issue cannot be done".into());
    let mut done = task(11, TaskState::Done, Phase::Finished);
    done.merge = Some(MergeRecord {
        sha: "feedface".repeat(5),
        merged_at: "2026-06-13T11:30:00Z".into(),
        merged_by: "octo".into(),
        base: "main".into(),
        queue: None,
    });
    let record = |t: &Task| format!("{}\n", serde_json::to_string_pretty(t).unwrap());
    let records: Vec<(String, String)> = [waiting, ready, uncertain, failed, done]
        .iter()
        .map(|t| (task_path(&t.repo, t.issue), record(t)))
        .chain([(
            "coordinator/activities/w-coord-acme-app-7/question.1.json".to_owned(),
            r#"{"kind": "comment"}"#.to_owned(),
        )])
        .collect();
    let files: Vec<(&str, &str)> = records
        .iter()
        .map(|(p, c)| (p.as_str(), c.as_str()))
        .collect();
    env.put_state_files(&files);
}

/// Puts a malformed task checkpoint for #12 on the state branch.
pub(crate) fn seed_malformed_task(env: &TestEnv) {
    env.put_state_files(&[(
        &task_path("acme/app", 12),
        r#"{"schema_version": 1, "state": "waiting"}"#,
    )]);
}

#[test]
fn coordinator_tasks_show_on_the_item_page_and_in_the_attention_queue() {
    let env = TestEnv::new();
    env.claim("w1", "acme/app", "1").run().success();
    // A malformed checkpoint is a warning (and an unreadable-record signal) from the start.
    seed_malformed_task(&env);
    let tip = env.state_tip();
    let server = Server::start(&env, &[]);
    let versions = server.versions();
    let first = versions
        .recv_timeout(Duration::from_secs(10))
        .expect("initial version");
    let derived_at = Instant::now();
    let (code, body) = server.get("/api/dashboard");
    assert_eq!(code, 200);
    let model: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(model["attention"], json!([]));
    let warnings = model["warnings"].to_string();
    assert!(
        warnings.contains("coordinator/tasks/acme/app/12.json"),
        "{warnings}"
    );

    seed_coordinator_tasks(&env);
    assert_eq!(
        env.git(&["rev-parse", "refs/heads/agent-coord~1"]),
        tip.unwrap(),
        "the tasks landed on top of the tip"
    );
    loop {
        let v = versions
            .recv_timeout(Duration::from_secs(10))
            .expect("a version after the tasks");
        if v != first {
            break;
        }
    }
    let (code, body, timing) = server.get_timed("/api/dashboard");
    assert_eq!(code, 200);
    if derived_at.elapsed() < Duration::from_secs(4) {
        // Within the server's 5 s window, only tasks changed: the model is updated, not
        // derived again.
        let timing = timing.unwrap_or_default();
        assert!(timing.contains("desc=\"updated\""), "{timing}");
    }
    let model: Value = serde_json::from_str(&body).unwrap();
    let queue: Vec<(&str, &str, &str, &str, &str)> = model["attention"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            let s = |k: &str| a[k].as_str().unwrap_or("-");
            (
                s("subject"),
                s("label"),
                s("link"),
                s("detail"),
                s("resumePhase"),
            )
        })
        .collect();
    assert_eq!(
        queue,
        [
            (
                "acme/app#7",
                "Waiting on a human reply",
                QUESTION,
                "Codex logic found a race in the cache. Lock or channel?",
                "pr_gates_codex"
            ),
            (
                "acme/app#9",
                "Needs an operator",
                "-",
                "the grok:implementer lane's outcome is unknown",
                "-"
            ),
            (
                "acme/app#8",
                "Ready, waiting for a human merge",
                "https://github.com/acme/app/pull/81",
                "-",
                "-"
            ),
        ]
    );
    assert_eq!(model["counts"]["needsAttention"], json!(3));
    assert!(
        !body.contains("checklist"),
        "panels stay out of the overview"
    );

    let item = |target: &str| -> Value {
        let (code, body) = server.get(&format!("/api/items/acme/app/{target}"));
        assert_eq!(code, 200, "{body}");
        serde_json::from_str(&body).unwrap()
    };
    let seven = item("7");
    let c = &seven["coordinator"];
    assert_eq!(
        (&c["state"], &c["phase"], &c["resumePhase"]),
        (
            &json!("waiting"),
            &json!("pr_gates_codex"),
            &json!("pr_gates_codex")
        )
    );
    assert_eq!(c["questionUrl"], json!(QUESTION));
    assert_eq!(c["shortHead"], json!("c0ffee1"));
    assert_eq!((&c["pr"], &c["rounds"]), (&json!(71), &json!(2)));
    let marks: Vec<(&str, bool, &str)> = c["checklist"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["label"].as_str().unwrap(),
                r["passed"].as_bool().unwrap(),
                r["otherHead"].as_str().unwrap_or("-"),
            )
        })
        .collect();
    assert_eq!(
        marks,
        [
            ("Checks on head", true, "-"),
            ("Grok quality", true, "-"),
            ("Grok logic", true, "-"),
            ("Codex quality", false, "0dead00"),
            ("Codex logic", false, "-"),
            ("GitHub CI", false, "0dead00"),
            ("Readiness", false, "-"),
            ("Formal approval", false, "-"),
            ("Ready evidence comment", false, "-"),
            ("Left draft", false, "-"),
        ]
    );
    let failed = item("10");
    assert_eq!(failed["coordinator"]["state"], json!("failed"));
    assert_eq!(
        failed["coordinator"]["blocker"],
        json!("the implementer says the issue cannot be done")
    );
    assert_eq!(
        item("11")["coordinator"]["merge"]["mergedBy"],
        json!("octo")
    );
    let broken = item("12");
    assert_eq!(broken["coordinator"], Value::Null);
    assert!(broken["coordinatorWarning"]
        .as_str()
        .unwrap_or_default()
        .contains("missing field"));
    let plain = item("1");
    assert_eq!(
        (&plain["coordinator"], &plain["holder"]),
        (&Value::Null, &json!("w1"))
    );
}

/// Issue 22, defect 6: once the model is older than the server's 5 s window and no ref
/// moved, a request is served the model the refresher derived off the request path (it
/// pays for no derivation), and liveness still follows the clock: a heartbeat that expired
/// in the meantime is no longer live.
#[test]
fn a_model_only_the_clock_aged_is_rederived_off_the_request_path() {
    let env = TestEnv::new();
    env.unpin_clock();
    env.run([
        "heartbeat",
        "--agent-id",
        "brief",
        "--repo",
        "acme/app",
        "--target",
        "1",
        "--ttl",
        "3",
    ])
    .success();
    let server = Server::start(&env, &[]);
    let (code, body, timing) = server.get_timed("/api/dashboard");
    assert_eq!(code, 200);
    assert!(
        timing.unwrap_or_default().contains("model;dur="),
        "the first request derives the model"
    );
    let model: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        model["counts"]["agentsLive"],
        json!(1),
        "{}",
        model["counts"]
    );

    std::thread::sleep(Duration::from_millis(6_500));
    let (code, body, timing) = server.get_timed("/api/dashboard?view=summary");
    assert_eq!(code, 200);
    let timing = timing.unwrap_or_default();
    assert!(
        !timing.contains("model;dur="),
        "a request after the window pays for no derivation: {timing}"
    );
    let summary: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        summary["counts"]["agentsLive"],
        json!(0),
        "{}",
        summary["counts"]
    );
}
