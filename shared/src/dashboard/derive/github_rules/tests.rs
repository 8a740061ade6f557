//! One test per precedence rule, the parsers (pull URLs, closing references, CI rollup),
//! and whole builds with and without GitHub facts.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::*;
use crate::dashboard::fixtures::ago;
use crate::dashboard::fixtures::now;
use crate::dashboard::fixtures::Records;
use crate::dashboard::inputs::github_facts::ci_rollup;
use crate::dashboard::inputs::github_facts::closing_refs;
use crate::dashboard::inputs::github_facts::is_repo_name;
use crate::dashboard::inputs::github_facts::GhItem;
use crate::dashboard::inputs::github_facts::GithubFacts;
use crate::dashboard::inputs::github_facts::RepoFacts;
use crate::dashboard::inputs::github_wanted::enrichment_repos;
use crate::dashboard::inputs::github_wanted::wanted;
use crate::dashboard::model::GhTerminal;
use crate::dashboard::model::Row;
use crate::dashboard::model::RowState;
use crate::dashboard::model::Scheduling;
use crate::dashboard::model::SourceState;

fn at(minutes_ago: i64) -> Instant {
    now() - chrono::Duration::minutes(minutes_ago)
}

fn pull(number: u64, state: GhState, branch: &str) -> GhItem {
    GhItem {
        pull: true,
        state,
        head_branch: Some(branch.to_owned()),
        merged_at: (state == GhState::Merged).then(|| at(30)),
        closed_at: (state != GhState::Open).then(|| at(30)),
        url: Some(format!("https://github.com/acme/app/pull/{number}")),
        ..GhItem::issue(number, &format!("PR {number}"))
    }
}

fn closed_issue(number: u64, minutes_ago: i64) -> GhItem {
    GhItem {
        state: GhState::Closed,
        closed_at: Some(at(minutes_ago)),
        ..GhItem::issue(number, "closed")
    }
}

fn facts(items: Vec<GhItem>) -> RepoFacts {
    RepoFacts {
        items: items.into_iter().map(|i| (i.number, i)).collect(),
    }
}

fn status(state: SourceState) -> SourceStatus {
    SourceStatus {
        resource: "github".into(),
        status: state,
        http_status: None,
        message: String::new(),
        retry_at: None,
    }
}

#[test]
fn a_merged_pull_request_is_done_and_a_closed_issue_closed() {
    let f = facts(vec![pull(7, GhState::Merged, "b"), closed_issue(8, 10)]);
    let merged = completion(&link(&f, "acme/app", "7", None, None)).unwrap();
    assert_eq!(merged.terminal, GhTerminal::Done);
    assert_eq!(merged.at, Some(at(30)));
    let closed = completion(&link(&f, "acme/app", "8", None, None)).unwrap();
    assert_eq!(closed.terminal, GhTerminal::Closed);
    // A pull request closed without merging is closed, not done.
    let f = facts(vec![pull(9, GhState::Closed, "b")]);
    let c = completion(&link(&f, "acme/app", "9", None, None)).unwrap();
    assert_eq!(c.terminal, GhTerminal::Closed);
}

#[test]
fn an_unknown_or_open_state_guesses_nothing() {
    let unknown = GhItem {
        state: GhState::Unknown,
        ..GhItem::issue(3, "?")
    };
    let f = facts(vec![unknown, GhItem::issue(4, "open")]);
    assert_eq!(completion(&link(&f, "acme/app", "3", None, None)), None);
    assert_eq!(completion(&link(&f, "acme/app", "4", None, None)), None);
    // Nothing known at all.
    assert_eq!(completion(&link(&f, "acme/app", "5", None, None)), None);
}

#[test]
fn a_deleted_branch_alone_is_never_terminal() {
    // The work branch names no pull request (it was deleted, or never pushed): the open
    // issue stays open; and a pull request closed unmerged on it does not complete the issue.
    let f = facts(vec![GhItem::issue(1, "open")]);
    let l = link(&f, "acme/app", "1", Some("codex/1"), None);
    assert_eq!(l.implementation, None);
    assert_eq!(completion(&l), None);
    let f = facts(vec![
        GhItem::issue(1, "open"),
        pull(2, GhState::Closed, "codex/1"),
    ]);
    let l = link(&f, "acme/app", "1", Some("codex/1"), None);
    assert_eq!(l.implementation.map(|p| p.number), Some(2));
    assert_eq!(completion(&l), None);
}

