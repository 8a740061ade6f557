//! The heartbeats that count, chosen among every machine's heartbeat ref for the model
//! cache — again only for the paths whose blob moved when a ref was renewed in place.
//!
//! Each heartbeat path may have a copy on several machines' refs: the shared rule picks
//! the one that counts, among distinct blobs in blob-id order (as the CLI does). A live
//! fleet renews heartbeats every few seconds, each a new commit on one ref whose folder
//! lists the same paths with one blob changed; choosing again among thousands of paths
//! for that one was most of such a read's cost.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::sync::Arc;

use agent_coord_shared::dashboard::inputs::records::Parsed;
use agent_coord_shared::rules::newest_beat;
use gix::ObjectId;

use crate::store::tree;
use crate::store::tree::Parse;
use crate::store::tree::Roots;
use crate::store::tree::TreeCache;
use crate::store::StoreError;

/// The heartbeats that counted at one read, and what they were chosen from.
pub(crate) struct Beats {
    /// The heartbeat refs read (name and commit, sorted).
    tips: Vec<(String, ObjectId)>,
    /// What each ref (in `tips` order) listed, in tree order.
    listed: Vec<Vec<tree::Parsed<Parsed>>>,
    /// Every readable-or-malformed copy of each path: (blob id, parsed), one per ref.
    copies: BTreeMap<Arc<str>, Vec<(ObjectId, Parsed)>>,
    /// The copy that counts for each path.
    winners: BTreeMap<Arc<str>, Parsed>,
    /// `winners`' values, in path order.
    chosen: Arc<Vec<Parsed>>,
    /// The heartbeat folders listed (kept in the tree cache while these refs are current).
    pub(crate) roots: Roots<Parsed>,
}

impl Beats {
    /// The heartbeats chosen at `tips`, when these are the refs this was read at.
    pub(crate) fn at(&self, tips: &[(String, ObjectId)]) -> Option<Arc<Vec<Parsed>>> {
        (self.tips == tips).then(|| self.chosen.clone())
    }

    /// Reads the heartbeat refs `tips` through `trees` and chooses the copy that counts for
    /// each path: from `prev` (read at earlier tips) when the same refs list the same paths
    /// (only the paths whose blob moved are chosen again), else from scratch.
    pub(crate) fn read(
        prev: Option<Beats>,
        trees: &mut TreeCache<Parsed>,
        repo: &gix::Repository,
        tips: &[(String, ObjectId)],
        parse: Parse<'_, Parsed>,
    ) -> Result<Beats, StoreError> {
        let mut fresh: Vec<Vec<tree::Parsed<Parsed>>> = Vec::with_capacity(tips.len());
        for (_, commit) in tips {
            let mut copies = Vec::new();
            // A heartbeat ref that is not a commit is skipped, as the CLI's reads do.
            if let Ok(root) = tree::of_commit(repo, *commit) {
                trees
                    .folders(repo, root, &["heartbeats"], parse, &mut |p| {
                        copies.push(p.clone())
                    })
                    .map_err(StoreError::git)?;
            }
            fresh.push(copies);
        }
        let roots = trees.take_roots();
        let renewed = prev.and_then(|p| p.renewed(tips, &fresh));
        let (copies, winners) = renewed.unwrap_or_else(|| chosen_afresh(&fresh));
        Ok(Beats {
            tips: tips.to_vec(),
            listed: fresh,
            chosen: Arc::new(winners.values().cloned().collect()),
            copies,
            winners,
            roots,
        })
    }

    /// The copies and winners at `tips` (listing `fresh`), updated from these when the
    /// same refs list the same paths in the same order; `None` otherwise.
    #[allow(clippy::type_complexity)]
    fn renewed(
        self,
        tips: &[(String, ObjectId)],
        fresh: &[Vec<tree::Parsed<Parsed>>],
    ) -> Option<(
        BTreeMap<Arc<str>, Vec<(ObjectId, Parsed)>>,
        BTreeMap<Arc<str>, Parsed>,
    )> {
        let same_refs =
            self.tips.len() == tips.len() && self.tips.iter().zip(tips).all(|(a, b)| a.0 == b.0);
        if !same_refs {
            return None;
        }
        let Beats {
            mut copies,
            mut winners,
            listed,
            ..
        } = self;
        let mut changed: BTreeSet<Arc<str>> = BTreeSet::new();
        for (old, new) in listed.iter().zip(fresh) {
            if old.len() != new.len() {
                return None;
            }
            for ((path, was, _), (new_path, id, parsed)) in old.iter().zip(new) {
                if path != new_path {
                    return None;
                }
                if was == id {
                    continue;
                }
                if matches!(parsed, Parsed::Ignored) {
                    return None;
                }
                let slot = copies
                    .get_mut(path)?
                    .iter_mut()
                    .find(|(copy, _)| copy == was)?;
                *slot = (*id, parsed.clone());
                changed.insert(path.clone());
            }
        }
        for path in changed {
            match copies.get(&path).and_then(|c| choose(c)) {
                Some(winner) => winners.insert(path, winner),
                None => winners.remove(&path),
            };
        }
        Some((copies, winners))
    }
}

