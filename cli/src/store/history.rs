//! Heartbeat history: what every heartbeat ref held over the last day, for `--at`.
//!
//! A heartbeat ref is one parentless commit replaced on every beat, so the past of liveness
//! is gone from it. Beside each heartbeat ref this machine sees (its own, and the copies
//! fetched from remotes) it keeps a chain of commits holding the ref's successive trees,
//! under `refs/agent-coord/heartbeat-history/…`: outside the state branch, never pushed, so it
//! never grows the branch or the remote. Each commit's message names the time its chain
//! starts; once a chain reaches back more than two windows it is rewritten to the last window
//! (and the beat just before it, the state at the window's start), so it stays bounded.
//!
//! A machine records its own beats as it writes them and other machines' beats as `sync`
//! fetches them: the history is what this machine's `status` saw, which is what `--at` asks.

use gix::ObjectId;

use super::Store;
use super::StoreError;
use super::HEARTBEAT_PREFIX;

/// Where the history chains live: the heartbeat ref's name below `refs/agent-coord/`.
pub(crate) const HISTORY_PREFIX: &str = "refs/agent-coord/heartbeat-history/";
/// The part of a heartbeat ref name the history ref repeats.
const AGENT_COORD_REFS: &str = "refs/agent-coord/";
/// How far back a chain is kept: a day.
pub(crate) const WINDOW_SECONDS: i64 = 24 * 60 * 60;
/// The trailer naming the time (Unix seconds) the chain's recorded past starts.
const SINCE_TRAILER: &str = "Agent-Coord-History-Since: ";
/// Attempts at moving a history ref another process moved first.
const ATTEMPTS: u32 = 5;

/// The history ref kept for the heartbeat ref `heartbeat_ref`.
pub(crate) fn history_ref(heartbeat_ref: &str) -> String {
    let tail = heartbeat_ref
        .strip_prefix(AGENT_COORD_REFS)
        .unwrap_or(heartbeat_ref);
    format!("{HISTORY_PREFIX}{tail}")
}

/// The heartbeat ref whose history `history_ref` keeps.
fn heartbeat_ref_of(history_ref: &str) -> Option<String> {
    let tail = history_ref.strip_prefix(HISTORY_PREFIX)?;
    let name = format!("{AGENT_COORD_REFS}{tail}");
    (name.starts_with(HEARTBEAT_PREFIX) || name.contains("/heartbeats/")).then_some(name)
}

/// One commit of a chain, as read.
struct Link {
    id: ObjectId,
    tree: ObjectId,
    seconds: i64,
    since: Option<i64>,
    parent: Option<ObjectId>,
}

fn link(store: &Store, id: ObjectId) -> Result<Link, StoreError> {
    let commit = store.repo.find_commit(id).map_err(StoreError::git)?;
    let tree = commit.tree_id().map_err(StoreError::git)?.detach();
    let seconds = commit.time().map_err(StoreError::git)?.seconds;
    let since = commit
        .message_raw_sloppy()
        .to_string()
        .lines()
        .find_map(|l| {
            l.strip_prefix(SINCE_TRAILER)
                .and_then(|v| v.trim().parse().ok())
        });
    let parent = commit.parent_ids().next().map(|p| p.detach());
    Ok(Link {
        id,
        tree,
        seconds,
        since,
        parent,
    })
}

fn message(heartbeat_ref: &str, since: i64) -> String {
    format!("heartbeat history of {heartbeat_ref}\n\n{SINCE_TRAILER}{since}\n")
}

/// Records that `heartbeat_ref` now holds `tree` (a no-op when its history already ends
/// with that tree). The chain is compacted to the last window once it holds two.
pub(crate) fn record(store: &Store, heartbeat_ref: &str, tree: ObjectId) -> Result<(), StoreError> {
    let name = history_ref(heartbeat_ref);
    let now = store.commit_seconds();
    for _ in 0..ATTEMPTS {
        let tip = super::ref_target(&store.repo, &name)?;
        let last = tip.map(|id| link(store, id)).transpose()?;
        let (parent, since) = match &last {
            Some(l) if l.tree == tree => return Ok(()),
            Some(l) => {
                let since = l.since.unwrap_or(l.seconds);
                if now - since > 2 * WINDOW_SECONDS {
                    compact(store, heartbeat_ref, l, now - WINDOW_SECONDS)?
                } else {
                    (Some(l.id), since)
                }
            }
            None => (None, now),
        };
        let id = store.commit(
            &message(heartbeat_ref, since),
            tree,
            &parent.into_iter().collect::<Vec<_>>(),
        )?;
        if store.move_ref(&name, tip, id, "heartbeat history")? {
            return Ok(());
        }
    }
    Err(StoreError::Contention { attempts: ATTEMPTS })
}

/// Rewrites the chain ending at `last` to the beats after `cutoff` and the one before it;
/// returns the new chain's tip and the time it starts.
fn compact(
    store: &Store,
    heartbeat_ref: &str,
    last: &Link,
    cutoff: i64,
) -> Result<(Option<ObjectId>, i64), StoreError> {
    let mut kept = vec![(last.tree, last.seconds)];
    let mut next = last.parent;
    if last.seconds > cutoff {
        while let Some(id) = next {
            let l = link(store, id)?;
            kept.push((l.tree, l.seconds));
            if l.seconds <= cutoff {
                break;
            }
            next = l.parent;
        }
    }
    kept.reverse();
    // The oldest kept beat stands for the state at the cutoff.
    let since = kept.first().map_or(cutoff, |(_, s)| (*s).max(cutoff));
    let mut parent = None;
    for (tree, seconds) in kept {
        let id = commit_at(store, &message(heartbeat_ref, since), tree, parent, seconds)?;
        parent = Some(id);
    }
    Ok((parent, since))
}

