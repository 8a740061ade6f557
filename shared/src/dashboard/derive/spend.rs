//! The fleet's lane spend from the coordinator task checkpoints the dashboard reads
//! ([`crate::coordinator::spend::CostTotals`]): the total, per batch and per worker
//! (costliest first), and per day for the chart (the last [`SPEND_DAYS`] days with runs).
//!
//! Assembling runs it on every build, full or incremental, over the same tasks, so both
//! agree by construction.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use crate::coordinator::spend::CostTotals;
use crate::coordinator::task::Spend;
use crate::dashboard::inputs::tasks::TaskIn;
use crate::dashboard::model::SpendRow;
use crate::dashboard::model::SpendSummary;
use crate::dashboard::model::SpendView;
use crate::dashboard::model::SPEND_DAYS;

/// A total as the model shows it.
pub fn spend_view(s: &Spend) -> SpendView {
    SpendView {
        runs: s.runs,
        tokens: s.tokens(),
        input_tokens: s.input_tokens,
        output_tokens: s.output_tokens,
        cache_tokens: s.cache_read_tokens + s.cache_write_tokens,
        cost_usd: s.cost_usd,
        unpriced_runs: s.unpriced_runs,
    }
}

/// The spend of `tasks`.
pub fn summary(tasks: &[Arc<TaskIn>]) -> SpendSummary {
    let totals = CostTotals::of(tasks.iter().map(|t| &t.task));
    let days = totals.days.len().saturating_sub(SPEND_DAYS);
    SpendSummary {
        total: spend_view(&totals.total),
        batches: costliest(&totals.batches),
        workers: costliest(&totals.workers),
        days: totals.days.iter().skip(days).map(row).collect(),
    }
}

fn row((key, spend): (&String, &Spend)) -> SpendRow {
    SpendRow {
        key: key.clone(),
        spend: spend_view(spend),
    }
}

/// The rows of `map`, costliest first, then most tokens, then by key.
fn costliest(map: &BTreeMap<String, Spend>) -> Vec<SpendRow> {
    let mut rows: Vec<SpendRow> = map.iter().map(row).collect();
    rows.sort_by(|a, b| {
        b.spend
            .cost_usd
            .partial_cmp(&a.spend.cost_usd)
            .unwrap_or(Ordering::Equal)
            .then_with(|| b.spend.tokens.cmp(&a.spend.tokens))
            .then_with(|| a.key.cmp(&b.key))
    });
    rows
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::dashboard::fixtures;
    use crate::dashboard::inputs::tasks::parse_task;

    fn run(ended: &str, tokens: u64, cost: Option<f64>) -> serde_json::Value {
        let mut v = json!({"slot": "grok:implementer", "phase": "implement", "round": 1,
            "vendor": "grok", "started_at": ended, "ended_at": ended, "verdict": "done",
            "exit_code": 0, "input_tokens": tokens, "output_tokens": 1,
            "cost_source": if cost.is_some() { "computed" } else { "unknown" }});
        if let Some(c) = cost {
            v["cost_usd"] = json!(c);
        }
        v
    }

    fn task(issue: u64, worker: &str, runs: Vec<serde_json::Value>) -> Arc<TaskIn> {
        let mut v = fixtures::task("acme/app", issue, "active", "implement", 1);
        v["worker"] = json!(worker);
        v["lane_runs"] = json!(runs);
        let path = format!("coordinator/tasks/acme/app/{issue}.json");
        Arc::new(parse_task(&path, &serde_json::to_vec(&v).unwrap()).unwrap())
    }

    #[test]
    fn spend_is_split_by_batch_and_worker_costliest_first_and_by_day_oldest_first() {
        let tasks = [
            task(
                1,
                "w1",
                vec![
                    run("2026-01-02T10:00:00Z", 100, Some(0.5)),
                    run("2026-01-01T10:00:00Z", 10, None),
                ],
            ),
            task(2, "w2", vec![run("2026-01-02T11:00:00Z", 5, Some(2.0))]),
            task(3, "w3", vec![]),
        ];
        let s = summary(&tasks);
        assert_eq!(s.total.runs, 3);
        assert_eq!(s.total.tokens, 118);
        assert!((s.total.cost_usd - 2.5).abs() < 1e-12);
        assert_eq!(s.total.unpriced_runs, 1);
        let keys = |rows: &[SpendRow]| rows.iter().map(|r| r.key.clone()).collect::<Vec<_>>();
        assert_eq!(keys(&s.workers), ["w2", "w1"], "w3 ran nothing");
        assert_eq!(keys(&s.batches), ["coordinator-w2", "coordinator-w1"]);
        assert_eq!(keys(&s.days), ["2026-01-01", "2026-01-02"]);
        assert!((s.days[1].spend.cost_usd - 2.5).abs() < 1e-12);
        assert_eq!(s.days[0].spend.unpriced_runs, 1);
        assert!(summary(&[]).is_empty());
    }

    #[test]
    fn the_chart_keeps_the_last_days_with_runs() {
        let runs = (1..=40)
            .map(|d| run(&format!("2026-01-{:02}T00:00:00Z", d.min(31)), 1, Some(1.0)))
            .chain((1..=9).map(|d| run(&format!("2026-02-{d:02}T00:00:00Z"), 1, Some(1.0))))
            .collect();
        let s = summary(&[task(1, "w", runs)]);
        assert_eq!(s.days.len(), SPEND_DAYS);
        assert_eq!(s.days.last().map(|d| d.key.as_str()), Some("2026-02-09"));
        assert_eq!(s.days.first().map(|d| d.key.as_str()), Some("2026-01-11"));
        assert_eq!(s.total.runs, 49, "the total counts every day");
    }
}
