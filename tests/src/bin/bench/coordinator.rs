//! The issue coordinator (`bench coordinator [--ticks N]`) against the fake GitHub, in two
//! parts.
//!
//! - **One task end to end**, with instant scripted lanes: from the human's assignment to done
//!   after the human's merge, each tick a process — wall time and GitHub requests per task
//!   (median of [`WORKFLOW_RUNS`] fresh fixtures).
//! - **At rest**: 20 repositories and 50 tasks in flight, every one a Ready pull request
//!   awaiting the human merge, then idle ticks, one process per tick (as cron would run it)
//!   and in one `--follow` process: wall time, the tick's own time split (its `-v` log),
//!   GitHub requests per tick by route as the fake counts them, how many were answered 304,
//!   the rate-limit cost (authenticated requests not answered 304), and whether an idle tick
//!   wrote anything. The clock is pinned, moving 30 s per one-shot tick.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::io::Read;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

use agent_coord_tests::coord::Coord;
use agent_coord_tests::coord::HUMAN;
use agent_coord_tests::fake_github::RequestLog;

use crate::cli::median;
use crate::cli::ms;

/// Target repositories of the worker.
const REPOS: usize = 20;
/// Issues assigned by the human, spread round-robin over the repositories.
const TASKS: usize = 50;
/// Fresh fixtures of the end-to-end part.
const WORKFLOW_RUNS: usize = 5;
/// Setup ticks allowed before the fixture counts as broken.
const MAX_SETUP_TICKS: usize = 5;
/// Seconds after the setup (the fixture's pinned clock) of the warm-up tick.
const WARM_UP_AT: i64 = 600;
/// Seconds between idle ticks on the pinned clock (a typical `poll_seconds`).
const POLL: i64 = 30;

/// What one idle tick cost.
struct Tick {
    /// Wall time: the whole process (one-shot) or the tick's own log (`--follow`).
    wall: Duration,
    /// The tick's `-v` split, in milliseconds by name (`preflight_ms`, `signing_ms`, …).
    split: BTreeMap<String, f64>,
    /// The fake's log of this tick's requests.
    requests: Vec<RequestLog>,
    /// Whether the tick moved the state branch, and the heartbeat ref (one-shot ticks only).
    wrote: (bool, bool),
}

