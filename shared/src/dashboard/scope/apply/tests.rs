//! Scoping over small hand-built states with records in two repositories: what stays, what
//! is left out and counted, and what is redacted.

use serde_json::json;

use super::*;
use crate::dashboard::derive::build;
use crate::dashboard::fixtures;
use crate::dashboard::fixtures::ago;
use crate::dashboard::fixtures::ahead;
use crate::dashboard::fixtures::task;
use crate::dashboard::fixtures::Records;

const IN: &str = "acme/app";
const OUT: &str = "gamma/secret";

fn scope() -> Scope {
    Scope::of(&["Acme/App"])
}

/// A repo-less heartbeat of `agent` for `batch` and `target`.
fn bare_beat(s: &mut Records, agent: &str, batch: &str, target: &str) {
    s.put(
        &format!("heartbeats/{agent}.json"),
        json!({"agent_id": agent, "batch_id": batch, "target": target, "status": "implementing",
               "updated_at": ago(1), "expires_at": ahead(9), "machine_id": "box-1"}),
    );
}

/// A batch in each repository, a repo-less batch over both, and claims, heartbeats,
/// events and coordinator tasks of both.
fn records() -> Records {
    let mut s = Records::new();
    s.put(
        "batches/b-in.json",
        json!({"batch_id": "b-in", "repo": IN, "objective": "Ship acme/app#1",
               "launch_prompt": "Repository: acme/app\nBatch id: b-in\n",
               "targets": [{"type": "pull_request", "target": "1"}],
               "lanes": [{"name": "one", "owner": "w1", "targets": ["1"], "status": "in_progress",
                          "branch": "feature/one", "thread_handle": "t1"}]}),
    )
    .put(
        "batches/b-out.json",
        json!({"batch_id": "b-out", "repo": OUT, "objective": "Secret plan",
               "targets": [{"type": "issue", "target": "2"}],
               "lanes": [{"name": "two", "owner": "w2", "targets": ["2"], "status": "queued"}]}),
    )
    .put(
        "batches/b-mixed.json",
        json!({"batch_id": "b-mixed", "objective": "Both: gamma/secret and acme/app",
               "launch_prompt": "Repository: gamma/secret",
               "targets": [{"type": "issue", "target": "5", "repo": IN, "title": "Fix acme/app"},
                           {"type": "issue", "target": "6", "repo": OUT, "title": "Leak"},
                           {"type": "issue", "target": "7", "repo": IN},
                           {"type": "issue", "target": "7", "repo": OUT}],
               "lanes": [{"name": "five", "owner": "w5", "targets": ["5"],
                          "depends_on": ["six", "b-out:two", "gamma/secret#6", "five-b", "five-prep"]},
                         {"name": "five-b", "owner": "w9", "targets": ["5"]},
                         {"name": "six", "owner": "w6", "targets": ["6"]},
                         {"name": "seven", "owner": "w7", "targets": ["7"]},
                         {"name": "five-prep", "owner": "w8", "targets": ["5"], "branch": "gamma/secret"}]}),
    );
    s.claim(IN, "1", "w1", Some("b-in"))
        .claim(OUT, "2", "w2", Some("b-out"))
        .claim(IN, "5", "w5", Some("b-mixed"))
        .beat("w1", IN, "1", Some("b-in"), "implementing", 1)
        .beat("w2", OUT, "2", Some("b-out"), "implementing", 1)
        .event(
            "b-in",
            "e1",
            "phase.changed",
            json!({"repo": IN, "target": "1", "message": "merged into gamma/secret"}),
            2,
        )
        .event(
            "b-in",
            "e2",
            "note",
            json!({"status": "https://github.com/gamma/secret/pull/9"}),
            3,
        )
        .event(
            "b-out",
            "e3",
            "phase.changed",
            json!({"repo": OUT, "target": "2"}),
            2,
        )
        .event("b-mixed", "e4", "phase.changed", json!({"target": "6"}), 2)
        .event(
            "b-mixed",
            "e5",
            "phase.changed",
            json!({"repo": IN, "target": "5"}),
            2,
        )
        .event("b-in", "e6", "copied gamma/secret", json!({"repo": IN}), 2)
        .put(
            "events/loose/e7.json",
            json!({"event_id": "e7", "type": "x", "at": ago(1), "repo": OUT}),
        )
        .put(
            "events/loose/e8.json",
            json!({"event_id": "e8", "type": "x", "at": ago(1), "repo": IN}),
        )
        .task(task(IN, 11, "active", "implement", 5))
        .task(task(OUT, 12, "active", "implement", 5));
    bare_beat(&mut s, "w5", "b-mixed", "5");
    bare_beat(&mut s, "w6", "b-mixed", "6");
    s
}

