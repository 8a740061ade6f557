//! Coordinators under load: three machines running one worker (clones of one coordination
//! remote, each its own workspace) against the fake GitHub with instant scripted lanes,
//! issues assigned over time, one machine SIGKILLed mid-tick and restarted, one killed for
//! good mid-tick (its tasks are taken over once its heartbeat is dead). Used by
//! `test_coordinator_soak` (small, in `make test`) and the `soak-coordinators` binary
//! (`make soak-coordinators`).
//!
//! The machines tick in rounds (`coordinate --wait` on all live machines at once), each round
//! 10 minutes later on the machines' pinned clocks. After the last issue is assigned, rounds
//! go on until every issue is a task that is Ready (awaiting the human merge) or waits for a
//! human; then [`Outcome::violations`] lists every broken promise.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::process::Output;
use std::time::Duration;
use std::time::Instant;

use serde_json::json;
use serde_json::Value;

use crate::coord::Coord;
use crate::coord::HUMAN;
use crate::coord::REPO;
use crate::coord::REVIEWER;
use crate::coord::WORKER_TOKEN;
use crate::env::TestEnv;
use crate::remote::Fleet;

/// The machine killed mid-tick and restarted on the next round.
pub const RESTARTED: usize = 1;
/// The machine killed mid-tick for good.
pub const DEAD: usize = 2;
/// Pinned-clock seconds between rounds.
const STEP: i64 = 600;

/// The size of a run.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// How many issues are assigned in all.
    pub issues: usize,
    /// How many are assigned before each round, until all are.
    pub per_round: usize,
    /// `max_lanes` of the worker on each machine.
    pub max_lanes: u64,
    /// The round in which [`RESTARTED`] is killed (it ticks again the round after).
    pub kill_round: usize,
    /// The round in which [`DEAD`] is killed for good.
    pub dead_round: usize,
    /// Rounds after which an unsettled run gives up (a violation).
    pub max_rounds: usize,
    /// Seeds the kill delays.
    pub seed: u64,
}

/// What a run did and saw.
#[derive(Debug)]
pub struct Outcome {
    /// The issue numbers, in assignment order.
    pub issues: Vec<u64>,
    /// Each issue's task checkpoint (`null` when none), from the remote's state.
    pub tasks: BTreeMap<u64, Value>,
    /// Lane runs per machine (`box-0`, `box-1`, `box-2`).
    pub lanes: [usize; 3],
    /// Implementer runs per task id.
    pub implementers: BTreeMap<String, usize>,
    /// Accept comments per issue.
    pub accepts: BTreeMap<u64, usize>,
    /// Pull requests per head branch.
    pub pulls: BTreeMap<String, usize>,
    /// Formal approvals per pull request.
    pub approvals: BTreeMap<u64, usize>,
    /// Ready mutations GitHub saw.
    pub ready_mutations: u64,
    /// Rounds run, and whether the run settled within `max_rounds`.
    pub rounds: usize,
    pub settled: bool,
    /// Ticks that exited non-zero (not counting the killed ones).
    pub failed_ticks: usize,
    /// Ticks killed with SIGKILL (from outside, or by their failpoint).
    pub kills: usize,
    /// Wall time of the rounds.
    pub wall: Duration,
}

impl Outcome {
    /// The tasks awaiting the human merge (Ready).
    pub fn ready(&self) -> Vec<&Value> {
        self.tasks
            .values()
            .filter(|t| t["state"] == "active" && t["phase"] == "await_merge")
            .collect()
    }

    /// The tasks that wait for a human (a question, a blocker, an unknown lane outcome).
    pub fn need_a_human(&self) -> Vec<&Value> {
        self.tasks
            .values()
            .filter(|t| {
                matches!(
                    t["state"].as_str(),
                    Some("waiting" | "uncertain" | "failed")
                )
            })
            .collect()
    }

    /// The tasks a machine took over from the dead one.
    pub fn taken_over(&self) -> Vec<&Value> {
        self.tasks
            .values()
            .filter(|t| t["previous_machines"].is_array())
            .collect()
    }

