//! Human evidence read from GitHub's issue events: the assignment that mandates a task must
//! have been made by a human account and still stand. The cli fills [`IssueEvent`] from
//! GitHub's JSON; nothing here trusts model output.

use serde::Deserialize;
use serde::Serialize;

/// One issue event, as GitHub lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssueEvent {
    /// The event id; ids grow with creation time.
    pub id: u64,
    /// The event name (`assigned`, `unassigned`, `labeled`, …).
    pub event: String,
    /// The login of the account that caused the event.
    pub actor_login: Option<String>,
    /// The type of that account (`User`, `Bot`, …).
    pub actor_type: Option<String>,
    /// The login assigned or unassigned, for assignment events.
    pub assignee_login: Option<String>,
    /// When the event happened (RFC 3339, as GitHub reports it).
    pub created_at: String,
}

/// The human assignment that mandates a task.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssignmentEvidence {
    /// The id of the `assigned` event.
    pub event_id: u64,
    /// The login of the human who assigned.
    pub actor: String,
    /// When the assignment happened.
    pub created_at: String,
}

/// Why the assignment cannot serve as human evidence.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvidenceError {
    /// No `assigned` event names the login.
    #[error("no assigned event for {login} on this issue")]
    NoAssignment {
        /// The worker's login.
        login: String,
    },
    /// The newest assignment was undone by a later `unassigned` event.
    #[error("the assignment of {login} was revoked by event {event_id}")]
    Revoked {
        /// The worker's login.
        login: String,
        /// The id of the `unassigned` event.
        event_id: u64,
    },
    /// The newest assignment was not made by a human account.
    #[error("the assignment of {login} (event {event_id}) was made by {actor} of type {actor_type}, not by a human user")]
    NotHuman {
        /// The worker's login.
        login: String,
        /// The id of the `assigned` event.
        event_id: u64,
        /// The actor's login, or `unknown`.
        actor: String,
        /// The actor's type, or `unknown` when GitHub reported none.
        actor_type: String,
    },
}

/// Returns the newest `assigned` event to `login` (case-insensitively) that no later
/// `unassigned` event of the same login follows, provided its actor type is exactly `User`.
pub fn assignment_evidence(
    events: &[IssueEvent],
    login: &str,
) -> Result<AssignmentEvidence, EvidenceError> {
    let mut ours: Vec<&IssueEvent> = events
        .iter()
        .filter(|e| matches!(e.event.as_str(), "assigned" | "unassigned"))
        .filter(|e| {
            e.assignee_login
                .as_deref()
                .is_some_and(|a| a.eq_ignore_ascii_case(login))
        })
        .collect();
    ours.sort_by_key(|e| e.id);
    let Some(assigned_at) = ours.iter().rposition(|e| e.event == "assigned") else {
        return Err(EvidenceError::NoAssignment {
            login: login.to_owned(),
        });
    };
    if let Some(revoke) = ours[assigned_at + 1..].last() {
        return Err(EvidenceError::Revoked {
            login: login.to_owned(),
            event_id: revoke.id,
        });
    }
    let assigned = ours[assigned_at];
    match (&assigned.actor_login, assigned.actor_type.as_deref()) {
        (Some(actor), Some("User")) => Ok(AssignmentEvidence {
            event_id: assigned.id,
            actor: actor.clone(),
            created_at: assigned.created_at.clone(),
        }),
        (actor, actor_type) => Err(EvidenceError::NotHuman {
            login: login.to_owned(),
            event_id: assigned.id,
            actor: actor.clone().unwrap_or_else(|| "unknown".to_owned()),
            actor_type: actor_type.unwrap_or("unknown").to_owned(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(id: u64, event: &str, actor: Option<(&str, &str)>, assignee: &str) -> IssueEvent {
        IssueEvent {
            id,
            event: event.to_owned(),
            actor_login: actor.map(|(l, _)| l.to_owned()),
            actor_type: actor.map(|(_, t)| t.to_owned()),
            assignee_login: Some(assignee.to_owned()),
            created_at: format!("2026-01-01T00:00:{id:02}Z"),
        }
    }

    const HUMAN: Option<(&str, &str)> = Some(("alice", "User"));

    #[test]
    fn newest_human_assignment_is_the_evidence() {
        let events = [
            event(1, "assigned", HUMAN, "bot-worker"),
            event(2, "unassigned", HUMAN, "bot-worker"),
            event(3, "labeled", HUMAN, "bot-worker"),
            event(5, "assigned", Some(("bob", "User")), "Bot-Worker"),
            event(4, "assigned", HUMAN, "someone-else"),
        ];
        assert_eq!(
            assignment_evidence(&events, "bot-worker"),
            Ok(AssignmentEvidence {
                event_id: 5,
                actor: "bob".to_owned(),
                created_at: "2026-01-01T00:00:05Z".to_owned(),
            })
        );
    }

    #[test]
    fn no_assignment_is_an_error() {
        let events = [event(1, "assigned", HUMAN, "other")];
        let err = assignment_evidence(&events, "bot-worker").unwrap_err();
        assert_eq!(
            err.to_string(),
            "no assigned event for bot-worker on this issue"
        );
        assert!(matches!(
            assignment_evidence(&[], "x"),
            Err(EvidenceError::NoAssignment { .. })
        ));
    }

    #[test]
    fn a_later_unassignment_revokes() {
        let events = [
            event(1, "assigned", HUMAN, "bot-worker"),
            event(2, "unassigned", HUMAN, "BOT-WORKER"),
        ];
        let err = assignment_evidence(&events, "bot-worker").unwrap_err();
        assert_eq!(
            err,
            EvidenceError::Revoked {
                login: "bot-worker".to_owned(),
                event_id: 2
            }
        );
        assert_eq!(
            err.to_string(),
            "the assignment of bot-worker was revoked by event 2"
        );
    }

    #[test]
    fn reassignment_after_revocation_counts() {
        let events = [
            event(1, "assigned", HUMAN, "w"),
            event(2, "unassigned", HUMAN, "w"),
            event(3, "assigned", HUMAN, "w"),
        ];
        assert_eq!(assignment_evidence(&events, "w").map(|e| e.event_id), Ok(3));
    }

    #[test]
    fn bot_or_untyped_actors_are_not_human() {
        let bot = [event(1, "assigned", Some(("app[bot]", "Bot")), "w")];
        let err = assignment_evidence(&bot, "w").unwrap_err();
        assert_eq!(
            err.to_string(),
            "the assignment of w (event 1) was made by app[bot] of type Bot, not by a human user"
        );
        let mut untyped = event(1, "assigned", HUMAN, "w");
        untyped.actor_type = None;
        assert!(matches!(
            assignment_evidence(&[untyped], "w"),
            Err(EvidenceError::NotHuman { actor_type, .. }) if actor_type == "unknown"
        ));
        let lower = [event(1, "assigned", Some(("alice", "user")), "w")];
        assert!(matches!(
            assignment_evidence(&lower, "w"),
            Err(EvidenceError::NotHuman { .. })
        ));
        let mut no_actor = event(1, "assigned", HUMAN, "w");
        no_actor.actor_login = None;
        assert!(matches!(
            assignment_evidence(&[no_actor], "w"),
            Err(EvidenceError::NotHuman { actor, .. }) if actor == "unknown"
        ));
    }
}
