//! Every status word list in one place, each named for the question it answers.
//!
//! Two readers with two references use them. The CLI writes statuses and normalises them
//! to a canonical vocabulary (reference `agent-coord-cli.md` §3.6): those lists are exact
//! canonical spellings. The dashboard reads whatever any tool wrote — heartbeats, claims,
//! lanes, events — and matches words inside free text (reference `dashboard.md` §1.4, §2.1,
//! §3): those lists are words, matched by [`crate::dashboard::derive::words`] with word boundaries.
//! Where the two disagree (is `ready` finished? is `closed`?) the difference is the
//! references' and is kept on purpose; each list says why.

// ---- Write side: the CLI's canonical heartbeat/event vocabulary (cli §3.6) ----

/// Which canonical statuses mean the agent is still working?
pub const WORKING: [&str; 7] = [
    "in_progress",
    "blocked",
    "blocked_user_input",
    "waiting_on_checks_or_review",
    "external_gate_failing",
    "no_pr_evidence",
    "failed",
];

/// Which canonical statuses mean the agent's lane reached an end (write side)?
///
/// `ready*` counts: the agent has handed its lane on, so the CLI's heartbeat is finished
/// (and `gc` may collect it). `closed`/`cancelled` are not canonical heartbeat statuses at
/// all. The dashboard's reading differs on purpose: see [`COMPLETION_WORDS`].
pub const TERMINAL: [&str; 7] = [
    "done",
    "merged",
    "ready",
    "ready_gates_clean",
    "ready_no_merge_authority",
    "abandoned",
    "superseded",
];

/// Which alias spellings fold to which canonical status?
pub const ALIASES: [(&str, &str); 10] = [
    ("complete", "done"),
    ("completed", "done"),
    ("ready_to_merge", "ready"),
    ("ready_handoff", "ready"),
    ("ready_for_coordinator", "ready"),
    ("in_process", "in_progress"),
    ("claimed", "in_progress"),
    ("implementing", "in_progress"),
    ("validating", "in_progress"),
    ("pushing", "in_progress"),
];

/// Which canonical lane statuses satisfy a dependency for the CLI (`released` never does)?
///
/// [`TERMINAL`] minus `abandoned`/`superseded`, plus the legacy `complete`/`completed`.
pub const DEPENDENCY_DONE: [&str; 7] = [
    "done",
    "merged",
    "ready",
    "ready_gates_clean",
    "ready_no_merge_authority",
    "complete",
    "completed",
];

// ---- Read side: the words the dashboard reads statuses with (dashboard §1.4, §2.1, §3) ----

/// Which lane statuses does the dashboard count as complete (a dependency on the lane is
/// satisfied; a lane without a heartbeat is not reported, H9)? Matched exactly, lowercased.
///
/// Narrower than the CLI's [`DEPENDENCY_DONE`]: the dashboard reference names exactly these
/// five, so `ready_gates_clean`/`ready_no_merge_authority` still block on the dashboard.
pub const LANE_COMPLETE: [&str; 5] = ["complete", "completed", "done", "merged", "ready"];

/// Which leading words make a status a completion on the dashboard
/// (`isCurrentTerminalStatus`, after an optional [`COMPLETION_PREFIXES`] prefix)?
///
/// Differs from the CLI's [`TERMINAL`] on purpose: the dashboard reads any tool's text, where
/// `closed` and `cancelled` end the work, while `ready` is still work waiting for its merge
/// (the row shows `ready`, not `done`).
pub const COMPLETION_WORDS: [&str; 8] = [
    "merged",
    "done",
    "closed",
    "complete",
    "completed",
    "cancelled",
    "abandoned",
    "superseded",
];

/// Which status, exactly, is a completion on its own?
pub const COMPLETION_EXACT: &str = "final";

/// Which legacy phrases, at the start of a status, are completions?
pub const COMPLETION_LEGACY: [&str; 4] = ["pr merged", "task done", "auto-merged", "state: closed"];