#[test]
fn the_implementation_pull_request_is_found_by_url_branch_or_closing_reference() {
    let mut closer = pull(12, GhState::Merged, "other");
    closer.closes = vec![1];
    let f = facts(vec![
        GhItem::issue(1, "issue"),
        pull(10, GhState::Open, "codex/1"),
        pull(11, GhState::Merged, "codex/1"),
        closer,
    ]);
    // By URL first.
    let url = "https://github.com/acme/app/pull/11";
    let l = link(&f, "acme/app", "1", Some("codex/1"), Some(url));
    assert_eq!(l.implementation.map(|p| p.number), Some(11));
    // By branch: the open one first.
    let l = link(&f, "acme/app", "1", Some("codex/1"), None);
    assert_eq!(l.implementation.map(|p| p.number), Some(10));
    // An open implementation pull request means a pull request may be open: not terminal.
    assert_eq!(completion(&l), None);
    // By closing reference.
    let l = link(&f, "acme/app", "1", None, None);
    assert_eq!(l.implementation.map(|p| p.number), Some(12));
    assert_eq!(completion(&l).map(|c| c.terminal), Some(GhTerminal::Done));
    // A URL of another repository does not count; a pull request has no implementation.
    let other = "https://github.com/acme/web/pull/11";
    let l = link(&f, "acme/app", "1", None, Some(other));
    assert_eq!(l.implementation.map(|p| p.number), Some(12));
    assert_eq!(link(&f, "acme/app", "10", None, None).implementation, None);
}

#[test]
fn a_merged_implementation_completes_an_issue_even_while_the_issue_is_open() {
    let f = facts(vec![
        GhItem::issue(1, "i"),
        pull(2, GhState::Merged, "codex/1"),
    ]);
    let c = completion(&link(&f, "acme/app", "1", Some("codex/1"), None)).unwrap();
    assert_eq!(
        c,
        Completion {
            terminal: GhTerminal::Done,
            at: Some(at(30))
        }
    );
}

#[test]
fn a_declared_terminal_outranks_github() {
    let c = Completion {
        terminal: GhTerminal::Closed,
        at: Some(at(5)),
    };
    assert!(!stands(&c, true, None));
    assert!(stands(&c, false, None));
}

#[test]
fn newer_active_telemetry_outranks_an_older_github_completion() {
    let c = Completion {
        terminal: GhTerminal::Done,
        at: Some(at(30)),
    };
    let active = |m| {
        Some(Newest {
            at: at(m),
            terminal: false,
        })
    };
    assert!(!stands(&c, false, active(10)), "active and newer");
    assert!(stands(&c, false, active(60)), "active but older");
    let done = Some(Newest {
        at: at(10),
        terminal: true,
    });
    assert!(stands(&c, false, done), "newer but terminal");
    let unknown_time = Completion { at: None, ..c };
    assert!(!stands(&unknown_time, false, active(60)));
    assert!(stands(&unknown_time, false, None));
}

#[test]
fn open_unassigned_unclaimed_items_are_ready_for_a_batch() {
    let open = GhItem::issue(1, "i");
    assert!(is_ready_for_batch(&open, false));
    assert!(!is_ready_for_batch(&open, true));
    let assigned = GhItem {
        assignees: vec!["octo".into()],
        ..open.clone()
    };
    assert!(!is_ready_for_batch(&assigned, false));
    assert!(!is_ready_for_batch(&closed_issue(1, 1), false));
}

