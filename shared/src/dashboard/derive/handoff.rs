//! The operator's copy-paste commands for one row (reference dashboard §1.13): the resume
//! prompt for unfinished work, and the takeover `claim` command for a dead holder.
//!
//! Every value is checked against a strict character class before it is pasted into a
//! prompt or a shell line: a value that fails becomes `UNKNOWN` (or is left out), so no
//! record can smuggle control characters, quotes or shell syntax into what the operator
//! runs. Values that pass are single-quoted in the command, which is then safe because the
//! class has no quote.

use crate::dashboard::model::DashboardModel;
use crate::dashboard::model::Row;
use crate::dashboard::model::RowState;

/// The agent id the takeover command reads from the operator's shell, failing loudly when
/// it is unset.
pub const AGENT_ID_FROM_ENV: &str = "\"${AGENT_COORD_AGENT_ID:?Set AGENT_COORD_AGENT_ID}\"";

/// The closing line of every resume prompt.
pub const RESUME_CLOSING: &str =
    "Verify current coordination state and custody before edits. Continue in the owning task when available.";

/// `^[A-Za-z0-9][A-Za-z0-9._/:@+-]*$`: a value that may appear in a prompt or command.
fn is_safe_value(v: &str) -> bool {
    let mut chars = v.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || "._/:@+-".contains(c))
}

/// `^[A-Za-z0-9][A-Za-z0-9._-]*$`, one part of `owner/repo`.
fn is_repo_part(v: &str) -> bool {
    let mut chars = v.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
}

fn safe_repo(v: &str) -> Option<&str> {
    let (owner, name) = v.split_once('/')?;
    (is_repo_part(owner) && is_repo_part(name)).then_some(v)
}

fn safe_target(v: &str) -> Option<&str> {
    (!v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())).then_some(v)
}

fn safe(v: Option<&str>) -> Option<&str> {
    v.filter(|v| is_safe_value(v))
}

/// What the commands say about one piece of work; each value is checked on use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Subject<'a> {
    /// `owner/repo`.
    pub repo: &'a str,
    /// The issue or PR number.
    pub target: &'a str,
    /// The chat thread handle.
    pub thread: Option<&'a str>,
    /// The batch.
    pub batch: Option<&'a str>,
    /// The work branch.
    pub branch: Option<&'a str>,
    /// The last phase (heartbeat or lane status).
    pub phase: Option<&'a str>,
}

impl<'a> Subject<'a> {
    /// The subject of an operator row of `model`.
    pub fn of(model: &'a DashboardModel, row: &'a Row) -> Subject<'a> {
        Subject {
            repo: &row.repo,
            target: &row.target,
            thread: row.thread.as_deref(),
            batch: row.batch_id.as_deref(),
            branch: row.branch.as_deref(),
            phase: last_phase(model, row),
        }
    }
}

/// The last phase of a row's work: its holder's heartbeat status while that heartbeat is
/// on this work, else the status of the batch lane the row belongs to.
pub fn last_phase<'a>(model: &'a DashboardModel, row: &Row) -> Option<&'a str> {
    let beat = model
        .machines
        .iter()
        .flat_map(|m| &m.agents)
        .find(|a| Some(&a.id) == row.agent.as_ref() && a.work_row.as_ref() == Some(&row.id))
        .and_then(|a| a.status.as_deref());
    beat.or_else(|| {
        model
            .batches
            .iter()
            .flat_map(|b| &b.lanes)
            .find(|l| l.row_id.as_ref() == Some(&row.id))
            .map(|l| l.status.as_str())
    })
}

/// The resume prompt: `$pr-batch`, which lane, its thread, batch, branch and last phase.
pub fn resume_prompt(s: &Subject<'_>) -> String {
    let route = match (safe_repo(s.repo), safe_target(s.target)) {
        (Some(repo), Some(target)) => format!("{repo}#{target}"),
        _ => "the selected work item".to_owned(),
    };
    let or_unknown = |v: Option<&str>| safe(v).unwrap_or("UNKNOWN").to_owned();
    [
        "$pr-batch".to_owned(),
        format!("Resume the existing lane for {route}."),
        format!("Thread handle: {}", or_unknown(s.thread)),
        format!("Batch: {}", or_unknown(s.batch)),
        format!("Branch: {}", or_unknown(s.branch)),
        format!("Last phase: {}", or_unknown(s.phase)),
        RESUME_CLOSING.to_owned(),
    ]
    .join("\n")
}

/// The takeover command: `agent-coord claim` with the operator's agent id from the
/// environment and every known value single-quoted; placeholders when the repository or
/// target cannot be pasted safely.
pub fn takeover_command(s: &Subject<'_>) -> String {
    let (Some(repo), Some(target)) = (safe_repo(s.repo), safe_target(s.target)) else {
        return format!(
            "agent-coord claim --agent-id {AGENT_ID_FROM_ENV} --repo REPLACE_WITH_OWNER_REPO --target REPLACE_WITH_TARGET"
        );
    };
    let mut parts = vec![
        "agent-coord claim".to_owned(),
        format!("--agent-id {AGENT_ID_FROM_ENV}"),
        format!("--repo '{repo}'"),
        format!("--target '{target}'"),
    ];
    if let Some(b) = safe(s.batch) {
        parts.push(format!("--batch-id '{b}'"));
    }
    if let Some(b) = safe(s.branch) {
        parts.push(format!("--branch '{b}'"));
    }
    parts.join(" ")
}

