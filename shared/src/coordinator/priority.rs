//! The order in which a worker's tasks get lane slots: the issue's priority (the best of its
//! labels under the worker's `priority_labels`, lower first; an issue with no mapped label
//! after every mapped one), then fair shares between repositories (within one priority, each
//! repository's first task before any repository's second), then the oldest verified
//! assignment, then the repository and issue number so that the order is total.
//!
//! A task that already runs lanes is collected wherever it stands: the order decides who
//! starts when slots are short, and a task keeps the slot its finished lanes free for its
//! next phase only because it is advanced before the tasks that wait.

use std::collections::BTreeMap;

use chrono::DateTime;
use chrono::Utc;

/// One task as the order sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate<'a> {
    /// `owner/name`.
    pub repo: &'a str,
    /// The issue number.
    pub issue: u64,
    /// The issue's labels now (empty when unknown).
    pub labels: &'a [String],
    /// When the verified assignment happened (RFC 3339); unparseable ranks last.
    pub assigned_at: &'a str,
}

/// The priority of an issue with `labels` under `map` (label → priority, lower first):
/// the best of its mapped labels, `None` when none is mapped.
pub fn label_priority(labels: &[String], map: &BTreeMap<String, u64>) -> Option<u64> {
    labels.iter().filter_map(|l| map.get(l).copied()).min()
}

