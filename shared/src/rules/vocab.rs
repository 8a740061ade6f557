//! The heartbeat/event status vocabulary and its write-time normalisation.

/// Statuses that mean the agent is still working.
pub const WORKING: [&str; 7] = [
    "in_progress",
    "blocked",
    "blocked_user_input",
    "waiting_on_checks_or_review",
    "external_gate_failing",
    "no_pr_evidence",
    "failed",
];

/// Statuses that mean the agent's lane reached an end.
pub const TERMINAL: [&str; 7] = [
    "done",
    "merged",
    "ready",
    "ready_gates_clean",
    "ready_no_merge_authority",
    "abandoned",
    "superseded",
];

/// Alias spellings and what they fold to.
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

/// Lane statuses that satisfy a dependency (`released` never does).
pub const DEPENDENCY_DONE: [&str; 7] = [
    "done",
    "merged",
    "ready",
    "ready_gates_clean",
    "ready_no_merge_authority",
    "complete",
    "completed",
];

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
    fn released_never_satisfies_a_dependency() {
        assert!(!DEPENDENCY_DONE.contains(&"released"));
        assert!(!DEPENDENCY_DONE.contains(&"abandoned"));
    }
}