/// Every copy of each path across `fresh` (the refs' listings), and the winners.
#[allow(clippy::type_complexity)]
fn chosen_afresh(
    fresh: &[Vec<tree::Parsed<Parsed>>],
) -> (
    BTreeMap<Arc<str>, Vec<(ObjectId, Parsed)>>,
    BTreeMap<Arc<str>, Parsed>,
) {
    let mut copies: BTreeMap<Arc<str>, Vec<(ObjectId, Parsed)>> = BTreeMap::new();
    for (path, id, parsed) in fresh.iter().flatten() {
        if !matches!(parsed, Parsed::Ignored) {
            copies
                .entry(path.clone())
                .or_default()
                .push((*id, parsed.clone()));
        }
    }
    let winners = copies
        .iter()
        .filter_map(|(path, c)| choose(c).map(|w| (path.clone(), w)))
        .collect();
    (copies, winners)
}

/// The copy of one path that counts, among its distinct blobs in blob-id order.
fn choose(copies: &[(ObjectId, Parsed)]) -> Option<Parsed> {
    let mut ids = copies.to_vec();
    ids.sort_by_key(|(id, _)| *id);
    ids.dedup_by_key(|(id, _)| *id);
    let readable = ids.into_iter().map(|(_, parsed)| match parsed {
        Parsed::Malformed(..) => Err(parsed),
        other => Ok(other),
    });
    let updated_at = |p: &Parsed| match p {
        Parsed::Heartbeat(h) => h.updated_at,
        _ => None,
    };
    newest_beat::newest_readable(readable, updated_at).map(|w| w.unwrap_or_else(|m| m))
}

#[cfg(test)]
mod tests {
    use agent_coord_shared::dashboard::inputs::records::parse_record;

    use super::*;

    fn id(n: u8) -> ObjectId {
        ObjectId::from_bytes_or_panic(&[n; 20])
    }

    /// A heartbeat of `agent` at minute `at` with `status` (or a malformed copy).
    fn copy(path: &str, n: u8, at: u32, status: &str) -> tree::Parsed<Parsed> {
        let bytes = if status == "malformed" {
            b"{not json".to_vec()
        } else {
            format!(
                r#"{{"agent_id":"{}","status":"{status}","updated_at":"2026-06-13T12:{at:02}:00Z","machine_id":"m"}}"#,
                path.trim_start_matches("heartbeats/").trim_end_matches(".json")
            )
            .into_bytes()
        };
        (Arc::from(path), id(n), parse_record(path, &bytes))
    }

    fn beats_of(tips: &[(String, ObjectId)], fresh: &[Vec<tree::Parsed<Parsed>>]) -> Beats {
        let (copies, winners) = chosen_afresh(fresh);
        Beats {
            tips: tips.to_vec(),
            listed: fresh.to_vec(),
            chosen: Arc::new(winners.values().cloned().collect()),
            copies,
            winners,
            roots: Roots::default(),
        }
    }

    fn statuses(winners: &BTreeMap<Arc<str>, Parsed>) -> Vec<String> {
        winners
            .iter()
            .map(|(path, p)| match p {
                Parsed::Heartbeat(h) => format!("{path}={}", h.status),
                Parsed::Malformed(..) => format!("{path}=malformed"),
                _ => format!("{path}=?"),
            })
            .collect()
    }

    #[test]
    fn a_renewal_in_place_chooses_what_choosing_afresh_chooses() {
        let refs = |a: u8, b: u8| vec![("m1".to_owned(), id(a)), ("m2".to_owned(), id(b))];
        let before = vec![
            vec![
                copy("heartbeats/a.json", 10, 1, "old"),
                copy("heartbeats/b.json", 11, 5, "b-on-m1"),
            ],
            vec![
                copy("heartbeats/b.json", 12, 3, "b-on-m2"),
                copy("heartbeats/c.json", 13, 1, "malformed"),
            ],
        ];
        // Each step renews one copy in place: newer, older than the other machine's copy,
        // unreadable, and readable again.
        let steps: [(usize, usize, tree::Parsed<Parsed>); 4] = [
            (0, 0, copy("heartbeats/a.json", 20, 2, "renewed")),
            (1, 0, copy("heartbeats/b.json", 21, 9, "b-newer-on-m2")),
            (0, 1, copy("heartbeats/b.json", 22, 1, "malformed")),
            (1, 1, copy("heartbeats/c.json", 23, 4, "c-readable")),
        ];
        let mut fresh = before;
        let mut beats = beats_of(&refs(1, 2), &fresh);
        for (n, (r, i, renewed)) in steps.into_iter().enumerate() {
            fresh[r][i] = renewed;
            let tips = refs(3 + n as u8, 2 + n as u8);
            let (copies, winners) = beats
                .renewed(&tips, &fresh)
                .expect("the same refs list the same paths");
            let (afresh_copies, afresh) = chosen_afresh(&fresh);
            assert_eq!(statuses(&winners), statuses(&afresh), "step {n}");
            assert_eq!(copies.len(), afresh_copies.len());
            beats = beats_of(&tips, &fresh);
        }
        assert_eq!(
            statuses(&beats.winners),
            [
                "heartbeats/a.json=renewed",
                "heartbeats/b.json=b-newer-on-m2",
                "heartbeats/c.json=c-readable"
            ]
        );
    }

    #[test]
    fn a_path_added_or_a_ref_gone_is_chosen_afresh() {
        let tips = vec![("m1".to_owned(), id(1))];
        let fresh = vec![vec![copy("heartbeats/a.json", 10, 1, "a")]];
        let beats = beats_of(&tips, &fresh);
        let grown = vec![vec![
            copy("heartbeats/a.json", 10, 1, "a"),
            copy("heartbeats/b.json", 11, 1, "b"),
        ]];
        assert!(beats_of(&tips, &fresh)
            .renewed(&[("m1".to_owned(), id(2))], &grown)
            .is_none());
        assert!(beats.renewed(&[], &[]).is_none());
    }
}
