//! The `serve --demo` fleet: a temporary coordination repository kept moving by a small simulated
//! fleet, so the dashboard can be seen working without any real agents.
//!
//! Every write goes through the ordinary CLI commands (real commits, real heartbeat refs).
//! The scenario covers each state the dashboard distinguishes: running lanes whose phase
//! moves, QA events, one wedged lane (live, no transition for 40 minutes), one dead holder,
//! one lane blocked on a dependency, one finished lane and one batch with a stop request.

use std::path::Path;
use std::time::Duration;

use agent_coord_shared::record::EventKind;
use agent_coord_shared::time::Instant;
use serde::Serialize;

use super::create_repository;
use super::pinned_context;
use super::RunArgv;
use crate::command_error::CommandError;

/// The machine id the dashboard itself writes as in the demo.
pub(crate) const MACHINE: &str = "demo-m1";
const REPO: &str = "demo/coordination-showcase";

/// The demo repository and the command runner that moves it.
#[derive(Clone, Copy)]
struct Fleet<'a> {
    dir: &'a Path,
    run: RunArgv,
}

impl Fleet<'_> {
    fn step(self, at: Instant, machine: &str, argv: &[&str]) -> Result<(), CommandError> {
        (self.run)(&pinned_context(self.dir, at, machine)?, argv)?.map(|_| ())
    }
}

/// A demo batch as `register-batch --file` reads it.
#[derive(Debug, Serialize)]
struct DemoBatch {
    batch_id: &'static str,
    repo: &'static str,
    objective: &'static str,
    targets: Vec<DemoTarget>,
    lanes: Vec<DemoLane>,
}

impl DemoBatch {
    /// Returns the batch of pull requests `items` (number, lane, title) with its lanes.
    fn new(
        batch_id: &'static str,
        objective: &'static str,
        items: &[(&'static str, &str, &'static str)],
        lanes: Vec<DemoLane>,
    ) -> Self {
        let targets = items
            .iter()
            .map(|(n, _, title)| DemoTarget {
                kind: "pull_request",
                target: n,
                title,
                url: format!("https://github.com/{REPO}/pull/{n}"),
            })
            .collect();
        DemoBatch {
            batch_id,
            repo: REPO,
            objective,
            targets,
            lanes,
        }
    }
}

/// One pull request of a demo batch.
#[derive(Debug, Serialize)]
struct DemoTarget {
    #[serde(rename = "type")]
    kind: &'static str,
    target: &'static str,
    title: &'static str,
    url: String,
}