/// Writes a commit stamped `seconds` (a rewritten beat keeps its own time).
fn commit_at(
    store: &Store,
    message: &str,
    tree: ObjectId,
    parent: Option<ObjectId>,
    seconds: i64,
) -> Result<ObjectId, StoreError> {
    let signature = gix::actor::Signature {
        name: "agent-coord".into(),
        email: format!("agent-coord@{}", store.machine).into(),
        time: gix::date::Time::new(seconds, 0),
    };
    let mut buf = gix::date::parse::TimeBuf::default();
    let sig = signature.to_ref(&mut buf);
    store
        .repo
        .new_commit_as(sig, sig, message, tree, parent)
        .map(|c| c.id)
        .map_err(StoreError::git)
}

/// What the history knows about one moment.
#[derive(Debug, Default)]
pub(crate) struct Past {
    /// `(heartbeat ref, history commit holding its tree then)` for every ref with a beat
    /// recorded at or before the moment.
    pub(crate) refs: Vec<(String, ObjectId)>,
    /// The heartbeat refs whose recorded past starts after the moment (`(ref, since)`):
    /// their liveness then is unknown.
    pub(crate) unknown: Vec<(String, i64)>,
    /// Whether any history exists at all.
    pub(crate) any: bool,
}

/// Returns what every heartbeat ref held at `seconds`, from the history chains.
pub(crate) fn at(store: &Store, seconds: i64) -> Result<Past, StoreError> {
    let mut past = Past::default();
    for (name, tip) in store.refs_with_prefix(HISTORY_PREFIX)? {
        let Some(heartbeat_ref) = heartbeat_ref_of(&name) else {
            continue;
        };
        past.any = true;
        let mut next = Some(tip);
        let mut since = None;
        let mut found = None;
        while let Some(id) = next {
            let l = link(store, id)?;
            since = since.or(l.since);
            if l.seconds <= seconds {
                found = Some(l.id);
                break;
            }
            next = l.parent;
        }
        let since = since.unwrap_or(i64::MIN);
        match found {
            // Before the chain's start the ref may have held beats no longer kept.
            _ if seconds < since => past.unknown.push((heartbeat_ref, since)),
            Some(id) => past.refs.push((heartbeat_ref, id)),
            None => {}
        }
    }
    past.refs.sort();
    Ok(past)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn history_refs_name_their_heartbeat_refs_both_ways() {
        for hb in [
            "refs/agent-coord/heartbeats/m1",
            "refs/agent-coord/remotes/origin/heartbeats/m2",
        ] {
            let h = history_ref(hb);
            assert!(h.starts_with(HISTORY_PREFIX), "{h}");
            assert_eq!(heartbeat_ref_of(&h).as_deref(), Some(hb));
        }
        assert_eq!(
            heartbeat_ref_of("refs/agent-coord/heartbeat-history/other/x"),
            None
        );
    }

    fn store(dir: &std::path::Path) -> Store {
        super::super::open_for_test(dir)
    }

    fn tree_with(store: &Store, text: &str) -> ObjectId {
        let record: agent_coord_shared::record::Record =
            serde_json::from_str(&format!("{{\"n\": \"{text}\"}}")).expect("record");
        store
            .write_tree(
                ObjectId::empty_tree(store.repo.object_hash()),
                &[("heartbeats/a.json".to_owned(), record)],
                &[],
            )
            .unwrap_or_else(|_| panic!("tree"))
    }

    #[test]
    fn the_past_is_the_last_beat_at_or_before_the_moment_and_compaction_keeps_a_day() {
        let dir = tempfile::tempdir().expect("tempdir");
        let mut s = store(dir.path());
        let hb = "refs/agent-coord/heartbeats/m1";
        let start = 1_800_000_000;
        // A beat every hour for three days, each a different tree.
        let mut trees = Vec::new();
        for hour in 0..72 {
            s.clock = Some(start + hour * 3600);
            let tree = tree_with(&s, &hour.to_string());
            record(&s, hb, tree).expect("record");
            // The same tree again is no new link.
            record(&s, hb, tree).expect("record again");
            trees.push(tree);
        }
        let tree_at = |past: &Past| {
            past.refs.first().map(|(_, id)| {
                s.repo
                    .find_commit(*id)
                    .expect("commit")
                    .tree_id()
                    .expect("tree")
                    .detach()
            })
        };
        let last = start + 71 * 3600;
        // Half an hour after the 70th beat: that beat.
        let past = at(&s, start + 70 * 3600 + 1800).expect("at");
        assert_eq!(tree_at(&past), Some(trees[70]));
        assert!(past.unknown.is_empty());
        // The chain was compacted: three days ago is beyond it, and says so.
        let past = at(&s, start + 3600).expect("at");
        assert!(past.refs.is_empty());
        assert_eq!(past.unknown.len(), 1);
        let since = past.unknown[0].1;
        assert!(
            since > start + 3600 && since >= last - 2 * WINDOW_SECONDS,
            "{since}"
        );
        // Within the last day everything is still there.
        let past = at(&s, last - WINDOW_SECONDS + 1).expect("at");
        assert!(tree_at(&past).is_some());
        // The chain is bounded: at most two windows of hourly beats and one base.
        let mut links = 0;
        let mut next = super::super::ref_target(&s.repo, &history_ref(hb)).expect("ref");
        while let Some(id) = next {
            links += 1;
            next = link(&s, id).expect("link").parent;
        }
        assert!(links <= 49, "{links} links");
        assert!(links >= 24, "{links} links");
    }
}
