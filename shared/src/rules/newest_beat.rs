//! Which copy of a heartbeat counts. An agent that moved machines leaves a copy on each
//! machine's heartbeat ref (and a machine's own ref has a copy fetched back from a remote);
//! the CLI's reads and the dashboard pick among them by this one rule.
//!
//! The readable copy with the newest `updated_at` wins; a missing or unparseable time is
//! older than any; on a tie the first copy in read order wins. An unreadable (malformed)
//! copy never wins over a readable one: the heartbeat is unreadable only when every copy
//! is, and then it is reported as the first unreadable copy.

use crate::time::Instant;

/// Returns the copy that counts among `copies` of one heartbeat (all readable), in read
/// order; `None` when there are none.
pub fn newest<T>(
    copies: impl IntoIterator<Item = T>,
    updated_at: impl Fn(&T) -> Option<Instant>,
) -> Option<T> {
    let mut best: Option<(Option<Instant>, T)> = None;
    for copy in copies {
        let at = updated_at(&copy);
        if best.as_ref().is_none_or(|(best_at, _)| at > *best_at) {
            best = Some((at, copy));
        }
    }
    best.map(|(_, copy)| copy)
}

/// Like [`newest`] over copies that may be unreadable: the newest readable copy, else the
/// first unreadable one; `None` when there are no copies.
pub fn newest_readable<T, E>(
    copies: impl IntoIterator<Item = Result<T, E>>,
    updated_at: impl Fn(&T) -> Option<Instant>,
) -> Option<Result<T, E>> {
    let mut first_err = None;
    let readable = copies.into_iter().filter_map(|copy| match copy {
        Ok(copy) => Some(copy),
        Err(e) => {
            first_err.get_or_insert(e);
            None
        }
    });
    match newest(readable, updated_at) {
        Some(copy) => Some(Ok(copy)),
        None => first_err.map(Err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time;

    fn at(s: &str) -> Option<Instant> {
        time::parse(s)
    }

    /// A `(name, updated_at)` copy; `Err(name)` is an unreadable copy.
    type Beat = Result<(&'static str, Option<&'static str>), &'static str>;
    /// The winner's name.
    type Winner = Option<Result<&'static str, &'static str>>;

    fn pick(copies: &[Beat]) -> Winner {
        newest_readable(copies.iter().cloned(), |(_, t)| t.and_then(at))
            .map(|r| r.map(|(name, _)| name))
    }

    #[test]
    fn the_rule_in_a_table() {
        let (old, new) = (Some("2026-01-01T00:00:00Z"), Some("2026-01-02T00:00:00Z"));
        let cases: &[(&[Beat], Winner)] = &[
            (&[], None),
            (&[Ok(("a", old)), Ok(("b", new))], Some(Ok("b"))),
            (&[Ok(("a", new)), Ok(("b", old))], Some(Ok("a"))),
            // Ties: the first in read order.
            (&[Ok(("a", new)), Ok(("b", new))], Some(Ok("a"))),
            // No time, or an unparseable one, is older than any.
            (&[Ok(("a", None)), Ok(("b", old))], Some(Ok("b"))),
            (&[Ok(("a", Some("soon"))), Ok(("b", old))], Some(Ok("b"))),
            (&[Ok(("a", None)), Ok(("b", None))], Some(Ok("a"))),
            // Unreadable copies never win over a readable one.
            (&[Err("x"), Ok(("a", old))], Some(Ok("a"))),
            (&[Ok(("a", None)), Err("x")], Some(Ok("a"))),
            (&[Err("x"), Err("y")], Some(Err("x"))),
        ];
        for (copies, want) in cases {
            assert_eq!(pick(copies), *want, "{copies:?}");
        }
    }
}