    /// Every broken promise, one sentence each.
    pub fn violations(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.settled {
            out.push(format!("not settled after {} rounds", self.rounds));
        }
        for issue in &self.issues {
            let task = &self.tasks[issue];
            if task.is_null() {
                out.push(format!("issue #{issue} never became a task"));
                continue;
            }
            let accepts = self.accepts.get(issue).copied().unwrap_or(0);
            if accepts != 1 {
                out.push(format!("issue #{issue}: {accepts} accept comments"));
            }
            let id = task["task_id"].as_str().unwrap_or_default();
            let rounds = task["rounds"].as_u64().unwrap_or(0) as usize;
            let ran = self.implementers.get(id).copied().unwrap_or(0);
            if ran > rounds {
                out.push(format!(
                    "{id}: {ran} implementer runs for {rounds} rounds (a model ran twice)"
                ));
            }
            if task["state"] == "active" && task["phase"] != "await_merge" {
                out.push(format!(
                    "{id}: active at {} without needing a human, never Ready",
                    task["phase"]
                ));
            }
            if task["phase"] == "await_merge" {
                let branch = task["branch"].as_str().unwrap_or_default();
                if self.pulls.get(branch).copied().unwrap_or(0) != 1 {
                    out.push(format!("{id}: Ready without exactly one pull request"));
                }
            }
        }
        for (branch, n) in &self.pulls {
            if *n > 1 {
                out.push(format!("{n} pull requests for {branch}"));
            }
        }
        for (pr, n) in &self.approvals {
            if *n > 1 {
                out.push(format!("pull request #{pr}: {n} formal approvals"));
            }
        }
        let ready = self.ready().len() as u64;
        if self.ready_mutations != ready {
            out.push(format!(
                "{} Ready mutations for {ready} Ready tasks",
                self.ready_mutations
            ));
        }
        let total: usize = self.lanes.iter().sum();
        for machine in [0, RESTARTED] {
            let share = self.lanes[machine] as f64 / total.max(1) as f64;
            if share < 0.25 {
                out.push(format!(
                    "box-{machine} ran {} of {total} lanes ({:.0} %, under 25 %)",
                    self.lanes[machine],
                    share * 100.0
                ));
            }
        }
        out
    }
}

/// Machines of one worker (`box-0`, `box-1`, …) through one coordination remote, each with
/// its own workspace and configuration, sharing the fake GitHub (CI green on every head) and
/// the scripted lanes, each lane wrapped to log where it ran (`lanes.log`: its directory and
/// script) after sleeping `lane_delay`.
pub struct Machines {
    /// The first machine's fixture (the fake GitHub, the recordings).
    pub c: Coord,
    envs: Vec<TestEnv>,
    configs: Vec<PathBuf>,
    _fleet: Fleet,
}

impl Machines {
    /// `n` machines with `max_lanes` each.
    pub fn new(n: usize, max_lanes: u64, lane_delay: Duration) -> Machines {
        let mut fleet = Fleet::new(n);
        let mut envs: Vec<TestEnv> = fleet.machines.drain(..).collect();
        let first = envs.remove(0);
        let c = Coord::with_env(first, 30);
        c.gh.ci_plan(REPO, &[], "success");
        let d = c.dir.display().to_string();
        let wrap = c.dir.join("wrap.sh");
        let sleep = match lane_delay.as_millis() {
            0 => String::new(),
            ms => format!("sleep {}\n", ms as f64 / 1000.0),
        };
        std::fs::write(
            &wrap,
            format!("#!/bin/sh\n{sleep}echo \"$PWD $1\" >> '{d}/lanes.log'\nexec \"$@\"\n"),
        )
        .expect("wrap script");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&wrap, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        let mut config = c.config_value(30);
        if let Some(lanes) = config["sessions"]["w1"]["lanes"].as_object_mut() {
            for argv in lanes.values_mut() {
                if let Some(items) = argv.as_array_mut() {
                    items.insert(0, json!(wrap.to_string_lossy()));
                }
            }
        }
        config["workers"]["w1"]["max_lanes"] = json!(max_lanes);
        let configs: Vec<PathBuf> = (0..n)
            .map(|i| {
                config["workers"]["w1"]["workspace_root"] =
                    json!(c.dir.join(format!("ws-box-{i}")).to_string_lossy());
                let path = c.dir.join(format!("box-{i}.json"));
                std::fs::write(&path, serde_json::to_vec_pretty(&config).expect("json"))
                    .expect("config");
                path
            })
            .collect();
        Machines {
            c,
            envs,
            configs,
            _fleet: fleet,
        }
    }

