//! `coordinator-demo [--port N] [--delay SECONDS] [--exit-when-done]` (`make demo-coordinator`):
//! the real `agent-coord coordinate --follow` against the tests' fake GitHub, its lanes the
//! built-in adapters (`agent-coord lane claude|codex|gemini|grok`) driving fake vendor CLIs
//! that replay each vendor's event stream (`fake-vendor`), while `agent-coord serve` shows the
//! coordination repository on the dashboard.
//!
//! Three issues are assigned to the worker by a human: one goes straight through, one's
//! implementer first asks a question (a stranger's answer is ignored, then the authorized
//! human's reply resumes it), and one's checks fail once (a fresh implementer gets their
//! output). Each becomes a signed draft pull request whose checks, four PR gates and GitHub
//! CI pass on its head; the review account approves it, the coordinator marks it ready, and
//! the human merges it, after which the task is done. At the end the demo prints every task's
//! lane runs (vendor, model, tokens, cost, and whether the transcript they point at is on disk
//! with the recorded digest) and the spend totals of `coordinate --json` and `status --json`.
//! Everything lives in a temporary directory removed on exit, and every server listens on
//! 127.0.0.1 only.
#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::io::BufRead;
use std::io::BufReader;
use std::process::Child;
use std::process::ExitCode;
use std::process::ExitStatus;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;
use std::time::Instant;

use agent_coord_tests::coord;
use agent_coord_tests::coord::Coord;
use agent_coord_tests::coord::HUMAN;
use agent_coord_tests::coord::REPO;
use agent_coord_tests::coord::STRANGER;
use agent_coord_tests::coord::WORKER;
use serde_json::Value;

const USAGE: &str = "usage: coordinator-demo [--port N] [--delay SECONDS] [--exit-when-done]

  --port N          dashboard port on 127.0.0.1 (default 4320; 0 picks a free one)
  --delay SECONDS   how long each scripted lane and check takes (default 1)
  --exit-when-done  stop once every task is done (else serve until Ctrl-C)";

/// The phase where the human merges: a ready pull request with a formal approval.
const MERGE_PHASE: &str = "await_merge";
/// How long the scenario may take before the demo gives up, on top of the lanes' delays.
const DEADLINE: Duration = Duration::from_secs(120);
/// Ticks of the coordinator between the question and the human's reply.
const TICKS_BEFORE_REPLY: u64 = 2;

/// The command line.
struct Args {
    port: u16,
    delay: u64,
    exit_when_done: bool,
}

/// Returns the parsed command line, or a message (empty for `--help`).
fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut parsed = Args {
        port: 4320,
        delay: 1,
        exit_when_done: false,
    };
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--port" => {
                let value = args.next().ok_or("--port needs a value")?;
                parsed.port = value.parse().map_err(|_| format!("bad port {value:?}"))?;
            }
            "--delay" => {
                let value = args.next().ok_or("--delay needs a value")?;
                parsed.delay = value
                    .parse()
                    .map_err(|_| format!("bad delay {value:?} (whole seconds)"))?;
            }
            "--exit-when-done" => parsed.exit_when_done = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    Ok(parsed)
}

