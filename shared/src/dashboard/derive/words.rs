//! Word-bounded text matching for the status vocabularies (no regex engine needed).
//!
//! The word lists themselves live in [`crate::rules::vocab`].

use crate::rules::vocab;

/// Reports whether `c` is a regex word character (`[A-Za-z0-9_]`).
pub fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Reports whether `c` delimits QA tokens (`[._\-\s]`).
pub fn is_qa_delim(c: char) -> bool {
    matches!(c, '.' | '_' | '-') || c.is_whitespace()
}

/// Reports whether `needle` occurs in `hay` with a boundary on both sides, where a
/// boundary is the string's edge or a character that is not `inner`.
///
/// With `inner = is_word` this is the regex `\bneedle\b` (for needles that start and end
/// with word characters).
pub fn contains_bounded(hay: &str, needle: &str, inner: fn(char) -> bool) -> bool {
    if needle.is_empty() {
        return false;
    }
    let mut from = 0;
    while let Some(pos) = hay[from..].find(needle) {
        let start = from + pos;
        let end = start + needle.len();
        let before_ok = hay[..start].chars().next_back().is_none_or(|c| !inner(c));
        let after_ok = hay[end..].chars().next().is_none_or(|c| !inner(c));
        if before_ok && after_ok {
            return true;
        }
        from = start + hay[start..].chars().next().map_or(1, char::len_utf8);
    }
    false
}

/// Like [`contains_bounded`] with QA delimiters: `(^|[._\-\s])needle($|[._\-\s])`.
pub fn has_qa_token(hay: &str, needle: &str) -> bool {
    contains_bounded(hay, needle, |c| !is_qa_delim(c))
}

/// `\bword\b` for any of `words`.
pub fn has_any_word(hay: &str, words: &[&str]) -> bool {
    words.iter().any(|w| contains_bounded(hay, w, is_word))
}

/// Lowercases and trims.
pub fn norm(s: &str) -> String {
    s.trim().to_lowercase()
}

/// What a terminal status says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Terminal {
    /// Done, merged, closed, abandoned, … (a real completion).
    Completion,
    /// A claim release: terminal only when nothing is blocking.
    Release,
}

/// Classifies a status as terminal (reference §1.4 `isCurrentTerminalStatus`).
///
/// Anchored at the start: `merged (squash)` and `lane.done` are terminal, `not merged`,
/// `pre-merged` and `unreleased` are not.
pub fn terminal(status: &str) -> Option<Terminal> {
    let s = norm(status);
    if s == vocab::COMPLETION_EXACT {
        return Some(Terminal::Completion);
    }
    let starts_word = |s: &str, w: &str| {
        s.strip_prefix(w)
            .is_some_and(|rest| rest.chars().next().is_none_or(|c| !is_word(c)))
    };
    for legacy in vocab::COMPLETION_LEGACY {
        if starts_word(&s, legacy) {
            return Some(Terminal::Completion);
        }
    }
    let mut body = s.as_str();
    for prefix in vocab::COMPLETION_PREFIXES {
        if let Some(rest) = body.strip_prefix(prefix) {
            let trimmed = rest.trim_start_matches(['.', '_', '-', ' ']);
            if trimmed.len() < rest.len() {
                body = trimmed;
                break;
            }
        }
    }
    if starts_word(body, vocab::RELEASE_WORD) {
        return Some(Terminal::Release);
    }
    vocab::COMPLETION_WORDS
        .iter()
        .any(|w| starts_word(body, w))
        .then_some(Terminal::Completion)
}

fn any_group(text: &str, groups: &[&[&str]]) -> bool {
    groups.iter().any(|g| has_any_word(text, g))
}

/// PAUSED vocabulary (expects lowercase text).
pub fn is_paused(text: &str) -> bool {
    any_group(text, &vocab::PAUSED)
}

/// BLOCKED vocabulary (`blocked_user_input` is one word, so it does not match).
pub fn is_blocked(text: &str) -> bool {
    any_group(text, &vocab::BLOCKED)
}

/// READY vocabulary (`ready_for_qa` is one word, so it does not match).
pub fn is_ready(text: &str) -> bool {
    has_any_word(text, &vocab::READY)
}

/// ACTIVE_LANE vocabulary.
pub fn is_active_lane(text: &str) -> bool {
    has_any_word(text, &vocab::ACTIVE_LANE)
}

/// Waiting-for-the-operator vocabulary.
pub fn is_user_input(text: &str) -> bool {
    any_group(text, &vocab::USER_INPUT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminal_vectors_from_the_reference() {
        for t in [
            "final",
            "merged",
            "merged (squash)",
            "done",
            "done - archived",
            "closed",
            "complete",
            "completed",
            "cancelled",
            "abandoned",
            "superseded",
            "PR merged",
            "task done",
            "auto-merged",
            "state: closed",
            "lane.done",
            "claim.released",
        ] {
            assert!(terminal(t).is_some(), "{t} should be terminal");
        }
        for t in ["released", "released - pending qa"] {
            assert_eq!(terminal(t), Some(Terminal::Release), "{t}");
        }
        for t in [
            "not final",
            "final-review",
            "final review",
            "not merged",
            "pre-merged",
            "almost merged",
            "not done",
            "almost done",
            "not closed",
            "not complete",
            "almost complete",
            "not completed",
            "almost completed",
            "not released",
            "pre-released",
            "unreleased",
            "not cancelled",
            "not abandoned",
            "not superseded",
            "doneness",
        ] {
            assert_eq!(terminal(t), None, "{t} should not be terminal");
        }
    }

    #[test]
    fn vocabularies_respect_word_boundaries() {
        assert!(is_paused("token-limit pause"));
        assert!(is_paused("context window full"));
        assert!(is_paused("paused"));
        assert!(!is_paused("pauses"));
        assert!(is_blocked("blocked on review"));
        assert!(is_blocked("changes requested"));
        assert!(!is_blocked("blocked_user_input"));
        assert!(is_user_input("blocked_user_input"));
        assert!(is_user_input("needs user input"));
        assert!(is_ready("queued"));
        assert!(!is_ready("ready_for_qa"));
        assert!(is_active_lane("in_progress"));
        assert!(!is_active_lane("in_progressive"));
    }

    #[test]
    fn qa_tokens_use_their_own_delimiters() {
        assert!(has_qa_token("qa.validation_failed", "failed"));
        assert!(has_qa_token("qa in_progress", "in_progress"));
        assert!(!has_qa_token("qa.unfailed", "failed"));
        assert!(contains_bounded("a ready b", "ready", is_word));
        assert!(!contains_bounded("already", "ready", is_word));
    }
}