    /// Sets every machine's `poll_seconds` (the fixture's is 1).
    pub fn set_poll_seconds(&self, seconds: u64) {
        for path in &self.configs {
            let text = std::fs::read(path).expect("config");
            let mut config: Value = serde_json::from_slice(&text).expect("config json");
            config["workers"]["w1"]["poll_seconds"] = json!(seconds);
            std::fs::write(path, serde_json::to_vec_pretty(&config).expect("json"))
                .expect("config");
        }
    }

    /// Lane runs per machine, from `lanes.log`.
    pub fn lanes_per_machine(&self) -> Vec<usize> {
        let mut lanes = vec![0; self.configs.len()];
        for line in self.c.recorded("lanes.log").lines() {
            let (dir, _) = line.rsplit_once(' ').unwrap_or((line, ""));
            if let Some(i) = (0..lanes.len()).find(|i| dir.contains(&format!("/ws-box-{i}/"))) {
                lanes[i] += 1;
            }
        }
        lanes
    }

    /// `coordinate --worker w1` on machine `i` with its configuration and token, and the
    /// test failpoint `kill_at` when given.
    pub fn coordinate(&self, i: usize, kill_at: Option<&str>) -> Command {
        let mut env = vec![("W1_TOKEN", WORKER_TOKEN)];
        if let Some(point) = kill_at {
            env.push(("AGENT_COORD_TEST_KILL_AT", point));
        }
        self.c
            .coordinate_on(self.env(i), "w1", &self.configs[i], &env)
    }

    fn tick(&self, i: usize, kill_at: Option<&str>) -> Command {
        let mut cmd = self.coordinate(i, kill_at);
        cmd.arg("--wait");
        cmd
    }

    /// Machine `i`'s environment.
    pub fn env(&self, i: usize) -> &TestEnv {
        if i == 0 {
            &self.c.env
        } else {
            &self.envs[i - 1]
        }
    }
}

/// How one machine's tick of a round went.
enum Ran {
    Done(Output),
    Killed,
}

/// Runs `cmd`, or kills it with SIGKILL after `kill_after`.
fn run(mut cmd: Command, kill_after: Option<Duration>) -> Ran {
    let Some(after) = kill_after else {
        return Ran::Done(cmd.output().expect("agent-coord runs"));
    };
    cmd.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let mut child = cmd.spawn().expect("agent-coord starts");
    std::thread::sleep(after);
    let _ = child.kill();
    let _ = child.wait();
    Ran::Killed
}

