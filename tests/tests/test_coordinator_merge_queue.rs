//! Step 10 through GitHub's merge queue, end to end: a Ready pull request a person puts into
//! the queue is done once the queue (`github-merge-queue[bot]`) merges the approved head, with
//! the same acknowledgement as a button merge; a bot's enqueue, or the queue merging another
//! head, is a final blocker — as a person's button merge of another head is. The pull
//! request's timeline is read only for a queue merge.

use agent_coord_tests::coord::Coord;
use agent_coord_tests::coord::HUMAN;
use agent_coord_tests::coord::REPO;

const QUEUE: &str = "github-merge-queue[bot]";

fn ok(out: &agent_coord_tests::env::CommandOutput) {
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
}

/// A task driven to a Ready pull request waiting for its merge: `(coord, issue, pr)`.
fn ready() -> (Coord, u64, u64) {
    let c = Coord::new(30);
    c.gh.ci_plan(REPO, &[], "success");
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    ok(&c.tick(&[]));
    let task = c.task(issue);
    assert_eq!(task["phase"], "await_merge", "{task:#}");
    let pr = c.pr(issue);
    assert_eq!(c.gh.pulls(REPO)[0]["draft"], false);
    (c, issue, pr)
}

/// How many times the coordinator read the pull request's timeline.
fn timeline_reads(c: &Coord, pr: u64) -> usize {
    let path = format!("/repos/{REPO}/issues/{pr}/timeline");
    c.gh.requests().iter().filter(|r| r.path == path).count()
}

/// Asserts the task ended `failed` with a final blocker saying `says`, no merge claimed and
/// no acknowledgement, and that a reply revives nothing.
fn assert_terminal(c: &Coord, issue: u64, says: &str) {
    let task = c.task(issue);
    assert_eq!(task["state"], "failed", "{task:#}");
    assert!(task.get("merge").is_none(), "a merge was claimed: {task:#}");
    assert!(task.get("resume_phase").is_none());
    assert!(task.get("question_activity_id").is_none());
    let comments = c.comments(issue);
    let last = &comments.last().unwrap().1;
    assert!(last.contains(says) && last.contains("final"), "{last}");
    assert!(
        !comments
            .iter()
            .any(|(_, b)| b.starts_with("Done: pull request #")),
        "acknowledged anyway: {comments:#?}"
    );
    let before = c.mutations().len();
    c.reply(issue, "Please try again.");
    ok(&c.tick(&[]));
    assert_eq!(
        c.mutations().len(),
        before,
        "a reply revived a terminal task"
    );
    assert_eq!(c.recorded("implementer.log").lines().count(), 1);
}

#[test]
fn a_person_enqueues_and_the_queue_merge_of_the_approved_head_is_done() {
    let (c, issue, pr) = ready();
    let head = c.task(issue)["head"].as_str().unwrap().to_owned();
    let effects = c.mutations();
    c.gh.enqueue_pull(REPO, pr, HUMAN);
    // Queued is still open: the task waits, and an open pull request needs no timeline.
    ok(&c.tick(&[]));
    assert_eq!(c.task(issue)["phase"], "await_merge");
    assert_eq!(timeline_reads(&c, pr), 0);

    let merged = c.gh.merge_queued_pull(REPO, pr, false);
    assert_eq!(merged["merged_by"]["login"], QUEUE);
    assert_eq!(merged["head"]["sha"], head.as_str());
    let out = c.tick(&[]);
    ok(&out);
    let task = c.task(issue);
    assert_eq!(task["state"], "done", "{task:#}\n{}", out.stdout);
    assert_eq!(task["phase"], "finished");
    assert_eq!(task["merge"]["merged_by"], HUMAN);
    assert_eq!(task["merge"]["queue"], QUEUE);
    assert_eq!(task["merge"]["sha"], merged["merge_commit_sha"]);
    assert_eq!(task["merge"]["base"], "main");
    assert_eq!(timeline_reads(&c, pr), 1);
    // The same after-merge effect as a button merge: one acknowledgement on the issue.
    let mutations = c.mutations();
    assert_eq!(mutations.len(), effects.len() + 1, "{mutations:#?}");
    assert_eq!(
        mutations.last(),
        Some(&format!(
            "POST /repos/{REPO}/issues/{issue}/comments by {}",
            agent_coord_tests::coord::WORKER
        ))
    );
    let ack = c.comments(issue).last().unwrap().1.clone();
    assert!(
        ack.starts_with(&format!("Done: pull request #{pr} was merged by @{HUMAN}")),
        "{ack}"
    );
    // Done is done: later ticks read nothing more and post nothing.
    ok(&c.tick(&[]));
    assert_eq!(c.mutations().len(), mutations.len());
    assert_eq!(timeline_reads(&c, pr), 1);
    assert_eq!(c.gh.merge_calls(), 0, "the coordinator never merges");
}

#[test]
fn a_button_merge_costs_no_timeline_read() {
    let (c, issue, pr) = ready();
    c.gh.merge_pull(REPO, pr, Some(HUMAN));
    ok(&c.tick(&[]));
    let task = c.task(issue);
    assert_eq!(task["state"], "done", "{task:#}");
    assert!(task["merge"].get("queue").is_none(), "{task:#}");
    assert_eq!(timeline_reads(&c, pr), 0);
}

#[test]
fn a_bot_enqueues_and_the_queue_merge_is_a_final_blocker() {
    let (c, issue, pr) = ready();
    c.gh.enqueue_pull(REPO, pr, "helper-bot");
    c.gh.merge_queued_pull(REPO, pr, false);
    ok(&c.tick(&[]));
    assert_eq!(timeline_reads(&c, pr), 1);
    assert_terminal(&c, issue, "helper-bot of type Bot put it into the queue");
}

#[test]
fn the_queue_merging_another_head_is_not_done() {
    let (c, issue, pr) = ready();
    let head = c.task(issue)["head"].as_str().unwrap().to_owned();
    c.gh.enqueue_pull(REPO, pr, HUMAN);
    let merged = c.gh.merge_queued_pull(REPO, pr, true);
    let moved = merged["head"]["sha"].as_str().unwrap().to_owned();
    assert_ne!(moved, head);
    ok(&c.tick(&[]));
    assert_terminal(
        &c,
        issue,
        &format!("merged on head {moved}, not on the approved head {head}"),
    );
}

#[test]
fn a_person_merging_another_head_with_the_button_is_not_done_either() {
    let (c, issue, pr) = ready();
    let task = c.task(issue);
    let head = task["head"].as_str().unwrap().to_owned();
    let pull = c.gh.pulls(REPO).remove(0);
    let foreign = c.foreign_push(pull["head"]["ref"].as_str().unwrap());
    c.gh.merge_pull(REPO, pr, Some(HUMAN));
    ok(&c.tick(&[]));
    assert_eq!(timeline_reads(&c, pr), 0);
    assert_terminal(
        &c,
        issue,
        &format!("merged on head {foreign}, not on the approved head {head}"),
    );
}
