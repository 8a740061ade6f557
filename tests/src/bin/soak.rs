//! `make soak`: ten machines (clones) through one bare remote for a few minutes; prints
//! throughput, convergence rounds and the exit-2 rate, and exits 1 if a promise broke (see
//! `agent_coord_tests::soak`).
//!
//! Usage: `soak [--machines 10] [--ops 60] [--shared 3] [--seed 1]`. `AGENT_COORD_BIN`
//! picks the binary under test (default: next to this one).

use agent_coord_tests::soak;
use agent_coord_tests::soak::Options;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut opts = Options {
        machines: 10,
        ops: 60,
        shared_targets: 3,
        seed: 1,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().and_then(|v| v.parse::<u64>().ok());
        match (flag.as_str(), value) {
            ("--machines", Some(n)) if n >= 2 => opts.machines = n as usize,
            ("--ops", Some(n)) if n >= 1 => opts.ops = n as usize,
            ("--shared", Some(n)) if n >= 1 => opts.shared_targets = n as usize,
            ("--seed", Some(n)) => opts.seed = n,
            _ => {
                eprintln!("usage: soak [--machines N≥2] [--ops N≥1] [--shared N≥1] [--seed N]");
                std::process::exit(1);
            }
        }
    }
    println!(
        "soak: {} machines × {} commands, {} shared targets, seed {}, binary {}",
        opts.machines,
        opts.ops,
        opts.shared_targets,
        opts.seed,
        agent_coord_tests::env::binary().display()
    );
    let out = soak::run(opts);
    let secs = out.wall.as_secs_f64().max(1e-9);
    let ok = out.ran.iter().filter(|r| r.code == 0).count();
    println!(
        "write phase: {:.1} s, {} commands ({:.1}/s, {:.1} exit 0/s), {} commits on the remote ({:.1}/s)",
        secs,
        out.ran.len(),
        out.ran.len() as f64 / secs,
        ok as f64 / secs,
        out.remote_commits,
        out.remote_commits as f64 / secs
    );
    let (exit2, all) = out.exit2();
    let (streak, streak_time) = out.longest_exit2_streak();
    println!(
        "exit 2: {exit2} of {all} commands ({:.1} %); longest run of exit 2 on one machine: {streak} commands over {:.1} s",
        100.0 * exit2 as f64 / all.max(1) as f64,
        streak_time.as_secs_f64()
    );
    println!(
        "{:<26} {:>8} {:>7} {:>7} {:>7}",
        "command", "runs", "exit 0", "exit 2", "other"
    );
    for (kind, [n, zero, two, other]) in out.by_kind() {
        println!("{:<26} {n:>8} {zero:>7} {two:>7} {other:>7}", kind.label());
    }
    let mut contention: Vec<&str> = out
        .ran
        .iter()
        .filter(|r| r.code == 2)
        .filter_map(|r| r.output.lines().find(|l| !l.trim().is_empty()))
        .collect();
    contention.sort();
    contention.dedup_by(|a, b| a.get(..40) == b.get(..40));
    for line in contention.iter().take(5) {
        println!("  exit 2 e.g.: {line}");
    }
    match out.convergence_rounds {
        Some(r) => println!("converged: every tip equals the remote's after {r} sync round(s)"),
        None => println!("converged: NO (4 rounds)"),
    }
    println!(
        "events acknowledged and present: {}; claim.lost events: {}",
        out.events_acknowledged, out.lost_claims
    );
    if out.violations.is_empty() {
        println!("violations: none");
    } else {
        println!("violations: {}", out.violations.len());
        for v in &out.violations {
            println!("  {v}");
        }
        std::process::exit(1);
    }
}
