//! The past: `--at <commit|RFC 3339 time>` (status, batch-audit) and the dashboard's
//! `?at=`, and the commits that touched one batch or item (the dashboard's time slider).
//!
//! A time picks the last commit of the state branch's first-parent history at or before it
//! and reads it with the clock at that time; a commit reads that commit with its own time.
//! Heartbeats come from the heartbeat history (`store::history`), which reaches back a day.

use agent_coord_shared::dashboard::model::PastView;
use agent_coord_shared::dashboard::model::Touch;
use agent_coord_shared::dashboard::model::Touches;
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

/// What a command reads: the state and heartbeats then, the clock then, and whether that is
/// the past.
pub(crate) struct Reading<'s> {
    pub(crate) snap: TipSnapshot<'s>,
    pub(crate) clock: Instant,
    pub(crate) past: bool,
}

/// The reading a command's `--at` asks for (`None`: now, at `now`); the moment's notices
/// are added to `notices`.
pub(crate) fn reading<'s>(
    store: &'s Store,
    at: Option<&str>,
    now: Instant,
    notices: &mut Vec<String>,
) -> Result<Reading<'s>, CommandError> {
    let Some(raw) = at else {
        return Ok(Reading {
            snap: store.snapshot()?,
            clock: now,
            past: false,
        });
    };
    let moment = resolve_flag(store, raw)?;
    notices.extend(moment.notices());
    Ok(Reading {
        snap: moment.snapshot(store)?,
        clock: moment.clock,
        past: true,
    })
}

/// [`resolve`] for a command's `--at`: its errors name the flag.
fn resolve_flag(store: &Store, raw: &str) -> Result<Moment, CommandError> {
    resolve(store, raw).map_err(|mut e| {
        e.message = format!("--at {}", e.message);
        e
    })
}

/// Resolves `raw` (an RFC 3339 time, or a commit id or revision) to a moment; an error's
/// message starts with what was asked.
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
                        "{raw}: neither an RFC 3339 time nor a commit of this repository"
                    ))
                })?;
            (id, commit_time(store, id)?)
        }
    };
    let clock = time::from_unix_millis(seconds.saturating_mul(1000))
        .ok_or_else(|| CommandError::usage(format!("{raw}: a time no record can hold")))?;
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
        "{}: the state branch has no commit at or before that time ({since})",
        time::format(when)
    )))
}

impl Moment {
    /// The state and heartbeats as they stood.
    pub(crate) fn snapshot<'s>(&self, store: &'s Store) -> Result<TipSnapshot<'s>, CommandError> {
        TipSnapshot::new(store, Some(self.commit), self.past.refs.clone()).map_err(store_err)
    }

    /// What stderr says about reading the past: `notice: ` and each of [`Moment::caveats`]
    /// after the line naming the moment.
    pub(crate) fn notices(&self) -> Vec<String> {
        let mut out = vec![format!(
            "notice: as of commit {} at {}: the past, read-only",
            self.commit.to_hex_with_len(12),
            time::format(self.clock)
        )];
        out.extend(self.caveats().into_iter().map(|c| format!("notice: {c}")));
        out
    }

    /// What the heartbeat history cannot tell about this moment, a sentence each.
    pub(crate) fn caveats(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.past.any {
            out.push("no heartbeat history on this machine: liveness then is unknown".to_owned());
        }
        for (name, since) in &self.past.unknown {
            let since = time::from_unix_millis(since.saturating_mul(1000))
                .map_or_else(|| since.to_string(), time::format);
            out.push(format!(
                "{name}: heartbeats are kept from {since} only; its liveness then is unknown"
            ));
        }
        out
    }

    /// The heartbeat refs as they stood then: `(ref, commit holding its tree then)`.
    pub(crate) fn heartbeat_refs(&self) -> &[(String, gix::ObjectId)] {
        &self.past.refs
    }

    /// What the dashboard shows of this moment.
    pub(crate) fn view(&self) -> PastView {
        PastView {
            commit: self.commit.to_string(),
            at: time::format(self.clock),
            caveats: self.caveats(),
        }
    }
}

/// Returns the newest `limit` commits of the state branch's first-parent history, among its
/// last `depth`, whose tree changed an entry at any of `paths` (a file or a folder) against
/// their first parent; newest first. `truncated` when older commits were not looked at.
pub(crate) fn touching(
    store: &Store,
    paths: &[String],
    depth: usize,
    limit: usize,
) -> Result<Touches, CommandError> {
    let repo = &store.repo;
    let entry_ids =
        |id: gix::ObjectId| -> Result<(Vec<Option<gix::ObjectId>>, gix::Commit<'_>), CommandError> {
            let commit = repo
                .find_commit(id)
                .map_err(|e| store_err(StoreError::git(e)))?;
            let tree = commit.tree().map_err(|e| store_err(StoreError::git(e)))?;
            let mut ids = Vec::with_capacity(paths.len());
            for path in paths {
                let entry = tree
                    .lookup_entry_by_path(path.as_str())
                    .map_err(|e| store_err(StoreError::git(e)))?;
                ids.push(entry.map(|e| e.object_id()));
            }
            Ok((ids, commit))
        };
    let mut out = Vec::new();
    let Some(tip) = store.tip().map_err(store_err)? else {
        return Ok(Touches::default());
    };
    let (mut ids, mut commit) = entry_ids(tip)?;
    let mut truncated = true;
    for _ in 0..depth {
        if out.len() >= limit {
            break;
        }
        let parent = commit.parent_ids().next().map(|p| p.detach());
        let (parent_ids, parent_commit) = match parent {
            Some(p) => {
                let (i, c) = entry_ids(p)?;
                (i, Some(c))
            }
            None => (vec![None; paths.len()], None),
        };
        if ids != parent_ids {
            let message = commit.message_raw_sloppy().to_string();
            out.push(Touch {
                commit: commit.id.to_string(),
                at: commit
                    .time()
                    .ok()
                    .and_then(|t| time::from_unix_millis(t.seconds.saturating_mul(1000)))
                    .map(time::format)
                    .unwrap_or_default(),
                subject: message.lines().next().unwrap_or_default().to_owned(),
            });
        }
        match parent_commit {
            Some(c) => (ids, commit) = (parent_ids, c),
            None => {
                truncated = false;
                break;
            }
        }
    }
    Ok(Touches {
        commits: out,
        truncated,
    })
}