/// Which record-kind prefixes may precede a completion word (`lane.done`, `claim.released`)?
pub const COMPLETION_PREFIXES: [&str; 4] = ["lane", "claim", "custody", "lifecycle"];

/// Which leading word is a claim release (terminal only when nothing is blocking)?
pub const RELEASE_WORD: &str = "released";

/// `a b` joined by `_`, `-`, a space or nothing, as the reference's `a[_- ]?b`.
macro_rules! phrase {
    ($a:literal, $b:literal) => {
        [
            concat!($a, "_", $b),
            concat!($a, "-", $b),
            concat!($a, " ", $b),
            concat!($a, $b),
        ]
    };
    ($a:literal, $b:literal, $c:literal) => {
        [
            concat!($a, "_", $b, "_", $c),
            concat!($a, "-", $b, "-", $c),
            concat!($a, " ", $b, " ", $c),
            concat!($a, $b, $c),
        ]
    };
}

/// Which words say the work is paused (token or context limits)?
pub const PAUSED: [&[&str]; 5] = [
    &["pause", "paused"],
    &phrase!("token", "limit"),
    &phrase!("token", "limit", "pause"),
    &phrase!("context", "limit"),
    &phrase!("context", "window"),
];

/// Which words say the work is blocked (`blocked_user_input` is one word, so it does not match)?
pub const BLOCKED: [&[&str]; 3] = [
    &["blocked", "blocking", "waiting"],
    &phrase!("needs", "changes"),
    &phrase!("changes", "requested"),
];

/// Which words say the work waits for the operator?
pub const USER_INPUT: [&[&str]; 2] = [
    &phrase!("blocked", "user", "input"),
    &phrase!("needs", "user", "input"),
];

/// Which words say the work is ready to start (`ready_for_qa` is one word, so it does not match)?
pub const READY: [&str; 3] = ["ready", "queued", "pending"];

/// Which words say a lane is being worked on?
pub const ACTIVE_LANE: [&str; 6] = [
    "in_progress",
    "running",
    "coding",
    "working",
    "started",
    "validating",
];

/// Which QA tokens say the latest QA validation failed? (Checked first.)
pub const QA_FAILED: [&str; 6] = [
    "fail",
    "failed",
    "failure",
    "blocked",
    "needs_changes",
    "changes_requested",
];

/// Which QA tokens say the latest QA validation passed?
pub const QA_PASSED: [&str; 7] = [
    "pass",
    "passed",
    "validated",
    "complete",
    "completed",
    "done",
    "ready",
];

/// Which QA tokens say a QA validation is in progress?
pub const QA_IN_PROGRESS: [&str; 5] = ["start", "started", "in_progress", "running", "validating"];

/// Which QA tokens say a QA validation was requested?
pub const QA_REQUESTED: [&str; 4] = ["request", "requested", "queued", "pending"];

/// Which phrases in an event's type or status request a batch stop (substring match)?
pub const STOP_REQUESTED: [&str; 3] = ["stop_requested", "stop requested", "cancel_requested"];

/// Which words in an event's type or status say a batch stopped?
pub const STOPPED: [&str; 3] = ["stopped", "cancelled", "canceled"];

/// Which words in the newest non-QA event of event-only work close it (`.`, `_`, `-` bound)?
pub const EVENT_CLOSES_WORK: [&str; 9] = [
    "complete",
    "completed",
    "done",
    "merged",
    "closed",
    "released",
    "stopped",
    "cancelled",
    "canceled",
];

/// Which substrings make a lane that no row backs `blocked`?
pub const LANE_TEXT_BLOCKED: [&str; 4] = ["block", "waiting", "depends", "needs changes"];

/// Which substrings make a lane that no row backs `stale`?
pub const LANE_TEXT_STUCK: [&str; 2] = ["stuck", "stale"];

/// Which substrings make a lane that no row backs `ready`?
pub const LANE_TEXT_READY: [&str; 3] = ["ready", "queued", "pending"];

