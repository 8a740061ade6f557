//! Step 10's verdict on a pull request: done only after a merge whose actor type is exactly
//! `User` — or GitHub's merge queue acting for a person who put it into the queue (see
//! [`merge_queue`]) — of the approved head, with the merge SHA, the time and the expected
//! base. A Ready pull request closed unmerged, merged by anything but a person, or merged on
//! another head ends the task for good: GitHub never shows another merge of it.

use super::merge_queue;
use super::merge_queue::Enqueuer;
use super::merge_queue::TimelineEvent;
use super::task::MergeRecord;

/// What GitHub shows about a pull request's end.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PullEnd {
    /// `open` or `closed`.
    pub state: String,
    /// Whether it merged.
    pub merged: bool,
    /// When.
    pub merged_at: Option<String>,
    /// Who merged.
    pub merged_by: Option<String>,
    /// The merger's account type (`User`, `Bot`, …).
    pub merged_by_type: Option<String>,
    /// The merge commit.
    pub merge_commit_sha: Option<String>,
    /// The base branch.
    pub base: String,
    /// The head it merged (for a merged pull request GitHub keeps the last head).
    pub head_sha: String,
}

/// What the merge must match: the task's pinned base branch and its approved head.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Approved<'a> {
    /// The base branch.
    pub base: &'a str,
    /// The head the formal approval, Ready and every gate were on.
    pub head: &'a str,
}

/// The verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeVerdict {
    /// Still open: keep observing.
    Open,
    /// Merged, but GitHub has not filled in the merge commit or time (or the timeline's
    /// merge entry) yet: look again.
    Settling(String),
    /// Merged by GitHub's merge queue: judge again with the pull request's timeline, which
    /// says who put it into the queue.
    NeedsTimeline,
    /// A verified human merge.
    Human(MergeRecord),
    /// Closed without a merge, merged by a non-person, on another head, or elsewhere: terminal.
    Refused(String),
}