#[test]
fn pull_urls_closing_references_and_ci_rollups() {
    assert_eq!(
        pull_number("https://github.com/acme/app/pull/12", "acme/app"),
        Some(12)
    );
    assert_eq!(
        pull_number("http://127.0.0.1:9/Acme/App/pull/3/files", "acme/app"),
        None
    );
    assert_eq!(
        pull_number("http://127.0.0.1:9/Acme/App/pull/3#x", "acme/app"),
        Some(3)
    );
    assert_eq!(
        pull_number("https://github.com/acme/app/issues/12", "acme/app"),
        None
    );
    assert_eq!(
        pull_number("https://github.com/x/acme/app2/pull/1", "acme/app"),
        None
    );
    assert_eq!(
        closing_refs(
            "Fixes #3, closes acme/app#4. Resolves: #3\nsee #9; fix other/x#5",
            "acme/app"
        ),
        vec![3, 4]
    );
    assert_eq!(ci_rollup([]), CiState::Unknown);
    assert_eq!(
        ci_rollup(["success", "SKIPPED", "neutral"]),
        CiState::Passing
    );
    assert_eq!(ci_rollup(["success", "in_progress"]), CiState::Pending);
    assert_eq!(ci_rollup(["pending", "timed_out"]), CiState::Failing);
    assert_eq!(ci_rollup(["success", "weird"]), CiState::Unknown);
    assert!(is_repo_name("acme/app") && !is_repo_name("acme/..") && !is_repo_name("a/b/c"));
}

fn row<'a>(rows: &'a [Row], id: &str) -> &'a Row {
    rows.iter()
        .find(|r| r.id == id)
        .unwrap_or_else(|| panic!("no row {id}"))
}

#[test]
fn a_build_applies_github_and_without_facts_is_the_git_only_build() {
    let mut s = Records::new();
    // #1: worked on, its PR merged on branch codex/1 → done. #2: claimed, dead holder, the
    // issue closed → closed. #3: a heartbeat newer than the close → stays running.
    s.claim("acme/app", "1", "w1", None)
        .put("heartbeats/w1.json", json_beat("w1", "1", "codex/1", 45))
        .claim("acme/app", "2", "w2", None)
        .claim("acme/app", "3", "w3", None)
        .beat("w3", "acme/app", "3", None, "implementing", 1);
    let inputs = s.inputs();
    let plain = crate::dashboard::derive::build(&inputs, now(), "v1");
    assert!(plain.source_status.is_empty());
    assert!(plain.rows.iter().all(|r| r.github.is_none()));
    assert_eq!(row(&plain.rows, "target:acme/app#2").state, RowState::Dead);

    let mut merged = pull(20, GhState::Merged, "codex/1");
    merged.merged_at = Some(at(40));
    let repo = facts(vec![
        GhItem::issue(1, "Issue one"),
        closed_issue(2, 30),
        closed_issue(3, 30),
        merged,
        GhItem::issue(4, "Nobody's"),
        GhItem {
            assignees: vec!["octo".into()],
            ..GhItem::issue(5, "Octo's")
        },
        pull(6, GhState::Open, "codex/1"),
    ]);
    let mut with = inputs.clone();
    with.github = Some(Arc::new(GithubFacts {
        status: status(SourceState::Ok),
        repos: BTreeMap::from([("acme/app".to_owned(), repo)]),
    }));
    let m = crate::dashboard::derive::build(&with, now(), "v1");
    assert_eq!(m.source_status, vec![status(SourceState::Ok)]);
    let one = row(&m.rows, "target:acme/app#1");
    // The open pull request #6 on the same branch is the implementation: not terminal yet.
    assert_eq!(one.state, RowState::Dead, "{one:?}");
    assert_eq!(one.title.as_deref(), Some("Issue one"));
    let view = one.github.as_ref().unwrap();
    assert_eq!(view.implementation_pr.as_ref().map(|p| p.number), Some(6));
    assert_eq!(row(&m.rows, "target:acme/app#2").state, RowState::Done);
    let two = row(&m.rows, "target:acme/app#2").github.clone().unwrap();
    assert_eq!(two.terminal, Some(GhTerminal::Closed));
    assert_eq!(row(&m.rows, "target:acme/app#3").state, RowState::Running);
    let four = row(&m.rows, "target:acme/app#4");
    assert_eq!(
        (four.state, four.scheduling),
        (RowState::Ready, Scheduling::ReadyForBatch)
    );
    assert!(
        m.rows.iter().all(|r| r.target != "5"),
        "assigned to somebody"
    );
    assert!(
        m.rows.iter().all(|r| r.target != "6"),
        "the fleet's pull request is #1's row"
    );

    // Without the open #6, the merged #20 on the work branch completes #1.
    let mut repo = with.github.as_deref().unwrap().repos["acme/app"].clone();
    repo.items.remove(&6);
    let mut done = inputs.clone();
    done.github = Some(Arc::new(GithubFacts {
        status: status(SourceState::Ok),
        repos: BTreeMap::from([("acme/app".to_owned(), repo)]),
    }));
    let m = crate::dashboard::derive::build(&done, now(), "v1");
    let one = row(&m.rows, "target:acme/app#1");
    assert_eq!(one.state, RowState::Done);
    assert_eq!(
        one.github.as_ref().unwrap().terminal,
        Some(GhTerminal::Done)
    );
    assert!(one.attention.is_none() && one.warnings.is_empty());
    // The JSON of a row without GitHub facts has no `github` key (old snapshots hold).
    let json = serde_json::to_value(&plain).unwrap();
    assert!(json.get("sourceStatus").is_none());
    assert!(json["rows"][0].get("github").is_none());
}