/// One lane of a demo batch, with the metadata the dashboard shows.
#[derive(Debug, Serialize)]
struct DemoLane {
    name: &'static str,
    owner: &'static str,
    targets: [&'static str; 1],
    status: &'static str,
    depends_on: Vec<&'static str>,
    host: &'static str,
    operator: &'static str,
    thread_handle: String,
}

impl DemoLane {
    /// Returns a lane of one target, held by `owner` through codex.
    fn new(
        name: &'static str,
        owner: &'static str,
        target: &'static str,
        status: &'static str,
        depends_on: &[&'static str],
    ) -> Self {
        DemoLane {
            name,
            owner,
            targets: [target],
            status,
            depends_on: depends_on.to_vec(),
            host: "codex",
            operator: "ops",
            thread_handle: format!("thread-{owner}"),
        }
    }
}

fn register(
    fleet: Fleet<'_>,
    at: Instant,
    manifest: &DemoBatch,
    prompt: &str,
) -> Result<(), CommandError> {
    let io = |e: std::io::Error| CommandError::operational(format!("demo scratch file: {e}"));
    let scratch = tempfile::tempdir().map_err(io)?;
    let file = scratch.path().join("manifest.json");
    let prompt_file = scratch.path().join("prompt.txt");
    let manifest = serde_json::to_string(manifest)
        .map_err(|e| CommandError::operational(format!("demo manifest: {e}")))?;
    std::fs::write(&file, manifest).map_err(io)?;
    std::fs::write(&prompt_file, prompt).map_err(io)?;
    let (f, p) = (path_str(&file), path_str(&prompt_file));
    fleet.step(
        at,
        MACHINE,
        &["register-batch", "--file", &f, "--launch-prompt", &p],
    )
}

fn path_str(p: &Path) -> String {
    p.display().to_string()
}

fn prompt(id: &str, objective: &str, items: &[(&str, &str, &str)]) -> String {
    let mut text = format!(
        "Use $pr-batch to complete this batch with subagents.\n\nRepository: {REPO}\nBatch id: {id}\nBatch objective: {objective}\nItems:\n"
    );
    for (n, _, title) in items {
        text.push_str(&format!(
            "- PR #{n}: https://github.com/{REPO}/pull/{n}\n  Context: {title}\n"
        ));
    }
    text.push_str("Suggested lanes:\n");
    for (n, lane, _) in items {
        text.push_str(&format!("- {lane} (owner: unassigned): PR #{n}\n"));
    }
    text
}

/// Agent, machine, target, batch, lane.
const AGENTS: [(&str, &str, &str, &str); 6] = [
    ("demo-agent-1", "demo-m1", "101", "demo-platform"),
    ("demo-agent-2", "demo-m2", "102", "demo-platform"),
    ("demo-agent-3", "demo-m2", "103", "demo-platform"),
    ("demo-agent-4", "demo-m3", "104", "demo-platform"),
    ("demo-agent-5", "demo-m3", "201", "demo-release"),
    ("demo-agent-6", "demo-m1", "202", "demo-release"),
];

/// Populates `dir` with the demo fleet at the current time.
pub(crate) fn seed(dir: &Path, run: RunArgv) -> Result<(), CommandError> {
    create_repository(dir, MACHINE)?;
    let fleet = Fleet { dir, run };
    let now = chrono::Utc::now();
    let mins = |m: i64| now - chrono::Duration::minutes(m);
    let platform_items = [
        ("101", "api", "Add the lease API"),
        ("102", "ui", "Dashboard polish"),
        ("103", "docs", "Document the lease API"),
        ("104", "infra", "Runner images"),
    ];
    let release_items = [
        ("201", "notes", "Release notes"),
        ("202", "tag", "Tag the release"),
    ];
    register(
        fleet,
        mins(120),
        &DemoBatch::new(
            "demo-platform",
            "Ship the lease API with its docs and runner images.",
            &platform_items,
            vec![
                DemoLane::new("api", "demo-agent-1", "101", "in_progress", &[]),
                DemoLane::new("ui", "demo-agent-2", "102", "in_progress", &[]),
                DemoLane::new(
                    "docs",
                    "demo-agent-3",
                    "103",
                    "waiting",
                    &["demo-platform:api"],
                ),
                DemoLane::new("infra", "demo-agent-4", "104", "in_progress", &[]),
            ],
        ),
        &prompt(
            "demo-platform",
            "Ship the lease API with its docs and runner images.",
            &platform_items,
        ),
    )?;
    register(
        fleet,
        mins(90),
        &DemoBatch::new(
            "demo-release",
            "Cut the release.",
            &release_items,
            vec![
                DemoLane::new("notes", "demo-agent-5", "201", "in_progress", &[]),
                DemoLane::new("tag", "demo-agent-6", "202", "merged", &[]),
            ],
        ),
        &prompt("demo-release", "Cut the release.", &release_items),
    )?;
    for (agent, machine, target, batch) in AGENTS {
        let at = match agent {
            "demo-agent-2" => mins(40),
            "demo-agent-4" => mins(130),
            _ => mins(1),
        };
        if agent != "demo-agent-3" && agent != "demo-agent-6" {
            fleet.step(
                at,
                machine,
                &[
                    "claim",
                    "--agent-id",
                    agent,
                    "--repo",
                    REPO,
                    "--target",
                    target,
                    "--batch-id",
                    batch,
                ],
            )?;
            beat(
                fleet,
                at,
                machine,
                agent,
                target,
                batch,
                "implementing",
                "600",
            )?;
        }
    }
    // The wedged lane is alive now, but its phase has not moved for 40 minutes.
    beat(
        fleet,
        now,
        "demo-m2",
        "demo-agent-2",
        "102",
        "demo-platform",
        "implementing",
        "60",
    )?;
    fleet.step(
        mins(20),
        "demo-m3",
        &[
            "record-event",
            "--batch-id",
            "demo-release",
            "--type",
            "qa.validation_requested",
            "--agent-id",
            "demo-agent-5",
            "--repo",
            REPO,
            "--target",
            "201",
            "--message",
            "QA asked for the release notes",
        ],
    )?;
    fleet.step(
        mins(5),
        MACHINE,
        &[
            "record-event",
            "--batch-id",
            "demo-release",
            "--type",
            EventKind::BatchStopRequested.as_str(),
            "--status",
            "stop_requested",
            "--repo",
            REPO,
            "--message",
            "Hold the release until the API lands.",
        ],
    )?;
    Ok(())
}

/// One heartbeat of `agent` on `REPO#target` in `batch`.
#[allow(clippy::too_many_arguments)]
fn beat(
    fleet: Fleet<'_>,
    at: Instant,
    machine: &str,
    agent: &str,
    target: &str,
    batch: &str,
    status: &str,
    ttl: &str,
) -> Result<(), CommandError> {
    fleet.step(
        at,
        machine,
        &[
            "heartbeat",
            "--agent-id",
            agent,
            "--repo",
            REPO,
            "--target",
            target,
            "--batch-id",
            batch,
            "--status",
            status,
            "--ttl",
            ttl,
        ],
    )
}

const PHASES: [&str; 4] = ["implementing", "verifying", "pushing", "review"];
const QA: [&str; 3] = [
    "qa.validation_requested",
    "qa.validation_started",
    "qa.validation_passed",
];

/// Keeps the fleet moving every 3 seconds until the process ends.
pub(crate) fn run(dir: &Path, run: RunArgv) {
    let fleet = Fleet { dir, run };
    let mut tick: usize = 0;
    loop {
        std::thread::sleep(Duration::from_secs(3));
        tick += 1;
        if let Err(e) = tick_once(fleet, tick) {
            use std::io::Write as _;
            let _ = writeln!(std::io::stderr(), "demo: {}", e.message);
        }
    }
}

fn tick_once(fleet: Fleet<'_>, tick: usize) -> Result<(), CommandError> {
    let now = chrono::Utc::now();
    let beat = |agent: &str, machine: &str, target: &str, batch: &str, status: &str| {
        beat(fleet, now, machine, agent, target, batch, status, "60")
    };
    // Running lane: its phase moves every fourth tick.
    beat(
        "demo-agent-1",
        "demo-m1",
        "101",
        "demo-platform",
        PHASES[(tick / 4) % PHASES.len()],
    )?;
    // Wedged lane: alive, but its phase never moves.
    beat(
        "demo-agent-2",
        "demo-m2",
        "102",
        "demo-platform",
        "implementing",
    )?;
    // QA lane: validation requested → started → passed, round and round.
    beat(
        "demo-agent-5",
        "demo-m3",
        "201",
        "demo-release",
        "implementing",
    )?;
    if tick.is_multiple_of(5) {
        let kind = QA[(tick / 5) % QA.len()];
        fleet.step(
            now,
            "demo-m3",
            &[
                "record-event",
                "--batch-id",
                "demo-release",
                "--type",
                kind,
                "--agent-id",
                "demo-agent-5",
                "--repo",
                REPO,
                "--target",
                "201",
            ],
        )?;
    }
    Ok(())
}
