//! `agent-coord import` / `export`: convert a predecessor state root (a folder of JSON
//! records) to and from the git state, losslessly (same JSON values, unknown fields kept).

use std::collections::BTreeMap;
use std::path::Path;
use std::path::PathBuf;

use agent_coord_shared::dashboard::inputs::annotations::ANNOTATIONS_DIR;
use agent_coord_shared::ids::is_repo_part;
use agent_coord_shared::ids::AgentId;
use agent_coord_shared::output::transfer::ExportAnswer;
use agent_coord_shared::output::transfer::ImportAnswer;
use agent_coord_shared::output::OrderedMap;
use agent_coord_shared::record::to_bytes;
use agent_coord_shared::record::Record;
use agent_coord_shared::rules::Plan;
use agent_coord_shared::snapshot::Snapshot;
use agent_coord_shared::transfer::is_container_name;
use agent_coord_shared::transfer::is_event_path;
use agent_coord_shared::transfer::join_files;
use agent_coord_shared::transfer::split_file;
use indicatif::ProgressBar;

use crate::command_error::CommandError;
use crate::context::Context;
use crate::output::Report;
use crate::progress;
use crate::transact::write;
use crate::transact::Written;

/// Top-level folders that hold records, in the order counts are reported.
const FAMILIES: [&str; 8] = [
    "claims",
    "heartbeats",
    "batches",
    "events",
    "history",
    "archive",
    "coordinator",
    ANNOTATIONS_DIR,
];

/// What a state root holds.
struct Root {
    /// Every record, by stored path.
    records: BTreeMap<String, Record>,
    /// How many records each top-level folder's files hold (a line of `history/x.jsonl`
    /// counts for history wherever its batch stores it).
    families: BTreeMap<&'static str, usize>,
    /// Files that are not records.
    skipped: usize,
}

/// Import a predecessor state root (claims/, heartbeats/, batches/, events/, history/, archive/)
///
/// Under events/ and history/, a `.jsonl` file is one record per line and a `.json` file
/// may hold an array of records; each line or element is stored on its own, in the events
/// folder of the batch its `batch_id` names, and export writes the file back. Everything lands in one commit (heartbeats on this machine's heartbeat ref). A record
/// that exists with different content is a conflict unless --overwrite. Malformed files
/// abort the import before anything is written.
#[derive(clap::Args, Debug)]
pub(crate) struct ImportArgs {
    /// The state root folder to read
    #[arg(long, value_name = "DIR")]
    from: PathBuf,
    /// Replace records that already exist with different content
    #[arg(long)]
    overwrite: bool,
    /// Print the result as JSON
    #[arg(long)]
    json: bool,
}

/// Export the current state as a predecessor state root folder
#[derive(clap::Args, Debug)]
pub(crate) struct ExportArgs {
    /// The folder to write (must not exist, or be empty)
    #[arg(long, value_name = "DIR")]
    to: PathBuf,
    /// Print the result as JSON
    #[arg(long)]
    json: bool,
}

/// Reports whether the file at root-relative `path` holds records.
fn is_record_file(path: &str) -> bool {
    path.ends_with(".json") || (is_event_path(path) && path.ends_with(".jsonl"))
}

