//! Deterministic names the coordinator derives instead of storing: task ids, branches,
//! activity ids, the hidden idempotency marker, and the fixed wording of everything it posts
//! on GitHub. A retry computes the same names, so it finds its earlier effects.
//!
//! A task id escapes its repository slug so that it is injective, a safe path segment, a git
//! ref component, and distinct on case-insensitive file systems: `[a-z0-9-]` stay as they are,
//! an uppercase letter becomes `_` and its lowercase, `_` becomes `__`, `.` becomes `_0`, and
//! the escaped owner, repository and issue number are joined by dots.

use crate::ids::RepoSlug;

/// Prefix of every branch the coordinator creates.
pub const BRANCH_PREFIX: &str = "agent-coord/";

const MARKER_OPEN: &str = "<!-- agent-coord:activity=";
const MARKER_CLOSE: &str = " -->";

/// Returns the task id of `repo#issue`, e.g. `octo.hello-world.42` for `octo/hello-world#42`.
pub fn task_id(repo: &RepoSlug, issue: u64) -> String {
    format!("{}.{}.{issue}", escape(repo.owner()), escape(repo.name()))
}

/// Returns the feature branch of a task: `agent-coord/<task_id>`.
pub fn branch(task_id: &str) -> String {
    format!("{BRANCH_PREFIX}{task_id}")
}

/// Returns the id of the `occurrence`-th activity of `kind` in a task, e.g.
/// `octo.app.7.accept.0`; `kind` is escaped like a slug part, so any kind yields a segment.
pub fn activity_id(task_id: &str, kind: &str, occurrence: u32) -> String {
    format!("{task_id}.{}.{occurrence}", escape(kind))
}

/// Returns the batch id of a worker's manifest: `coordinator-<worker>`.
pub fn batch_id(worker: &str) -> String {
    format!("coordinator-{worker}")
}

/// Returns the agent id under which a worker claims and beats: the worker session id itself.
pub fn agent_id(worker: &str) -> String {
    worker.to_owned()
}

/// Returns the hidden marker that ties a GitHub text to its activity:
/// `<!-- agent-coord:activity=<id> -->`.
pub fn marker(activity_id: &str) -> String {
    format!("{MARKER_OPEN}{activity_id}{MARKER_CLOSE}")
}

/// Returns the activity id of the first well-formed marker in `body`, if any.
///
/// A body with a marker was posted by the coordinator (or quotes one of its texts); either way
/// it is never a human reply.
pub fn find_marker(body: &str) -> Option<&str> {
    let mut rest = body;
    while let Some(at) = rest.find(MARKER_OPEN) {
        let tail = &rest[at + MARKER_OPEN.len()..];
        let id_len = tail
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b':' | b'-' | b'.'))
            .count();
        let id = &tail[..id_len];
        if crate::ids::is_segment(id) && tail[id_len..].starts_with(MARKER_CLOSE) {
            return Some(id);
        }
        rest = tail;
    }
    None
}

/// Returns the comment that accepts an assigned issue.
pub fn accept_comment(login: &str, activity_id: &str) -> String {
    format!(
        "Accepted by the agent-coord coordinator as @{login}: work starts now; a draft pull \
         request will follow.\n\n{}",
        marker(activity_id)
    )
}

/// Returns the comment that asks the issue's humans a question on the implementer's behalf.
pub fn question_comment(question: &str, reply_logins: &[String], activity_id: &str) -> String {
    format!(
        "The agent-coord coordinator needs an answer before it can continue:\n\n{}\n\n{}\n\n{}",
        quote(question),
        who_may_reply(reply_logins, "answer"),
        marker(activity_id)
    )
}

/// Returns the comment that reports a blocker; `resume_phase` is set when an authorized reply
/// resumes the task, and `None` when the blocker is final.
pub fn blocker_comment(
    reason: &str,
    resume_phase: Option<&str>,
    reply_logins: &[String],
    activity_id: &str,
) -> String {
    let next = match resume_phase {
        Some(phase) => format!(
            "{} The task resumes at phase `{phase}`.",
            who_may_reply(reply_logins, "resume it")
        ),
        None => "This blocker is final: the coordinator takes no further action on this issue."
            .to_owned(),
    };
    format!(
        "The agent-coord coordinator is blocked:\n\n{}\n\n{next}\n\n{}",
        quote(reason),
        marker(activity_id)
    )
}

/// Returns the comment that reports an operator's cancellation: who and why, and what
/// stays on GitHub (nothing is closed: the pull request, if any, stays open as it is).
pub fn cancelled_comment(reason: &str, pr: Option<u64>, activity_id: &str) -> String {
    let left = match pr {
        Some(n) => format!(
            "Nothing on GitHub was closed: pull request #{n} and its branch stay as they are, for a human to close or take over."
        ),
        None => "Nothing on GitHub was closed, and no pull request was opened.".to_owned(),
    };
    format!(
        "The agent-coord coordinator stopped work on this issue:\n\n{}\n\nIts running lanes were stopped and its claim released; it takes no further action on this issue. {left}\n\n{}",
        quote(reason),
        marker(activity_id)
    )
}

