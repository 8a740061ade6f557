//! Whole-process benchmarks of the release binary on a generated fleet.
//!
//! Usage: `bench [--scales 1,10] [--runs N] [--no-day]` (the Makefile's `make bench`), or
//! `bench fleet DIR SCALE` to only write a generated state root. Prints median
//! wall times per command, peak memory (max RSS) of `status --json`, import time, and the
//! throughput of 16 concurrent writers × 50 claims. Figures, not assertions: these machines
//! are noisy, so compare within one run.

use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

use agent_coord_tests::env::git;
use agent_coord_tests::fleet;
use agent_coord_tests::server::Server;

/// A fixed "now" for the generated fleet (2026-06-13T12:00:00Z).
const NOW_UNIX: i64 = 1_781_352_000;
const NOW: &str = "2026-06-13T12:00:00Z";

fn binary() -> PathBuf {
    if let Some(p) = std::env::var_os("AGENT_COORD_BIN") {
        return PathBuf::from(p);
    }
    let exe = std::env::current_exe().expect("bench path");
    exe.with_file_name("agent-coord")
}

struct Fixture {
    _root: tempfile::TempDir,
    repo: PathBuf,
    dir: PathBuf,
}

fn cli(fx: &Fixture, args: &[&str]) -> Command {
    let mut cmd = Command::new(binary());
    cmd.args(args)
        .current_dir(&fx.dir)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &fx.dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("AGENT_COORD_GIT_DIR", &fx.repo)
        .env("AGENT_COORD_MACHINE_ID", "bench-box")
        .env("AGENT_COORD_NOW", NOW)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

fn run_ok(fx: &Fixture, args: &[&str]) -> Duration {
    let start = Instant::now();
    let out = cli(fx, args).output().expect("agent-coord runs");
    let took = start.elapsed();
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1000.0)
}

/// Runs `args` in a child of a fresh `bench rss` process and returns the child's max RSS.
fn peak_rss_kib(fx: &Fixture, args: &[&str]) -> u64 {
    let exe = std::env::current_exe().expect("bench path");
    let mut cmd = Command::new(exe);
    cmd.arg("rss").arg(binary()).args(args);
    let inner = cli(fx, &[]);
    cmd.env_clear();
    for (k, v) in inner.get_envs() {
        if let Some(v) = v {
            cmd.env(k, v);
        }
    }
    let out = cmd.current_dir(&fx.dir).output().expect("bench rss runs");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

/// `bench rss PROGRAM ARGS...`: runs the program, prints its max RSS in KiB.
fn rss_child(args: &[String]) -> ! {
    let status = Command::new(&args[0])
        .args(&args[1..])
        .stdout(Stdio::null())
        .status()
        .expect("runs");
    let usage = nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_CHILDREN)
        .expect("getrusage");
    println!("{}", usage.max_rss());
    std::process::exit(if status.success() { 0 } else { 1 });
}

fn fixture(scale: usize) -> (Fixture, usize, Duration) {
    let root = tempfile::tempdir().expect("temp dir");
    let dir = root.path().to_path_buf();
    let src = dir.join("legacy");
    let counts = fleet::generate(&src, scale, NOW_UNIX);
    let out = git(&dir, &["init", "--quiet", "--bare", "state.git"]);
    assert!(out.status.success());
    let fx = Fixture {
        repo: dir.join("state.git"),
        dir,
        _root: root,
    };
    let took = run_ok(&fx, &["import", "--from", src.to_str().expect("utf-8")]);
    // Pack what the import wrote, as `git maintenance` would on a long-lived repository.
    git(
        &fx.dir,
        &[
            "--git-dir",
            fx.repo.to_str().expect("utf-8"),
            "gc",
            "--quiet",
        ],
    );
    (fx, counts.total(), took)
}

