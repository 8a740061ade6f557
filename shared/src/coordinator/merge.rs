//! Step 10's verdict on a pull request: done only after a merge whose actor type is exactly
//! `User`, with the merge SHA, the time and the expected base; a Ready pull request closed
//! unmerged, or merged by anything but a person, ends the task for good.

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
}

/// The verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MergeVerdict {
    /// Still open: keep observing.
    Open,
    /// Merged, but GitHub has not filled in the merge commit or time yet: look again.
    Settling(String),
    /// A verified human merge.
    Human(MergeRecord),
    /// Closed without a merge, merged by a non-person, or merged elsewhere: terminal.
    Refused(String),
}

/// Judges `pull` for a task whose base is `base`.
pub fn verdict(pull: &PullEnd, base: &str) -> MergeVerdict {
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
    match pull.merged_by_type.as_deref() {
        Some("User") if !who.is_empty() => {}
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
    if pull.base != base {
        return MergeVerdict::Refused(format!(
            "the pull request merged into {}, not the pinned base {base}",
            pull.base
        ));
    }
    match (&pull.merge_commit_sha, &pull.merged_at) {
        (Some(sha), Some(at)) if !sha.is_empty() && !at.is_empty() => {
            MergeVerdict::Human(MergeRecord {
                sha: sha.clone(),
                merged_at: at.clone(),
                merged_by: who,
                base: pull.base.clone(),
            })
        }
        _ => MergeVerdict::Settling("merged, but GitHub shows no merge commit or time yet".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn merged(kind: Option<&str>) -> PullEnd {
        PullEnd {
            state: "closed".into(),
            merged: true,
            merged_at: Some("2026-11-30T10:00:00Z".into()),
            merged_by: Some("alice".into()),
            merged_by_type: kind.map(str::to_owned),
            merge_commit_sha: Some("c".repeat(40)),
            base: "main".into(),
        }
    }

    #[test]
    fn only_a_user_merge_with_sha_time_and_base_is_done() {
        match verdict(&merged(Some("User")), "main") {
            MergeVerdict::Human(r) => {
                assert_eq!(r.merged_by, "alice");
                assert_eq!(r.sha, "c".repeat(40));
            }
            v => panic!("{v:?}"),
        }
        assert!(matches!(
            verdict(&merged(Some("Bot")), "main"),
            MergeVerdict::Refused(m) if m.contains("type Bot")
        ));
        assert!(matches!(
            verdict(&merged(None), "main"),
            MergeVerdict::Refused(m) if m.contains("unknown type")
        ));
        assert!(matches!(
            verdict(&merged(Some("User")), "develop"),
            MergeVerdict::Refused(m) if m.contains("not the pinned base develop")
        ));
        let mut no_sha = merged(Some("User"));
        no_sha.merge_commit_sha = None;
        assert!(matches!(
            verdict(&no_sha, "main"),
            MergeVerdict::Settling(_)
        ));
    }

    #[test]
    fn open_waits_and_closed_unmerged_is_terminal() {
        let open = PullEnd {
            state: "open".into(),
            base: "main".into(),
            ..PullEnd::default()
        };
        assert_eq!(verdict(&open, "main"), MergeVerdict::Open);
        let closed = PullEnd {
            state: "closed".into(),
            ..open
        };
        assert!(matches!(
            verdict(&closed, "main"),
            MergeVerdict::Refused(m) if m.contains("closed without a merge")
        ));
    }
}
