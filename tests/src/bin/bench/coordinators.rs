//! `bench coordinators`: a fleet of coordinators as a scheduler. MACHINES machines of one
//! worker, SLOTS lane slots each (`max_lanes`), every lane taking LANE_MS, ISSUES issues
//! assigned at once; each machine runs `coordinate --follow` (poll_seconds 1) on the real
//! clock. Prints the time until every task is Ready against the ideal (total lane time over
//! all slots), the GitHub requests per task and per idle tick, and the coordinators' CPU and
//! peak RSS; then, on one machine with IN_FLIGHT slots and long lanes, the coordinator's
//! CPU and RSS while IN_FLIGHT lanes run at once (and the supervisors' memory).

use std::io::BufRead;
use std::path::Path;
use std::process::Child;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

use agent_coord_tests::coord::HUMAN;
use agent_coord_tests::coord_soak::Machines;
use serde_json::Value;

/// Lanes per task: implementer, inner reviewer, two Grok and two Codex gates.
const LANES_PER_TASK: u64 = 6;

/// The sizes of one run.
pub struct Sizes {
    pub issues: usize,
    pub machines: usize,
    pub slots: u64,
    pub lane_ms: u64,
    pub in_flight: usize,
    /// Each machine's `poll_seconds`.
    pub poll_seconds: u64,
}

/// One process's CPU seconds (user + system), those of the ended children it waited for
/// (its git commands; lane supervisors detach, so lanes are not in it), and its resident
/// memory (KiB), from `/proc`.
fn sample(pid: u32) -> Option<(f64, f64, u64)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = stat.rsplit_once(')')?.1;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the command: state is field 3, utime 14, stime 15, cutime 16 and cstime 17
    // (1-based, whole line).
    let secs = |i: usize| -> Option<f64> { Some(fields.get(i)?.parse::<f64>().ok()? / 100.0) };
    let own = secs(11)? + secs(12)?;
    let children = secs(13)? + secs(14)?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let rss_kib = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|n| n.parse::<u64>().ok())
        .unwrap_or(0);
    Some((own, children, rss_kib))
}

/// The whole machine's busy and total CPU seconds (all cores) so far, from `/proc/stat`.
fn machine_cpu() -> Option<(f64, f64)> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let ticks: Vec<f64> = stat
        .lines()
        .next()?
        .split_whitespace()
        .skip(1)
        .filter_map(|t| t.parse().ok())
        .collect();
    // user nice system idle iowait irq softirq steal
    let idle = ticks.get(3)? + ticks.get(4)?;
    let total: f64 = ticks.iter().take(8).sum();
    Some(((total - idle) / 100.0, total / 100.0))
}

/// The pids and total RSS (KiB) of every running lane supervisor.
fn supervisors() -> (usize, u64) {
    let mut count = 0;
    let mut rss = 0;
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return (0, 0);
    };
    for entry in dir.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        if cmdline.split(|b| *b == 0).any(|a| a == b"lane-supervisor") {
            count += 1;
            rss += sample(pid).map_or(0, |(_, _, r)| r);
        }
    }
    (count, rss)
}

/// A `coordinate --follow --json` process whose reports go to a file.
struct Follower {
    child: Child,
    out: std::path::PathBuf,
}

impl Follower {
    fn start(m: &Machines, i: usize) -> Follower {
        let out = m.c.dir.join(format!("follow-{i}.jsonl"));
        let file = std::fs::File::create(&out).expect("report file");
        let child = m
            .coordinate(i, None)
            .args(["--follow", "--json"])
            .stdout(file)
            .stderr(Stdio::null())
            .spawn()
            .expect("coordinate --follow starts");
        Follower { child, out }
    }

    fn stop(mut self) {
        let pid = nix::unistd::Pid::from_raw(self.child.id() as i32);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
        let _ = self.child.wait();
    }
}