/// Returns the title of the task's pull request.
pub fn pr_title(issue: u64, issue_title: &str) -> String {
    let title: String = issue_title.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("{title} (#{issue})")
}

/// Returns the body of the task's pull request. It refers to the issue without closing it:
/// closing is the human's decision.
pub fn pr_body(issue: u64, summary_en: &str, summary_de: &str, activity_id: &str) -> String {
    format!(
        "Refs #{issue}\n\n{summary_en}\n\n{summary_de}\n\nOpened by the agent-coord coordinator. \
         It does not merge: a human reviews and merges.\n\n{}",
        marker(activity_id)
    )
}

/// Returns the COMMENT review that publishes a PR gate rejection (never a request for
/// changes: a fresh implementer answers it with a new head).
pub fn gate_review_body(gates: &[String], findings: &str, head: &str, activity_id: &str) -> String {
    format!(
        "The agent-coord PR gates ({}) rejected head `{head}`:\n\n{}\n\nA fresh implementer \
         works on these findings; every check and gate runs again on the new head.\n\n{}",
        gates.join(", "),
        quote(findings),
        marker(activity_id)
    )
}

/// Returns the body of the formal approval, which names the exact head it approves.
pub fn approval_body(head: &str, activity_id: &str) -> String {
    format!(
        "Formal approval of head `{head}` after the script-verified checks, the four PR gates, \
         GitHub CI and the trusted readiness attestation on exactly this head. A human merges.\n\n{}",
        marker(activity_id)
    )
}

/// Returns the one Ready evidence comment: the per-head checklist a person reads at a
/// glance, the readiness attestation and the approval.
pub fn ready_comment(
    head: &str,
    checklist: &[(&str, bool)],
    deviation: &str,
    approval_url: &str,
    activity_id: &str,
) -> String {
    let rows: Vec<String> = checklist
        .iter()
        .map(|(item, ok)| format!("- [{}] {item}", if *ok { "x" } else { " " }))
        .collect();
    format!(
        "Ready for a human merge: every gate passed on head `{head}`.\n\n{}\n\nDeviation: \
         {deviation}. Formal approval: {approval_url}\n\nThe coordinator never merges.\n\n{}",
        rows.join("\n"),
        marker(activity_id)
    )
}

/// Returns the acknowledgement that closes out the assignment after a verified human merge.
pub fn ack_comment(pr: u64, merged_by: &str, sha: &str, activity_id: &str) -> String {
    format!(
        "Done: pull request #{pr} was merged by @{merged_by} as `{sha}`. The coordinator's \
         work on this assignment is complete.\n\n{}",
        marker(activity_id)
    )
}

/// Reports whether `name` is a valid git branch name (`git check-ref-format --branch`), and
/// not one that git would read as an option or a revision expression.
pub fn is_valid_branch_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('-')
        && !name.starts_with('/')
        && !name.ends_with('/')
        && !name.ends_with('.')
        && name != "@"
        && !name.contains("..")
        && !name.contains("@{")
        && !name.contains("//")
        && !name
            .chars()
            .any(|c| c.is_ascii_control() || " ~^:?*[\\".contains(c))
        && name
            .split('/')
            .all(|part| !part.starts_with('.') && !part.ends_with(".lock"))
}

fn escape(part: &str) -> String {
    if part.is_empty() {
        // Never produced for a slug part; keeps an empty activity kind a non-empty segment.
        return "_1".to_owned();
    }
    let mut out = String::with_capacity(part.len() + 4);
    for c in part.chars() {
        match c {
            'a'..='z' | '0'..='9' | '-' => out.push(c),
            'A'..='Z' => {
                out.push('_');
                out.push(c.to_ascii_lowercase());
            }
            '_' => out.push_str("__"),
            '.' => out.push_str("_0"),
            // Never in a slug part; other kinds become their code point.
            other => out.push_str(&format!("_2{:x}-", u32::from(other))),
        }
    }
    out
}

