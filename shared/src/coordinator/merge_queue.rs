//! Who put a pull request into GitHub's merge queue, read from its timeline. A queue merge
//! shows GitHub's merge-queue app as the merger; the person behind it is the actor of the
//! `added_to_merge_queue` event of the queue entry that ended in the merge, and only a person
//! (actor type exactly `User`) makes it a human merge. Sources: the REST timeline
//! (`GET /repos/{owner}/{repo}/issues/{number}/timeline`), whose queue events carry the
//! common issue-event fields (`event`, `actor`, `created_at`); GraphQL's
//! `AddedToMergeQueueEvent` (`actor`, `enqueuer`) and `MergedEvent`.

/// The merge queue's GitHub App account, which GitHub reports as `merged_by` (type `Bot`) of a
/// pull request its merge queue merged.
pub const MERGE_QUEUE_LOGIN: &str = "github-merge-queue[bot]";

/// One entry of a pull request's timeline, as far as the merge rule reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TimelineEvent {
    /// `added_to_merge_queue`, `removed_from_merge_queue`, `merged`, `commented`, ….
    pub event: String,
    /// Who did it (absent on some entries, such as commits).
    pub actor_login: Option<String>,
    /// The actor's account type (`User`, `Bot`, …).
    pub actor_type: Option<String>,
}

/// Who put the pull request into the merge queue for the merge, by its timeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enqueuer {
    /// A person: the merge counts as theirs.
    Person(String),
    /// The timeline shows no `merged` entry yet: look again.
    NotYet,
    /// No person: a bot, an actor of unknown type, or no enqueue at all before the merge.
    NotAPerson(String),
}

/// Returns whether `login`/`kind` is GitHub's merge queue (the app, type `Bot`).
pub fn is_merge_queue(login: Option<&str>, kind: Option<&str>) -> bool {
    login == Some(MERGE_QUEUE_LOGIN) && kind == Some("Bot")
}

/// Finds who enqueued the pull request for the merge in `timeline` (oldest first, as GitHub
/// lists it): the actor of the last `added_to_merge_queue` before the first `merged` entry.
/// An earlier queue entry that ended without the merge (removed, then re-added by someone
/// else) does not count; the queue's own `removed_from_merge_queue` as it merges does not
/// end the entry.
pub fn enqueuer(timeline: &[TimelineEvent]) -> Enqueuer {
    let Some(merged_at) = timeline.iter().position(|e| e.event == "merged") else {
        return Enqueuer::NotYet;
    };
    let Some(added) = timeline[..merged_at]
        .iter()
        .rev()
        .find(|e| e.event == "added_to_merge_queue")
    else {
        return Enqueuer::NotAPerson(
            "the merge queue merged it, but its timeline shows nobody putting it into the queue"
                .into(),
        );
    };
    let who = added.actor_login.clone().unwrap_or_default();
    match added.actor_type.as_deref() {
        Some("User") if !who.is_empty() => Enqueuer::Person(who),
        Some(kind) => {
            Enqueuer::NotAPerson(format!(
            "the merge queue merged it after {} of type {kind} put it into the queue, not a person",
            if who.is_empty() { "an actor without a login" } else { &who }
        ))
        }
        None => Enqueuer::NotAPerson(
            "the merge queue merged it after an actor of unknown type put it into the queue".into(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: &str, who: Option<(&str, &str)>) -> TimelineEvent {
        TimelineEvent {
            event: event.into(),
            actor_login: who.map(|w| w.0.to_owned()),
            actor_type: who.map(|w| w.1.to_owned()),
        }
    }

    const ALICE: Option<(&str, &str)> = Some(("alice", "User"));
    const HELPER: Option<(&str, &str)> = Some(("helper-bot", "Bot"));
    const QUEUE: Option<(&str, &str)> = Some((MERGE_QUEUE_LOGIN, "Bot"));

    #[test]
    fn the_enqueuer_of_the_entry_that_merged_decides() {
        let person = |who: &str| {
            let who = who.to_owned();
            Box::new(move |e: &Enqueuer| *e == Enqueuer::Person(who.clone()))
                as Box<dyn Fn(&Enqueuer) -> bool>
        };
        fn not_a_person(says: &'static str) -> Box<dyn Fn(&Enqueuer) -> bool> {
            Box::new(move |e| matches!(e, Enqueuer::NotAPerson(m) if m.contains(says)))
        }
        type Case = (
            &'static str,
            Vec<TimelineEvent>,
            Box<dyn Fn(&Enqueuer) -> bool>,
        );
        let table: Vec<Case> = vec![
            (
                "a person enqueues; the queue removes it as it merges (GitHub's order)",
                vec![
                    ev("commented", Some(("bob", "User"))),
                    ev("added_to_merge_queue", ALICE),
                    ev("removed_from_merge_queue", QUEUE),
                    ev("merged", QUEUE),
                    ev("closed", QUEUE),
                ],
                person("alice"),
            ),
            (
                "a bot enqueues",
                vec![ev("added_to_merge_queue", HELPER), ev("merged", QUEUE)],
                not_a_person("helper-bot of type Bot"),
            ),
            (
                "a person's entry was dropped, a bot re-enqueued it",
                vec![
                    ev("added_to_merge_queue", ALICE),
                    ev("removed_from_merge_queue", QUEUE),
                    ev("added_to_merge_queue", HELPER),
                    ev("merged", QUEUE),
                ],
                not_a_person("helper-bot"),
            ),
            (
                "a bot's entry was dropped, a person re-enqueued it",
                vec![
                    ev("added_to_merge_queue", HELPER),
                    ev("removed_from_merge_queue", QUEUE),
                    ev("added_to_merge_queue", ALICE),
                    ev("merged", QUEUE),
                ],
                person("alice"),
            ),
            (
                "an enqueue after the merge does not count",
                vec![ev("merged", QUEUE), ev("added_to_merge_queue", ALICE)],
                not_a_person("nobody putting it into the queue"),
            ),
            (
                "an actor without a type is not a person",
                vec![ev("added_to_merge_queue", None), ev("merged", QUEUE)],
                not_a_person("unknown type"),
            ),
            (
                "a User without a login is not a person",
                vec![
                    ev("added_to_merge_queue", Some(("", "User"))),
                    ev("merged", QUEUE),
                ],
                not_a_person("an actor without a login of type User"),
            ),
            (
                "no merged entry yet",
                vec![ev("added_to_merge_queue", ALICE)],
                Box::new(|e| *e == Enqueuer::NotYet),
            ),
            (
                "an empty timeline",
                vec![],
                Box::new(|e| *e == Enqueuer::NotYet),
            ),
        ];
        for (case, timeline, expect) in table {
            let got = enqueuer(&timeline);
            assert!(expect(&got), "{case}: {got:?}");
        }
    }

    #[test]
    fn only_the_queue_app_of_type_bot_is_the_merge_queue() {
        assert!(is_merge_queue(Some(MERGE_QUEUE_LOGIN), Some("Bot")));
        assert!(!is_merge_queue(Some(MERGE_QUEUE_LOGIN), Some("User")));
        assert!(!is_merge_queue(Some(MERGE_QUEUE_LOGIN), None));
        assert!(!is_merge_queue(Some("helper-bot"), Some("Bot")));
        assert!(!is_merge_queue(None, Some("Bot")));
    }
}
