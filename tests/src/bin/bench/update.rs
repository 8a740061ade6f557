//! The dashboard model's incremental update, in process: the records of an imported fleet
//! (its state branch and heartbeat refs, read with git), one full build, then one write of
//! each kind applied as an update — timed without the server, git reads or HTTP around it,
//! and checked equal to a full build of the same records.

use std::io::Read;
use std::io::Write;
use std::process::Command;
use std::process::Stdio;
use std::time::Instant;

use agent_coord_shared::dashboard::derive::build_with;
use agent_coord_shared::dashboard::derive::update_with;
use agent_coord_shared::dashboard::inputs::records::parse_record;
use agent_coord_shared::dashboard::inputs::records::Inputs;
use agent_coord_shared::dashboard::inputs::records::Parsed;
use serde_json::Value;

use crate::cli::fixture;
use crate::cli::median;
use crate::cli::ms;
use crate::cli::Fixture;
use crate::cli::NOW;
use crate::cli::NOW_UNIX;

/// Times a full build and one update per write kind at `scale`, and prints them.
/// `repo`: an imported state repository to read instead of a fixture generated and imported
/// at `scale` (for profiling by hand).
pub fn bench_update(scale: usize, runs: usize, repo: Option<&str>) {
    let files = match repo {
        Some(repo) => state_files(&crate::cli::Fixture::at(repo)),
        None => state_files(&fixture(scale).0),
    };
    let records = files.len();
    let inputs = Inputs::from_files(files.iter().map(|(p, b)| (p.as_str(), b.as_slice())));
    let now =
        agent_coord_shared::time::from_unix_millis(NOW_UNIX * 1000).expect("the bench's clock");
    let start = Instant::now();
    let (model, derivation) = build_with(&inputs, now, "bench");
    let full = start.elapsed();
    let start = Instant::now();
    let copy = model.clone();
    let copied = start.elapsed();
    drop(copy);
    println!(
        "update, in process, scale {scale} ({records} records; {} read): full build {}, a copy of the model {}",
        inputs.len(),
        ms(full),
        ms(copied)
    );
    for (kind, changed) in writes(&files) {
        let next = with_changed(&inputs, &changed);
        let mut took = Vec::new();
        let mut updated = None;
        for _ in 0..runs.max(1) {
            let (mut prev, mut d) = (model.clone(), derivation.clone());
            // A copy's lists are exactly full; the server updates the model it owns, whose
            // lists have the room their growth left (a copy would move every row to grow).
            prev.rows.reserve(64);
            prev.qa.reserve(64);
            std::thread::sleep(std::time::Duration::from_millis(pause_ms()));
            let start = Instant::now();
            let out = update_with(prev, &mut d, &inputs, &next, now, "bench");
            took.push(start.elapsed());
            updated = out;
        }
        let Some(updated) = updated else {
            println!("  {kind:<34} derived in full (not an update)");
            continue;
        };
        let (expected, _) = build_with(&next, now, "bench");
        let same = if updated == expected {
            "equal to a full build"
        } else {
            "DIFFERS from a full build"
        };
        println!(
            "  {kind:<34} {:>9} median of {} ({same})",
            ms(median(took)),
            runs.max(1)
        );
    }
}

