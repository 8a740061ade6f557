//! Where `claim` and `status --json` spend their time: each run sets `AGENT_COORD_PHASES=1`,
//! so the binary prints the moment each phase of its work ended (microseconds since the Unix
//! epoch); set beside the moments this process spawned it and saw it exit, that gives
//! process start (exec, dynamic linking, runtime set-up until `main`), every phase, and exit.
//!
//! Optional comparisons, run interleaved with the binary under test so both see the same
//! machine: `AGENT_COORD_BASELINE_BIN` names another build of agent-coord (a "before"), and
//! `AGENT_COORD_PREDECESSOR` the predecessor's Ruby `bin/agent-coord`, which is run on a copy
//! of the generated state root the fixture imported (its local-files backend, the form it
//! was used in). Neither is part of this repository.

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;
use std::time::SystemTime;

use crate::cli::binary;
use crate::cli::cli_bin;
use crate::cli::fixture;
use crate::cli::median;
use crate::cli::ms;
use crate::cli::Fixture;

/// The phases of one run, in order, with their durations.
type Phases = Vec<(String, Duration)>;

/// Runs `args` with the phase marks on and returns the whole wall time and the phases.
fn run_marked(fx: &Fixture, bin: &Path, args: &[&str]) -> (Duration, Phases) {
    let mut cmd = cli_bin(bin, fx, args);
    cmd.env("AGENT_COORD_PHASES", "1");
    let spawned = SystemTime::now();
    let start = Instant::now();
    let out = cmd.output().expect("agent-coord runs");
    let whole = start.elapsed();
    let exited = SystemTime::now();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?} failed: {stderr}");
    // A build from before the phase marks prints none: only its whole time counts.
    let Some(line) = stderr
        .lines()
        .find_map(|l| l.strip_prefix("agent-coord phases: "))
    else {
        return (whole, Vec::new());
    };
    let micros = |t: SystemTime| {
        t.duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros())
    };
    let mut phases = Vec::new();
    let mut last = micros(spawned);
    let mut first = true;
    for field in line.split_whitespace() {
        let Some((name, at)) = field.split_once('=') else {
            continue;
        };
        let at: u128 = at.parse().unwrap_or(last);
        let name = if first { "process start" } else { name };
        first = false;
        phases.push((
            name.to_owned(),
            Duration::from_micros(at.saturating_sub(last) as u64),
        ));
        last = at;
    }
    phases.push((
        "exit".to_owned(),
        Duration::from_micros(micros(exited).saturating_sub(last) as u64),
    ));
    (whole, phases)
}

/// Medians per phase over `runs` (a phase repeated in one run, such as a retried attempt,
/// counts once with its summed time), in the order the phases first appeared.
fn phase_medians(runs: &[Phases]) -> Vec<(String, Duration)> {
    let mut order: Vec<String> = Vec::new();
    let mut samples: BTreeMap<String, Vec<Duration>> = BTreeMap::new();
    for run in runs {
        let mut summed: BTreeMap<&str, Duration> = BTreeMap::new();
        for (name, d) in run {
            if !order.contains(name) {
                order.push(name.clone());
            }
            *summed.entry(name.as_str()).or_default() += *d;
        }
        for name in &order {
            samples
                .entry(name.clone())
                .or_default()
                .push(summed.get(name.as_str()).copied().unwrap_or_default());
        }
    }
    order
        .into_iter()
        .map(|name| {
            let d = median(samples.remove(&name).unwrap_or_default());
            (name, d)
        })
        .collect()
}

/// The whole-process medians and phases of one binary for one command.
struct Timing {
    whole: Vec<Duration>,
    phases: Vec<Phases>,
}

impl Timing {
    fn new() -> Self {
        Timing {
            whole: Vec::new(),
            phases: Vec::new(),
        }
    }

    fn add(&mut self, (whole, phases): (Duration, Phases)) {
        self.whole.push(whole);
        self.phases.push(phases);
    }
}

