//! `agent-coord doctor`: is the coordination repository usable from here?
//!
//! The light check never parses records; `--deep` parses every one. `--stack-json` is the
//! machine contract for fleet health tooling: strictly read-only, exit 0/1/2, 64 on usage.

use agent_coord_shared::output::doctor::Details;
use agent_coord_shared::output::doctor::DoctorReport;
use agent_coord_shared::output::doctor::StackCheck;
use agent_coord_shared::output::doctor::StackHealth;
use agent_coord_shared::snapshot::Snapshot;

use super::sync::sync_info;
use crate::command_error::CommandError;
use crate::command_error::ErrorKind;
use crate::context::Context;
use crate::output::Report;
use crate::store::MachineSource;
use crate::store::OpenOptions;
use crate::store::Store;

/// Check that the coordination repository can be read and written from here
#[derive(clap::Args, Debug)]
pub(crate) struct DoctorArgs {
    /// Also parse every record (slower; finds unreadable records)
    #[arg(long)]
    deep: bool,
    /// Print the report as JSON
    #[arg(long, conflicts_with = "stack_json")]
    json: bool,
    /// Print the stack-health contract (needs an explicit --repo-dir; exit 0 healthy, 1 degraded, 2 failed)
    #[arg(long)]
    stack_json: bool,
}

/// Returns the result of one `--stack-json` check.
fn check(
    id: &'static str,
    status: &'static str,
    summary: impl Into<String>,
    guidance: Option<&str>,
) -> StackCheck {
    StackCheck {
        id,
        status,
        summary: summary.into(),
        details: Details::default(),
        guidance: guidance.map(str::to_owned),
    }
}

/// Checks the state layout without parsing records: each top-level folder must be a tree.
fn layout_problem(store: &Store) -> Result<Option<String>, CommandError> {
    let snap = store.snapshot()?;
    let Some(tree) = snap.tree else {
        return Ok(None);
    };
    let tree = store
        .repo
        .find_tree(tree)
        .map_err(|e| CommandError::operational(e.to_string()))?;
    for prefix in ["claims", "batches", "events", "archive", "coordinator"] {
        if let Ok(Some(entry)) = tree.lookup_entry_by_path(prefix) {
            if !entry.mode().is_tree() {
                return Ok(Some(format!(
                    "state layout invalid: {prefix} is not a directory"
                )));
            }
        }
    }
    Ok(None)
}

/// Parses every record on the branch and the heartbeat refs.
fn deep_problem(store: &Store) -> Result<Option<String>, CommandError> {
    let snap = store.snapshot()?;
    for prefix in [
        "claims",
        "batches",
        "events",
        "archive",
        "coordinator",
        "heartbeats",
    ] {
        if let Err(e) = snap.list(prefix) {
            return Ok(Some(e.to_string()));
        }
    }
    Ok(None)
}

/// Probes whether objects and refs can be written here (a read-only mount, a full disk or
/// missing permissions), with a file that is removed at once.
fn write_problem(store: &Store) -> Option<String> {
    let dir = store.repo.git_dir().join("objects");
    let probe = dir.join(format!("tmp_doctor_probe_{}", std::process::id()));
    match std::fs::write(&probe, b"probe") {
        Ok(()) => {
            let _ = std::fs::remove_file(&probe);
            None
        }
        Err(e) => Some(format!(
            "the coordination repository cannot be written here ({}: {e}); writes will fail until it is writable",
            dir.display()
        )),
    }
}

/// Names each damaged line of the repository's `packed-refs` file (git reports only that a
/// reference cannot be decoded).
fn packed_refs_report(cx: &Context) -> Vec<String> {
    let Ok((path, _)) = cx.repo_path() else {
        return Vec::new();
    };
    let file = [
        path.join("packed-refs"),
        path.join(".git").join("packed-refs"),
    ]
    .into_iter()
    .find(|f| f.is_file());
    let Some(file) = file else {
        return Vec::new();
    };
    let Ok(text) = std::fs::read_to_string(&file) else {
        return vec![format!("{} is not readable text", file.display())];
    };
    agent_coord_shared::repair::packed_refs_problems(&text)
        .into_iter()
        .map(|bad| {
            format!(
                "{} line {} is damaged ({:?}); remove or repair that line (a ref it named may need `agent-coord sync` or git to restore)",
                file.display(),
                bad.number,
                bad.text
            )
        })
        .collect()
}