/// Runs the coordinator benchmark with `ticks` idle ticks per mode.
pub fn bench_coordinator(ticks: usize) {
    let names: Vec<String> = (0..REPOS).map(|i| format!("acme/repo-{i:02}")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    full_workflow();
    let c = Coord::with_repos(600, &refs);
    for repo in &refs {
        c.gh.ci_plan(repo, &[], "success");
    }
    let issues: Vec<(String, u64)> = (0..TASKS)
        .map(|i| {
            let repo = &names[i % REPOS];
            let n = c.assigned_issue_in(repo, &format!("Add feature {i}"), HUMAN);
            (repo.clone(), n)
        })
        .collect();
    let began = Instant::now();
    let mut setup_ticks = 0;
    let setup_requests_before = c.gh.stats().requests;
    let waiting = loop {
        setup_ticks += 1;
        // Each setup tick waits for the lanes it starts, as they end.
        let out = run(&c, &["--wait"]);
        assert!(
            out.status.success(),
            "a setup tick failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let waiting = settled(&c, &issues);
        if waiting == TASKS {
            break waiting;
        }
        assert!(
            setup_ticks < MAX_SETUP_TICKS,
            "not settled after {setup_ticks} ticks: {waiting} awaiting the merge"
        );
    };
    println!(
        "\n## coordinator at rest: {REPOS} repositories, {TASKS} tasks in flight ({waiting} Ready pull requests awaiting the human merge)"
    );
    println!(
        "setup: {setup_ticks} tick(s), {:.1} s, {} GitHub requests (admissions, scripted lanes, checks and gates, signed pushes, draft pull requests, CI, readiness, approvals, Ready)",
        began.elapsed().as_secs_f64(),
        c.gh.stats().requests - setup_requests_before
    );

    // One more tick refreshes the ETags of everything the setup changed (issue lists,
    // comments): it is the first idle tick GitHub-wise. Idle ticks then run POLL apart.
    c.env.at(WARM_UP_AT);
    assert!(run(&c, &[]).status.success(), "the warm-up tick failed");
    let oneshot = one_process_per_tick(&c, ticks);
    let follow = follow_ticks(&c, ticks);
    let steady = &follow[1.min(follow.len() - 1)..];

    let goal = REPOS + waiting + 2;
    println!(
        "| idle tick | one process per tick (median of {ticks}; p90) | `--follow`, ticks 2–{} (median) | goal |",
        follow.len()
    );
    println!("|---|---|---|---|");
    println!(
        "| wall time | {} (p90 {}) | {} | ≤ 150 ms own overhead |",
        ms(median(oneshot.iter().map(|t| t.wall).collect())),
        ms(p90(oneshot.iter().map(|t| t.wall).collect())),
        ms(median(steady.iter().map(|t| t.wall).collect())),
    );
    println!(
        "| GitHub requests (answered 304) | {} | {} | ≤ {goal} ({REPOS} issue lists + {waiting} pull requests + 2 preflight `GET /user`), all 304 |",
        counts(&oneshot),
        counts(steady),
    );
    let total_cost = |ticks: &[Tick]| -> usize { ticks.iter().map(|t| cost(&t.requests)).sum() };
    println!(
        "| rate-limit cost, all ticks together (authenticated, not 304) | {} | {} | 0 |",
        total_cost(&oneshot),
        total_cost(steady),
    );
    for (label, key) in [
        ("preflight", "preflight_ms"),
        ("… of it the signing probe", "signing_ms"),
        (
            "… of it the two accounts (token, client, GET /user)",
            "accounts_ms",
        ),
        ("open the state", "open_ms"),
        ("discover (list assigned issues)", "discover_ms"),
        ("advance every task", "advance_ms"),
        ("finish (heartbeat, ETag cache)", "finish_ms"),
        ("the tick in-process (from -v)", "total_ms"),
    ] {
        println!(
            "| {label} | {} | {} | |",
            split(&oneshot, key),
            split(steady, key)
        );
    }
    println!(
        "writes by the one-process ticks ({POLL} s apart): {} of {ticks} committed to the state branch, {} rewrote the heartbeat ref",
        oneshot.iter().filter(|t| t.wrote.0).count(),
        oneshot.iter().filter(|t| t.wrote.1).count(),
    );
    println!("requests per idle tick by route (one process per tick; `--follow` steady state):");
    println!("| route | one process: per tick (304) | `--follow`: per tick (304) |");
    println!("|---|---|---|");
    let a = by_route(&oneshot);
    let b = by_route(steady);
    let routes: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for route in routes {
        let show = |m: &BTreeMap<String, (f64, f64)>| match m.get(route) {
            Some((n, nm)) => format!("{n:.1} ({nm:.1})"),
            None => "–".into(),
        };
        println!("| {route} | {} | {} |", show(&a), show(&b));
    }
}

/// Runs one tick at the fixture's clock.
fn run(c: &Coord, extra: &[&str]) -> std::process::Output {
    c.command(extra).output().expect("agent-coord runs")
}

/// Counts the tasks awaiting the human merge.
fn settled(c: &Coord, issues: &[(String, u64)]) -> usize {
    issues
        .iter()
        .filter(|(repo, n)| {
            let task = c.task_in(repo, *n);
            task["state"] == "active" && task["phase"] == "await_merge"
        })
        .count()
}

/// One task from the assignment to done, [`WORKFLOW_RUNS`] times on fresh fixtures: ticks
/// (one process each) until Ready, the human merges, ticks until done.
fn full_workflow() {
    let mut walls = Vec::new();
    let mut requests = Vec::new();
    let mut mutations = Vec::new();
    let mut ticks = Vec::new();
    for _ in 0..WORKFLOW_RUNS {
        let c = Coord::new(60);
        c.gh.ci_plan(agent_coord_tests::coord::REPO, &[], "success");
        let issue = c.assigned_issue("Add a feature file", HUMAN);
        let before = c.gh.stats().requests;
        let mut wall = Duration::ZERO;
        let mut n = 0;
        let mut merged = false;
        loop {
            n += 1;
            let start = Instant::now();
            let out = run(&c, &[]);
            wall += start.elapsed();
            assert!(
                out.status.success(),
                "a workflow tick failed:\n{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            let task = c.task(issue);
            if task["state"] == "done" {
                break;
            }
            if task["phase"] == "await_merge" && !merged {
                c.gh.merge_pull(agent_coord_tests::coord::REPO, c.pr(issue), Some(HUMAN));
                merged = true;
            }
            assert!(n < 10, "the workflow did not finish: {task:#}");
        }
        walls.push(wall);
        requests.push(c.gh.stats().requests - before);
        mutations.push(c.mutations().len());
        ticks.push(n);
    }
    let mid = |mut v: Vec<u64>| {
        v.sort_unstable();
        v[v.len() / 2]
    };
    println!("\n## coordinator: one task end to end (assignment → Ready → human merge → done), instant lanes");
    println!("| per task (median of {WORKFLOW_RUNS}) | figure |");
    println!("|---|---|");
    println!(
        "| wall time, all ticks together (one process each) | {} |",
        ms(median(walls))
    );
    println!(
        "| ticks | {} |",
        mid(ticks.iter().map(|&t| t as u64).collect())
    );
    println!("| GitHub requests (all) | {} |", mid(requests));
    println!(
        "| of them mutations (accept, draft, approval, evidence comment, Ready, acknowledgement) | {} |",
        mid(mutations.iter().map(|&m| m as u64).collect())
    );
}

/// `ticks` idle ticks, one process each.
fn one_process_per_tick(c: &Coord, ticks: usize) -> Vec<Tick> {
    c.gh.reset_requests();
    let mut out = Vec::new();
    for i in 0..ticks {
        c.env.at(WARM_UP_AT + POLL * (i as i64 + 1));
        let before = (c.env.state_tip(), heartbeat_tips(c));
        let start = Instant::now();
        let done = run(c, &["-v"]);
        let wall = start.elapsed();
        assert!(done.status.success(), "an idle tick failed");
        let after = (c.env.state_tip(), heartbeat_tips(c));
        let stderr = String::from_utf8_lossy(&done.stderr);
        out.push(Tick {
            wall,
            split: timings(&stderr).into_iter().next().unwrap_or_default(),
            requests: Vec::new(),
            wrote: (before.0 != after.0, before.1 != after.1),
        });
    }
    assign_requests(c, &mut out);
    out
}

/// `ticks` idle ticks of one `coordinate --follow` process, stopped with SIGTERM after the
/// last tick's report.
fn follow_ticks(c: &Coord, ticks: usize) -> Vec<Tick> {
    c.gh.reset_requests();
    c.env.at(WARM_UP_AT + POLL * (ticks as i64 + 1));
    let mut cmd: Command = c.command(&["--follow", "--json", "-v"]);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("agent-coord --follow starts");
    let mut stderr = child.stderr.take().expect("piped stderr");
    let log = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let stdout = std::io::BufReader::new(child.stdout.take().expect("piped stdout"));
    let mut reports = 0;
    for line in stdout.lines() {
        let line = line.expect("a report line");
        if line.trim_start().starts_with('{') {
            reports += 1;
            if reports == ticks {
                let pid = nix::unistd::Pid::from_raw(i32::try_from(child.id()).expect("pid"));
                let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
            }
        }
    }
    let status = child.wait().expect("agent-coord --follow ends");
    let stderr = log.join().expect("stderr reader");
    assert!(status.success(), "coordinate --follow failed:\n{stderr}");
    let mut out: Vec<Tick> = timings(&stderr)
        .into_iter()
        .map(|split| Tick {
            wall: Duration::from_secs_f64(split.get("total_ms").copied().unwrap_or(0.0) / 1e3),
            split,
            requests: Vec::new(),
            wrote: (false, false),
        })
        .collect();
    assert!(!out.is_empty(), "no tick timings in the -v log:\n{stderr}");
    assign_requests(c, &mut out);
    out
}

/// Splits the fake's request log into the ticks, in order: a tick's requests run from its
/// preflight's `GET /user` (if any) through its discovery and its tasks, and a new tick starts
/// at a `GET /user` or at the first repository's issue list after a discovery has begun.
fn assign_requests(c: &Coord, ticks: &mut [Tick]) {
    let first = format!("/repos/{}/issues", c.repos[0]);
    let mut buckets: Vec<Vec<RequestLog>> = Vec::new();
    let mut discovering = false;
    for r in c.gh.requests() {
        let starts = r.path == first;
        if buckets.is_empty() || (discovering && (starts || r.path == "/user")) {
            buckets.push(Vec::new());
            discovering = false;
        }
        discovering |= starts;
        buckets.last_mut().expect("a bucket").push(r);
    }
    for (tick, bucket) in ticks.iter_mut().zip(buckets) {
        tick.requests = bucket;
    }
}

/// Parses every `tick timings` line of a `-v` log, with the `preflight timings` before it.
fn timings(log: &str) -> Vec<BTreeMap<String, f64>> {
    let mut out = Vec::new();
    let mut current = BTreeMap::new();
    for line in log.lines() {
        let tick = line.contains("tick timings");
        if !tick && !line.contains("preflight timings") {
            continue;
        }
        for word in line.split_whitespace() {
            if let Some((k, v)) = word.split_once('=') {
                if let Ok(v) = v.parse::<f64>() {
                    current.insert(k.to_owned(), v);
                }
            }
        }
        if tick {
            out.push(std::mem::take(&mut current));
        }
    }
    out
}

/// Returns the 90th percentile of `v`.
fn p90(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[(v.len() * 9 / 10).min(v.len() - 1)]
}

/// Authenticated requests not answered 304 (what GitHub charges to the rate limit).
fn cost(requests: &[RequestLog]) -> usize {
    requests
        .iter()
        .filter(|r| r.login.is_some() && r.status != 304)
        .count()
}

fn median_of(ticks: &[Tick], f: impl Fn(&Tick) -> usize) -> usize {
    let mut v: Vec<usize> = ticks.iter().map(f).collect();
    v.sort_unstable();
    v[v.len() / 2]
}

/// "N (M answered 304)", medians over the ticks.
fn counts(ticks: &[Tick]) -> String {
    let total = median_of(ticks, |t| t.requests.len());
    let nm = median_of(ticks, |t| {
        t.requests.iter().filter(|r| r.status == 304).count()
    });
    format!("{total} ({nm})")
}

/// The median of one split figure, in milliseconds.
fn split(ticks: &[Tick], key: &str) -> String {
    let v: Vec<Duration> = ticks
        .iter()
        .filter_map(|t| t.split.get(key))
        .map(|m| Duration::from_secs_f64(m / 1e3))
        .collect();
    if v.is_empty() {
        "–".into()
    } else {
        ms(median(v))
    }
}

/// Requests and 304s per tick by route (`GET /repos/{repo}/issues/{n}/comments`).
fn by_route(ticks: &[Tick]) -> BTreeMap<String, (f64, f64)> {
    let mut out: BTreeMap<String, (f64, f64)> = BTreeMap::new();
    let n = ticks.len() as f64;
    for r in ticks.iter().flat_map(|t| &t.requests) {
        let entry = out.entry(route(r)).or_default();
        entry.0 += 1.0 / n;
        if r.status == 304 {
            entry.1 += 1.0 / n;
        }
    }
    out
}

/// A request's route with the repository and numbers abstracted.
fn route(r: &RequestLog) -> String {
    let path = match r.path.strip_prefix("/repos/") {
        Some(rest) => {
            let tail: Vec<&str> = rest.splitn(3, '/').collect();
            let tail = tail.get(2).copied().unwrap_or_default();
            let tail: Vec<&str> = tail
                .split('/')
                .map(|s| {
                    if !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()) {
                        "{n}"
                    } else {
                        s
                    }
                })
                .collect();
            format!("/repos/{{repo}}/{}", tail.join("/"))
                .trim_end_matches('/')
                .to_owned()
        }
        None => r.path.clone(),
    };
    format!("{} {path}", r.method)
}

/// The heartbeat refs of the state repository and their tips.
fn heartbeat_tips(c: &Coord) -> String {
    c.env.git(&[
        "for-each-ref",
        "--format=%(refname) %(objectname)",
        "refs/agent-coord/heartbeats",
    ])
}