/// Which substrings make a lane that no row backs `running`?
pub const LANE_TEXT_RUNNING: [&str; 12] = [
    "running",
    "in progress",
    "in_progress",
    "coding",
    "working",
    "started",
    "validating",
    "pr open",
    "claim",
    "review",
    "implementing",
    "discovery",
];

// ---- Write-time normalisation ----

/// The outcome of normalising a status as given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Normalized {
    /// The value to store as `status`.
    pub status: String,
    /// The original spelling, when it differs from `status` or was not recognised.
    pub status_raw: Option<String>,
    /// Whether the value is outside the vocabulary (stored verbatim, with a warning).
    pub unrecognized: bool,
}

/// Normalises a status: trim, lowercase, `-` → `_`, then fold aliases.
pub fn normalize(raw: &str) -> Normalized {
    let folded = raw.trim().to_lowercase().replace('-', "_");
    let canonical = if WORKING.contains(&folded.as_str()) || TERMINAL.contains(&folded.as_str()) {
        Some(folded.clone())
    } else {
        ALIASES
            .iter()
            .find(|(alias, _)| *alias == folded)
            .map(|(_, to)| (*to).to_owned())
    };
    match canonical {
        Some(status) if status == raw => Normalized {
            status,
            status_raw: None,
            unrecognized: false,
        },
        Some(status) => Normalized {
            status,
            status_raw: Some(raw.to_owned()),
            unrecognized: false,
        },
        None => Normalized {
            status: raw.to_owned(),
            status_raw: Some(raw.to_owned()),
            unrecognized: true,
        },
    }
}

/// Returns the warning printed for a status outside the vocabulary.
pub fn unrecognized_warning(raw: &str) -> String {
    let all: Vec<&str> = WORKING.iter().chain(TERMINAL.iter()).copied().collect();
    format!(
        "warning: status \"{raw}\" is not in the canonical status vocabulary; preserving it \
         verbatim with a status_raw copy. Canonical statuses: {}.",
        all.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalisation_table() {
        let cases: [(&str, &str, Option<&str>, bool); 9] = [
            ("in_progress", "in_progress", None, false),
            ("In-Progress", "in_progress", Some("In-Progress"), false),
            (" done ", "done", Some(" done "), false),
            ("completed", "done", Some("completed"), false),
            ("ready-to-merge", "ready", Some("ready-to-merge"), false),
            ("implementing", "in_progress", Some("implementing"), false),
            ("released", "released", Some("released"), true),
            ("", "", Some(""), true),
            (
                "token_limit_pause",
                "token_limit_pause",
                Some("token_limit_pause"),
                true,
            ),
        ];
        for (raw, status, status_raw, unrecognized) in cases {
            let n = normalize(raw);
            assert_eq!(n.status, status, "{raw}");
            assert_eq!(n.status_raw.as_deref(), status_raw, "{raw}");
            assert_eq!(n.unrecognized, unrecognized, "{raw}");
        }
    }

    #[test]
    fn the_two_readings_differ_where_the_references_do() {
        // Write side: `ready` ends the agent's lane; read side: still work waiting for a merge.
        assert!(TERMINAL.contains(&"ready"));
        assert!(!COMPLETION_WORDS.contains(&"ready"));
        // Read side: `closed`/`cancelled` end work; they are no canonical heartbeat status.
        for w in ["closed", "cancelled"] {
            assert!(COMPLETION_WORDS.contains(&w), "{w}");
            assert!(normalize(w).unrecognized, "{w}");
        }
        // The dashboard's dependency list is a narrower subset of the CLI's.
        assert!(LANE_COMPLETE.iter().all(|s| DEPENDENCY_DONE.contains(s)));
        assert!(!LANE_COMPLETE.contains(&"ready_gates_clean"));
    }

    #[test]
    fn released_never_satisfies_a_dependency() {
        assert!(!DEPENDENCY_DONE.contains(&"released"));
        assert!(!DEPENDENCY_DONE.contains(&"abandoned"));
    }
}