#[test]
fn the_repositories_to_enrich_are_the_ones_the_state_mentions() {
    let mut s = Records::new();
    s.claim("acme/app", "1", "w1", None)
        .beat("w2", "acme/api", "7", None, "implementing", 1)
        .event(
            "b1",
            "e1",
            "phase",
            serde_json::json!({"repo": "acme/web", "target": "3",
                "pr_url": "https://github.com/acme/web/pull/9", "branch": "codex/3"}),
            5,
        )
        .event(
            "b1",
            "e2",
            "note",
            serde_json::json!({"repo": "not a repo"}),
            5,
        );
    let inputs = s.inputs();
    assert_eq!(
        enrichment_repos(&inputs),
        ["acme/api", "acme/app", "acme/web"]
    );
    let w = wanted(&inputs);
    let web = &w["acme/web"];
    assert_eq!(web.numbers.iter().copied().collect::<Vec<_>>(), [3]);
    assert!(web.pulls.contains(&9) && web.branches.contains("codex/3"));
    assert_eq!(web.since, Some(at(5)));
    assert!(web.works_on(&pull(9, GhState::Open, "x")));
    assert!(web.works_on(&pull(10, GhState::Open, "codex/3")));
    assert!(!web.works_on(&pull(11, GhState::Open, "y")));
}

fn json_beat(agent: &str, target: &str, branch: &str, age: i64) -> serde_json::Value {
    serde_json::json!({"agent_id": agent, "repo": "acme/app", "target": target,
        "status": "implementing", "branch": branch, "updated_at": ago(age),
        "expires_at": ago(age - 10), "machine_id": "box-1"})
}

#[test]
fn a_pull_request_may_be_open_until_github_says_it_is_closed_or_merged() {
    use crate::dashboard::model::GhState;
    use crate::dashboard::model::GithubView;
    use crate::dashboard::model::LinkedPull;
    let view = |kind: &str, state, implementation: Option<GhState>| GithubView {
        kind: kind.into(),
        state,
        title: None,
        url: None,
        draft: false,
        author: None,
        assignees: Vec::new(),
        head_branch: None,
        ci: None,
        implementation_pr: implementation.map(|state| LinkedPull {
            number: 9,
            state,
            url: None,
            ci: None,
        }),
        terminal: None,
        terminal_at: None,
    };
    // Without GitHub: a pull request item, or a holder that named one.
    assert!(possible_open_pr("pull_request", false, None));
    assert!(possible_open_pr("issue", true, None));
    assert!(!possible_open_pr("issue", false, None));
    // GitHub settles it.
    let merged = view("pull_request", GhState::Merged, None);
    assert!(!possible_open_pr("pull_request", false, Some(&merged)));
    let open = view("pull_request", GhState::Open, None);
    assert!(possible_open_pr("pull_request", false, Some(&open)));
    let closed_impl = view("issue", GhState::Open, Some(GhState::Closed));
    assert!(!possible_open_pr("issue", true, Some(&closed_impl)));
    let open_impl = view("issue", GhState::Open, Some(GhState::Open));
    assert!(possible_open_pr("issue", false, Some(&open_impl)));
    // A named pull request GitHub linked to nothing may still be open.
    let unlinked = view("issue", GhState::Open, None);
    assert!(possible_open_pr("issue", true, Some(&unlinked)));
}