fn bench_scale(scale: usize, runs: usize) {
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

fn bench_concurrency() {
    let root = tempfile::tempdir().expect("temp dir");
    let fx = Fixture {
        repo: root.path().join("state.git"),
        dir: root.path().to_path_buf(),
        _root: root,
    };
    assert!(git(&fx.dir, &["init", "--quiet", "--bare", "state.git"])
        .status
        .success());
    let bin = binary();
    let start = Instant::now();
    let children: Vec<_> = (0..16)
        .map(|w| {
            let script = format!(
                "for t in $(seq 0 49); do \"{}\" claim --agent-id w{w} --repo acme/app --target {w}-$t >/dev/null || exit 1; done",
                bin.display()
            );
            let base = cli(&fx, &[]);
            let mut sh = Command::new("sh");
            sh.arg("-c").arg(script).env_clear().current_dir(&fx.dir);
            for (k, v) in base.get_envs() {
                if let Some(v) = v {
                    sh.env(k, v);
                }
            }
            sh.spawn().expect("sh runs")
        })
        .collect();
    for mut c in children {
        assert!(c.wait().expect("wait").success());
    }
    let took = start.elapsed();
    let count = git(
        &fx.dir,
        &[
            "--git-dir",
            fx.repo.to_str().expect("utf-8"),
            "rev-list",
            "--count",
            "refs/heads/agent-coord",
        ],
    );
    let commits: f64 = String::from_utf8_lossy(&count.stdout)
        .trim()
        .parse()
        .unwrap_or(0.0);
    println!("\n## 16 processes x 50 claims (separate CLI processes, distinct targets)");
    println!(
        "{commits} commits in {:.2} s = {:.0} commits/s",
        took.as_secs_f64(),
        commits / took.as_secs_f64()
    );
}

/// Runs the CLI against `repo` as `machine` at `now`, asserting success.
fn at(repo: &Path, machine: &str, now: &str, args: &[&str]) {
    let out = Command::new(binary())
        .args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("AGENT_COORD_GIT_DIR", repo)
        .env("AGENT_COORD_MACHINE_ID", machine)
        .env("AGENT_COORD_NOW", now)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .expect("agent-coord runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn timed(repo: &Path, machine: &str, args: &[&str]) -> Duration {
    let start = Instant::now();
    at(repo, machine, NOW, args);
    start.elapsed()
}

/// Two machines, each 100 writes ahead of a local bare remote, then sync both.
fn bench_sync() {
    let root = tempfile::tempdir().expect("temp dir");
    let dir = root.path();
    assert!(git(dir, &["init", "--quiet", "--bare", "remote.git"])
        .status
        .success());
    let remote = dir.join("remote.git");
    let remote = remote.to_str().expect("utf-8");
    let machines = [("a.git", "box-a"), ("b.git", "box-b")];
    for (repo, machine) in machines {
        assert!(git(dir, &["init", "--quiet", "--bare", repo])
            .status
            .success());
        at(&dir.join(repo), machine, NOW, &["init", "--remote", remote]);
    }
    for (repo, machine) in machines {
        for i in 0..50 {
            let target = format!("{machine}-{i}");
            at(
                &dir.join(repo),
                machine,
                NOW,
                &[
                    "claim",
                    "--agent-id",
                    machine,
                    "--repo",
                    "acme/app",
                    "--target",
                    &target,
                    "--batch-id",
                    "b1",
                ],
            );
            at(
                &dir.join(repo),
                machine,
                NOW,
                &[
                    "record-event",
                    "--batch-id",
                    "b1",
                    "--type",
                    "note",
                    "--message",
                    &target,
                ],
            );
        }
    }
    let push = timed(&dir.join("a.git"), "box-a", &["sync"]);
    let merge = timed(&dir.join("b.git"), "box-b", &["sync"]);
    let ff = timed(&dir.join("a.git"), "box-a", &["sync"]);
    println!("\n## sync: two clones, each 100 writes ahead, through a local bare remote");
    println!("| step | wall time |");
    println!("|---|---|");
    println!("| first clone pushes its 100 | {} |", ms(push));
    println!(
        "| second clone merges 100 + 100 and pushes | {} |",
        ms(merge)
    );
    println!("| first clone fast-forwards | {} |", ms(ff));
    println!("total {:.2} s", (push + merge + ff).as_secs_f64());
}

/// A simulated day: 20 agents beating every 5 minutes, each doing 8 tasks (claim, three
/// phase changes, an event, a release), syncing every 5 minutes.
fn bench_day() {
    let root = tempfile::tempdir().expect("temp dir");
    let dir = root.path();
    assert!(git(dir, &["init", "--quiet", "--bare", "remote.git"])
        .status
        .success());
    assert!(git(dir, &["init", "--quiet", "--bare", "m.git"])
        .status
        .success());
    let repo = dir.join("m.git");
    let remote = dir.join("remote.git");
    at(
        &repo,
        "box-1",
        NOW,
        &["init", "--remote", remote.to_str().expect("utf-8")],
    );
    let start = chrono::DateTime::parse_from_rfc3339(NOW)
        .expect("now")
        .to_utc();
    let phases = ["implementing", "validating", "pushing"];
    let began = Instant::now();
    let mut heartbeats = 0;
    for tick in 0..288_i64 {
        let now = (start + chrono::Duration::minutes(5 * tick))
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        for agent in 0..20 {
            let id = format!("agent-{agent:02}");
            let task = tick / 36; // 8 tasks a day, 3 hours each
            let step = tick % 36;
            let target = format!("{}", 1000 + agent * 10 + task);
            let batch = format!("day-{task}");
            if step == 0 {
                at(
                    &repo,
                    "box-1",
                    &now,
                    &[
                        "claim",
                        "--agent-id",
                        &id,
                        "--repo",
                        "acme/app",
                        "--target",
                        &target,
                        "--batch-id",
                        &batch,
                    ],
                );
            }
            let phase = phases[(step as usize * 3 / 36).min(2)];
            at(
                &repo,
                "box-1",
                &now,
                &[
                    "heartbeat",
                    "--agent-id",
                    &id,
                    "--repo",
                    "acme/app",
                    "--target",
                    &target,
                    "--batch-id",
                    &batch,
                    "--phase",
                    phase,
                ],
            );
            heartbeats += 1;
            if step == 20 {
                at(
                    &repo,
                    "box-1",
                    &now,
                    &[
                        "record-event",
                        "--batch-id",
                        &batch,
                        "--type",
                        "qa.validation_requested",
                        "--agent-id",
                        &id,
                    ],
                );
            }
            if step == 35 {
                at(
                    &repo,
                    "box-1",
                    &now,
                    &[
                        "release",
                        "--agent-id",
                        &id,
                        "--repo",
                        "acme/app",
                        "--target",
                        &target,
                    ],
                );
            }
        }
        at(&repo, "box-1", &now, &["sync"]);
    }
    let took = began.elapsed();
    let repo_s = repo.to_str().expect("utf-8");
    let count = git(
        dir,
        &[
            "--git-dir",
            repo_s,
            "rev-list",
            "--count",
            "refs/heads/agent-coord",
        ],
    );
    let commits = String::from_utf8_lossy(&count.stdout).trim().to_owned();
    // Replaced heartbeat commits are unreachable at once; git would keep them two weeks.
    git(dir, &["--git-dir", repo_s, "gc", "--quiet", "--prune=now"]);
    let objects = git(dir, &["--git-dir", repo_s, "count-objects", "-v"]);
    let size_pack = String::from_utf8_lossy(&objects.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("size-pack: ").map(str::to_owned))
        .unwrap_or_default();
    println!(
        "\n## a simulated day: 20 agents, heartbeat every 5 min, 8 tasks each, sync every 5 min"
    );
    println!("{heartbeats} heartbeats, {commits} commits on the state branch, {size_pack} KiB packed after git gc ({:.0} s to simulate)", took.as_secs_f64());
}

/// The dashboard server on a generated fleet: cold model build (first request), warm
/// (cached by tip ids), after one new event (incremental rebuild), and peak RSS.
fn bench_dashboard(scale: usize) {
    use std::io::Read;
    let (fx, records, _) = fixture(scale);
    let server = Server::spawn(cli(&fx, &["serve", "--host", "127.0.0.1", "--port", "0"]));
    let url = format!("{}/api/dashboard", server.url);
    // (request time, body size, the server's own model-derivation time when it derived one)
    let fetch = || {
        let start = Instant::now();
        let mut body = Vec::new();
        let resp = ureq::get(&url).call().expect("dashboard answers");
        let model_ms = resp.header("server-timing").and_then(|t| {
            let dur = t.split("model;dur=").nth(1)?.split(';').next()?;
            dur.parse::<f64>().ok()
        });
        resp.into_reader().read_to_end(&mut body).expect("body");
        (start.elapsed(), body.len(), model_ms)
    };
    let (cold, bytes, cold_model) = fetch();
    let warm = median((0..15).map(|_| fetch().0).collect());
    let mut after = Vec::new();
    let mut after_model = Vec::new();
    for i in 0..5 {
        run_ok(
            &fx,
            &[
                "record-event",
                "--batch-id",
                "batch-00000",
                "--type",
                "note",
                "--message",
                &format!("bench {i}"),
            ],
        );
        let (took, _, model) = fetch();
        after.push(took);
        after_model.push(Duration::from_secs_f64(model.unwrap_or(f64::NAN) / 1e3));
    }
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", server.pid())).unwrap_or_default();
    let hwm = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .map(|v| v.trim().to_owned())
        .unwrap_or_else(|| "unknown".into());
    drop(server);
    println!(
        "\n## dashboard, scale {scale}: {records} records, model {:.1} MB JSON\n\
         | GET /api/dashboard cold (read + parse + derive + serialise + transfer) | {} (model {:.1} ms) |\n\
         | warm (cached by tip ids), median of 15 | {} |\n\
         | after one new event, median of 5 | {} (model update {}) |\n\
         | server peak RSS | {hwm} |",
        bytes as f64 / 1e6,
        ms(cold),
        cold_model.unwrap_or(f64::NAN),
        ms(warm),
        ms(median(after)),
        ms(median(after_model)),
    );
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
    for scale in scales {
        bench_scale(scale, runs);
    }
    bench_concurrency();
    bench_sync();
    if !args.iter().any(|a| a == "--no-day") {
        bench_day();
    }
}
