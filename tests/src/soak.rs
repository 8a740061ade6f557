//! A fleet under load: machines (clones) pushing through one bare remote at once, each
//! running a mix of claims (about half on a small shared set of targets, with `--sync`),
//! releases, heartbeats, events and syncs on the real clock, with
//! `agent-coord.sync=true`. Used by `test_fleet` (small, in `make test`) and the `soak`
//! binary (`make soak`).
//!
//! After the writes stop, every machine syncs once per round until all tips agree with the
//! remote, and [`Outcome::violations`] lists every broken promise: tips that did not
//! converge within two rounds, an acknowledged event missing, two agents told they hold one
//! target at the same time, a holder whose release found its claim gone, a `claim.lost`
//! its loser was never told about, and a repository `git fsck` complains about.

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::io::Write;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

use serde_json::Value;

use crate::env::git;
use crate::remote::Fleet;

/// The shared targets live in this repository.
const SHARED_REPO: &str = "acme/shared";
/// Every event goes to this batch.
const BATCH: &str = "fleet";

/// The size of a run.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// How many machines (clones).
    pub machines: usize,
    /// How many commands each machine runs.
    pub ops: usize,
    /// How many shared targets the claims on shared targets race for.
    pub shared_targets: usize,
    /// Seeds every machine's choice of commands.
    pub seed: u64,
}

/// What one command was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// `claim --sync` of a shared target.
    ClaimShared,
    /// `release --sync` of a shared target the agent was told it holds.
    Release,
    /// `claim` of a target only this machine uses.
    ClaimOwn,
    /// `claim --no-sync` of a shared target (to lose a race now and then).
    ClaimLocal,
    /// `release` of such a local claim.
    ReleaseLocal,
    /// `heartbeat`.
    Heartbeat,
    /// `record-event`.
    Event,
    /// `sync`.
    Sync,
}

impl Kind {
    /// Returns a short label for figures.
    pub fn label(self) -> &'static str {
        match self {
            Kind::ClaimShared => "claim --sync (shared)",
            Kind::Release => "release --sync (shared)",
            Kind::ClaimOwn => "claim (own target)",
            Kind::ClaimLocal => "claim --no-sync (shared)",
            Kind::ReleaseLocal => "release (local claim)",
            Kind::Heartbeat => "heartbeat",
            Kind::Event => "record-event",
            Kind::Sync => "sync",
        }
    }
}

/// One command a machine ran.
#[derive(Debug, Clone)]
pub struct Ran {
    /// The machine's index.
    pub machine: usize,
    /// What it was.
    pub kind: Kind,
    /// The target, for claims and releases.
    pub target: String,
    /// The event's message, for events.
    pub message: String,
    /// When it started and ended, from the start of the run.
    pub start: Duration,
    /// See `start`.
    pub end: Duration,
    /// Its exit code (`-1` when killed).
    pub code: i32,
    /// Its standard output and error.
    pub output: String,
}

/// What a run did and found.
#[derive(Debug, Default)]
pub struct Outcome {
    /// Every command of the write phase, in no particular order.
    pub ran: Vec<Ran>,
    /// The write phase's wall time.
    pub wall: Duration,
    /// Commits on the remote's state branch at the end.
    pub remote_commits: usize,
    /// Sync rounds after the writes stopped until every tip agreed (`None`: never, in 4).
    pub convergence_rounds: Option<usize>,
    /// Events acknowledged (exit 0) and found at the end.
    pub events_acknowledged: usize,
    /// `claim.lost` events at the end.
    pub lost_claims: usize,
    /// Every broken promise, one sentence each.
    pub violations: Vec<String>,
}

impl Outcome {
    /// Returns the commands that exited 2, and all commands.
    pub fn exit2(&self) -> (usize, usize) {
        (
            self.ran.iter().filter(|r| r.code == 2).count(),
            self.ran.len(),
        )
    }

    /// Returns the longest run of consecutive exit-2 commands on one machine, with how long
    /// it lasted.
    pub fn longest_exit2_streak(&self) -> (usize, Duration) {
        let mut best = (0, Duration::ZERO);
        for m in self.machines() {
            let mut mine: Vec<&Ran> = self.ran.iter().filter(|r| r.machine == m).collect();
            mine.sort_by_key(|r| r.start);
            let (mut len, mut from) = (0, Duration::ZERO);
            for r in mine {
                if r.code == 2 {
                    if len == 0 {
                        from = r.start;
                    }
                    len += 1;
                    if len > best.0 {
                        best = (len, r.end.saturating_sub(from));
                    }
                } else {
                    len = 0;
                }
            }
        }
        best
    }