fn names<T>(items: &[Arc<T>], key: impl Fn(&T) -> String) -> Vec<String> {
    items.iter().map(|i| key(i)).collect()
}

#[test]
fn an_empty_scope_changes_nothing() {
    let inputs = records().inputs();
    let same = apply(&inputs, &Scope::all());
    assert_eq!(same.claims, inputs.claims);
    assert_eq!(same.events, inputs.events);
    assert_eq!(same.manifests, inputs.manifests);
    assert!(same.notices.is_empty());
    let m = build(&same, fixtures::now(), "v1");
    assert_eq!(m, build(&inputs, fixtures::now(), "v1"));
    // No notices: the model serialises exactly as before scoping existed.
    let json = serde_json::to_string(&m).unwrap();
    assert!(
        !json.contains("notices") && !json.contains("targetRepos"),
        "{json}"
    );
}

#[test]
fn records_of_other_repositories_are_left_out_and_counted() {
    let scoped = apply(&records().inputs(), &scope());
    assert_eq!(
        names(&scoped.claims, |c| c.path.clone()),
        ["claims/acme/app/1.json", "claims/acme/app/5.json"]
    );
    // w5 reports no repository but owns a lane shown; w6's lane is another repository's.
    assert_eq!(names(&scoped.heartbeats, |h| h.agent.clone()), ["w1", "w5"]);
    assert_eq!(
        names(&scoped.manifests, |m| m.id.clone()),
        ["b-in", "b-mixed"]
    );
    assert_eq!(
        names(&scoped.events, |e| e.id.clone()),
        ["e1", "e2", "e5", "e8"]
    );
    assert_eq!(names(&scoped.tasks, |t| t.task.repo.clone()), [IN]);
    assert_eq!(
        scoped.notices,
        [
            "Skipped 1 claim records outside saved target repositories.",
            "Skipped 2 heartbeat records outside saved target repositories.",
            "Skipped 1 batch records outside saved target repositories.",
            "Skipped 4 batch history records outside saved target repositories.",
            "Skipped 1 coordinator task records outside saved target repositories.",
        ]
    );
}

#[test]
fn a_mixed_batch_keeps_only_what_is_in_scope() {
    let scoped = apply(&records().inputs(), &scope());
    let mixed = &scoped.manifests[1];
    // 6 is the other repository's; 7 is both repositories' number, so it is ambiguous.
    assert_eq!(
        mixed
            .targets
            .iter()
            .map(|t| t.target.as_str())
            .collect::<Vec<_>>(),
        ["5"]
    );
    assert_eq!(mixed.targets[0].title.as_deref(), Some("Fix acme/app"));
    let lanes: Vec<&str> = mixed.lanes.iter().map(|l| l.name.as_str()).collect();
    // five-prep's branch names the other repository: the lane is left out.
    assert_eq!(lanes, ["five", "five-b"]);
    assert_eq!(mixed.lanes[0].depends_on, [OUTSIDE, "five-b"]);
    // Its free text names the other repository: objective and prompt are redacted.
    assert_eq!(
        (mixed.objective.as_deref(), mixed.launch_prompt.as_deref()),
        (None, None)
    );
    let b_in = &scoped.manifests[0];
    assert_eq!(b_in.objective.as_deref(), Some("Ship acme/app#1"));
    assert!(b_in.launch_prompt.is_some());
    assert_eq!(b_in.lanes[0].meta.branch.as_deref(), Some("feature/one"));
}

#[test]
fn foreign_metadata_is_redacted_from_records_that_stay() {
    let mut s = records();
    s.put(
        "claims/acme/app/3.json",
        json!({"repo": IN, "target": "3", "agent_id": "w3", "status": "active",
               "updated_at": ago(5), "machine_id": "box-1", "thread_handle": "from gamma/secret",
               "branch": "gamma/secret-port", "pr_url": "https://github.com/gamma/secret/pull/3",
               "host": "codex", "operator": "ops", "batch_id": "https://github.com/gamma/secret", "lane": "l"}),
    );
    let scoped = apply(&s.inputs(), &scope());
    let c = scoped.claims.iter().find(|c| c.target == "3").unwrap();
    assert_eq!(
        (
            c.meta.thread.as_deref(),
            c.meta.branch.as_deref(),
            c.meta.pr_url.as_deref()
        ),
        (None, None, None)
    );
    assert_eq!(
        (c.meta.host.as_deref(), c.meta.operator.as_deref()),
        (Some("codex"), Some("ops"))
    );
    assert_eq!((c.batch_id.as_deref(), c.lane.as_deref()), (None, None));
    assert_eq!(c.meta.machine.as_deref(), Some("box-1"));
    let e1 = scoped.events.iter().find(|e| e.id == "e1").unwrap();
    assert_eq!(e1.message, None);
    let e2 = scoped.events.iter().find(|e| e.id == "e2").unwrap();
    assert_eq!((e2.kind.as_str(), e2.status.as_deref()), ("note", None));
}

