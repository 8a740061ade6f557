//! Reply selection: which issue comment, if any, is the authorized human reply that resumes a
//! task waiting at a question or blocker checkpoint — and why every other comment after the
//! checkpoint does not count. The cli fills [`IssueComment`] from GitHub's JSON.

use serde::Deserialize;
use serde::Serialize;

use super::naming::find_marker;

/// One issue comment, as GitHub lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssueComment {
    /// The comment id; ids grow with creation time.
    pub id: u64,
    /// The author's login.
    pub author: String,
    /// The author's account type (`User`, `Bot`, `Organization`, …).
    pub author_type: String,
    /// The comment text.
    pub body: String,
    /// When the comment was created (RFC 3339, as GitHub reports it).
    pub created_at: String,
}

/// Why a comment after the checkpoint is not a reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum IgnoreReason {
    /// The comment carries the coordinator's own marker.
    OwnMarker {
        /// The activity id in the marker.
        activity_id: String,
    },
    /// The author is not a human account.
    NotAUser {
        /// The account type GitHub reported.
        author_type: String,
    },
    /// The author is not among the worker's `reply_logins`.
    Unauthorized,
}

impl std::fmt::Display for IgnoreReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IgnoreReason::OwnMarker { .. } => f.write_str("the coordinator's own comment"),
            IgnoreReason::NotAUser { author_type } => {
                write!(f, "written by a {author_type} account, not a human")
            }
            IgnoreReason::Unauthorized => f.write_str("not among the worker's reply_logins"),
        }
    }
}

/// A comment after the checkpoint that does not count, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IgnoredComment {
    /// The comment id.
    pub id: u64,
    /// The author's login.
    pub author: String,
    /// Why it does not count.
    pub why: IgnoreReason,
}

/// What [`scan_replies`] found after a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ReplyScan {
    /// The first authorized reply after the checkpoint, if any.
    pub reply: Option<IssueComment>,
    /// Every other comment after the checkpoint that does not count, oldest first.
    pub ignored: Vec<IgnoredComment>,
}

/// Returns the first comment with an id above `after_comment_id` written by a human account
/// (`author_type` exactly `User`) whose login is in `reply_logins` (case-insensitively) and
/// whose body carries no coordinator marker, plus why each other comment after the checkpoint
/// was ignored.
pub fn scan_replies(
    comments: &[IssueComment],
    reply_logins: &[String],
    after_comment_id: u64,
) -> ReplyScan {
    let mut after: Vec<&IssueComment> = comments
        .iter()
        .filter(|c| c.id > after_comment_id)
        .collect();
    after.sort_by_key(|c| c.id);
    let mut scan = ReplyScan::default();
    for comment in after {
        match why_ignored(comment, reply_logins) {
            Some(why) => scan.ignored.push(IgnoredComment {
                id: comment.id,
                author: comment.author.clone(),
                why,
            }),
            None if scan.reply.is_none() => scan.reply = Some(comment.clone()),
            None => {}
        }
    }
    scan
}

fn why_ignored(comment: &IssueComment, reply_logins: &[String]) -> Option<IgnoreReason> {
    if let Some(id) = find_marker(&comment.body) {
        return Some(IgnoreReason::OwnMarker {
            activity_id: id.to_owned(),
        });
    }
    if comment.author_type != "User" {
        return Some(IgnoreReason::NotAUser {
            author_type: comment.author_type.clone(),
        });
    }
    if !reply_logins
        .iter()
        .any(|login| login.eq_ignore_ascii_case(&comment.author))
    {
        return Some(IgnoreReason::Unauthorized);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::naming::marker;

    fn comment(id: u64, author: &str, author_type: &str, body: &str) -> IssueComment {
        IssueComment {
            id,
            author: author.to_owned(),
            author_type: author_type.to_owned(),
            body: body.to_owned(),
            created_at: format!("2026-01-01T00:00:{id:02}Z"),
        }
    }

    fn logins() -> Vec<String> {
        vec!["Alice".to_owned()]
    }

    #[test]
    fn first_authorized_reply_after_the_checkpoint_wins() {
        let comments = [
            comment(1, "alice", "User", "before the checkpoint"),
            comment(5, "ALICE", "User", "second"),
            comment(3, "alice", "User", "first"),
        ];
        let scan = scan_replies(&comments, &logins(), 2);
        assert_eq!(scan.reply.map(|c| c.body), Some("first".to_owned()));
        assert!(scan.ignored.is_empty());
    }

    #[test]
    fn the_checkpoint_itself_is_not_after_it() {
        let comments = [comment(2, "alice", "User", "at the checkpoint")];
        assert_eq!(scan_replies(&comments, &logins(), 2), ReplyScan::default());
    }

    #[test]
    fn unauthorized_bot_and_own_comments_are_ignored_with_reasons() {
        let own = format!("question\n{}", marker("o.r.1.question.0"));
        let comments = [
            comment(3, "mallory", "User", "please do X"),
            comment(4, "alice", "Bot", "looks like alice"),
            comment(5, "alice", "User", &own),
            comment(6, "alice", "Organization", "org"),
            comment(7, "bot-worker", "User", &own),
        ];
        let scan = scan_replies(&comments, &logins(), 2);
        assert_eq!(scan.reply, None);
        let why: Vec<_> = scan.ignored.iter().map(|i| (i.id, i.why.clone())).collect();
        let own_marker = IgnoreReason::OwnMarker {
            activity_id: "o.r.1.question.0".to_owned(),
        };
        assert_eq!(
            why,
            [
                (3, IgnoreReason::Unauthorized),
                (
                    4,
                    IgnoreReason::NotAUser {
                        author_type: "Bot".to_owned()
                    }
                ),
                (5, own_marker.clone()),
                (
                    6,
                    IgnoreReason::NotAUser {
                        author_type: "Organization".to_owned()
                    }
                ),
                (7, own_marker),
            ]
        );
    }

    #[test]
    fn ignored_comments_after_the_reply_are_still_listed() {
        let comments = [
            comment(3, "alice", "User", "go"),
            comment(4, "mallory", "User", "no, do Y"),
        ];
        let scan = scan_replies(&comments, &logins(), 0);
        assert_eq!(scan.reply.map(|c| c.id), Some(3));
        assert_eq!(scan.ignored.len(), 1);
    }

    #[test]
    fn no_reply_logins_means_no_reply() {
        let comments = [comment(3, "alice", "User", "go")];
        let scan = scan_replies(&comments, &[], 0);
        assert_eq!(scan.reply, None);
        assert_eq!(scan.ignored[0].why, IgnoreReason::Unauthorized);
    }
}
