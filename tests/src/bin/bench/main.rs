//! Whole-process benchmarks of the release binary on a generated fleet.
//!
//! Usage: `bench [--scales 1,10] [--runs N] [--no-day]` (the Makefile's `make bench`),
//! `bench breakdown [SCALE] [RUNS]` (`claim` and `status --json` whole-process medians and
//! where their time goes, phase by phase; with `AGENT_COORD_BASELINE_BIN` another build
//! beside it, with `AGENT_COORD_PREDECESSOR` the predecessor's Ruby CLI),
//! `bench dashboard 10,100`, `bench first-request [SCALE] [RUNS]` (the first dashboard request
//! of a server just started, with and without a saved model; with `AGENT_COORD_NODE_DASHBOARD`
//! the predecessor's Node dashboard beside it), `bench enrich [SCALE]` (requests per cold and per unchanged
//! GitHub enrichment refresh against the fake GitHub), `bench coordinator [--ticks N]` (idle coordinator ticks against
//! the fake GitHub), `bench coordinators [--issues 200] [--machines 3] [--slots 4] [--lane-ms 2000]
//! [--in-flight 100] [--poll-seconds 30]` (a fleet of `coordinate --follow` as a scheduler: time to all Ready against
//! the ideal, requests per task and idle tick, CPU and RSS, and 100 lanes in flight), `bench lanes [RUNS]` (what `agent-coord lane` adds to a vendor run), `bench update [SCALES] [RUNS] [STATE_GIT]` (one write of
//! each kind as an in-process model update, no server; of an imported repository if named), `bench lane-runs [RUNS]` (a
//! coordinator task page with RUNS lane runs, and one run's transcript), `bench lane-timeline
//! [TASKS] [RUNS]` (the Lanes page's timeline of TASKS tasks with RUNS runs each, in process), `bench packing [SCALE]` (`status --json` on an unpacked store and once a
//! write has packed it), `bench serve-memory [CYCLES]` (the server's memory across cycles of
//! one claim and one dashboard request), `bench serve-load [--clients N] [--streams N]
//! [--seconds N]` (concurrent dashboard clients and event streams while the CLI writes), or
//! `bench fleet DIR SCALE` to only write a generated state root. Prints median
//! wall times per command, peak memory (max RSS) of `status --json`, import time, and the
//! throughput of 16 concurrent writers × 50 claims. Figures, not assertions: these machines
//! are noisy, so compare within one run.

mod breakdown;
mod cli;
mod coordinator;
mod coordinators;
mod dashboard;
mod enrich;
mod first_request;
mod lane_runs;
mod lane_timeline;
mod lanes;
mod packing;
mod scale;
mod serve_load;
mod sync;
mod update;

use std::path::Path;

use agent_coord_tests::fleet;

use crate::breakdown::bench_breakdown;
use crate::cli::binary;
use crate::cli::rss_child;
use crate::cli::NOW_UNIX;
use crate::coordinator::bench_coordinator;
use crate::coordinators::bench_coordinators;
use crate::coordinators::Sizes;
use crate::dashboard::bench_dashboard;
use crate::enrich::bench_enrich;
use crate::lane_runs::bench_lane_runs;
use crate::lane_timeline::bench_lane_timeline;
use crate::lanes::bench_lanes;
use crate::packing::bench_packing;
use crate::scale::bench_concurrency;
use crate::scale::bench_scale;
use crate::serve_load::bench_serve_load;
use crate::serve_load::bench_serve_memory;
use crate::sync::bench_day;
use crate::sync::bench_sync;
use crate::update::bench_update;

