//! Universal Find over a small model: each search form, each kind, and what Enter opens.

use serde_json::json;

use super::*;
use crate::dashboard::fixtures;

#[test]
fn kinds_are_named_as_the_results_list_shows_them() {
    let all = [FindKind::Job, FindKind::Batch, FindKind::Machine];
    let names: Vec<&str> = all.iter().map(WireName::wire_name).collect();
    assert_eq!(names, ["job", "batch", "machine"]);
}

/// #1 in batch b-find (lane one, thread t-one, branch codex/one) held by w1 on box-1; #2
/// and web#2 held by w2 and w3; a second batch b-other.
fn model() -> DashboardModel {
    let mut s = fixtures::Records::new();
    s.put(
        "batches/b-find.json",
        json!({"batch_id": "b-find", "repo": "acme/app", "objective": "Find me by objective.",
               "targets": [{"type": "pull_request", "target": "1"}],
               "lanes": [{"name": "one", "owner": "w1", "targets": ["1"], "status": "in_progress",
                          "thread_handle": "t-one", "branch": "codex/one"}]}),
    )
    .put(
        "batches/b-other.json",
        json!({"batch_id": "b-other", "repo": "acme/web", "objective": "Another objective.",
               "targets": [{"type": "issue", "target": "30"}],
               "lanes": [{"name": "thirty", "owner": "w9", "targets": ["30"], "status": "queued"}]}),
    )
    .claim("acme/app", "1", "w1", Some("b-find"))
    .beat("w1", "acme/app", "1", Some("b-find"), "implementing", 1)
    .claim("acme/app", "2", "w2", None)
    .beat("w2", "acme/app", "2", None, "implementing", 1)
    .claim("acme/web", "2", "w3", None)
    .beat("w3", "acme/web", "2", None, "implementing", 1);
    s.model().1
}

fn ids(found: &Found) -> Vec<&str> {
    found.results.iter().map(|r| r.id.as_str()).collect()
}

#[test]
fn an_empty_query_finds_nothing() {
    let m = model();
    assert_eq!(find(&m, "   "), Found::default());
    assert_eq!(
        EMPTY_TEXT,
        "Type to search jobs, batches, machines, chats, branches, hosts, or GitHub items."
    );
    assert_eq!(no_match_text(" zzz "), "No matches for \"zzz\"");
    let found = find(&m, "nothing-like-this");
    assert!(found.results.is_empty() && found.open.is_none());
}

#[test]
fn numbers_find_every_repo_and_open_only_a_unique_one() {
    let m = model();
    let found = find(&m, "#2");
    assert_eq!(ids(&found), ["target:acme/app#2", "target:acme/web#2"]);
    assert_eq!(found.open, None, "two repos have #2: the list stays open");
    let found = find(&m, "web#2");
    assert_eq!(ids(&found), ["target:acme/web#2"]);
    assert_eq!(
        found.open.and_then(|r| r.target),
        Some(FindTarget::Item {
            repo: "acme/web".into(),
            target: "2".into()
        })
    );
    let found = find(&m, "https://github.com/acme/app/pull/1/files");
    assert_eq!(found.open.map(|r| r.id), Some("target:acme/app#1".into()));
    // A number also finds the batch whose lane targets it; the job is the exact match.
    let found = find(&m, "30");
    assert_eq!(ids(&found), ["target:acme/web#30", "b-other"]);
    assert_eq!(found.open.map(|r| r.kind), Some(FindKind::Job));
    let found = find(&m, "acme/web#30");
    assert_eq!(found.open.map(|r| r.id), Some("target:acme/web#30".into()));
}

#[test]
fn text_finds_threads_branches_agents_batches_and_machines() {
    let m = model();
    let found = find(&m, "T-ONE");
    assert_eq!(ids(&found)[0], "target:acme/app#1");
    assert_eq!(found.open.map(|r| r.id), Some("target:acme/app#1".into()));
    assert_eq!(
        find(&m, "codex/one").open.map(|r| r.id),
        Some("target:acme/app#1".into())
    );
    assert_eq!(
        find(&m, "w3").open.map(|r| r.id),
        Some("target:acme/web#2".into()),
        "an agent names its one job exactly"
    );
    let found = find(&m, "by objective");
    assert_eq!(ids(&found), ["b-find"]);
    assert_eq!(
        found.open.and_then(|r| r.target),
        Some(FindTarget::Batch("b-find".into()))
    );
    // box-1 is every job's machine: jobs first, then the machine; none is unique among
    // jobs, so Enter opens the machine (exact id).
    let found = find(&m, "box-1");
    assert_eq!(
        found.results.last().map(|r| r.kind),
        Some(FindKind::Machine)
    );
    assert_eq!(
        found.open.and_then(|r| r.target),
        Some(FindTarget::Machine("box-1".into()))
    );
}

#[test]
fn long_lists_are_cut_and_counted() {
    let mut s = fixtures::Records::new();
    for n in 1..=30 {
        s.claim("acme/app", &n.to_string(), &format!("w{n}"), None);
    }
    let (_, m) = s.model();
    // 30 jobs, and the machine whose agents work on them.
    let found = find(&m, "acme/app");
    assert_eq!(found.results.len(), MAX_RESULTS);
    assert_eq!(found.more, 31 - MAX_RESULTS);
    assert_eq!(
        more_text(found.more),
        "7 more matches. Refine your search to narrow the results."
    );
    assert_eq!(found.open, None);
}