/// The indices of `candidates` in the order they get lane slots (see the module doc).
pub fn order(candidates: &[Candidate<'_>], map: &BTreeMap<String, u64>) -> Vec<usize> {
    struct Key<'a> {
        // `None` (no mapped label) sorts after every mapped priority.
        priority: (bool, u64),
        assigned: Option<DateTime<Utc>>,
        repo: &'a str,
        issue: u64,
    }
    let keys: Vec<Key<'_>> = candidates
        .iter()
        .map(|c| {
            let priority = label_priority(c.labels, map);
            Key {
                priority: (priority.is_none(), priority.unwrap_or(0)),
                assigned: DateTime::parse_from_rfc3339(c.assigned_at)
                    .ok()
                    .map(|t| t.with_timezone(&Utc)),
                repo: c.repo,
                issue: c.issue,
            }
        })
        .collect();
    let oldest_first = |a: &Key<'_>, b: &Key<'_>| {
        // A known time before an unknown one.
        let time = match (&a.assigned, &b.assigned) {
            (Some(x), Some(y)) => x.cmp(y),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, Some(_)) => std::cmp::Ordering::Greater,
            (None, None) => std::cmp::Ordering::Equal,
        };
        time.then_with(|| a.repo.cmp(b.repo))
            .then_with(|| a.issue.cmp(&b.issue))
    };
    // Each task's place among the tasks of its repository and priority, oldest first.
    let mut by_age: Vec<usize> = (0..keys.len()).collect();
    by_age.sort_by(|&a, &b| oldest_first(&keys[a], &keys[b]));
    let mut seen: BTreeMap<((bool, u64), &str), usize> = BTreeMap::new();
    let mut share = vec![0usize; keys.len()];
    for &i in &by_age {
        let n = seen.entry((keys[i].priority, keys[i].repo)).or_default();
        share[i] = *n;
        *n += 1;
    }
    let mut out: Vec<usize> = (0..keys.len()).collect();
    out.sort_by(|&a, &b| {
        keys[a]
            .priority
            .cmp(&keys[b].priority)
            .then_with(|| share[a].cmp(&share[b]))
            .then_with(|| oldest_first(&keys[a], &keys[b]))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(pairs: &[(&str, u64)]) -> BTreeMap<String, u64> {
        pairs.iter().map(|(l, p)| ((*l).to_owned(), *p)).collect()
    }

    fn labels(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| (*n).to_owned()).collect()
    }

    /// The order as `repo#issue` strings.
    fn ordered(cands: &[Candidate<'_>], map: &BTreeMap<String, u64>) -> Vec<String> {
        order(cands, map)
            .into_iter()
            .map(|i| format!("{}#{}", cands[i].repo, cands[i].issue))
            .collect()
    }

    #[test]
    fn the_best_mapped_label_is_the_priority_and_no_mapped_label_is_none() {
        let m = map(&[("urgent", 0), ("p2", 2), ("p1", 1)]);
        assert_eq!(label_priority(&labels(&["p2", "bug", "p1"]), &m), Some(1));
        assert_eq!(label_priority(&labels(&["bug"]), &m), None);
        assert_eq!(label_priority(&[], &m), None);
    }

    #[test]
    fn a_mapped_priority_goes_first_then_the_oldest_assignment() {
        let m = map(&[("urgent", 0), ("p1", 1)]);
        let none = labels(&[]);
        let p1 = labels(&["p1"]);
        let urgent = labels(&["urgent", "p1"]);
        let cands = [
            Candidate {
                repo: "a/x",
                issue: 1,
                labels: &none,
                assigned_at: "2026-01-01T00:00:00Z",
            },
            Candidate {
                repo: "a/x",
                issue: 2,
                labels: &p1,
                assigned_at: "2026-01-03T00:00:00Z",
            },
            Candidate {
                repo: "a/x",
                issue: 3,
                labels: &urgent,
                assigned_at: "2026-01-04T00:00:00Z",
            },
            Candidate {
                repo: "a/x",
                issue: 4,
                labels: &p1,
                assigned_at: "2026-01-02T00:00:00Z",
            },
        ];
        assert_eq!(ordered(&cands, &m), ["a/x#3", "a/x#4", "a/x#2", "a/x#1"]);
    }

    #[test]
    fn repositories_take_turns_within_one_priority() {
        let none = labels(&[]);
        let t = |d: u32| format!("2026-01-{d:02}T00:00:00Z");
        let times: Vec<String> = (1..=5).map(t).collect();
        // a/x has three old tasks, b/y two newer ones: they alternate, oldest first.
        let cands = [
            Candidate {
                repo: "a/x",
                issue: 1,
                labels: &none,
                assigned_at: &times[0],
            },
            Candidate {
                repo: "a/x",
                issue: 2,
                labels: &none,
                assigned_at: &times[1],
            },
            Candidate {
                repo: "a/x",
                issue: 3,
                labels: &none,
                assigned_at: &times[2],
            },
            Candidate {
                repo: "b/y",
                issue: 1,
                labels: &none,
                assigned_at: &times[3],
            },
            Candidate {
                repo: "b/y",
                issue: 2,
                labels: &none,
                assigned_at: &times[4],
            },
        ];
        assert_eq!(
            ordered(&cands, &BTreeMap::new()),
            ["a/x#1", "b/y#1", "a/x#2", "b/y#2", "a/x#3"]
        );
    }

    #[test]
    fn an_unparseable_time_ranks_after_known_ones_and_ties_break_by_repo_and_issue() {
        let none = labels(&[]);
        let cands = [
            Candidate {
                repo: "a/x",
                issue: 2,
                labels: &none,
                assigned_at: "not a time",
            },
            Candidate {
                repo: "a/x",
                issue: 10,
                labels: &none,
                assigned_at: "2026-01-01T00:00:00Z",
            },
            Candidate {
                repo: "a/x",
                issue: 9,
                labels: &none,
                assigned_at: "2026-01-01T00:00:00Z",
            },
        ];
        assert_eq!(
            ordered(&cands, &BTreeMap::new()),
            ["a/x#9", "a/x#10", "a/x#2"]
        );
    }

    proptest::proptest! {
        #[test]
        fn the_order_is_a_permutation_that_ignores_input_order(
            raw in proptest::collection::vec((0u8..3, 1u64..50, 0u8..4, 0u32..28), 0..30),
            seed in 0usize..1000,
        ) {
            let repos = ["a/x", "b/y", "c/z"];
            let label_sets: Vec<Vec<String>> =
                vec![labels(&[]), labels(&["p1"]), labels(&["p0"]), labels(&["p1", "p0"])];
            let times: Vec<String> =
                (0..28).map(|d| format!("2026-02-{:02}T00:00:00Z", d + 1)).collect();
            // Unique (repo, issue) pairs, as tasks are.
            let mut seen = std::collections::BTreeSet::new();
            let cands: Vec<Candidate<'_>> = raw
                .iter()
                .filter(|(r, i, _, _)| seen.insert((*r, *i)))
                .map(|(r, i, l, t)| Candidate {
                    repo: repos[*r as usize],
                    issue: *i,
                    labels: &label_sets[*l as usize],
                    assigned_at: &times[*t as usize],
                })
                .collect();
            let m = map(&[("p0", 0), ("p1", 1)]);
            let first = ordered(&cands, &m);
            let mut sorted = first.clone();
            sorted.sort();
            let mut all: Vec<String> =
                cands.iter().map(|c| format!("{}#{}", c.repo, c.issue)).collect();
            all.sort();
            proptest::prop_assert_eq!(sorted, all);
            // Priorities never go back up along the order; no mapped label comes last.
            let ranks: Vec<(bool, u64)> = order(&cands, &m)
                .into_iter()
                .map(|i| {
                    let p = label_priority(cands[i].labels, &m);
                    (p.is_none(), p.unwrap_or(0))
                })
                .collect();
            proptest::prop_assert!(ranks.windows(2).all(|w| w[0] <= w[1]));
            let mut shuffled = cands.clone();
            if !shuffled.is_empty() {
                let k = seed % shuffled.len();
                shuffled.rotate_left(k);
                shuffled.reverse();
            }
            proptest::prop_assert_eq!(ordered(&shuffled, &m), first);
        }
    }
}