/// Milliseconds to wait before each timed update (`BENCH_UPDATE_PAUSE_MS`, default 0): room
/// for a profiler to tell the updates from the setup.
fn pause_ms() -> u64 {
    std::env::var("BENCH_UPDATE_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Every file of the state branch and of each heartbeat ref, as (path, bytes).
fn state_files(fx: &Fixture) -> Vec<(String, Vec<u8>)> {
    let mut tips = vec!["refs/heads/agent-coord".to_owned()];
    let beats = fx.git(&[
        "for-each-ref",
        "--format=%(refname)",
        "refs/agent-coord/heartbeats/",
    ]);
    tips.extend(beats.lines().map(str::to_owned));
    let mut out = Vec::new();
    for tip in tips {
        let listing = fx.git(&["ls-tree", "-r", "--full-tree", &tip]);
        let entries: Vec<(String, String)> = listing
            .lines()
            .filter_map(|l| {
                let (meta, path) = l.split_once('\t')?;
                let oid = meta.split_whitespace().nth(2)?;
                Some((oid.to_owned(), path.to_owned()))
            })
            .collect();
        let blobs = cat_blobs(fx, entries.iter().map(|(oid, _)| oid.as_str()));
        out.extend(entries.into_iter().map(|(_, p)| p).zip(blobs));
    }
    out
}

/// The contents of `oids`, in order, through one `git cat-file --batch`.
fn cat_blobs<'a>(fx: &Fixture, oids: impl Iterator<Item = &'a str>) -> Vec<Vec<u8>> {
    let mut child = Command::new("git")
        .arg("--git-dir")
        .arg(&fx.repo)
        .args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("git cat-file runs");
    let mut stdin = child.stdin.take().expect("stdin");
    let request: String = oids.map(|o| format!("{o}\n")).collect();
    let writer = std::thread::spawn(move || stdin.write_all(request.as_bytes()));
    let mut raw = Vec::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_end(&mut raw)
        .expect("blobs");
    writer.join().expect("writer").expect("request written");
    child.wait().expect("git cat-file ends");
    // "<oid> blob <size>\n<bytes>\n" each.
    let mut blobs = Vec::new();
    let mut at = 0;
    while at < raw.len() {
        let header_end = at + raw[at..].iter().position(|b| *b == b'\n').expect("header");
        let header = String::from_utf8_lossy(&raw[at..header_end]).into_owned();
        let size: usize = header
            .rsplit(' ')
            .next()
            .and_then(|s| s.parse().ok())
            .expect("size");
        let body = header_end + 1;
        blobs.push(raw[body..body + size].to_vec());
        at = body + size + 1;
    }
    blobs
}

/// A record's path and its bytes.
type File = (String, Vec<u8>);

/// One write of each kind: a name and the files it writes (an empty body deletes the path).
fn writes(files: &[File]) -> Vec<(&'static str, Vec<File>)> {
    let json = |bytes: &[u8]| serde_json::from_slice::<Value>(bytes).ok();
    let first = |prefix: &str, want: &dyn Fn(&Value) -> bool| {
        files
            .iter()
            .filter(|(p, _)| p.starts_with(prefix) && p.ends_with(".json"))
            .find_map(|(p, b)| json(b).filter(|v| want(v)).map(|v| (p.clone(), v)))
    };
    let on_batch = |v: &Value| v.get("batch_id").and_then(Value::as_str) == Some("batch-00000");
    let active =
        |v: &Value| on_batch(v) && v.get("status").and_then(Value::as_str) != Some("released");
    let bytes = |v: &Value| serde_json::to_vec(v).unwrap_or_default();
    let mut out = Vec::new();
    if let Some((path, mut v)) = first("claims/", &active) {
        let target = "999999";
        v["target"] = Value::from(target);
        v["claimed_at"] = Value::from(NOW);
        let new_path = match path.rsplit_once('/') {
            Some((dir, _)) => format!("{dir}/{target}.json"),
            None => format!("claims/{target}.json"),
        };
        out.push(("a claim on a new target", vec![(new_path, bytes(&v))]));
    }
    if let Some((path, mut v)) = first("claims/", &active) {
        v["status"] = Value::from("released");
        v["released_at"] = Value::from(NOW);
        out.push(("a release", vec![(path, bytes(&v))]));
    }
    if let Some((path, v)) = first("events/", &on_batch) {
        let mut v = v;
        v["event_id"] = Value::from("bench-event");
        v["type"] = Value::from("note");
        v["at"] = Value::from(NOW);
        let new_path = match path.rsplit_once('/') {
            Some((dir, _)) => format!("{dir}/bench-event.json"),
            None => "events/bench-event.json".to_owned(),
        };
        out.push(("an event", vec![(new_path, bytes(&v))]));
    }
    if let Some((path, mut v)) = first("heartbeats/", &|v| v.get("agent_id").is_some()) {
        v["status"] = Value::from("bench-renewed");
        v["updated_at"] = Value::from(NOW);
        out.push(("a renewed heartbeat", vec![(path, bytes(&v))]));
    }
    if let Some((path, mut v)) = first("batches/", &|_| true) {
        v["title"] = Value::from("bench: a renamed batch");
        out.push(("a changed manifest", vec![(path, bytes(&v))]));
    }
    if let Some((path, mut v)) = first("batches/", &|_| true) {
        let id = "bench-batch";
        v["batch_id"] = Value::from(id);
        let new_path = match path.rsplit_once('/') {
            Some((dir, _)) => format!("{dir}/{id}.json"),
            None => format!("batches/{id}.json"),
        };
        out.push(("a new manifest", vec![(new_path, bytes(&v))]));
    }
    if let Some((path, _)) = first("batches/", &|_| true) {
        out.push(("a removed manifest", vec![(path, Vec::new())]));
    }
    out
}

/// `inputs` with `changed` written over it: every other record stays the very same `Arc`,
/// as the server's reads keep unchanged blobs.
fn with_changed(inputs: &Inputs, changed: &[(String, Vec<u8>)]) -> Inputs {
    let mut next = inputs.clone();
    for (path, bytes) in changed {
        next.claims.retain(|c| &c.path != path);
        next.events.retain(|e| &e.path != path);
        next.manifests.retain(|m| &m.path != path);
        if bytes.is_empty() {
            continue;
        }
        if let Parsed::Heartbeat(h) = parse_record(path, bytes) {
            next.heartbeats.retain(|o| o.agent != h.agent);
            next.heartbeats.push(h);
            continue;
        }
        next.push(parse_record(path, bytes));
    }
    next.sort();
    next
}
