//! The per-scale command timings (claim, refusal, heartbeat, status, batch-audit, peak
//! memory) and the 16-writer concurrency figure.

use std::process::Command;
use std::time::Duration;
use std::time::Instant;

use crate::cli::binary;
use crate::cli::cli;
use crate::cli::fixture;
use crate::cli::median;
use crate::cli::ms;
use crate::cli::peak_rss_kib;
use crate::cli::run_ok;
use crate::cli::with_cli_env;
use crate::cli::Fixture;

/// Prints the median wall time of each command on a fleet of `scale`, `runs` times each.
pub fn bench_scale(scale: usize, runs: usize) {
    let (fx, records, import) = fixture(scale);
    println!(
        "\n## scale {scale}: {records} records (import {:.2} s, one commit)",
        import.as_secs_f64()
    );
    let claims: Vec<Duration> = (0..runs)
        .map(|i| {
            run_ok(
                &fx,
                &[
                    "claim",
                    "--agent-id",
                    &format!("bench-{i}"),
                    "--repo",
                    "acme/bench",
                    "--target",
                    &format!("{i}"),
                ],
            )
        })
        .collect();
    let takeover_refusals: Vec<Duration> = (0..runs)
        .map(|i| {
            let start = Instant::now();
            let out = cli(
                &fx,
                &[
                    "claim",
                    "--agent-id",
                    "intruder",
                    "--repo",
                    "acme/bench",
                    "--target",
                    &format!("{i}"),
                ],
            )
            .output()
            .expect("runs");
            assert_eq!(out.status.code(), Some(3));
            start.elapsed()
        })
        .collect();
    let beats: Vec<Duration> = (0..runs)
        .map(|i| {
            run_ok(
                &fx,
                &[
                    "heartbeat",
                    "--agent-id",
                    &format!("bench-{}", i % 4),
                    "--status",
                    "in_progress",
                ],
            )
        })
        .collect();
    let status: Vec<Duration> = (0..runs.min(15))
        .map(|_| run_ok(&fx, &["status", "--json"]))
        .collect();
    let scoped: Vec<Duration> = (0..runs)
        .map(|_| run_ok(&fx, &["status", "--batch-id", "batch-00003", "--json"]))
        .collect();
    let audit: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            let _ = cli(&fx, &["batch-audit", "--batch-id", "batch-00003"]).output();
            start.elapsed()
        })
        .collect();
    let rss = peak_rss_kib(&fx, &["status", "--json"]);
    println!("| command | median wall time |");
    println!("|---|---|");
    println!("| claim (new target) | {} |", ms(median(claims)));
    println!(
        "| claim (refused, exit 3) | {} |",
        ms(median(takeover_refusals))
    );
    println!("| heartbeat | {} |", ms(median(beats)));
    println!("| status --json (all) | {} |", ms(median(status)));
    println!("| status --batch-id --json | {} |", ms(median(scoped)));
    println!("| batch-audit | {} |", ms(median(audit)));
    println!(
        "peak memory of status --json: {:.1} MiB",
        rss as f64 / 1024.0
    );
}

/// 16 shell loops of 50 separate `claim` processes on distinct targets, at once.
pub fn bench_concurrency() {
    let fx = Fixture::empty();
    let bin = binary();
    let start = Instant::now();
    let children: Vec<_> = (0..16)
        .map(|w| {
            let script = format!(
                "for t in $(seq 0 49); do \"{}\" claim --agent-id w{w} --repo acme/app --target {w}-$t >/dev/null || exit 1; done",
                bin.display()
            );
            let mut sh = Command::new("sh");
            sh.arg("-c").arg(script);
            with_cli_env(&fx, &mut sh);
            sh.spawn().expect("sh runs")
        })
        .collect();
    for mut c in children {
        assert!(c.wait().expect("wait").success());
    }
    let took = start.elapsed();
    let commits: f64 = fx
        .git(&["rev-list", "--count", "refs/heads/agent-coord"])
        .parse()
        .unwrap_or(0.0);
    println!("\n## 16 processes x 50 claims (separate CLI processes, distinct targets)");
    println!(
        "{commits} commits in {:.2} s = {:.0} commits/s",
        took.as_secs_f64(),
        commits / took.as_secs_f64()
    );
}