/// One issue of the scenario.
struct Issue {
    title: &'static str,
    body: &'static str,
    /// What happens to it, for the operator.
    story: &'static str,
    /// A lane or check script and the behaviours it has for this task only.
    script: Option<(&'static str, &'static [&'static str])>,
    /// Whether its implementer asks a question the human answers.
    asks: bool,
}

const ISSUES: [Issue; 3] = [
    Issue {
        title: "Add a feature file",
        body: "Please add feature.txt with a first entry.",
        story: "goes straight through",
        script: None,
        asks: false,
    },
    Issue {
        title: "Record the second change",
        body: "The feature needs a second entry; ask if the place is unclear.",
        story: "its implementer asks a question first; the human's reply resumes it",
        script: Some(("implementer", &["ask", "done"])),
        asks: true,
    },
    Issue {
        title: "Harden the feature",
        body: "Make the feature file pass the header check.",
        story: "its checks fail once; a fresh implementer gets their output",
        script: Some(("check", &["fail", "pass"])),
        asks: false,
    },
];

const STRANGER_REPLY: &str = "Put it anywhere, it does not matter.";
const HUMAN_REPLY: &str = "Append it to feature.txt at the repository root.";

/// What the main loop hears about.
enum Event {
    /// One tick's JSON report from `coordinate --follow --json`.
    Tick(Value),
    /// The coordinator's stdout closed: it exited.
    CoordinatorGone,
    /// Ctrl-C reached the demo.
    Interrupted,
}

/// A child process that is killed on drop if it is still running.
struct Running {
    name: &'static str,
    child: Child,
}

impl Running {
    /// Asks the child to stop with SIGINT (Ctrl-C) and waits up to 30 s, then kills it.
    fn interrupt(&mut self) -> Option<ExitStatus> {
        if let Ok(Some(status)) = self.child.try_wait() {
            return Some(status);
        }
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGINT,
            );
        }
        let until = Instant::now() + Duration::from_secs(30);
        while Instant::now() < until {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!("{} did not stop within 30 s; killing it", self.name);
        let _ = self.child.kill();
        self.child.wait().ok()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn main() -> ExitCode {
    let args = match parse_args(std::env::args().skip(1)) {
        Ok(args) => args,
        Err(message) if message.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("error: {message}\n{USAGE}");
            return ExitCode::from(1);
        }
    };
    let (tx, rx) = mpsc::channel();
    watch_ctrl_c(tx.clone());
    match run(&args, &tx, &rx) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(2)
        }
    }
}

/// Sends [`Event::Interrupted`] on Ctrl-C. The children share the terminal's process group,
/// so they get the same signal and stop by themselves.
fn watch_ctrl_c(tx: mpsc::Sender<Event>) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("warning: cannot watch for Ctrl-C: {e}");
            return;
        }
    };
    std::thread::spawn(move || {
        runtime.block_on(async {
            if tokio::signal::ctrl_c().await.is_ok() {
                let _ = tx.send(Event::Interrupted);
            }
        });
    });
}