    /// Returns `(commands, exit 0, exit 2, other)` per kind.
    pub fn by_kind(&self) -> BTreeMap<Kind, [usize; 4]> {
        let mut out: BTreeMap<Kind, [usize; 4]> = BTreeMap::new();
        for r in &self.ran {
            let row = out.entry(r.kind).or_default();
            row[0] += 1;
            match r.code {
                0 => row[1] += 1,
                2 => row[2] += 1,
                _ => row[3] += 1,
            }
        }
        out
    }

    fn machines(&self) -> BTreeSet<usize> {
        self.ran.iter().map(|r| r.machine).collect()
    }
}

/// One machine as a worker thread sees it: enough to run the binary against its clone.
#[derive(Clone)]
struct Machine {
    index: usize,
    name: String,
    repo: PathBuf,
    home: PathBuf,
}

impl Machine {
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(crate::env::binary());
        cmd.args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("AGENT_COORD_GIT_DIR", &self.repo)
            .env("AGENT_COORD_MACHINE_ID", &self.name)
            .stdin(Stdio::null());
        cmd
    }

    fn agent(&self) -> String {
        format!("a{}", self.index)
    }
}

/// Runs the workload on a fresh fleet and checks it.
pub fn run(opts: Options) -> Outcome {
    let fleet = Fleet::new(opts.machines);
    let machines: Vec<Machine> = fleet
        .machines
        .iter()
        .enumerate()
        .map(|(index, env)| {
            env.unpin_clock();
            env.run(["init", "--sync-by-default"]).success();
            Machine {
                index,
                name: format!("box-{index}"),
                repo: env.repo.clone(),
                home: env.root().join("home"),
            }
        })
        .collect();
    let t0 = Instant::now();
    let ran: Vec<Ran> = std::thread::scope(|scope| {
        let workers: Vec<_> = machines
            .iter()
            .map(|m| scope.spawn(move || work(m, opts, t0)))
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().expect("worker thread"))
            .collect()
    });
    let mut out = Outcome {
        wall: t0.elapsed(),
        ran,
        ..Outcome::default()
    };
    let mut told: Vec<(usize, String)> = out
        .ran
        .iter()
        .map(|r| (r.machine, r.output.clone()))
        .collect();
    out.convergence_rounds = converge(&fleet, &machines, &mut told);
    check(&fleet, &mut out, &told);
    out
}

/// Runs one machine's share of the workload.
fn work(m: &Machine, opts: Options, t0: Instant) -> Vec<Ran> {
    let mut rng = fastrand::Rng::with_seed(opts.seed.wrapping_add(m.index as u64 * 7919));
    let agent = m.agent();
    let mut held: Option<String> = None;
    let mut local: Option<String> = None;
    let mut ran = Vec::new();
    for n in 0..opts.ops {
        let roll = rng.u32(0..100);
        let shared = format!("{}", rng.usize(0..opts.shared_targets.max(1)));
        let own = format!("m{}-{n}", m.index);
        let message = format!("{}-e{n}", m.name);
        let (kind, target, args): (Kind, String, Vec<String>) = match roll {
            0..=34 if held.is_some() => {
                let t = held.take().unwrap_or_default();
                (Kind::Release, t.clone(), release(&agent, &t, true))
            }
            0..=34 if local.is_some() => {
                let t = local.take().unwrap_or_default();
                (Kind::ReleaseLocal, t.clone(), release(&agent, &t, false))
            }
            0..=34 => (
                Kind::ClaimShared,
                shared.clone(),
                claim(&agent, SHARED_REPO, &shared, Some("--sync")),
            ),
            35..=46 => (
                Kind::ClaimOwn,
                own.clone(),
                claim(&agent, "acme/own", &own, None),
            ),
            47..=51 if held.is_none() && local.is_none() => (
                Kind::ClaimLocal,
                shared.clone(),
                claim(&agent, SHARED_REPO, &shared, Some("--no-sync")),
            ),
            47..=62 => (
                Kind::Heartbeat,
                String::new(),
                strings(&["heartbeat", "--agent-id", agent.as_str()]),
            ),
            63..=90 => (
                Kind::Event,
                String::new(),
                strings(&[
                    "record-event",
                    "--batch-id",
                    BATCH,
                    "--type",
                    "note",
                    "--agent-id",
                    agent.as_str(),
                    "--message",
                    message.as_str(),
                ]),
            ),
            _ => (Kind::Sync, String::new(), strings(&["sync"])),
        };
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let start = t0.elapsed();
        let output = m.command(&argv).output().expect("agent-coord runs");
        let end = t0.elapsed();
        let code = output.status.code().unwrap_or(-1);
        match (kind, code) {
            (Kind::ClaimShared, 0) => held = Some(target.clone()),
            (Kind::ClaimLocal, 0) => local = Some(target.clone()),
            _ => {}
        }
        ran.push(Ran {
            machine: m.index,
            kind,
            target,
            message: if kind == Kind::Event {
                message
            } else {
                String::new()
            },
            start,
            end,
            code,
            output: format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ),
        });
    }
    // A holder lets go at the end, so every belief has an end.
    if let Some(t) = held {
        let args = release(&agent, &t, true);
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let start = t0.elapsed();
        let output = m.command(&argv).output().expect("agent-coord runs");
        ran.push(Ran {
            machine: m.index,
            kind: Kind::Release,
            target: t,
            message: String::new(),
            start,
            end: t0.elapsed(),
            code: output.status.code().unwrap_or(-1),
            output: format!(
                "{}{}",
                String::from_utf8_lossy(&output.stdout),
                String::from_utf8_lossy(&output.stderr)
            ),
        });
    }
    ran
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| (*s).to_owned()).collect()
}

