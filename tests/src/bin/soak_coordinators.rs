//! `make soak-coordinators`: three machines of one worker through one coordination remote,
//! the fake GitHub and instant lanes; issues assigned over time, one machine SIGKILLed
//! mid-tick and restarted, one killed for good. Prints what happened and exits 1 if a
//! promise broke (see `agent_coord_tests::coord_soak`).
//!
//! Usage: `soak-coordinators [--issues 60] [--per-round 6] [--max-lanes 4] [--seed 1]`;
//! `SOAK_DEBUG=1` prints every tick's observations.

use agent_coord_tests::coord_soak;
use agent_coord_tests::coord_soak::Options;

fn main() {
    let mut opts = Options {
        issues: 60,
        per_round: 6,
        max_lanes: 4,
        kill_round: 3,
        dead_round: 5,
        max_rounds: 40,
        seed: 1,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().and_then(|v| v.parse::<u64>().ok());
        match (flag.as_str(), value) {
            ("--issues", Some(n)) if n >= 1 => opts.issues = n as usize,
            ("--per-round", Some(n)) if n >= 1 => opts.per_round = n as usize,
            ("--max-lanes", Some(n)) if n >= 1 => opts.max_lanes = n,
            ("--seed", Some(n)) => opts.seed = n,
            _ => {
                eprintln!(
                    "usage: soak-coordinators [--issues N≥1] [--per-round N≥1] [--max-lanes N≥1] [--seed N]"
                );
                std::process::exit(1);
            }
        }
    }
    println!(
        "soak-coordinators: 3 machines of one worker, {} issues ({} per round), max_lanes {}, box-{} killed in round {} and restarted, box-{} killed for good in round {}, seed {}",
        opts.issues,
        opts.per_round,
        opts.max_lanes,
        coord_soak::RESTARTED,
        opts.kill_round,
        coord_soak::DEAD,
        opts.dead_round,
        opts.seed
    );
    let out = coord_soak::run_soak(opts);
    let total: usize = out.lanes.iter().sum();
    println!(
        "{} rounds in {:.1} s ({}), {} ticks killed, {} ticks exited non-zero",
        out.rounds,
        out.wall.as_secs_f64(),
        if out.settled {
            "settled"
        } else {
            "NOT settled"
        },
        out.kills,
        out.failed_ticks
    );
    println!(
        "lanes: {total} — box-0 {}, box-1 {}, box-2 {} ({:.0} % / {:.0} % / {:.0} %)",
        out.lanes[0],
        out.lanes[1],
        out.lanes[2],
        100.0 * out.lanes[0] as f64 / total.max(1) as f64,
        100.0 * out.lanes[1] as f64 / total.max(1) as f64,
        100.0 * out.lanes[2] as f64 / total.max(1) as f64
    );
    let taken = out.taken_over().len();
    println!(
        "tasks: {} Ready, {} need a human, {} taken over from a dead machine; {} pull requests, {} Ready mutations",
        out.ready().len(),
        out.need_a_human().len(),
        taken,
        out.pulls.values().sum::<usize>(),
        out.ready_mutations
    );
    for t in out.need_a_human() {
        println!(
            "  {} {} at {}: {}",
            t["task_id"].as_str().unwrap_or_default(),
            t["state"].as_str().unwrap_or_default(),
            t["phase"].as_str().unwrap_or_default(),
            t["blocker"].as_str().unwrap_or_default()
        );
    }
    let violations = out.violations();
    if violations.is_empty() {
        println!("every promise kept");
    } else {
        for v in &violations {
            println!("VIOLATION: {v}");
        }
        std::process::exit(1);
    }
}
