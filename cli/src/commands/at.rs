//! `--at <commit|RFC 3339 time>`: the state as it stood then (status, batch-audit).
//!
//! A time picks the last commit of the state branch's first-parent history at or before it
//! and reads it with the clock at that time; a commit reads that commit with its own time.
//! Heartbeats come from the heartbeat history (`store::history`), which reaches back a day.

use agent_coord_shared::time;
use agent_coord_shared::time::Instant;

use crate::command_error::CommandError;
use crate::store::history;
use crate::store::Store;
use crate::store::StoreError;
use crate::store::TipSnapshot;

/// A moment of the past, resolved.
pub(crate) struct Moment {
    /// The state branch commit that stood then.
    pub(crate) commit: gix::ObjectId,
    /// The clock the past is read with.
    pub(crate) clock: Instant,
    /// The heartbeat refs as they stood then.
    past: history::Past,
}

fn store_err(e: StoreError) -> CommandError {
    CommandError::operational(format!("cannot read the state's history: {e}"))
}

fn commit_time(store: &Store, id: gix::ObjectId) -> Result<i64, CommandError> {
    let commit = store
        .repo
        .find_commit(id)
        .map_err(|e| store_err(StoreError::git(e)))?;
    Ok(commit
        .time()
        .map_err(|e| store_err(StoreError::git(e)))?
        .seconds)
}

/// Resolves `raw` (an RFC 3339 time, or a commit id or revision) to a moment.
pub(crate) fn resolve(store: &Store, raw: &str) -> Result<Moment, CommandError> {
    let (commit, seconds) = match time::parse(raw) {
        Some(when) => (at_or_before(store, when)?, when.timestamp()),
        None => {
            let id = store
                .repo
                .rev_parse_single(raw)
                .ok()
                .and_then(|id| id.object().ok()?.peel_to_commit().ok())
                .map(|c| c.id)
                .ok_or_else(|| {
                    CommandError::usage(format!(
                        "--at {raw}: neither an RFC 3339 time nor a commit of this repository"
                    ))
                })?;
            (id, commit_time(store, id)?)
        }
    };
    let clock = time::from_unix_millis(seconds.saturating_mul(1000))
        .ok_or_else(|| CommandError::usage(format!("--at {raw}: a time no record can hold")))?;
    let past = history::at(store, seconds).map_err(store_err)?;
    Ok(Moment {
        commit,
        clock,
        past,
    })
}

/// The last commit of the state branch's first-parent history at or before `when`.
fn at_or_before(store: &Store, when: Instant) -> Result<gix::ObjectId, CommandError> {
    let mut next = store.tip().map_err(store_err)?;
    let mut first = None;
    while let Some(id) = next {
        let seconds = commit_time(store, id)?;
        if seconds <= when.timestamp() {
            return Ok(id);
        }
        first = Some(seconds);
        next = store
            .repo
            .find_commit(id)
            .map_err(|e| store_err(StoreError::git(e)))?
            .parent_ids()
            .next()
            .map(|p| p.detach());
    }
    let since = first
        .and_then(|s| time::from_unix_millis(s * 1000))
        .map_or_else(
            || "it has no commits".to_owned(),
            |t| format!("its first commit is at {}", time::format(t)),
        );
    Err(CommandError::usage(format!(
        "--at {}: the state branch has no commit at or before that time ({since})",
        time::format(when)
    )))
}

impl Moment {
    /// The state and heartbeats as they stood.
    pub(crate) fn snapshot<'s>(&self, store: &'s Store) -> Result<TipSnapshot<'s>, CommandError> {
        TipSnapshot::new(store, Some(self.commit), self.past.refs.clone()).map_err(store_err)
    }

    /// What stderr says about reading the past.
    pub(crate) fn notices(&self) -> Vec<String> {
        let mut out = vec![format!(
            "notice: as of commit {} at {}: the past, read-only",
            self.commit.to_hex_with_len(12),
            time::format(self.clock)
        )];
        if !self.past.any {
            out.push(
                "notice: no heartbeat history on this machine: liveness then is unknown".to_owned(),
            );
        }
        for (name, since) in &self.past.unknown {
            let since = time::from_unix_millis(since.saturating_mul(1000))
                .map_or_else(|| since.to_string(), time::format);
            out.push(format!(
                "notice: {name}: heartbeats are kept from {since} only; its liveness then is unknown"
            ));
        }
        out
    }
}