/// Reads every record file below `root`, validating paths and JSON before anything is
/// written; `read` counts the folder entries done of those found so far.
fn read_root(root: &Path, read: &ProgressBar) -> Result<Root, CommandError> {
    if !root.is_dir() {
        return Err(CommandError::usage(format!(
            "import source is not a directory: {}",
            root.display()
        )));
    }
    let mut records = BTreeMap::new();
    let mut families: BTreeMap<&'static str, usize> = FAMILIES.iter().map(|f| (*f, 0)).collect();
    let mut skipped = 0;
    let mut stack = vec![(root.to_path_buf(), String::new())];
    while let Some((dir, rel)) = stack.pop() {
        let cannot_read = |e: std::io::Error| {
            CommandError::operational(format!("cannot read {}: {e}", dir.display()))
        };
        let entries = std::fs::read_dir(&dir)
            .map_err(cannot_read)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(cannot_read)?;
        read.inc_length(entries.len() as u64);
        for entry in entries {
            read.inc(1);
            let name = entry.file_name().to_string_lossy().into_owned();
            // Dot-files, lock files and temp files of the predecessor are not records.
            if name.starts_with('.') {
                continue;
            }
            let path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            let kind = entry
                .file_type()
                .map_err(|e| CommandError::operational(e.to_string()))?;
            if kind.is_dir() {
                if rel.is_empty() && !FAMILIES.contains(&name.as_str()) {
                    skipped += 1;
                    continue;
                }
                if !is_repo_part(&name) {
                    return Err(CommandError::usage(format!(
                        "import: unsafe path segment in {path}"
                    )));
                }
                if is_event_path(&path) && is_container_name(&name) {
                    return Err(CommandError::usage(format!(
                        "import: folder {path} is named like a record file; rename it"
                    )));
                }
                stack.push((entry.path(), path));
            } else if kind.is_file() && !rel.is_empty() && is_record_file(&path) {
                if !is_repo_part(&name) {
                    return Err(CommandError::usage(format!(
                        "import: unsafe path segment in {path}"
                    )));
                }
                let bytes = std::fs::read(entry.path())
                    .map_err(|e| CommandError::operational(format!("cannot read {path}: {e}")))?;
                let split = split_file(&path, &bytes)
                    .map_err(|e| CommandError::usage(format!("import: {e}")))?;
                let family = FAMILIES.iter().find(|f| path.starts_with(&format!("{f}/")));
                if let Some(n) = family.and_then(|f| families.get_mut(f)) {
                    *n += split.len();
                }
                records.extend(split);
            } else {
                skipped += 1;
            }
        }
    }
    Ok(Root {
        records,
        families,
        skipped,
    })
}

pub(crate) fn cmd_import(cx: &Context, args: &ImportArgs) -> Result<Report, CommandError> {
    let Root {
        records,
        families,
        skipped,
    } = {
        let read = progress::bar("import: reading files", 0, args.json);
        let root = read_root(&args.from, &read)?;
        read.finish();
        root
    };
    let mut heartbeats = Vec::new();
    let mut state = Vec::new();
    for (path, record) in &records {
        match path
            .strip_prefix("heartbeats/")
            .and_then(|p| p.strip_suffix(".json"))
        {
            Some(agent) => {
                let agent: AgentId = agent.parse().map_err(|_| {
                    CommandError::usage(format!("import: {path} does not name a valid agent id"))
                })?;
                heartbeats.push((path.clone(), agent, record.clone()));
            }
            None => state.push((path.clone(), record.clone())),
        }
    }
    let total = records.len();
    let writing = progress::bar("import: writing records", 0, args.json);
    cx.show_writes(&writing);
    let Written {
        done,
        mut notices,
        store,
        ..
    } = write(cx, |snap, _| {
        let mut existing: BTreeMap<String, Record> = BTreeMap::new();
        for family in FAMILIES {
            existing.extend(snap.list(family)?);
        }
        let differs = |path: &str, record: &Record| existing.get(path).is_some_and(|e| e != record);
        let conflicts: Vec<&String> = state
            .iter()
            .map(|(p, r)| (p, r))
            .chain(heartbeats.iter().map(|(p, _, r)| (p, r)))
            .filter(|(p, r)| differs(p, r))
            .map(|(p, _)| p)
            .collect();
        if let (false, Some(first)) = (args.overwrite, conflicts.first()) {
            return Err(CommandError::usage(format!(
                "import would replace {} existing records with different content (first: {first}); pass --overwrite to replace them",
                conflicts.len()
            )));
        }
        let new = |p: &str, r: &Record| existing.get(p) != Some(r);
        let mut plan = Plan::nothing("import", 0usize);
        plan.state = state.iter().filter(|(p, r)| new(p, r)).cloned().collect();
        plan.heartbeats = heartbeats
            .iter()
            .filter(|(p, _, r)| new(p, r))
            .map(|(_, a, r)| (a.clone(), r.clone()))
            .collect();
        plan.outcome = plan.state.len() + plan.heartbeats.len();
        plan.summary = format!(
            "import {} records from {}",
            plan.outcome,
            args.from.display()
        );
        Ok(plan)
    })?;
    writing.finish();
    let written = done.plan.outcome;
    // An import writes thousands of loose objects at once; pack them now rather than
    // leave every read to open them one by one.
    if written > 0 {
        let packing = progress::spinner("import: packing the repository".to_owned(), args.json);
        let packed = store.pack();
        packing.finish_and_clear();
        if let Err(e) = packed {
            notices.push(format!(
                "warning: imported, but could not pack the repository: {e}"
            ));
        }
    }
    let counts = OrderedMap(
        FAMILIES
            .iter()
            .map(|family| (*family, families.get(family).copied().unwrap_or_default()))
            .collect(),
    );
    let report = if args.json {
        Report::json(&ImportAnswer {
            result: "imported",
            records: total,
            written,
            unchanged: total - written,
            skipped_files: skipped,
            families: counts,
            commit: done.commit.map(|c| c.to_string()),
        })
    } else {
        let parts: Vec<String> = counts.0.iter().map(|(k, v)| format!("{k} {v}")).collect();
        Report::line(format!(
            "imported {total} records ({}); {written} written, {} unchanged, {skipped} other files skipped",
            parts.join(", "),
            total - written
        ))
    };
    Ok(report.with_stderr(notices))
}