fn run(args: &Args, tx: &mpsc::Sender<Event>, rx: &mpsc::Receiver<Event>) -> Result<(), String> {
    println!("coordinator demo: building the scenario in a temporary directory …");
    let c = Coord::with_options(&coord::Options {
        lane_timeout: 60 + args.delay,
        lane_delay: args.delay,
        real_clock: true,
        adapters: true,
        ..coord::Options::default()
    });
    c.gh.ci_plan(REPO, &[], "success");
    let mut numbers = Vec::new();
    for issue in &ISSUES {
        let n = c.gh.open_issue(REPO, HUMAN, issue.title, issue.body);
        c.gh.assign(REPO, n, WORKER, HUMAN);
        if let Some((script, modes)) = issue.script {
            c.queue_for(&task_id(n), script, modes);
        }
        numbers.push(n);
    }

    let (mut serve, dashboard) = start_dashboard(&c, args.port)?;
    println!();
    println!("dashboard:    {dashboard}/batches/coordinator-w1   (overview: {dashboard}/)");
    println!("fake GitHub:  {}   (REST API and /_control)", c.gh.url());
    println!("state:        {}   (temporary)", c.env.repo.display());
    println!();
    println!(
        "lanes (adapter objects in coordinator.json; the vendor CLIs are fake-vendor stand-ins):"
    );
    if let Some(lanes) = Coord::adapter_lanes().as_object() {
        for (slot, lane) in lanes {
            println!(
                "  {slot:<26} agent-coord lane {} --model {}{}",
                text(&lane["adapter"]),
                text(&lane["model"]),
                lane["effort"]
                    .as_str()
                    .map(|e| format!(" --effort {e}"))
                    .unwrap_or_default()
            );
        }
    }
    for (name, path) in &c.vendor_bins {
        println!("  {name}={}", path.display());
    }
    println!();
    println!("{HUMAN} assigned {REPO} issues to {WORKER}:");
    for (issue, n) in ISSUES.iter().zip(&numbers) {
        println!("  #{n} {:?}: {}", issue.title, issue.story);
    }
    println!();
    println!("agent-coord coordinate --worker w1 --follow --json --config coordinator.json");

    let mut coordinate = Running {
        name: "agent-coord coordinate",
        child: c
            .coordinate(&["--follow", "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start agent-coord coordinate: {e}"))?,
    };
    let stdout = coordinate
        .child
        .stdout
        .take()
        .ok_or("the coordinator has no stdout")?;
    let ticks = tx.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Ok(doc) = serde_json::from_str::<Value>(&line) {
                let _ = ticks.send(Event::Tick(doc));
            }
        }
        let _ = ticks.send(Event::CoordinatorGone);
    });

    let deadline = DEADLINE + Duration::from_secs(14 * args.delay);
    let Some(last_tick) = drive(&c, &numbers, rx, deadline)? else {
        return Ok(());
    };
    report(&c, &numbers, &dashboard);
    report_spend(&c, &numbers, &last_tick);

    if args.exit_when_done {
        let status = coordinate.interrupt();
        serve.interrupt();
        return match status {
            Some(s) if s.success() => {
                println!("\nthe coordinator stopped cleanly (exit 0); demo done");
                Ok(())
            }
            other => Err(format!("the coordinator ended with {other:?}")),
        };
    }
    println!();
    println!("The coordinator keeps ticking (nothing more to do) and the dashboard keeps serving.");
    println!("Assign another issue and watch it arrive:");
    let url = c.gh.url();
    println!(
        "  curl -s -X POST {url}/_control/repos/{REPO}/issues -H 'content-type: application/json' \\\n    -d '{{\"author\":\"{HUMAN}\",\"title\":\"Another change\",\"body\":\"Add a line.\"}}'"
    );
    println!("then, with N the number that answer names:");
    println!(
        "  curl -s -X POST {url}/_control/repos/{REPO}/issues/N/assign -H 'content-type: application/json' \\\n    -d '{{\"assignee\":\"{WORKER}\",\"actor\":\"{HUMAN}\"}}'"
    );
    println!("Ctrl-C stops the demo and removes its temporary directory.");
    let mut last = None;
    loop {
        match rx.recv() {
            Ok(Event::Tick(doc)) => print_tick(&doc, &mut last),
            Ok(Event::Interrupted) | Err(_) => break,
            Ok(Event::CoordinatorGone) => {
                let status = coordinate.child.wait().ok();
                println!("the coordinator stopped ({status:?}); the dashboard keeps serving");
                match rx.recv() {
                    Ok(Event::Interrupted) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        }
    }
    coordinate.interrupt();
    serve.interrupt();
    println!("stopped");
    Ok(())
}

/// Starts `agent-coord serve` on the coordination repository; returns it and its URL.
fn start_dashboard(c: &Coord, port: u16) -> Result<(Running, String), String> {
    let port = port.to_string();
    let mut serve = Running {
        name: "agent-coord serve",
        child: c
            .env
            .command(["serve", "--host", "127.0.0.1", "--port", port.as_str()])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("cannot start agent-coord serve: {e}"))?,
    };
    let stdout = serve.child.stdout.take().ok_or("serve has no stdout")?;
    let mut reader = BufReader::new(stdout);
    let mut line = String::new();
    let _ = reader.read_line(&mut line);
    let url = line
        .split_whitespace()
        .last()
        .unwrap_or_default()
        .trim_end_matches('/')
        .to_owned();
    if !url.starts_with("http://127.0.0.1:") {
        let status = serve.child.wait().ok();
        return Err(format!(
            "agent-coord serve did not start ({status:?}); is port {port} in use? try --port 0"
        ));
    }
    // Keep reading what the server prints, as a terminal would.
    std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
    Ok((serve, url))
}

