//! Inline SVG charts: the batch page's event timeline (one dot per event on a time axis, one
//! lane per event kind) and the overview's lane cost per day (one bar per day).

use agent_coord_shared::dashboard::model::EventView;
use agent_coord_shared::dashboard::model::SpendRow;
use leptos::prelude::*;

use crate::format;

const WIDTH: f64 = 640.0;
const LEFT: f64 = 150.0;
const RIGHT: f64 = 16.0;
const LANE: f64 = 20.0;
const TOP: f64 = 12.0;
const PALETTE: usize = 6;

/// The chart, or nothing when no event has a readable time.
pub fn event_timeline(events: &[EventView]) -> Option<AnyView> {
    let points = timed(events);
    let (first, last) = (points.first()?.0, points.last()?.0);
    let kinds = kinds(&points);
    let span = (last - first).max(1) as f64;
    let height = TOP * 2.0 + LANE * kinds.len() as f64 + 16.0;
    let x = move |t: i64| LEFT + (t - first) as f64 / span * (WIDTH - LEFT - RIGHT);
    let lane_y = |i: usize| TOP + LANE * i as f64 + LANE / 2.0;
    let labels = kinds
        .iter()
        .enumerate()
        .map(|(i, k)| {
            view! {
                <text x="4" y=lane_y(i) + 4.0 class="chart-label">{k.clone()}</text>
                <line x1=LEFT y1=lane_y(i) x2=WIDTH - RIGHT y2=lane_y(i) class="chart-grid"></line>
            }
        })
        .collect_view();
    let dots = points
        .iter()
        .map(|(t, e)| {
            let lane = kinds.iter().position(|k| *k == e.kind).unwrap_or_default();
            let tip = format!("{} — {}", e.kind, format::timestamp(e.at.as_deref()));
            view! {
                <circle cx=x(*t) cy=lane_y(lane) r="5" class=format!("dot c{}", lane % PALETTE)>
                    <title>{tip}</title>
                </circle>
            }
        })
        .collect_view();
    let axis_y = height - 6.0;
    Some(
        view! {
            <svg class="timeline-chart" viewBox=format!("0 0 {WIDTH} {height}")
                role="img" aria-label="Batch events over time" data-testid="batch-chart">
                {labels}
                {dots}
                <text x=LEFT y=axis_y class="chart-axis">{format::timestamp(points.first().and_then(|p| p.1.at.as_deref()))}</text>
                <text x=WIDTH - RIGHT y=axis_y class="chart-axis" text-anchor="end">
                    {format::timestamp(points.last().and_then(|p| p.1.at.as_deref()))}
                </text>
            </svg>
        }
        .into_any(),
    )
}

/// Events with a readable time, oldest first, as (Unix seconds, event).
fn timed(events: &[EventView]) -> Vec<(i64, &EventView)> {
    let mut points: Vec<(i64, &EventView)> = events
        .iter()
        .filter_map(|e| {
            let t = e.at.as_deref().and_then(agent_coord_shared::time::parse)?;
            Some((t.timestamp(), e))
        })
        .collect();
    points.sort_by_key(|p| p.0);
    points
}

/// The distinct kinds, in order of first appearance.
fn kinds(points: &[(i64, &EventView)]) -> Vec<String> {
    let mut kinds: Vec<String> = Vec::new();
    for (_, e) in points {
        if !kinds.contains(&e.kind) {
            kinds.push(e.kind.clone());
        }
    }
    kinds
}

const BAR_HEIGHT: f64 = 120.0;
const BAR_LEFT: f64 = 56.0;

/// The lane cost per day as bars (the day's runs, tokens and cost on hover), or nothing
/// without a day.
pub fn cost_per_day(days: &[SpendRow]) -> Option<AnyView> {
    let first = days.first()?;
    let last = days.last()?;
    let max = days
        .iter()
        .map(|d| d.spend.cost_usd)
        .fold(0.0_f64, f64::max);
    let slot = (WIDTH - BAR_LEFT - RIGHT) / days.len() as f64;
    let height = TOP + BAR_HEIGHT + 22.0;
    let bars = days
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let h = if max > 0.0 {
                (d.spend.cost_usd / max * BAR_HEIGHT).max(1.0)
            } else {
                1.0
            };
            let tip = format!("{}: {}", d.key, format::spend(&d.spend));
            view! {
                <rect x=BAR_LEFT + slot * i as f64 + slot * 0.15 y=TOP + BAR_HEIGHT - h
                    width=slot * 0.7 height=h class="bar c0" data-testid="cost-bar" data-day=d.key.clone()>
                    <title>{tip}</title>
                </rect>
            }
        })
        .collect_view();
    let axis_y = height - 6.0;
    Some(
        view! {
            <svg class="timeline-chart cost-chart" viewBox=format!("0 0 {WIDTH} {height}")
                role="img" aria-label="Lane cost per day" data-testid="cost-chart">
                <line x1=BAR_LEFT y1=TOP + BAR_HEIGHT x2=WIDTH - RIGHT y2=TOP + BAR_HEIGHT class="chart-grid"></line>
                <text x="4" y=TOP + 8.0 class="chart-label">{format::cost(Some(max))}</text>
                <text x="4" y=TOP + BAR_HEIGHT class="chart-label">"$0"</text>
                {bars}
                <text x=BAR_LEFT y=axis_y class="chart-axis">{first.key.clone()}</text>
                <text x=WIDTH - RIGHT y=axis_y class="chart-axis" text-anchor="end">{last.key.clone()}</text>
            </svg>
        }
        .into_any(),
    )
}
