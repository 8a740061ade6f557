//! What the fleet's lanes cost: totals of the tasks' recorded lane runs per task, worker,
//! repository, batch (the worker's `coordinator-<worker>` manifest) and day (the day a run
//! ended, UTC), as `coordinate --json`, `status --json` and the dashboard show them; and the
//! opt-in per-task budget check.
//!
//! Every figure is the sum of the runs' own: the vendor's reported cost where it gave one,
//! else the price table's (see `lane::usage`); a run of unknown cost adds its tokens and
//! counts in `unpriced_runs`, never a guessed cost.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::Serialize;

use super::config::Budget;
use super::naming;
use super::task::Spend;
use super::task::Task;

/// Lane spend totals of a set of tasks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CostTotals {
    /// Every run.
    pub total: Spend,
    /// By task id.
    pub tasks: BTreeMap<String, Spend>,
    /// By worker session.
    pub workers: BTreeMap<String, Spend>,
    /// By target repository.
    pub repositories: BTreeMap<String, Spend>,
    /// By batch (`coordinator-<worker>`).
    pub batches: BTreeMap<String, Spend>,
    /// By the UTC day a run ended (`YYYY-MM-DD`); runs folded out of a checkpoint's bound
    /// are in every other total but not here.
    pub days: BTreeMap<String, Spend>,
}

impl CostTotals {
    /// The totals of `tasks`.
    pub fn of<'a>(tasks: impl IntoIterator<Item = &'a Task>) -> CostTotals {
        let mut totals = CostTotals::default();
        for task in tasks {
            let mut spend = Spend::of(&task.lane_runs);
            spend.merge(&task.earlier_runs);
            if spend.runs == 0 {
                continue;
            }
            for run in &task.lane_runs {
                totals
                    .days
                    .entry(day_of(&run.ended_at).to_owned())
                    .or_default()
                    .add(run);
            }
            totals.total.merge(&spend);
            for (map, key) in [
                (&mut totals.workers, task.worker.clone()),
                (&mut totals.repositories, task.repo.clone()),
                (&mut totals.batches, naming::batch_id(&task.worker)),
            ] {
                map.entry(key).or_default().merge(&spend);
            }
            totals.tasks.insert(task.task_id.clone(), spend);
        }
        totals
    }
}

/// The UTC day of an RFC 3339 time as the records write it (`2026-01-01T…Z`).
pub fn day_of(time: &str) -> &str {
    time.get(..10).unwrap_or(time)
}

/// Returns the question to publish when `task` reached `budget` (`None` while under it).
pub fn budget_reached(budget: &Budget, task: &Task) -> Option<String> {
    let spend = Spend::of(task.budgeted_runs());
    let cost = budget
        .max_cost_usd
        .filter(|max| spend.cost_usd >= *max)
        .map(|max| format!("${max:.2} (spent ${:.2})", spend.cost_usd));
    let tokens = budget
        .max_tokens
        .filter(|max| spend.tokens() >= *max)
        .map(|max| format!("{max} tokens (used {})", spend.tokens()));
    let reached: Vec<String> = cost.into_iter().chain(tokens).collect();
    if reached.is_empty() {
        return None;
    }
    Some(format!(
        "budget of {} reached after {} round{} ({} lane run{}); reply to continue",
        reached.join(" and "),
        task.rounds,
        if task.rounds == 1 { "" } else { "s" },
        spend.runs,
        if spend.runs == 1 { "" } else { "s" },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coordinator::lane::usage::CostSource;
    use crate::coordinator::task::LaneRun;
    use crate::coordinator::task::LaneVerdict;
    use crate::coordinator::task::Phase;

    fn run(ended_at: &str, tokens: u64, cost: Option<f64>) -> LaneRun {
        LaneRun {
            slot: "grok:implementer".into(),
            phase: Phase::Implement,
            round: 1,
            vendor: Some("codex".into()),
            model: Some("gpt-5".into()),
            session_id: None,
            started_at: ended_at.into(),
            ended_at: ended_at.into(),
            verdict: LaneVerdict::Done,
            exit_code: Some(0),
            timed_out: false,
            input_tokens: tokens,
            output_tokens: 0,
            cache_read_tokens: 0,
            cache_write_tokens: 0,
            cost_usd: cost,
            cost_source: CostSource::Computed,
            transcript: None,
        }
    }

    fn task(id: &str, worker: &str, repo: &str, runs: Vec<LaneRun>) -> Task {
        let mut t = crate::coordinator::task::tests::task();
        t.task_id = id.into();
        t.worker = worker.into();
        t.repo = repo.into();
        for r in runs {
            t.record_lane_run(r);
        }
        t
    }

    #[test]
    fn totals_split_by_task_worker_repository_batch_and_day() {
        let tasks = [
            task(
                "a",
                "w1",
                "o/r",
                vec![
                    run("2026-01-01T10:00:00Z", 100, Some(1.0)),
                    run("2026-01-02T10:00:00Z", 50, None),
                ],
            ),
            task(
                "b",
                "w2",
                "o/r",
                vec![run("2026-01-02T11:00:00Z", 10, Some(0.5))],
            ),
            task("idle", "w3", "o/s", vec![]),
        ];
        let totals = CostTotals::of(&tasks);
        assert_eq!(totals.total.runs, 3);
        assert!((totals.total.cost_usd - 1.5).abs() < 1e-12);
        assert_eq!(totals.total.unpriced_runs, 1);
        assert_eq!(totals.tasks["a"].input_tokens, 150);
        assert!(
            !totals.tasks.contains_key("idle"),
            "a task without runs adds no row"
        );
        assert_eq!(totals.workers["w2"].runs, 1);
        assert_eq!(totals.repositories["o/r"].runs, 3);
        assert!(!totals.repositories.contains_key("o/s"));
        assert_eq!(totals.batches["coordinator-w1"].runs, 2);
        assert_eq!(totals.days["2026-01-01"].runs, 1);
        assert!((totals.days["2026-01-02"].cost_usd - 0.5).abs() < 1e-12);
    }

    #[test]
    fn a_budget_is_reached_by_cost_or_tokens_and_says_so() {
        let mut t = task(
            "a",
            "w",
            "o/r",
            vec![run("2026-01-01T10:00:00Z", 100, Some(2.5))],
        );
        t.rounds = 2;
        let cost = Budget {
            max_cost_usd: Some(2.0),
            max_tokens: None,
        };
        assert_eq!(
            budget_reached(&cost, &t).as_deref(),
            Some("budget of $2.00 (spent $2.50) reached after 2 rounds (1 lane run); reply to continue")
        );
        let tokens = Budget {
            max_cost_usd: Some(10.0),
            max_tokens: Some(100),
        };
        assert!(budget_reached(&tokens, &t)
            .is_some_and(|q| q.starts_with("budget of 100 tokens (used 100)")));
        let under = Budget {
            max_cost_usd: Some(3.0),
            max_tokens: Some(1000),
        };
        assert_eq!(budget_reached(&under, &t), None);
        t.continue_budget();
        assert_eq!(
            budget_reached(&cost, &t),
            None,
            "a reply restarts the budget"
        );
    }
}