pub(crate) fn cmd_doctor(cx: &Context, args: &DoctorArgs) -> Result<Report, CommandError> {
    if args.stack_json {
        return stack(cx);
    }
    // A damaged packed-refs file breaks every ref read after it: name it first.
    let packed = packed_refs_report(cx);
    if !packed.is_empty() {
        return Err(CommandError::operational(packed.join("; ")));
    }
    let (store, notices) = cx.open_store(false)?;
    let mut problems = Vec::new();
    if let Some(p) = write_problem(&store) {
        problems.push(p);
    }
    if let Some(p) = layout_problem(&store)? {
        problems.push(p);
    }
    if args.deep {
        if let Some(p) = deep_problem(&store)? {
            problems.push(p);
        }
    }
    let tip = store.tip()?;
    let heartbeat_refs = store.heartbeat_refs()?;
    // A ref lock file is normal for milliseconds; one that lingers was left by a writer
    // that died, and writes wait on it (and remove it once it is old enough).
    let warnings: Vec<String> = [store.state_ref.clone(), store.heartbeat_ref()]
        .iter()
        .map(|r| store.repo.git_dir().join(format!("{r}.lock")))
        .filter_map(|lock| {
            let age = std::fs::metadata(&lock)
                .ok()?
                .modified()
                .ok()?
                .elapsed()
                .ok()?;
            Some(format!(
                "lock file present for {}s: {}",
                age.as_secs(),
                lock.display()
            ))
        })
        .collect();
    let remotes: Vec<String> = store
        .repo
        .remote_names()
        .iter()
        .map(|r| r.to_string())
        .collect();
    let (session_id, session_source) = cx.session();
    let status = if problems.is_empty() { "ok" } else { "error" };
    let doc = DoctorReport {
        version: env!("CARGO_PKG_VERSION"),
        backend: "git",
        repository: store.path.display().to_string(),
        state_ref: store.state_ref.clone(),
        tip: tip.map(|t| t.to_string()),
        heartbeat_refs: heartbeat_refs.len(),
        mode: if remotes.is_empty() {
            "local"
        } else {
            "shared"
        },
        remotes,
        machine_id: store.machine.to_string(),
        machine_id_source: store.machine_source.as_str(),
        session_id,
        session_source,
        deep: args.deep,
        status,
        problems,
        warnings,
        sync: sync_info(&store),
    };
    let mut report = if args.json {
        Report::json(&doc)
    } else {
        let mut out = String::from("agent-coord doctor\n");
        for (key, text) in [
            ("version", doc.version.to_owned()),
            ("backend", doc.backend.to_owned()),
            ("repository", doc.repository.clone()),
            ("state_ref", doc.state_ref.clone()),
            ("tip", doc.tip.clone().unwrap_or_else(|| "none".into())),
            ("heartbeat_refs", doc.heartbeat_refs.to_string()),
            ("mode", doc.mode.to_owned()),
            ("machine_id", doc.machine_id.clone()),
            ("machine_id_source", doc.machine_id_source.to_owned()),
            ("session_source", doc.session_source.clone()),
        ] {
            out.push_str(&format!("{key}: {text}\n"));
        }
        out.push_str(&format!(
            "mode: {}\n",
            if args.deep { "deep" } else { "lightweight" }
        ));
        out.push_str(&format!("status: {status}\n"));
        if let Some(sync) = &doc.sync {
            out.push_str(&sync.line());
            out.push('\n');
        }
        for w in &doc.warnings {
            out.push_str(&format!("warning: {w}\n"));
        }
        for p in &doc.problems {
            out.push_str(&format!("- {p}\n"));
        }
        Report::text(out)
    };
    if let Some(first) = doc.problems.first() {
        // The full report is printed; the failure is the first problem, exit 2.
        report.stderr = notices;
        report.stderr.push(first.clone());
        report.exit = ErrorKind::Operational.exit_code();
        return Ok(report);
    }
    Ok(report.with_stderr(notices))
}