/// The resume prompt for a row of `model`, `None` once its work is finished.
pub fn resume_for(model: &DashboardModel, row: &Row) -> Option<String> {
    (!row.state.is_terminal()).then(|| resume_prompt(&Subject::of(model, row)))
}

/// The takeover command for a row of `model`, offered only when its holder is dead.
pub fn takeover_for(model: &DashboardModel, row: &Row) -> Option<String> {
    (row.state == RowState::Dead).then(|| takeover_command(&Subject::of(model, row)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dashboard::fixtures;

    fn subject<'a>() -> Subject<'a> {
        Subject {
            repo: "acme/app",
            target: "42",
            thread: Some("codex:thread-9"),
            batch: Some("batch-acme-app-1x"),
            branch: Some("codex/fix-42"),
            phase: Some("implementing"),
        }
    }

    #[test]
    fn resume_prompt_has_the_reference_lines() {
        assert_eq!(
            resume_prompt(&subject()),
            "$pr-batch\nResume the existing lane for acme/app#42.\nThread handle: codex:thread-9\nBatch: batch-acme-app-1x\nBranch: codex/fix-42\nLast phase: implementing\nVerify current coordination state and custody before edits. Continue in the owning task when available."
        );
    }

    #[test]
    fn takeover_quotes_every_value() {
        assert_eq!(
            takeover_command(&subject()),
            "agent-coord claim --agent-id \"${AGENT_COORD_AGENT_ID:?Set AGENT_COORD_AGENT_ID}\" --repo 'acme/app' --target '42' --batch-id 'batch-acme-app-1x' --branch 'codex/fix-42'"
        );
        let bare = Subject {
            batch: None,
            branch: None,
            ..subject()
        };
        assert_eq!(
            takeover_command(&bare),
            "agent-coord claim --agent-id \"${AGENT_COORD_AGENT_ID:?Set AGENT_COORD_AGENT_ID}\" --repo 'acme/app' --target '42'"
        );
    }

    #[test]
    fn awkward_values_never_reach_the_text() {
        for bad in [
            "it's",
            "a b",
            "x\ny",
            "$(rm -rf ~)",
            "`id`",
            "a;b",
            "-flag",
            ".hidden",
            "\u{1b}[31m",
            "",
            "é",
        ] {
            let s = Subject {
                thread: Some(bad),
                batch: Some(bad),
                branch: Some(bad),
                phase: Some(bad),
                ..subject()
            };
            let resume = resume_prompt(&s);
            assert!(resume.contains("Thread handle: UNKNOWN\nBatch: UNKNOWN\nBranch: UNKNOWN\nLast phase: UNKNOWN\n"), "{bad:?}: {resume}");
            let takeover = takeover_command(&s);
            assert!(
                takeover.ends_with("--repo 'acme/app' --target '42'"),
                "{bad:?}: {takeover}"
            );
            let bad_place = Subject {
                repo: bad,
                ..subject()
            };
            assert!(resume_prompt(&bad_place)
                .contains("Resume the existing lane for the selected work item."));
            assert!(takeover_command(&bad_place)
                .contains("--repo REPLACE_WITH_OWNER_REPO --target REPLACE_WITH_TARGET"));
        }
        // Allowed punctuation passes through, quoted.
        let s = Subject {
            branch: Some("user@host:feature/a+b_c.d-e"),
            ..subject()
        };
        assert!(takeover_command(&s).ends_with("--branch 'user@host:feature/a+b_c.d-e'"));
        for (repo, target) in [
            ("acme", "1"),
            ("acme/app/x", "1"),
            ("acme/app", "1a"),
            ("acme/app", ""),
        ] {
            let s = Subject {
                repo,
                target,
                ..subject()
            };
            assert!(
                takeover_command(&s).contains("REPLACE_WITH_OWNER_REPO"),
                "{repo} {target}"
            );
        }
    }

    #[test]
    fn rows_offer_what_their_state_allows() {
        let m = DashboardModel::default();
        let row = |state| Row {
            state,
            thread: Some("t-1".into()),
            ..fixtures::row("acme/app", "7")
        };
        assert!(resume_for(&m, &row(RowState::Done)).is_none());
        let resume = resume_for(&m, &row(RowState::Running)).unwrap();
        assert!(resume.contains("Resume the existing lane for acme/app#7.\nThread handle: t-1\n"));
        assert!(resume.contains("Last phase: UNKNOWN\n"));
        assert!(takeover_for(&m, &row(RowState::Running)).is_none());
        assert!(takeover_for(&m, &row(RowState::Stale)).is_none());
        assert!(takeover_for(&m, &row(RowState::Dead))
            .unwrap()
            .contains("--repo 'acme/app' --target '7'"));
    }

    #[test]
    fn the_last_phase_is_the_holders_heartbeat_else_the_lane() {
        let mut s = fixtures::Records::new();
        s.claim("acme/app", "1", "w1", None)
            .beat("w1", "acme/app", "1", None, "reviewing", 1)
            .put(
                "batches/b1.json",
                serde_json::json!({"batch_id": "b1", "repo": "acme/app",
                    "targets": [{"type": "issue", "target": "2"}],
                    "lanes": [{"name": "two", "owner": "w2", "targets": ["2"], "status": "queued"}]}),
            )
            .event("b1", "e1", "claim.acquired", serde_json::json!({"repo": "acme/app", "target": "1"}), 0);
        let (_, m) = s.model();
        let row = |id: &str| m.rows.iter().find(|r| r.id == id).unwrap();
        assert_eq!(last_phase(&m, row("target:acme/app#1")), Some("reviewing"));
        assert_eq!(last_phase(&m, row("target:acme/app#2")), Some("queued"));
    }
}