/// Runs the soak.
pub fn run_soak(opts: Options) -> Outcome {
    let m = Machines::new(3, opts.max_lanes, Duration::ZERO);
    let c = &m.c;
    let mut rng = opts.seed.max(1);
    let mut next = move |below: u64| {
        // xorshift64: reproducible kill delays for one seed.
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % below.max(1)
    };
    let mut issues = Vec::new();
    let mut alive = [true; 3];
    let mut failed_ticks = 0;
    let began = Instant::now();
    let mut rounds = 0;
    let mut settled = false;
    let mut kills = 0;
    while rounds < opts.max_rounds {
        rounds += 1;
        let round = rounds;
        for (i, live) in alive.iter().enumerate() {
            if *live {
                m.env(i).at(STEP * round as i64);
            }
        }
        for _ in 0..opts.per_round {
            if issues.len() < opts.issues {
                let n = issues.len();
                issues.push(c.assigned_issue(&format!("Add feature file {n}"), HUMAN));
            }
        }
        let mut jobs = Vec::new();
        for (i, live) in alive.iter().enumerate() {
            if !live {
                continue;
            }
            // The restarted machine is killed from outside at a random moment of its tick;
            // the dead one kills itself right after it launched a lane, so it dies with
            // work in flight.
            let after = (i == RESTARTED && round == opts.kill_round)
                .then(|| Duration::from_millis(300 + next(1500)));
            let dies = i == DEAD && round == opts.dead_round;
            jobs.push((m.tick(i, dies.then_some("lanes-started")), after));
        }
        let ran: Vec<Ran> = std::thread::scope(|s| {
            let handles: Vec<_> = jobs
                .into_iter()
                .map(|(cmd, after)| s.spawn(move || run(cmd, after)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("tick thread"))
                .collect()
        });
        if std::env::var_os("SOAK_DEBUG").is_some() {
            for (i, r) in ran.iter().enumerate() {
                if let Ran::Done(out) = r {
                    eprintln!(
                        "--- round {round} machine {i}\n{}",
                        String::from_utf8_lossy(&out.stdout)
                    );
                }
            }
        }
        for r in &ran {
            match r {
                Ran::Killed => kills += 1,
                // Killed by its own failpoint (SIGKILL): no exit code.
                Ran::Done(out) if out.status.code().is_none() => kills += 1,
                Ran::Done(out) if !out.status.success() => failed_ticks += 1,
                Ran::Done(_) => {}
            }
        }
        if round == opts.dead_round {
            alive[DEAD] = false;
        }
        if issues.len() == opts.issues && round > opts.dead_round && all_settled(&m, &issues) {
            settled = true;
            break;
        }
    }
    let wall = began.elapsed();
    let mut out = outcome(&m, issues, rounds, settled, failed_ticks, wall);
    out.kills = kills;
    out
}

/// Whether every issue is a task that is Ready or waits for a human, in the remote's state.
fn all_settled(m: &Machines, issues: &[u64]) -> bool {
    let _ = m.c.env.run(["sync"]);
    issues.iter().all(|&n| {
        let task = m.c.task(n);
        (task["state"] == "active" && task["phase"] == "await_merge")
            || matches!(
                task["state"].as_str(),
                Some("waiting" | "uncertain" | "failed")
            )
    })
}

fn outcome(
    m: &Machines,
    issues: Vec<u64>,
    rounds: usize,
    settled: bool,
    failed_ticks: usize,
    wall: Duration,
) -> Outcome {
    let c = &m.c;
    let _ = c.env.run(["sync"]);
    let tasks: BTreeMap<u64, Value> = issues.iter().map(|&n| (n, c.task(n))).collect();
    let per_machine = m.lanes_per_machine();
    let lanes = [per_machine[0], per_machine[1], per_machine[2]];
    let mut implementers: BTreeMap<String, usize> = BTreeMap::new();
    for line in c.recorded("lanes.log").lines() {
        let (dir, script) = line.rsplit_once(' ').unwrap_or((line, ""));
        if script.ends_with("implementer.sh") {
            let id = dir.rsplit('/').next().unwrap_or_default().to_owned();
            *implementers.entry(id).or_default() += 1;
        }
    }
    let accepts = issues
        .iter()
        .map(|&n| {
            let count = c
                .comments(n)
                .iter()
                .filter(|(_, b)| b.starts_with("Accepted by the agent-coord coordinator"))
                .count();
            (n, count)
        })
        .collect();
    let mut pulls: BTreeMap<String, usize> = BTreeMap::new();
    let mut approvals = BTreeMap::new();
    for pull in c.gh.pulls(REPO) {
        let branch = pull["head"]["ref"].as_str().unwrap_or_default().to_owned();
        *pulls.entry(branch).or_default() += 1;
        let number = pull["number"].as_u64().unwrap_or(0);
        let approved =
            c.gh.reviews(REPO, number)
                .iter()
                .filter(|r| r["state"] == "APPROVED" && r["user"]["login"] == REVIEWER)
                .count();
        approvals.insert(number, approved);
    }
    Outcome {
        issues,
        tasks,
        lanes,
        implementers,
        accepts,
        pulls,
        approvals,
        ready_mutations: c.gh.stats().ready_mutations,
        rounds,
        settled,
        failed_ticks,
        kills: 0,
        wall,
    }
}