/// Returns the coordinator's task id of issue `n` of the demo repository.
fn task_id(n: u64) -> String {
    format!("{}.{n}", REPO.replace('/', "."))
}

/// Follows the coordinator until every task is done, playing the humans on the way (the
/// replies, and the merge of each ready pull request), and returns the last tick's report
/// (`Ok(None)` when the operator interrupted the demo).
fn drive(
    c: &Coord,
    numbers: &[u64],
    rx: &mpsc::Receiver<Event>,
    deadline: Duration,
) -> Result<Option<Value>, String> {
    let started = Instant::now();
    let mut ticks = 0u64;
    let mut last_tick = None;
    let mut last_doc = Value::Null;
    let mut phases: BTreeMap<u64, String> = BTreeMap::new();
    let mut asked_at: BTreeMap<u64, u64> = BTreeMap::new();
    let mut stranger_done = false;
    let mut replied = false;
    let mut merged = std::collections::BTreeSet::new();
    loop {
        match rx.recv_timeout(Duration::from_millis(250)) {
            Ok(Event::Tick(doc)) => {
                ticks += 1;
                print_tick(&doc, &mut last_tick);
                last_doc = doc;
            }
            Ok(Event::CoordinatorGone) => {
                return Err("the coordinator stopped before every task was done".into())
            }
            Ok(Event::Interrupted) => return Ok(None),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err("lost the coordinator".into()),
        }
        let mut done = 0;
        for (issue, &n) in ISSUES.iter().zip(numbers) {
            let task = c.task(n);
            let state = task["state"].as_str().unwrap_or_default();
            let phase = task["phase"].as_str().unwrap_or_default();
            let now = if task.is_null() {
                "not admitted yet".to_owned()
            } else if state == "active" {
                phase.to_owned()
            } else {
                format!(
                    "{state} (resume {})",
                    task["resume_phase"].as_str().unwrap_or("-")
                )
            };
            if phases.get(&n) != Some(&now) && !task.is_null() {
                println!(
                    "  [{:>5.1} s] {}: {now}",
                    started.elapsed().as_secs_f64(),
                    task_id(n)
                );
                phases.insert(n, now);
            }
            if state == "done" {
                done += 1;
            }
            if phase == MERGE_PHASE && state == "active" && merged.insert(n) {
                if let Some(pr) = task["pr"].as_u64() {
                    println!("  {HUMAN} merges pull request #{pr} of #{n}");
                    c.gh.merge_pull(REPO, pr, Some(HUMAN));
                }
            }
            if issue.asks && state == "waiting" && task["question_comment_id"].is_u64() {
                let asked = *asked_at.entry(n).or_insert(ticks);
                if !stranger_done && ticks > asked {
                    println!(
                        "  {STRANGER} (not in reply_logins) answers on #{n}: {STRANGER_REPLY:?}"
                    );
                    c.gh.comment(REPO, n, STRANGER, STRANGER_REPLY);
                    stranger_done = true;
                }
                if !replied && ticks >= asked + TICKS_BEFORE_REPLY {
                    println!("  {HUMAN} (in reply_logins) answers on #{n}: {HUMAN_REPLY:?}");
                    c.gh.comment(REPO, n, HUMAN, HUMAN_REPLY);
                    replied = true;
                }
            }
        }
        if done == numbers.len() {
            // The tick that finished the last task committed before it printed its report:
            // wait for that report, so the demo shows everything that tick saw.
            if let Ok(Event::Tick(doc)) = rx.recv_timeout(Duration::from_secs(30)) {
                print_tick(&doc, &mut last_tick);
                last_doc = doc;
            }
            println!(
                "  [{:>5.1} s] every task is done",
                started.elapsed().as_secs_f64()
            );
            return Ok(Some(last_doc));
        }
        if started.elapsed() > deadline {
            return Err(format!(
                "not every task was done within {} s",
                deadline.as_secs()
            ));
        }
    }
}