fn quote(text: &str) -> String {
    text.trim()
        .lines()
        .map(|line| format!("> {line}").trim_end().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

fn who_may_reply(reply_logins: &[String], verb: &str) -> String {
    if reply_logins.is_empty() {
        return format!("No login is configured to {verb}; an operator must add one.");
    }
    let logins = reply_logins
        .iter()
        .map(|login| format!("@{login}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!("Reply on this issue to {verb} (authorized: {logins}).")
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::ids::is_segment;

    fn slug(s: &str) -> RepoSlug {
        s.parse().unwrap()
    }

    fn unescape(part: &str) -> String {
        let mut out = String::new();
        let mut chars = part.chars();
        while let Some(c) = chars.next() {
            if c != '_' {
                out.push(c);
                continue;
            }
            match chars.next().unwrap() {
                '_' => out.push('_'),
                '0' => out.push('.'),
                lower => out.push(lower.to_ascii_uppercase()),
            }
        }
        out
    }

    #[test]
    fn task_ids_escape_dots_case_and_underscores() {
        assert_eq!(
            task_id(&slug("octo/hello-world"), 42),
            "octo.hello-world.42"
        );
        assert_eq!(task_id(&slug("Octo/my.repo"), 7), "_octo.my_0repo.7");
        assert_eq!(task_id(&slug("a_b/.github"), 1), "a__b._0github.1");
        // The dot-joined scheme would collide here; the escaped one does not.
        assert_ne!(task_id(&slug("a/b.c"), 1), task_id(&slug("a.b/c"), 1));
    }

    #[test]
    fn branches_are_valid_ref_names() {
        let id = task_id(&slug("Octo/.x..y_"), 3);
        assert_eq!(branch(&id), "agent-coord/_octo._0x_0_0y__.3");
        assert!(is_valid_branch_name(&branch(&id)));
    }

    #[test]
    fn branch_name_rules() {
        for good in ["develop", "main", "release/1.2", "feature/a-b_c"] {
            assert!(is_valid_branch_name(good), "{good}");
        }
        for bad in [
            "",
            "-rf",
            "/x",
            "x/",
            "x.",
            "@",
            "a..b",
            "a@{1}",
            "a//b",
            "a b",
            "a~1",
            "a^",
            "a:b",
            "a?",
            "a*",
            "a[",
            "a\\b",
            ".hidden",
            "x/.y",
            "x.lock",
            "a/b.lock/c",
            "a\tb",
        ] {
            assert!(!is_valid_branch_name(bad), "{bad:?}");
        }
    }

    #[test]
    fn activity_ids_are_segments_for_any_kind() {
        assert_eq!(activity_id("o.r.1", "accept", 0), "o.r.1.accept.0");
        assert_eq!(
            activity_id("o.r.1", "pr_gate.Codex", 2),
            "o.r.1.pr__gate_0_codex.2"
        );
        for kind in ["", "a b", "ä/..", "x:y"] {
            assert!(is_segment(&activity_id("o.r.1", kind, 1)), "{kind:?}");
        }
    }

    #[test]
    fn worker_names() {
        assert_eq!(batch_id("w1"), "coordinator-w1");
        assert_eq!(agent_id("w1"), "w1");
    }

    #[test]
    fn markers_round_trip_and_reject_lookalikes() {
        let id = "o.r.1.accept.0";
        assert_eq!(marker(id), "<!-- agent-coord:activity=o.r.1.accept.0 -->");
        assert_eq!(find_marker(&format!("text\n\n{}", marker(id))), Some(id));
        assert_eq!(find_marker("no marker"), None);
        assert_eq!(find_marker("<!-- agent-coord:activity=a/b -->"), None);
        assert_eq!(find_marker("<!-- agent-coord:activity=.. -->"), None);
        assert_eq!(find_marker("<!-- agent-coord:activity=x"), None);
        assert_eq!(
            find_marker("<!-- agent-coord:activity=bad id --> <!-- agent-coord:activity=ok -->"),
            Some("ok")
        );
    }

    #[test]
    fn accept_comment_wording() {
        insta::assert_snapshot!(accept_comment("bot-worker", "o.r.1.accept.0"), @r"
        Accepted by the agent-coord coordinator as @bot-worker: work starts now; a draft pull request will follow.

        <!-- agent-coord:activity=o.r.1.accept.0 -->
        ");
    }

    #[test]
    fn question_comment_wording() {
        let logins = vec!["Alice".to_owned(), "bob".to_owned()];
        insta::assert_snapshot!(question_comment("Which API?\nv1 or v2?", &logins, "o.r.1.question.0"), @r"
        The agent-coord coordinator needs an answer before it can continue:

        > Which API?
        > v1 or v2?

        Reply on this issue to answer (authorized: @Alice, @bob).

        <!-- agent-coord:activity=o.r.1.question.0 -->
        ");
    }

    #[test]
    fn blocker_comment_wording() {
        let logins = vec!["Alice".to_owned()];
        insta::assert_snapshot!(blocker_comment("ci needs approval.", Some("ci"), &logins, "o.r.1.blocker.0"), @r"
        The agent-coord coordinator is blocked:

        > ci needs approval.

        Reply on this issue to resume it (authorized: @Alice). The task resumes at phase `ci`.

        <!-- agent-coord:activity=o.r.1.blocker.0 -->
        ");
        insta::assert_snapshot!(blocker_comment("pull request closed unmerged.", None, &logins, "o.r.1.blocker.1"), @r"
        The agent-coord coordinator is blocked:

        > pull request closed unmerged.

        This blocker is final: the coordinator takes no further action on this issue.

        <!-- agent-coord:activity=o.r.1.blocker.1 -->
        ");
        insta::assert_snapshot!(blocker_comment("x.", Some("implement"), &[], "a"), @r"
        The agent-coord coordinator is blocked:

        > x.

        No login is configured to resume it; an operator must add one. The task resumes at phase `implement`.

        <!-- agent-coord:activity=a -->
        ");
    }

    #[test]
    fn pull_request_wording() {
        assert_eq!(pr_title(42, "  Fix the\nparser "), "Fix the parser (#42)");
        insta::assert_snapshot!(pr_body(42, "Fixes the parser.", "Repariert den Parser.", "o.r.42.pr.0"), @r"
        Refs #42

        Fixes the parser.

        Repariert den Parser.

        Opened by the agent-coord coordinator. It does not merge: a human reviews and merges.

        <!-- agent-coord:activity=o.r.42.pr.0 -->
        ");
    }

    #[test]
    fn every_posted_text_carries_its_marker() {
        let texts = [
            accept_comment("l", "id"),
            question_comment("q", &[], "id"),
            blocker_comment("r", None, &[], "id"),
            pr_body(1, "a.", "b.", "id"),
        ];
        for text in texts {
            assert_eq!(find_marker(&text), Some("id"), "{text}");
        }
    }

    proptest! {
        #[test]
        fn task_id_is_an_injective_safe_segment(
            owner in "[A-Za-z0-9_.-]{1,8}",
            name in "[A-Za-z0-9_.-]{1,8}",
            issue in 0u64..1000,
        ) {
            prop_assume!(owner != "." && owner != ".." && name != "." && name != "..");
            prop_assume!(!name.eq_ignore_ascii_case(".git") && !owner.eq_ignore_ascii_case(".git"));
            let id = task_id(&slug(&format!("{owner}/{name}")), issue);
            prop_assert!(is_segment(&id), "{}", id);
            prop_assert!(!id.contains(':'));
            prop_assert!(!id.bytes().any(|b| b.is_ascii_uppercase()));
            prop_assert!(is_valid_branch_name(&branch(&id)), "{}", id);
            // Decoding recovers the input, so no two inputs share an id.
            let parts: Vec<&str> = id.split('.').collect();
            prop_assert_eq!(parts.len(), 3);
            prop_assert_eq!(unescape(parts[0]), owner);
            prop_assert_eq!(unescape(parts[1]), name);
            prop_assert_eq!(parts[2].parse::<u64>().unwrap(), issue);
        }

        #[test]
        fn distinct_slugs_give_distinct_ids(
            a in "[A-Za-z0-9_.-]{1,4}/[A-Za-z0-9_.-]{1,4}",
            b in "[A-Za-z0-9_.-]{1,4}/[A-Za-z0-9_.-]{1,4}",
            i in 0u64..3,
            j in 0u64..3,
        ) {
            let (Ok(sa), Ok(sb)) = (a.parse::<RepoSlug>(), b.parse::<RepoSlug>()) else {
                return Ok(());
            };
            prop_assert_eq!(task_id(&sa, i) == task_id(&sb, j), a == b && i == j);
        }

        #[test]
        fn markers_are_found_in_any_surrounding_text(
            before in "\\PC{0,30}",
            kind in "[a-z_.]{0,10}",
            after in "\\PC{0,30}",
        ) {
            let id = activity_id("o.r.1", &kind, 3);
            let body = format!("{before}{}{after}", marker(&id));
            prop_assume!(!before.contains("<!--"));
            prop_assert_eq!(find_marker(&body), Some(id.as_str()));
        }
    }

    #[test]
    fn coordinator_ii_texts_carry_their_marker_and_head() {
        let head = "a".repeat(40);
        let body = gate_review_body(
            &["grok_logic".into()],
            "off by one",
            &head,
            "t-gate_review-1",
        );
        assert_eq!(find_marker(&body), Some("t-gate_review-1"));
        assert!(
            body.contains(&head) && body.contains("> off by one"),
            "{body}"
        );
        assert!(approval_body(&head, "t-approve-1").contains(&head));
        let c = ready_comment(
            &head,
            &[("checks", true), ("ci", false)],
            "none declared",
            "u",
            "t-ready_comment-1",
        );
        assert!(c.contains("- [x] checks\n- [ ] ci"), "{c}");
        assert_eq!(find_marker(&c), Some("t-ready_comment-1"));
        let a = ack_comment(3, "alice", &head, "t-ack-1");
        assert!(a.contains("#3") && a.contains("@alice"));
    }
}
