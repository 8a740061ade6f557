//! The Lanes page's two inline SVG charts: the Gantt chart of the lane timeline (one row per
//! machine and concurrent lane, a bar per lane coloured by its outcome, linking to its item
//! page, with the lane on hover) and the utilisation chart (per machine or vendor, the lanes
//! running on average in each bucket of the window). Positions come from the model (seconds
//! into the window); only the scale to pixels is done here.

use agent_coord_shared::dashboard::model::LaneBar;
use agent_coord_shared::dashboard::model::LaneTimeline;
use agent_coord_shared::dashboard::model::Utilisation;
use agent_coord_shared::serde_name::WireName;
use leptos::prelude::*;

use crate::format;

const WIDTH: f64 = 1000.0;
const LEFT: f64 = 150.0;
const RIGHT: f64 = 16.0;
const ROW: f64 = 20.0;
const TOP: f64 = 8.0;
const AXIS: f64 = 22.0;
/// The narrowest bar drawn, so a lane of a few seconds stays visible and clickable.
const MIN_BAR: f64 = 3.0;

/// Seconds into a window of `window_secs` as a horizontal position.
fn x(secs: i64, window_secs: i64) -> f64 {
    LEFT + secs as f64 / window_secs.max(1) as f64 * (WIDTH - LEFT - RIGHT)
}

/// The Gantt chart of `t`.
pub fn gantt(t: &LaneTimeline) -> impl IntoView {
    let rows: u32 = t.machines.iter().map(|m| m.rows).sum();
    let height = TOP + ROW * f64::from(rows) + AXIS;
    let row_y = |row: u32| TOP + ROW * f64::from(row);
    let labels = t
        .machines
        .iter()
        .flat_map(|m| {
            let name = format::timeline_machine(m.machine.as_deref());
            (0..m.rows).map(move |r| {
                let y = row_y(m.first_row + r);
                let text = if r == 0 { name.clone() } else { String::new() };
                // A line under each row, a darker one under a machine's last.
                let grid = if r + 1 == m.rows {
                    "chart-grid machine-end"
                } else {
                    "chart-grid"
                };
                view! {
                    <g>
                        <text x="4" y=y + ROW * 0.7 class="chart-label">{text}</text>
                        <text x=LEFT - 6.0 y=y + ROW * 0.7 class="chart-label" text-anchor="end">{format!("{}", r + 1)}</text>
                        <line x1=LEFT y1=y + ROW x2=WIDTH - RIGHT y2=y + ROW class=grid></line>
                    </g>
                }
            })
        })
        .collect_view();
    let bars = t
        .bars
        .iter()
        .map(|b| bar(b, t.window_secs, row_y(b.row)))
        .collect_view();
    let axis_y = height - 6.0;
    view! {
        <svg class="timeline-chart lane-gantt" viewBox=format!("0 0 {WIDTH} {height}")
            role="img" aria-label="Lanes over time, per machine" data-testid="lane-gantt">
            {labels}
            {bars}
            <text x=LEFT y=axis_y class="chart-axis">{format::timestamp(Some(&t.from))}</text>
            <text x=WIDTH - RIGHT y=axis_y class="chart-axis" text-anchor="end">{format::timestamp(Some(&t.to))}</text>
        </svg>
    }
}

/// One lane's bar, linking to its item page.
fn bar(b: &LaneBar, window_secs: i64, y: f64) -> impl IntoView {
    let left = x(b.offset_secs, window_secs);
    let width = (x(b.offset_secs + b.span_secs, window_secs) - left).max(MIN_BAR);
    let outcome = b.outcome.wire_name();
    let href = format::item_path(&b.repo, &b.issue.to_string()).unwrap_or_default();
    let mut class = format!("lane-bar outcome-{outcome}");
    if b.taken_over {
        class.push_str(" taken-over");
    }
    if b.clock_skew {
        class.push_str(" clock-skew");
    }
    // An `<a>` inside `<g>` is SVG's link element.
    view! {
        <g>
            <a href=href data-testid="lane-bar-link">
                <rect x=left y=y + 2.0 width=width height=ROW - 4.0 rx="2" class=class
                    data-testid="lane-bar" data-row=b.row data-outcome=outcome
                    data-task=b.task_id.clone() data-machine=format::timeline_machine(b.machine.as_deref())>
                    <title>{format::lane_bar_title(b)}</title>
                </rect>
            </a>
        </g>
    }
}

const UTIL_ROW: f64 = 34.0;
const UTIL_GAP: f64 = 10.0;

/// The utilisation of each of `series` (machines or vendors, named by `label`) as a bar per
/// bucket, on one scale: the highest peak among them.
pub fn utilisation(
    series: &[Utilisation],
    label: fn(Option<&str>) -> String,
    test_id: &'static str,
    window_secs: i64,
) -> impl IntoView {
    let top = series.iter().map(|u| u.peak).fold(1.0_f64, f64::max);
    let height = TOP + (UTIL_ROW + UTIL_GAP) * series.len() as f64 + AXIS;
    let rows = series
        .iter()
        .enumerate()
        .map(|(i, u)| {
            let base = TOP + (UTIL_ROW + UTIL_GAP) * i as f64 + UTIL_ROW;
            let n = u.lanes.len().max(1) as i64;
            let step = window_secs / n;
            let bars = u
                .lanes
                .iter()
                .enumerate()
                .filter(|(_, lanes)| **lanes > 0.0)
                .map(|(b, lanes)| {
                    let left = x(step * b as i64, window_secs);
                    let width = x(step * (b as i64 + 1), window_secs) - left;
                    let h = lanes / top * UTIL_ROW;
                    view! {
                        <rect x=left y=base - h width=width height=h class="util-bar">
                            <title>{format!("{} lanes", format::lanes_figure(*lanes))}</title>
                        </rect>
                    }
                })
                .collect_view();
            let name = label(u.key.as_deref());
            let key = name.clone();
            let summary = format!(
                "peak {} · mean {}",
                format::lanes_figure(u.peak),
                format::lanes_figure(u.mean)
            );
            view! {
                <g data-testid="utilisation-row" data-key=key
                    data-peak=format::lanes_figure(u.peak) data-mean=format::lanes_figure(u.mean)>
                    <text x="4" y=base - UTIL_ROW + 12.0 class="chart-label">{name}</text>
                    <text x="4" y=base - 2.0 class="chart-label" data-testid="utilisation-summary">{summary}</text>
                    <line x1=LEFT y1=base x2=WIDTH - RIGHT y2=base class="chart-grid"></line>
                    {bars}
                </g>
            }
        })
        .collect_view();
    view! {
        <svg class="timeline-chart lane-utilisation" viewBox=format!("0 0 {WIDTH} {height}")
            role="img" aria-label="Lanes running on average, per bucket" data-testid=test_id
            data-scale=format::lanes_figure(top)>
            {rows}
        </svg>
    }
}