/// Prints a tick's observations, unless they repeat the previous tick's.
fn print_tick(doc: &Value, last: &mut Option<Value>) {
    let observations = doc["observations"].clone();
    if last.as_ref() == Some(&observations) {
        return;
    }
    let requests = doc["github_requests"].as_u64().unwrap_or_default();
    let cached = doc["github_not_modified"].as_u64().unwrap_or_default();
    println!(
        "coordinate: tick done ({requests} GitHub requests, {cached} answered 304 Not Modified)"
    );
    if let Some(checks) = doc["preflight"].as_array() {
        for check in checks.iter().filter(|c| c["ok"] == false) {
            println!(
                "    preflight FAILED {}: {}",
                text(&check["check"]),
                text(&check["detail"])
            );
        }
    }
    for o in observations.as_array().into_iter().flatten() {
        let error = if o["error"] == true { "error: " } else { "" };
        match o["task"].as_str() {
            Some(task) => println!("    {task}: {error}{}", text(&o["message"])),
            None => println!("    {error}{}", text(&o["message"])),
        }
    }
    *last = Some(observations);
}

fn text(v: &Value) -> &str {
    v.as_str().unwrap_or_default()
}

/// Returns a comment body on one line, without the hidden marker, at most 120 characters.
fn one_line(body: &str) -> String {
    let visible: String = body
        .lines()
        .filter(|l| !l.trim_start().starts_with("<!--"))
        .collect::<Vec<_>>()
        .join(" ");
    let line = visible.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > 120 {
        format!("{}…", line.chars().take(119).collect::<String>())
    } else {
        line
    }
}

/// Prints the comments and pull requests on the fake GitHub, each task's checkpoint, and what
/// the dashboard shows for each issue.
fn report(c: &Coord, numbers: &[u64], dashboard: &str) {
    println!();
    println!("Comments on the fake GitHub:");
    for &n in numbers {
        println!("  {REPO}#{n}");
        for comment in c.gh.issue_comments(REPO, n) {
            println!(
                "    {}: {}",
                text(&comment["user"]["login"]),
                one_line(text(&comment["body"]))
            );
        }
    }
    println!("Pull requests on the fake GitHub:");
    for pr in c.gh.pulls(REPO) {
        let sha = text(&pr["head"]["sha"]);
        println!(
            "  pull request #{} {:?}: {}{}, {} -> {}, head {} by {}",
            pr["number"],
            text(&pr["title"]),
            if pr["draft"] == true {
                "draft"
            } else {
                "ready"
            },
            if pr["merged"] == true { ", merged" } else { "" },
            text(&pr["head"]["ref"]),
            text(&pr["base"]["ref"]),
            &sha[..sha.len().min(12)],
            text(&pr["user"]["login"]),
        );
    }
    println!("Tasks (coordinator/tasks/{REPO}/<issue>.json on the state branch):");
    for &n in numbers {
        let task = c.task(n);
        let checked = text(&task["evidence"]["checks_passed"]);
        println!(
            "  task {}: phase {}, state {}, pull request #{}, {} implementer round(s), checks passed on {}",
            task_id(n),
            text(&task["phase"]),
            text(&task["state"]),
            task["pr"],
            task["rounds"],
            &checked[..checked.len().min(12)],
        );
    }
    let batch = format!("{dashboard}/api/batches/coordinator-w1");
    match ureq::get(&batch).call().map(|r| r.into_json::<Value>()) {
        Ok(Ok(detail)) => {
            println!("On the dashboard ({batch}):");
            for row in detail["rows"].as_array().into_iter().flatten() {
                let Some(item) = text(&row["id"]).strip_prefix("target:") else {
                    continue;
                };
                println!(
                    "  dashboard {item}: status {}, row state {}, latest event {:?}",
                    text(&row["status"]),
                    text(&row["state"]),
                    text(&row["message"]),
                );
            }
        }
        Ok(Err(e)) => println!("the dashboard's answer is not JSON: {e}"),
        Err(e) => println!("cannot read {batch}: {e}"),
    }
    println!(
        "Merge calls on the fake GitHub: {} (the coordinator never merges)",
        c.gh.merge_calls()
    );
    println!(
        "Audit trail: git --git-dir {} log --oneline agent-coord",
        c.env.repo.display()
    );
}