/// The tick reports in `path` from line `from` on: (ticks, requests, answered 304).
fn reports(path: &Path, from: usize) -> (usize, u64, u64) {
    let Ok(file) = std::fs::File::open(path) else {
        return (0, 0, 0);
    };
    let mut ticks = 0;
    let mut requests = 0;
    let mut cached = 0;
    for line in std::io::BufReader::new(file)
        .lines()
        .skip(from)
        .map_while(Result::ok)
    {
        let Ok(doc) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        ticks += 1;
        requests += doc["github_requests"].as_u64().unwrap_or(0);
        cached += doc["github_not_modified"].as_u64().unwrap_or(0);
    }
    (ticks, requests, cached)
}

fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

pub fn bench_coordinators(sizes: &Sizes) {
    throughput(sizes);
    in_flight(sizes.in_flight);
}

fn throughput(s: &Sizes) {
    let m = Machines::new(s.machines, s.slots, Duration::from_millis(s.lane_ms));
    m.set_poll_seconds(s.poll_seconds);
    for i in 0..s.machines {
        m.env(i).unpin_clock();
    }
    let c = &m.c;
    for n in 0..s.issues {
        c.assigned_issue(&format!("Add feature file {n}"), HUMAN);
    }
    let before = c.gh.stats().requests;
    let machine_before = machine_cpu();
    let began = Instant::now();
    let followers: Vec<Follower> = (0..s.machines).map(|i| Follower::start(&m, i)).collect();
    let ideal = (s.issues as u64 * LANES_PER_TASK * s.lane_ms) as f64
        / 1000.0
        / (s.machines as u64 * s.slots) as f64;
    let deadline = began + Duration::from_secs_f64(ideal * 4.0 + 300.0);
    let mut peak_rss = 0u64;
    let mut cpu = vec![0.0f64; s.machines];
    let mut with_children = vec![0.0f64; s.machines];
    let mut peak_supervisors = 0;
    let done = loop {
        for (i, f) in followers.iter().enumerate() {
            if let Some((own, children, rss)) = sample(f.child.id()) {
                cpu[i] = own;
                with_children[i] = own + children;
                peak_rss = peak_rss.max(rss);
            }
        }
        peak_supervisors = peak_supervisors.max(supervisors().0);
        if c.gh.stats().ready_mutations as usize >= s.issues {
            break true;
        }
        if Instant::now() > deadline {
            break false;
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let elapsed = began.elapsed().as_secs_f64();
    let machine = machine_before
        .zip(machine_cpu())
        .map(|((b0, t0), (b1, t1))| (b1 - b0, t1 - t0));
    let end_to_end = c.gh.stats().requests - before;
    // Idle: every task awaits the human merge; each full tick still looks once.
    let marks: Vec<usize> = followers.iter().map(|f| lines(&f.out)).collect();
    let window = Duration::from_secs(s.poll_seconds.max(1) * 2 + 2);
    std::thread::sleep(window);
    let mut idle = (0, 0, 0);
    for (f, from) in followers.iter().zip(&marks) {
        let (t, r, n) = reports(&f.out, *from);
        idle = (idle.0 + t, idle.1 + r, idle.2 + n);
    }
    for f in followers {
        f.stop();
    }
    let lanes = m.lanes_per_machine();
    let total: usize = lanes.iter().sum();
    println!(
        "\n## coordinators: {} issues, {} machines × {} lane slots, lanes of {} ms, `coordinate --follow` each (poll_seconds {})",
        s.issues, s.machines, s.slots, s.lane_ms, s.poll_seconds
    );
    println!("| figure | value |\n|---|---|");
    println!(
        "| time until all Ready | {elapsed:.1} s{} |",
        if done {
            ""
        } else {
            " (NOT all Ready: gave up)"
        }
    );
    println!(
        "| ideal (total lane time / slots) | {ideal:.1} s ({} lanes × {} ms / {} slots) |",
        s.issues as u64 * LANES_PER_TASK,
        s.lane_ms,
        s.machines as u64 * s.slots
    );
    println!("| ratio to ideal | {:.2}× |", elapsed / ideal);
    println!(
        "| lanes per machine | {} |",
        lanes
            .iter()
            .map(|n| format!("{n} ({:.0} %)", 100.0 * *n as f64 / total.max(1) as f64))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "| GitHub requests per task, end to end | {:.1} |",
        end_to_end as f64 / s.issues as f64
    );
    println!(
        "| idle ticks ({} s, all Ready) | {} ticks, {:.1} requests per tick, {:.0} % answered 304 |",
        window.as_secs(),
        idle.0,
        idle.1 as f64 / idle.0.max(1) as f64,
        100.0 * idle.2 as f64 / idle.1.max(1) as f64
    );
    println!(
        "| coordinator CPU (user + system) | {} s per machine |",
        cpu.iter()
            .map(|c| format!("{c:.1}"))
            .collect::<Vec<_>>()
            .join(" / ")
    );
    println!(
        "| coordinator CPU with the child processes it waited for (git) | {} s per machine |",
        with_children
            .iter()
            .map(|c| format!("{c:.1}"))
            .collect::<Vec<_>>()
            .join(" / ")
    );
    if let Some((busy, total)) = machine {
        let cores = (total / elapsed).round().max(1.0);
        println!(
            "| this machine's CPU during the run | {:.0} % busy ({busy:.0} of {total:.0} core-seconds on {cores} cores, {:.2} per issue): the run is CPU-bound when near 100 % |",
            100.0 * busy / total.max(1.0),
            busy / s.issues.max(1) as f64
        );
    }
    println!(
        "| coordinator peak RSS | {:.1} MiB; up to {peak_supervisors} lane supervisors at once |",
        peak_rss as f64 / 1024.0
    );
}

/// One machine, `n` slots, `n` issues, lanes long enough that all `n` run at once.
fn in_flight(n: usize) {
    if n == 0 {
        return;
    }
    let m = Machines::new(1, n as u64, Duration::from_secs(60));
    m.env(0).unpin_clock();
    let c = &m.c;
    for i in 0..n {
        c.assigned_issue(&format!("Add feature file {i}"), HUMAN);
    }
    let follower = Follower::start(&m, 0);
    let pid = follower.child.id();
    let began = Instant::now();
    // Wait until every implementer runs.
    while supervisors().0 < n && began.elapsed() < Duration::from_secs(120) {
        std::thread::sleep(Duration::from_millis(200));
    }
    let started = began.elapsed().as_secs_f64();
    let (running, supervisors_rss) = supervisors();
    let (cpu_before, _, _) = sample(pid).unwrap_or_default();
    let mut peak = 0u64;
    let window = Instant::now();
    while window.elapsed() < Duration::from_secs(20) {
        if let Some((_, _, rss)) = sample(pid) {
            peak = peak.max(rss);
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    let (cpu_after, _, _) = sample(pid).unwrap_or_default();
    follower.stop();
    // The lanes are detached: stop this run's supervisors and lane scripts (every one names
    // a path under the fixture's directory) before the directory goes.
    let _ = std::process::Command::new("pkill")
        .args(["-f", &c.dir.display().to_string()])
        .status();
    println!(
        "\n## coordinator with {n} lanes in flight (one machine, max_lanes {n}, lanes of 60 s)"
    );
    println!("| figure | value |\n|---|---|");
    println!("| time until all {n} lanes ran | {started:.1} s ({running} running) |");
    println!(
        "| coordinator CPU while they run | {:.1} % of one core (20 s) |",
        100.0 * (cpu_after - cpu_before) / 20.0
    );
    println!("| coordinator peak RSS | {:.1} MiB |", peak as f64 / 1024.0);
    println!(
        "| lane supervisors | {running}, {:.1} MiB in all ({:.1} MiB each) |",
        supervisors_rss as f64 / 1024.0,
        supervisors_rss as f64 / 1024.0 / running.max(1) as f64
    );
}
