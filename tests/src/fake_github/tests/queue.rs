//! The merge queue through the control API, and the timeline that shows who used it.

use serde_json::json;
use serde_json::Value;

use super::*;

const QUEUE: &str = "github-merge-queue[bot]";

/// Returns `(event, actor login, actor type)` of each timeline entry, oldest first.
fn timeline(gh: &FakeGitHub, number: u64) -> Vec<(String, Value, Value)> {
    let path = format!("/repos/acme/app/issues/{number}/timeline");
    let entries = get(gh, &path, "tok-bot").json();
    entries
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let event = e["event"].as_str().unwrap().to_owned();
            (
                event,
                e["actor"]["login"].clone(),
                e["actor"]["type"].clone(),
            )
        })
        .collect()
}

fn entry(event: &str, login: &str, kind: &str) -> (String, Value, Value) {
    (event.to_owned(), json!(login), json!(kind))
}

#[test]
fn a_person_enqueues_and_the_queue_app_merges_the_head_it_was_given() {
    let s = setup();
    let work = clone(&s);
    let (n, head) = open_pull(&s, &work, "feature", "tok-bot", false);
    s.gh.comment(REPO, n, "alice", "Looks good; queueing it.");

    let queued = s.gh.enqueue_pull(REPO, n, "alice");
    assert_eq!(
        (&queued["state"], &queued["merged"]),
        (&json!("open"), &json!(false))
    );
    let again = control(
        &s.gh,
        "POST",
        &format!("/_control/repos/acme/app/pulls/{n}/merge_queue"),
        json!({ "by": "alice" }),
    );
    assert_eq!(
        error_message(&again),
        "Pull Request is already in the merge queue"
    );

    let merged = s.gh.merge_queued_pull(REPO, n, false);
    assert_eq!(merged["merged"], true);
    assert_eq!(merged["merged_by"]["login"], QUEUE);
    assert_eq!(merged["merged_by"]["type"], "Bot");
    assert_eq!(merged["head"]["sha"], head.as_str());
    let sha = merged["merge_commit_sha"].as_str().unwrap().to_owned();
    git(&work, &["fetch", "--quiet", "origin"]);
    assert_eq!(git(&work, &["rev-parse", "origin/main"]), sha);
    assert_eq!(git(&work, &["rev-parse", "origin/main^2"]), head);

    assert_eq!(
        timeline(&s.gh, n),
        [
            entry("commented", "alice", "User"),
            entry("added_to_merge_queue", "alice", "User"),
            entry("removed_from_merge_queue", QUEUE, "Bot"),
            entry("merged", QUEUE, "Bot"),
            entry("closed", QUEUE, "Bot"),
        ]
    );
    // The comment reads as a comment too, and the events route has the queue events.
    let path = format!("/repos/acme/app/issues/{n}/timeline");
    let entries = get(&s.gh, &path, "tok-bot").json();
    assert_eq!(entries[0]["body"], "Looks good; queueing it.");
    assert_eq!(entries[0]["user"]["login"], "alice");
    assert_eq!(entries[3]["commit_id"], sha.as_str());
    let events = get(
        &s.gh,
        &format!("/repos/acme/app/issues/{n}/events"),
        "tok-bot",
    )
    .json();
    assert_eq!(events[0]["event"], "added_to_merge_queue");
    assert_eq!(s.gh.merge_calls(), 0, "the queue is not the REST merge");
}

#[test]
fn a_bot_can_enqueue_and_the_timeline_says_so() {
    let s = setup();
    let work = clone(&s);
    let (n, _) = open_pull(&s, &work, "feature", "tok-alice", false);
    s.gh.enqueue_pull(REPO, n, "coord[bot]");
    s.gh.merge_queued_pull(REPO, n, false);
    assert_eq!(
        timeline(&s.gh, n)[0],
        entry("added_to_merge_queue", "coord[bot]", "Bot")
    );
}

#[test]
fn a_moved_head_is_what_the_queue_merges() {
    let s = setup();
    let work = clone(&s);
    let (n, approved) = open_pull(&s, &work, "feature", "tok-bot", false);
    s.gh.enqueue_pull(REPO, n, "alice");
    let merged = s.gh.merge_queued_pull(REPO, n, true);
    let head = merged["head"]["sha"].as_str().unwrap().to_owned();
    assert_ne!(head, approved);
    git(&work, &["fetch", "--quiet", "origin"]);
    assert_eq!(git(&work, &["rev-parse", "origin/feature"]), head);
    assert_eq!(git(&work, &["rev-parse", "origin/feature^"]), approved);
    assert_eq!(git(&work, &["rev-parse", "origin/main^2"]), head);
    let files = git(&work, &["ls-tree", "--name-only", "origin/main"]);
    assert!(
        files.contains(&format!("moved-before-queue-{n}.txt")),
        "{files}"
    );
}

#[test]
fn the_queue_refuses_what_github_refuses() {
    let s = setup();
    let work = clone(&s);
    let (draft, _) = open_pull(&s, &work, "draft", "tok-bot", true);
    let (open, _) = open_pull(&s, &work, "open", "tok-bot", false);
    let queue = |n: u64, by: &str| {
        control(
            &s.gh,
            "POST",
            &format!("/_control/repos/acme/app/pulls/{n}/merge_queue"),
            json!({ "by": by }),
        )
    };
    assert_eq!(
        error_message(&queue(draft, "alice")),
        "a draft pull request cannot be added to the merge queue"
    );
    assert_eq!(queue(open, "mallory").status, 422, "an unknown user");
    let not_queued = control(
        &s.gh,
        "POST",
        &format!("/_control/repos/acme/app/pulls/{open}/merge_queue/merge"),
        json!({}),
    );
    assert_eq!(
        error_message(&not_queued),
        "Pull Request is not in the merge queue"
    );
    s.gh.close_pull(REPO, open, "alice");
    assert_eq!(
        error_message(&queue(open, "alice")),
        "Pull Request is closed"
    );
}

#[test]
fn the_timeline_pages_like_every_list() {
    let s = setup();
    let work = clone(&s);
    let (n, _) = open_pull(&s, &work, "feature", "tok-bot", false);
    for i in 0..3 {
        s.gh.comment(REPO, n, "alice", &format!("comment {i}"));
    }
    let path = format!("/repos/acme/app/issues/{n}/timeline?per_page=2");
    let first = get(&s.gh, &path, "tok-bot");
    assert_eq!(first.json().as_array().unwrap().len(), 2);
    let link = first.header("link").unwrap_or_default().to_owned();
    assert!(link.contains("rel=\"next\""), "{link}");
}