/// Prints every task's lane runs from its checkpoint, checking that each transcript pointer
/// names a file on this machine with the recorded size and digest, then the spend totals of
/// the last tick's `coordinate --json` and of `status --json`.
fn report_spend(c: &Coord, numbers: &[u64], last_tick: &Value) {
    use sha2::Digest;
    let root = c.dir.join("ws");
    println!(
        "Lane runs (lane_runs of each task checkpoint; transcripts under the workspace root):"
    );
    for &n in numbers {
        let task = c.task(n);
        for run in task["lane_runs"].as_array().into_iter().flatten() {
            let tokens: u64 = [
                "input_tokens",
                "output_tokens",
                "cache_read_tokens",
                "cache_write_tokens",
            ]
            .iter()
            .filter_map(|k| run[*k].as_u64())
            .sum();
            let cost = run["cost_usd"]
                .as_f64()
                .map_or_else(|| "cost unknown".to_owned(), |usd| format!("${usd:.4}"));
            let transcript = match run["transcript"]["path"].as_str() {
                None => "no transcript".to_owned(),
                Some(path) => {
                    let state = match std::fs::read(root.join(path)) {
                        Err(_) => "MISSING".to_owned(),
                        Ok(bytes) => {
                            let digest: String = sha2::Sha256::digest(&bytes)
                                .iter()
                                .map(|b| format!("{b:02x}"))
                                .collect();
                            let same_size =
                                run["transcript"]["bytes"].as_u64() == Some(bytes.len() as u64);
                            let same_digest =
                                text(&run["transcript"]["sha256"]) == format!("sha256:{digest}");
                            match (same_size, same_digest) {
                                (true, true) => "on disk, sha256 matches".to_owned(),
                                _ => "on disk, CHANGED since the run".to_owned(),
                            }
                        }
                    };
                    format!(
                        "transcript {path} ({} bytes, {state})",
                        run["transcript"]["bytes"]
                    )
                }
            };
            println!(
                "  run {} {} round {} {}: vendor {}, model {}, verdict {}, {tokens} tokens, {cost} ({}), {transcript}",
                task_id(n),
                text(&run["phase"]),
                run["round"],
                text(&run["slot"]),
                run["vendor"].as_str().unwrap_or("-"),
                run["model"].as_str().unwrap_or("-"),
                text(&run["verdict"]),
                text(&run["cost_source"]),
            );
        }
    }
    let spend = |s: &Value| {
        let tokens: u64 = [
            "input_tokens",
            "output_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
        ]
        .iter()
        .filter_map(|k| s[*k].as_u64())
        .sum();
        format!(
            "{} lane runs, {tokens} tokens, ${:.4}, {} of unknown cost",
            s["runs"],
            s["cost_usd"].as_f64().unwrap_or_default(),
            s["unpriced_runs"]
        )
    };
    let costs = &last_tick["costs"];
    println!("Spend (the last tick's coordinate --json \"costs\"):");
    println!("  spend total: {}", spend(&costs["total"]));
    for group in ["tasks", "workers", "repositories", "batches", "days"] {
        for (key, value) in costs[group].as_object().into_iter().flatten() {
            println!("  spend {group} {key}: {}", spend(value));
        }
    }
    let status = c.env.command(["status", "--json"]).output();
    match status.map(|o| serde_json::from_slice::<Value>(&o.stdout)) {
        Ok(Ok(doc)) => println!(
            "  status --json costs total: {}",
            spend(&doc["costs"]["total"])
        ),
        Ok(Err(e)) => println!("  status --json is not JSON: {e}"),
        Err(e) => println!("  cannot run agent-coord status --json: {e}"),
    }
}
