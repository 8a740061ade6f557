//! The one place that decides whether a gix ref edit failed because someone else moved
//! the ref first (retry on the new tip) rather than for any other reason (give up).
//!
//! gix's error types changed twice in 2026 (0.87 → 0.88 → 0.90); gix is pinned in the
//! workspace and only this function needs to follow it.

use gix::refs::file::transaction::prepare::MustNotExist;
use gix::refs::file::transaction::prepare::ReferenceOutOfDate;

/// Reports whether `err` is a compare-and-swap conflict on a ref.
pub(crate) fn is_conflict(err: &gix::Error) -> bool {
    // Lock contention is not a conflict: the writer classifies it by the lock file it finds.
    err.is_conflict()
        || err.downcast_any_ref::<ReferenceOutOfDate>().is_some()
        || err.downcast_any_ref::<MustNotExist>().is_some()
}