pub(crate) fn cmd_export(cx: &Context, args: &ExportArgs) -> Result<Report, CommandError> {
    if args.to.exists()
        && std::fs::read_dir(&args.to)
            .map(|mut d| d.next().is_some())
            .unwrap_or(true)
    {
        return Err(CommandError::usage(format!(
            "export destination is not empty: {}",
            args.to.display()
        )));
    }
    let (store, notices) = cx.open_store(false)?;
    let snap = store.snapshot()?;
    let blobs = match snap.tree {
        Some(tree) => snap.blobs_below(tree, "")?,
        None => Vec::new(),
    };
    let reading = progress::bar("export: reading records", blobs.len() as u64, args.json);
    let mut files: Vec<(String, Vec<u8>)> = Vec::with_capacity(blobs.len());
    for (path, id) in blobs {
        files.push((path, snap.blob_bytes(id)?));
        reading.inc(1);
    }
    let heartbeats = snap.list("heartbeats")?;
    reading.inc_length(heartbeats.len() as u64);
    reading.inc(heartbeats.len() as u64);
    files.extend(
        heartbeats
            .into_iter()
            .map(|(path, record)| (path, to_bytes(&record))),
    );
    reading.finish();
    let records = files.len();
    let files = join_files(files).map_err(|e| CommandError::operational(format!("export: {e}")))?;
    let writing = progress::bar("export: writing files", files.len() as u64, args.json);
    for (path, bytes) in &files {
        let dest = args.to.join(path);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent).map_err(|e| {
                CommandError::operational(format!("cannot create {}: {e}", parent.display()))
            })?;
        }
        std::fs::write(&dest, bytes).map_err(|e| {
            CommandError::operational(format!("cannot write {}: {e}", dest.display()))
        })?;
        writing.inc(1);
    }
    writing.finish();
    let report = if args.json {
        Report::json(&ExportAnswer {
            result: "exported",
            records,
            files: files.len(),
            to: args.to.display().to_string(),
        })
    } else {
        Report::line(format!(
            "exported {records} records in {} files to {}",
            files.len(),
            args.to.display()
        ))
    };
    Ok(report.with_stderr(notices))
}