/// Judges `pull` against what was `approved`; `timeline` is the pull request's timeline when
/// it was read (only needed, and only asked for, when the merge queue merged it).
pub fn verdict(
    pull: &PullEnd,
    approved: Approved<'_>,
    timeline: Option<&[TimelineEvent]>,
) -> MergeVerdict {
    if !pull.merged && pull.merged_at.is_none() {
        return if pull.state == "open" {
            MergeVerdict::Open
        } else {
            MergeVerdict::Refused(
                "the Ready pull request was closed without a merge; the task ends here".into(),
            )
        };
    }
    let who = pull.merged_by.clone().unwrap_or_default();
    let (merged_by, queue) = if merge_queue::is_merge_queue(
        pull.merged_by.as_deref(),
        pull.merged_by_type.as_deref(),
    ) {
        let Some(timeline) = timeline else {
            return MergeVerdict::NeedsTimeline;
        };
        match merge_queue::enqueuer(timeline) {
            Enqueuer::Person(login) => (login, Some(who)),
            Enqueuer::NotYet => {
                return MergeVerdict::Settling(
                    "merged by the merge queue, but its timeline shows no merge yet".into(),
                )
            }
            Enqueuer::NotAPerson(why) => {
                return MergeVerdict::Refused(format!(
                    "{why}; that is not a verified human merge, and the task ends here"
                ))
            }
        }
    } else {
        match pull.merged_by_type.as_deref() {
                Some("User") if !who.is_empty() => (who, None),
                Some(kind) => {
                    return MergeVerdict::Refused(format!(
                        "the pull request was merged by {who} of type {kind}, not by a person; the task ends here without claiming the merge"
                    ))
                }
                None => {
                    return MergeVerdict::Refused(
                        "the pull request was merged by an actor of unknown type, which is not a verified human merge; the task ends here".into(),
                    )
                }
            }
    };
    if pull.base != approved.base {
        return MergeVerdict::Refused(format!(
            "the pull request merged into {}, not the pinned base {}",
            pull.base, approved.base
        ));
    }
    if pull.head_sha != approved.head {
        return MergeVerdict::Refused(format!(
            "the pull request was merged on head {}, not on the approved head {}; that is not a verified human merge of the approved work, and the task ends here",
            pull.head_sha, approved.head
        ));
    }
    match (&pull.merge_commit_sha, &pull.merged_at) {
        (Some(sha), Some(at)) if !sha.is_empty() && !at.is_empty() => {
            MergeVerdict::Human(MergeRecord {
                sha: sha.clone(),
                merged_at: at.clone(),
                merged_by,
                base: pull.base.clone(),
                queue,
            })
        }
        _ => MergeVerdict::Settling("merged, but GitHub shows no merge commit or time yet".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::merge_queue::MERGE_QUEUE_LOGIN;

    const HEAD: &str = "1111111111111111111111111111111111111111";
    const OTHER: &str = "2222222222222222222222222222222222222222";
    const APPROVED: Approved<'static> = Approved {
        base: "main",
        head: HEAD,
    };

    fn merged(by: Option<&str>, kind: Option<&str>) -> PullEnd {
        PullEnd {
            state: "closed".into(),
            merged: true,
            merged_at: Some("2026-11-30T10:00:00Z".into()),
            merged_by: by.map(str::to_owned),
            merged_by_type: kind.map(str::to_owned),
            merge_commit_sha: Some("c".repeat(40)),
            base: "main".into(),
            head_sha: HEAD.into(),
        }
    }

    fn by_queue() -> PullEnd {
        merged(Some(MERGE_QUEUE_LOGIN), Some("Bot"))
    }

    fn ev(event: &str, login: &str, kind: &str) -> TimelineEvent {
        TimelineEvent {
            event: event.into(),
            actor_login: Some(login.into()),
            actor_type: Some(kind.into()),
        }
    }

    /// A queue entry by `login` of type `kind` that ended in the merge, in GitHub's order.
    fn queued_by(login: &str, kind: &str) -> Vec<TimelineEvent> {
        vec![
            ev("added_to_merge_queue", login, kind),
            ev("removed_from_merge_queue", MERGE_QUEUE_LOGIN, "Bot"),
            ev("merged", MERGE_QUEUE_LOGIN, "Bot"),
            ev("closed", MERGE_QUEUE_LOGIN, "Bot"),
        ]
    }

    fn human(by: &str, queue: Option<&str>) -> MergeVerdict {
        MergeVerdict::Human(MergeRecord {
            sha: "c".repeat(40),
            merged_at: "2026-11-30T10:00:00Z".into(),
            merged_by: by.into(),
            base: "main".into(),
            queue: queue.map(str::to_owned),
        })
    }

    fn refused(says: &'static str) -> impl Fn(&MergeVerdict) -> bool {
        move |v| matches!(v, MergeVerdict::Refused(m) if m.contains(says))
    }

    fn settling(v: &MergeVerdict) -> bool {
        matches!(v, MergeVerdict::Settling(_))
    }

    #[test]
    fn every_end_of_a_ready_pull_request_has_one_verdict() {
        let open = PullEnd {
            state: "open".into(),
            base: "main".into(),
            head_sha: HEAD.into(),
            ..PullEnd::default()
        };
        let closed = PullEnd {
            state: "closed".into(),
            ..open.clone()
        };
        let other_head = PullEnd {
            head_sha: OTHER.into(),
            ..merged(Some("alice"), Some("User"))
        };
        let other_base = PullEnd {
            base: "develop".into(),
            ..merged(Some("alice"), Some("User"))
        };
        let no_sha = PullEnd {
            merge_commit_sha: None,
            ..merged(Some("alice"), Some("User"))
        };
        let no_time_yet = PullEnd {
            merged_at: None,
            ..merged(Some("alice"), Some("User"))
        };
        let queue_other_head = PullEnd {
            head_sha: OTHER.into(),
            ..by_queue()
        };
        let alice = queued_by("alice", "User");
        let helper = queued_by("helper-bot", "Bot");
        let not_yet = vec![ev("added_to_merge_queue", "alice", "User")];
        type Case<'a> = (
            &'a str,
            PullEnd,
            Option<&'a [TimelineEvent]>,
            Box<dyn Fn(&MergeVerdict) -> bool>,
        );
        let table: Vec<Case<'_>> = vec![
            ("open waits", open, None, Box::new(|v| *v == MergeVerdict::Open)),
            ("closed unmerged", closed, None, Box::new(refused("closed without a merge"))),
            (
                "a person's button merge",
                merged(Some("alice"), Some("User")),
                None,
                Box::new(|v| *v == human("alice", None)),
            ),
            (
                "a bot's merge",
                merged(Some("helper-bot"), Some("Bot")),
                None,
                Box::new(refused("helper-bot of type Bot")),
            ),
            (
                "a merger of unknown type",
                merged(Some("alice"), None),
                None,
                Box::new(refused("unknown type")),
            ),
            (
                "a User without a login",
                merged(None, Some("User")),
                None,
                Box::new(refused("of type User")),
            ),
            (
                "another base",
                other_base,
                None,
                Box::new(refused("not the pinned base main")),
            ),
            (
                "a person merged another head",
                other_head,
                None,
                Box::new(refused(
                    "merged on head 2222222222222222222222222222222222222222, not on the approved head",
                )),
            ),
            ("no merge commit yet", no_sha, None, Box::new(settling)),
            ("merged, no time yet", no_time_yet, None, Box::new(settling)),
            (
                "the queue merged it: the timeline is needed first",
                by_queue(),
                None,
                Box::new(|v| *v == MergeVerdict::NeedsTimeline),
            ),
            (
                "a person enqueued",
                by_queue(),
                Some(&alice),
                Box::new(|v| *v == human("alice", Some(MERGE_QUEUE_LOGIN))),
            ),
            (
                "a bot enqueued",
                by_queue(),
                Some(&helper),
                Box::new(refused("helper-bot of type Bot put it into the queue")),
            ),
            (
                "the timeline shows no merge yet",
                by_queue(),
                Some(&not_yet),
                Box::new(settling),
            ),
            (
                "the timeline shows no enqueue",
                by_queue(),
                Some(&[]),
                Box::new(settling),
            ),
            (
                "a person enqueued, the queue merged another head",
                queue_other_head,
                Some(&alice),
                Box::new(refused("not on the approved head")),
            ),
        ];
        for (case, pull, timeline, expect) in table {
            let got = verdict(&pull, APPROVED, timeline);
            assert!(expect(&got), "{case}: {got:?}");
        }
    }

    #[test]
    fn a_queue_merge_without_any_enqueue_on_a_merged_timeline_is_refused() {
        let timeline = vec![ev("merged", MERGE_QUEUE_LOGIN, "Bot")];
        assert!(refused("nobody putting it into the queue")(&verdict(
            &by_queue(),
            APPROVED,
            Some(&timeline)
        )));
    }
}