/// The `--stack-json` contract: one explicit selector, read-only, a check list, exit 0/1/2.
fn stack(cx: &Context) -> Result<Report, CommandError> {
    let stack_usage = |m: &str| CommandError::new(ErrorKind::StackUsage, m);
    if !cx.direct_repo_dir {
        return Err(stack_usage(
            "doctor --stack-json requires exactly one of --repo-dir",
        ));
    }
    let Some(path) = cx
        .globals
        .repo_dir
        .clone()
        .filter(|p| !p.as_os_str().is_empty())
    else {
        return Err(stack_usage(
            "doctor --stack-json repository selector requires a non-empty value",
        ));
    };
    let mut checks = vec![check(
        "cli.version",
        "healthy",
        format!("agent-coord {}", env!("CARGO_PKG_VERSION")),
        None,
    )];
    let opened = Store::open(OpenOptions {
        path: &path,
        create: false,
        state_ref: cx.state_ref(),
        machine_override: None,
        generate_machine: false,
    });
    match opened {
        Err(e) => {
            checks.push(check(
                "backend.readability",
                "failed",
                e.to_string(),
                Some("pass --repo-dir with an existing clone or bare repository"),
            ));
            checks.push(check(
                "resources.deep",
                "failed",
                "not checked: repository unreadable",
                None,
            ));
            checks.push(check(
                "identity.machine",
                "failed",
                "not checked: repository unreadable",
                None,
            ));
        }
        Ok(store) => {
            match layout_problem(&store) {
                Ok(None) => checks.push(check(
                    "backend.readability",
                    "healthy",
                    format!("{} readable", store.state_ref),
                    None,
                )),
                Ok(Some(p)) => checks.push(check("backend.readability", "failed", p, None)),
                Err(e) => checks.push(check("backend.readability", "failed", e.message, None)),
            }
            match deep_problem(&store) {
                Ok(None) => checks.push(check(
                    "resources.deep",
                    "healthy",
                    "every record parses",
                    None,
                )),
                Ok(Some(p)) => checks.push(check(
                    "resources.deep",
                    "failed",
                    p,
                    Some("fix or remove the unreadable record with a commit on the state branch"),
                )),
                Err(e) => checks.push(check("resources.deep", "failed", e.message, None)),
            }
            let env_machine = std::env::var("AGENT_COORD_MACHINE_ID")
                .ok()
                .filter(|m| !m.trim().is_empty());
            match (env_machine, store.machine_source) {
                (Some(m), _) => checks.push(check(
                    "identity.machine",
                    "healthy",
                    format!("machine {m} (environment)"),
                    None,
                )),
                (None, MachineSource::Unset) => checks.push(check(
                    "identity.machine",
                    "degraded",
                    "no machine id yet",
                    Some("set AGENT_COORD_MACHINE_ID or run any write once to generate one"),
                )),
                (None, _) => checks.push(check(
                    "identity.machine",
                    "healthy",
                    format!("machine {} (repository config)", store.machine),
                    None,
                )),
            }
        }
    }
    let overall = if checks.iter().any(|c| c.status == "failed") {
        "failed"
    } else if checks.iter().any(|c| c.status == "degraded") {
        "degraded"
    } else {
        "healthy"
    };
    let mut report = Report::json(&StackHealth {
        schema_version: 1,
        component: "agent-coordination",
        status: overall,
        checks,
    });
    report.exit = match overall {
        "healthy" => 0,
        "degraded" => 1,
        _ => 2,
    };
    Ok(report)
}