fn claim(agent: &str, repo: &str, target: &str, sync: Option<&str>) -> Vec<String> {
    let mut args = strings(&[
        "claim",
        "--agent-id",
        agent,
        "--repo",
        repo,
        "--target",
        target,
    ]);
    args.extend(sync.map(str::to_owned));
    args
}

fn release(agent: &str, target: &str, sync: bool) -> Vec<String> {
    let mut args = strings(&[
        "release",
        "--agent-id",
        agent,
        "--repo",
        SHARED_REPO,
        "--target",
        target,
    ]);
    if sync {
        args.push("--sync".into());
    }
    args
}

/// Syncs every machine once per round, in turn, until every tip equals the remote's;
/// returns the rounds that took. What the syncs printed is added to `told`.
fn converge(fleet: &Fleet, machines: &[Machine], told: &mut Vec<(usize, String)>) -> Option<usize> {
    for round in 1..=4 {
        for m in machines {
            let out = m.command(&["sync"]).output().expect("agent-coord runs");
            told.push((
                m.index,
                format!(
                    "{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                ),
            ));
        }
        let remote = fleet.remote_tip("refs/heads/agent-coord");
        if remote.is_some() && fleet.machines.iter().all(|env| env.state_tip() == remote) {
            return Some(round);
        }
    }
    None
}

/// Checks the promises on the converged fleet.
fn check(fleet: &Fleet, out: &mut Outcome, told: &[(usize, String)]) {
    let mut v = Vec::new();
    match out.convergence_rounds {
        Some(r) if r <= 2 => {}
        Some(r) => v.push(format!("tips converged only after {r} sync rounds")),
        None => v.push("tips did not converge in 4 sync rounds".to_owned()),
    }
    let env = &fleet.machines[0];
    out.remote_commits = env
        .git(&["rev-list", "--count", "refs/heads/agent-coord"])
        .parse()
        .unwrap_or(0);
    let events = records(&env.repo, &format!("events/{BATCH}"));
    let messages: BTreeSet<&str> = events
        .iter()
        .filter_map(|e| e["message"].as_str())
        .collect();
    for r in out
        .ran
        .iter()
        .filter(|r| r.kind == Kind::Event && r.code == 0)
    {
        out.events_acknowledged += 1;
        if !messages.contains(r.message.as_str()) {
            v.push(format!("event {} (exit 0) is missing", r.message));
        }
    }
    beliefs(&out.ran, &mut v);
    // Every claim.lost names a loser whose machine printed `lost claim <target>: <agent>`,
    // or whose `claim --sync` was refused because another claim reached the remote first.
    let mut lost: BTreeMap<(String, String), usize> = BTreeMap::new();
    for dir in ["events/fleet", "events/agent-coord-sync"] {
        for e in records(&env.repo, dir) {
            if e["type"] == "claim.lost" {
                let key = (
                    e["agent_id"].as_str().unwrap_or_default().to_owned(),
                    format!(
                        "{}#{}",
                        e["repo"].as_str().unwrap_or_default(),
                        e["target"].as_str().unwrap_or_default()
                    ),
                );
                *lost.entry(key).or_default() += 1;
            }
        }
    }
    out.lost_claims = lost.values().sum();
    for ((agent, label), n) in &lost {
        let line = format!("lost claim {label}: {agent} ");
        let refused = format!("CLAIM_REFUSED: active claim for {label} held by");
        let machine: Option<usize> = agent.strip_prefix('a').and_then(|i| i.parse().ok());
        let said: usize = told
            .iter()
            .filter(|(m, _)| Some(*m) == machine)
            .map(|(_, t)| {
                t.matches(&line).count()
                    + t.lines()
                        .filter(|l| l.contains(&refused) && l.contains("first"))
                        .count()
            })
            .sum();
        if said < *n {
            v.push(format!(
                "{agent} lost {label} {n} times but was told {said} times"
            ));
        }
    }
    for repo in std::iter::once(&fleet.remote).chain(fleet.machines.iter().map(|m| &m.repo)) {
        let fsck = git(repo, &["--git-dir", ".", "fsck", "--no-progress"]);
        if !fsck.status.success() {
            v.push(format!(
                "git fsck {}: {}",
                repo.display(),
                String::from_utf8_lossy(&fsck.stderr).trim()
            ));
        }
    }
    out.violations = v;
}

/// Checks that no two agents were told they hold one shared target at the same time, and
/// that every holder's release found its claim still its own.
fn beliefs(ran: &[Ran], v: &mut Vec<String>) {
    // (target, agent machine, told at, let go at)
    let mut held: Vec<(String, usize, Duration, Duration)> = Vec::new();
    for r in ran
        .iter()
        .filter(|r| r.kind == Kind::ClaimShared && r.code == 0)
    {
        let release = ran
            .iter()
            .filter(|x| x.machine == r.machine && x.kind == Kind::Release && x.target == r.target)
            .filter(|x| x.start >= r.end)
            .min_by_key(|x| x.start);
        let until = release.map_or(Duration::MAX, |x| x.start);
        if let Some(x) = release.filter(|x| x.code != 0 && x.code != 2) {
            v.push(format!(
                "a{} was told it holds {SHARED_REPO}#{} but its release exited {}: {}",
                r.machine,
                r.target,
                x.code,
                x.output.trim()
            ));
        }
        held.push((r.target.clone(), r.machine, r.end, until));
    }
    for (i, a) in held.iter().enumerate() {
        for b in &held[i + 1..] {
            if a.0 == b.0 && a.1 != b.1 && a.2 < b.3 && b.2 < a.3 {
                v.push(format!(
                    "a{} and a{} were both told they hold {SHARED_REPO}#{} ({:?}..{:?} and {:?}..{:?})",
                    a.1, b.1, a.0, a.2, a.3, b.2, b.3
                ));
            }
        }
    }
}

/// Returns every record below `prefix` on the state branch of `repo`.
fn records(repo: &std::path::Path, prefix: &str) -> Vec<Value> {
    let dir = repo.to_str().expect("utf-8 path");
    let listing = git(
        repo,
        &[
            "--git-dir",
            dir,
            "ls-tree",
            "-r",
            "--object-only",
            "refs/heads/agent-coord",
            prefix,
        ],
    );
    let ids = String::from_utf8_lossy(&listing.stdout).into_owned();
    if ids.trim().is_empty() {
        return Vec::new();
    }
    let mut child = Command::new("git")
        .args(["--git-dir", dir, "cat-file", "--batch"])
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("git runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let feed = std::thread::spawn(move || stdin.write_all(ids.as_bytes()));
    let out = child.wait_with_output().expect("git finishes");
    let _ = feed.join();
    let mut rest = out.stdout.as_slice();
    let mut records = Vec::new();
    // Each object: "<id> blob <size>\n<bytes>\n".
    while let Some(nl) = rest.iter().position(|b| *b == b'\n') {
        let header = String::from_utf8_lossy(&rest[..nl]).into_owned();
        let size: usize = header
            .rsplit(' ')
            .next()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let body = rest.get(nl + 1..nl + 1 + size).unwrap_or_default();
        if let Ok(value) = serde_json::from_slice(body) {
            records.push(value);
        }
        rest = rest.get(nl + 2 + size..).unwrap_or_default();
    }
    records
}