/// The number after `--name` in `args`, or `default`.
fn flag(args: &[String], name: &str, default: u64) -> u64 {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("dashboard") {
        let scales: Vec<usize> = args
            .get(1)
            .map(|s| s.split(',').filter_map(|n| n.parse().ok()).collect())
            .unwrap_or_else(|| vec![10, 100]);
        for scale in scales {
            bench_dashboard(scale);
        }
        return;
    }
    if args.first().map(String::as_str) == Some("first-request") {
        let scale = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(1);
        let runs = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(10);
        first_request::bench_first_request(scale, runs);
        return;
    }
    if args.first().map(String::as_str) == Some("enrich") {
        bench_enrich(args.get(1).and_then(|n| n.parse().ok()).unwrap_or(1));
        return;
    }
    if args.first().map(String::as_str) == Some("coordinator") {
        let ticks = match args.get(1).map(String::as_str) {
            None => 10,
            Some("--ticks") => args.get(2).and_then(|n| n.parse().ok()).unwrap_or(0),
            Some(_) => 0,
        };
        if ticks < 2 {
            eprintln!("usage: bench coordinator [--ticks N] (N ≥ 2, default 10)");
            std::process::exit(1);
        }
        bench_coordinator(ticks);
        return;
    }
    if args.first().map(String::as_str) == Some("coordinators") {
        let flag = |name: &str, default: u64| flag(&args, name, default);
        bench_coordinators(&Sizes {
            issues: flag("--issues", 200) as usize,
            machines: flag("--machines", 3).max(1) as usize,
            slots: flag("--slots", 4).max(1),
            lane_ms: flag("--lane-ms", 2000),
            in_flight: flag("--in-flight", 100) as usize,
            poll_seconds: flag("--poll-seconds", 30).max(1),
        });
        return;
    }
    if args.first().map(String::as_str) == Some("update") {
        let scales: Vec<usize> = args
            .get(1)
            .map(|s| s.split(',').filter_map(|n| n.parse().ok()).collect())
            .unwrap_or_else(|| vec![10, 100]);
        let runs = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(5);
        for scale in scales {
            bench_update(scale, runs, args.get(3).map(String::as_str));
        }
        return;
    }
    if args.first().map(String::as_str) == Some("breakdown") {
        let scale = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(10);
        let runs = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(30);
        bench_breakdown(scale, runs);
        return;
    }
    if args.first().map(String::as_str) == Some("lane-runs") {
        bench_lane_runs(args.get(1).and_then(|n| n.parse().ok()).unwrap_or(200));
        return;
    }
    if args.first().map(String::as_str) == Some("lane-timeline") {
        let tasks = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(1_000);
        let runs = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(50);
        bench_lane_timeline(tasks, runs);
        return;
    }
    if args.first().map(String::as_str) == Some("lanes") {
        bench_lanes(args.get(1).and_then(|n| n.parse().ok()).unwrap_or(30));
        return;
    }
    if args.first().map(String::as_str) == Some("packing") {
        let scale = args.get(1).and_then(|n| n.parse().ok()).unwrap_or(10);
        bench_packing(scale, 10);
        return;
    }
    if args.first().map(String::as_str) == Some("serve-memory") {
        bench_serve_memory(args.get(1).and_then(|n| n.parse().ok()).unwrap_or(700));
        return;
    }
    if args.first().map(String::as_str) == Some("serve-load") {
        let flag = |name: &str, default: u64| flag(&args, name, default);
        bench_serve_load(
            flag("--clients", 200) as usize,
            flag("--streams", 500) as usize,
            flag("--seconds", 20),
        );
        return;
    }
    if args.first().map(String::as_str) == Some("rss") {
        rss_child(&args[1..]);
    }
    if let (Some("fleet"), Some(dir), Some(scale)) =
        (args.first().map(String::as_str), args.get(1), args.get(2))
    {
        // `bench fleet DIR SCALE`: only write a generated state root (for profiling by hand).
        let counts = fleet::generate(Path::new(dir), scale.parse().unwrap_or(1), NOW_UNIX);
        println!("wrote {} records to {dir}", counts.total());
        return;
    }
    let mut scales = vec![1, 10];
    let mut runs = 30;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--scales" => {
                scales = it
                    .next()
                    .map(|s| s.split(',').filter_map(|n| n.parse().ok()).collect())
                    .unwrap_or(scales)
            }
            "--runs" => runs = it.next().and_then(|n| n.parse().ok()).unwrap_or(runs),
            "--no-day" => {}
            other => {
                eprintln!("usage: bench [--scales 1,10] [--runs N] (unknown: {other})");
                std::process::exit(1);
            }
        }
    }
    assert!(
        Path::new(&binary()).exists(),
        "build the release binary first: cargo build --release -p agent-coord"
    );
    println!(
        "# agent-coord benchmarks ({} cores; whole-process medians of {runs} runs)",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    );
    for scale in &scales {
        bench_scale(*scale, runs);
    }
    bench_breakdown(scales.iter().copied().max().unwrap_or(1), runs);
    bench_packing(scales.iter().copied().max().unwrap_or(1), runs.min(10));
    bench_concurrency();
    bench_sync();
    if !args.iter().any(|a| a == "--no-day") {
        bench_day();
    }
}
