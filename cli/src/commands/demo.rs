//! `agent-coord demo`: a deterministic walkthrough of refusal, stale and dead liveness,
//! and takeover, in a temporary repository that is removed afterwards.

use agent_coord_shared::rules::liveness;
use agent_coord_shared::snapshot::Snapshot;

use super::run_argv;
use crate::command_error::CommandError;
use crate::command_error::ErrorKind;
use crate::context::Context;
use crate::demo::create_repository;
use crate::demo::pinned_context;
use crate::output::Report;

/// Walk through a claim race in a throwaway repository (touches nothing of yours)
///
/// Uses a fixed clock starting at 2026-01-01T12:00:00Z, so the output is identical on
/// every run.
#[derive(clap::Args, Debug)]
pub(crate) struct DemoArgs {}

const START: &str = "2026-01-01T12:00:00Z";

fn context(dir: &std::path::Path, offset_secs: i64) -> Result<Context, CommandError> {
    let start = agent_coord_shared::time::parse(START)
        .ok_or_else(|| CommandError::operational("demo clock"))?;
    pinned_context(
        dir,
        start + chrono::Duration::seconds(offset_secs),
        "demo-machine",
    )
}

/// Runs one CLI command inside the demo at `offset_secs`.
fn step(
    dir: &std::path::Path,
    offset_secs: i64,
    argv: &[&str],
) -> Result<Result<Report, CommandError>, CommandError> {
    run_argv(&context(dir, offset_secs)?, argv)
}

fn failed(what: &str) -> CommandError {
    CommandError::operational(format!("demo step failed: {what}"))
}

fn liveness_at(dir: &std::path::Path, offset_secs: i64) -> Result<String, CommandError> {
    let cx = context(dir, offset_secs)?;
    let (store, _) = cx.open_store(false)?;
    let snap = store.snapshot()?;
    let beat = snap
        .read("heartbeats/demo-alpha.json")?
        .ok_or_else(|| failed("heartbeat missing"))?;
    Ok(liveness::of_record(&beat, cx.now()).to_string())
}

pub(crate) fn cmd_demo(_: &DemoArgs) -> Result<Report, CommandError> {
    let temp = tempfile::tempdir().map_err(|e| {
        CommandError::operational(format!("demo: cannot create a temporary directory: {e}"))
    })?;
    let dir = temp.path().join("state.git");
    create_repository(&dir, "demo-machine")?;
    let mut out =
        format!("agent-coord demo: isolated temporary repository, clock starts {START}\n");
    let claim = [
        "claim",
        "--repo",
        "demo/example",
        "--target",
        "1",
        "--agent-id",
    ];
    let ok = |r: Result<Report, CommandError>, what: &str| {
        r.map_err(|e| failed(&format!("{what}: {}", e.message)))
    };

    let r = ok(
        step(
            &dir,
            0,
            &[&claim[..], &["demo-alpha", "--ttl", "3600"]].concat(),
        )?,
        "first claim",
    )?;
    out.push_str(&format!("+0s    demo-alpha: {}", r.stdout));
    let r = ok(
        step(
            &dir,
            0,
            &[
                "heartbeat",
                "--agent-id",
                "demo-alpha",
                "--repo",
                "demo/example",
                "--target",
                "1",
                "--ttl",
                "60",
            ],
        )?,
        "heartbeat",
    )?;
    out.push_str(&format!("+0s    demo-alpha: {}", r.stdout));
    match step(&dir, 30, &[&claim[..], &["demo-beta"]].concat())? {
        Err(e) if e.kind == ErrorKind::ClaimRefused => {
            out.push_str(&format!("+30s   demo-beta: {}\n", e.message))
        }
        _ => {
            return Err(failed(
                "demo-beta's claim was not refused while demo-alpha was live",
            ))
        }
    }
    for (offset, want) in [(120, "stale"), (300, "dead")] {
        let seen = liveness_at(&dir, offset)?;
        if seen != want {
            return Err(failed(&format!(
                "heartbeat was {seen} at +{offset}s, expected {want}"
            )));
        }
        out.push_str(&format!(
            "+{offset}s{}status: heartbeat demo-alpha is {seen}\n",
            " ".repeat(6 - offset.to_string().len() - 1)
        ));
    }
    let r = ok(
        step(&dir, 300, &[&claim[..], &["demo-beta"]].concat())?,
        "takeover",
    )?;
    out.push_str(&format!("+300s  demo-beta: {}", r.stdout));
    out.push_str("takeover succeeded; holder is demo-beta\n");
    drop(temp);
    out.push_str("demo complete; temporary state removed\n");
    Ok(Report::text(out))
}