#[test]
fn unreadable_records_are_kept_by_path_or_only_described() {
    let mut s = Records::new();
    for path in [
        "claims/acme/app/4.json",
        "claims/gamma/secret/4.json",
        "coordinator/tasks/gamma/secret/4.json",
        "heartbeats/w-gamma-secret.json",
        "batches/gamma-secret.json",
        "events/b/e1.json",
    ] {
        s.0.push((path.to_owned(), b"{not json".to_vec()));
    }
    let scoped = apply(&s.inputs(), &scope());
    let m = build(&scoped, fixtures::now(), "v1");
    assert_eq!(m.warnings.len(), 4);
    assert!(
        m.warnings[3].starts_with("Malformed JSON in claims/acme/app/4.json: "),
        "{:?}",
        m.warnings
    );
    assert_eq!(
        m.warnings[..3],
        [
            "Malformed JSON in an unscoped batches record.",
            "Malformed JSON in an unscoped events record.",
            "Malformed JSON in an unscoped heartbeats record.",
        ]
    );
    assert_eq!(
        m.notices,
        ["Skipped 2 warning records outside saved target repositories."]
    );
    assert!(!serde_json::to_string(&m).unwrap().contains("gamma"));
}

#[test]
fn the_scoped_model_never_names_the_other_repository() {
    let scoped = apply(&records().inputs(), &scope());
    let m = build(&scoped, fixtures::now(), "v1");
    let json = serde_json::to_string(&m).unwrap();
    for secret in ["gamma", "Secret plan", "Leak", "b-out"] {
        assert!(!json.contains(secret), "{secret} in {json}");
    }
    assert_eq!(m.notices, scoped.notices);
    assert_eq!(m.target_repos, [IN]);
    let repos: BTreeSet<&str> = m.rows.iter().map(|r| r.repo.as_str()).collect();
    assert_eq!(repos, BTreeSet::from([IN]));
    let five = m
        .batches
        .iter()
        .find(|b| b.id == "b-mixed")
        .and_then(|b| b.lanes.iter().find(|l| l.name == "five"))
        .unwrap();
    assert!(
        five.blocked_on.contains(&OUTSIDE.to_owned()),
        "{:?}",
        five.blocked_on
    );
    // Unscoped, the same records show both repositories.
    let all = serde_json::to_string(&build(&records().inputs(), fixtures::now(), "v1")).unwrap();
    assert!(all.contains("gamma/secret") && all.contains("Secret plan"));
}

#[test]
fn a_repoless_batch_keeps_only_corroborated_targets() {
    let mut s = Records::new();
    s.put(
        "batches/b-x.json",
        json!({"batch_id": "b-x", "targets": ["1", "2", "3"],
               "lanes": [{"name": "l1", "owner": "w1", "targets": ["1"]},
                         {"name": "l2", "owner": "w2", "targets": ["2"]},
                         {"name": "l3", "owner": "w3", "targets": ["3"]}]}),
    );
    // 1 is corroborated in scope, 2 elsewhere, 3 by both (not a unique repository).
    s.claim(IN, "1", "w1", Some("b-x"))
        .claim(OUT, "2", "w2", Some("b-x"))
        .claim(IN, "3", "w3", Some("b-x"))
        .beat("w3", OUT, "3", Some("b-x"), "implementing", 1);
    let scoped = apply(&s.inputs(), &scope());
    let b = &scoped.manifests[0];
    assert_eq!(
        b.targets
            .iter()
            .map(|t| t.target.as_str())
            .collect::<Vec<_>>(),
        ["1"]
    );
    assert_eq!(
        b.lanes.iter().map(|l| l.name.as_str()).collect::<Vec<_>>(),
        ["l1"]
    );
    // Without any corroboration in scope the batch is left out.
    let mut s = Records::new();
    s.put(
        "batches/b-y.json",
        json!({"batch_id": "b-y", "targets": ["1"], "lanes": []}),
    );
    let scoped = apply(&s.inputs(), &scope());
    assert!(scoped.manifests.is_empty());
    assert_eq!(
        scoped.notices,
        ["Skipped 1 batch records outside saved target repositories."]
    );
}