/// Times a predecessor command (no phases) on the state root `root`.
fn run_predecessor(ruby_cli: &Path, root: &Path, args: &[&str]) -> Duration {
    let mut cmd = Command::new(ruby_cli);
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", root)
        .env("AGENT_COORD_STATE_ROOT", root)
        .env("AGENT_COORD_LOCAL", "1")
        .env("AGENT_COORD_MACHINE_ID", "bench-box")
        .current_dir(root)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let start = Instant::now();
    let out = cmd.output().expect("the predecessor runs");
    let took = start.elapsed();
    assert!(
        out.status.success(),
        "predecessor {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    took
}

/// Prints, for `status --json` (first, right after the import) and `claim` (a new target
/// each run) on a freshly imported fleet of `scale`, the whole-process median and the median of each phase; with the optional
/// comparisons, theirs beside it from the same interleaved runs.
pub fn bench_breakdown(scale: usize, runs: usize) {
    let (fx, _, _) = fixture(scale);
    let fx = &fx;
    let this = binary();
    let baseline = std::env::var_os("AGENT_COORD_BASELINE_BIN").map(PathBuf::from);
    let predecessor = std::env::var_os("AGENT_COORD_PREDECESSOR").map(PathBuf::from);
    let ruby_root = predecessor.as_ref().map(|_| {
        let root = fx.dir.join("predecessor-root");
        let copied = Command::new("cp")
            .arg("-a")
            .arg(fx.dir.join("legacy"))
            .arg(&root)
            .status()
            .expect("cp runs");
        assert!(copied.success(), "cannot copy the state root");
        root
    });
    let mut claim = (Timing::new(), Timing::new(), Vec::new());
    let mut status = (Timing::new(), Timing::new(), Vec::new());
    // `status --json` first: the figure is taken right after `import`.
    // Which build runs first alternates, so neither always follows the predecessor's run.
    for i in 0..runs.clamp(1, 15) {
        if i % 2 == 0 {
            status.0.add(run_marked(fx, &this, &["status", "--json"]));
        }
        if let Some(bin) = &baseline {
            status.1.add(run_marked(fx, bin, &["status", "--json"]));
        }
        if i % 2 == 1 {
            status.0.add(run_marked(fx, &this, &["status", "--json"]));
        }
        if let (Some(ruby), Some(root)) = (&predecessor, &ruby_root) {
            status
                .2
                .push(run_predecessor(ruby, root, &["status", "--json"]));
        }
    }
    for i in 0..runs {
        let target = format!("{}", 900_000 + i);
        let args = |agent: &str| {
            [
                "claim",
                "--agent-id",
                agent,
                "--repo",
                "acme/breakdown",
                "--target",
            ]
            .iter()
            .map(|s| s.to_string())
            .chain(std::iter::once(target.clone()))
            .collect::<Vec<String>>()
        };
        // The baseline claims its own target, one past ours, so both claim a new target.
        let ours = args(&format!("brk-{i}"));
        let ours: Vec<&str> = ours.iter().map(String::as_str).collect();
        if i % 2 == 0 {
            claim.0.add(run_marked(fx, &this, &ours));
        }
        if let Some(bin) = &baseline {
            let t = format!("{}", 800_000 + i);
            let theirs = [
                "claim",
                "--agent-id",
                "base",
                "--repo",
                "acme/breakdown",
                "--target",
                &t,
            ];
            claim.1.add(run_marked(fx, bin, &theirs));
        }
        if i % 2 == 1 {
            claim.0.add(run_marked(fx, &this, &ours));
        }
        if let (Some(ruby), Some(root)) = (&predecessor, &ruby_root) {
            claim.2.push(run_predecessor(
                ruby,
                root,
                &[
                    "claim",
                    "--agent-id",
                    &format!("brk-{i}"),
                    "--repo",
                    "acme/breakdown",
                    "--target",
                    &target,
                ],
            ));
        }
    }
    println!(
        "\n## scale {scale}: where the time goes (medians of {runs} claims, {} status runs)",
        runs.clamp(1, 15)
    );
    for (name, (ours, base, ruby)) in [("claim", claim), ("status --json", status)] {
        println!("\n`{name}`\n");
        let have_base = !base.whole.is_empty();
        if have_base {
            println!("| phase | this build | baseline |");
            println!("|---|---|---|");
        } else {
            println!("| phase | this build |");
            println!("|---|---|");
        }
        let theirs: BTreeMap<String, Duration> = phase_medians(&base.phases).into_iter().collect();
        let mine = phase_medians(&ours.phases);
        let mut names: Vec<String> = mine.iter().map(|(n, _)| n.clone()).collect();
        for (n, _) in phase_medians(&base.phases) {
            if !names.contains(&n) {
                names.push(n);
            }
        }
        let mine: BTreeMap<String, Duration> = mine.into_iter().collect();
        for n in &names {
            let cell =
                |m: &BTreeMap<String, Duration>| m.get(n).map_or("–".to_owned(), |d| ms(*d));
            if have_base {
                println!("| {n} | {} | {} |", cell(&mine), cell(&theirs));
            } else {
                println!("| {n} | {} |", cell(&mine));
            }
        }
        let whole = median(ours.whole.clone());
        if have_base {
            let b = median(base.whole.clone());
            println!(
                "| **whole process** | **{}** | **{}** ({:.2}× this build) |",
                ms(whole),
                ms(b),
                b.as_secs_f64() / whole.as_secs_f64()
            );
        } else {
            println!("| **whole process** | **{}** |", ms(whole));
        }
        if !ruby.is_empty() {
            let r = median(ruby);
            println!(
                "\npredecessor (Ruby, local state root) `{name}`: {} median, {:.1}× this build",
                ms(r),
                r.as_secs_f64() / whole.as_secs_f64()
            );
        }
    }
}
