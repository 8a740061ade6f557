//! The first `GET /api/dashboard` of a server just started (issue 22: 150× the Node
//! dashboard at scale 1): ours with no saved model (the request pays the whole derivation)
//! and with the model the last run saved, and, when `AGENT_COORD_NODE_DASHBOARD` names a
//! checkout of the predecessor (shakacode/agent-coordination-dashboard, `npm ci` done), the
//! Node dashboard on the generated state root the fixture imported. Rounds interleave the
//! three; each server is started, waited for until it listens (startup not counted: the
//! second table has it), asked once and stopped.

use std::net::TcpListener;
use std::net::TcpStream;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::path::PathBuf;
use std::process::Child;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

use agent_coord_tests::server::Server;

use crate::cli::cli;
use crate::cli::fixture;
use crate::cli::median;
use crate::cli::ms;
use crate::cli::Fixture;

/// One start: from spawn to listening, and the first request.
struct Start {
    listening: Duration,
    first: Duration,
    bytes: usize,
}

/// Times one `GET url` and reads the whole body.
fn get(url: &str) -> (Duration, usize) {
    let start = Instant::now();
    let resp = ureq::get(url)
        .timeout(Duration::from_secs(300))
        .call()
        .expect("dashboard answers");
    let mut body = Vec::new();
    std::io::Read::read_to_end(&mut resp.into_reader(), &mut body).expect("body");
    let took = start.elapsed();
    let parsed: serde_json::Value = serde_json::from_slice(&body).expect("a JSON body");
    assert!(parsed.is_object(), "the dashboard answers an object");
    (took, body.len())
}

/// Our server, started fresh; `saved`: the model file is left for it.
fn ours(fx: &Fixture, model_file: &Path, saved: bool) -> Start {
    if !saved {
        let _ = std::fs::remove_file(model_file);
    }
    let spawned = Instant::now();
    let server = Server::spawn(cli(
        fx,
        &[
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--github-refresh",
            "0",
            "--sync-every",
            "0",
        ],
    ));
    let listening = spawned.elapsed();
    let (first, bytes) = get(&format!("{}/api/dashboard", server.url));
    if !saved {
        // The first full derivation saves the model: wait for it, for the saved runs.
        let waited = Instant::now();
        while !model_file.exists() && waited.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    drop(server);
    Start {
        listening,
        first,
        bytes,
    }
}

/// A free port on 127.0.0.1.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Stops a process group.
fn stop_group(child: &mut Child) {
    let _ = Command::new("kill")
        .args(["-TERM", "--", &format!("-{}", child.id())])
        .status();
    let _ = child.wait();
}

/// The Node dashboard in `app`, on the state root `root`, started fresh.
fn node(app: &Path, root: &Path, home: &Path, repos: &str) -> Start {
    let port = free_port();
    let spawned = Instant::now();
    let mut child = Command::new("node")
        .args(["node_modules/tsx/dist/cli.mjs", "src/server/index.ts"])
        .current_dir(app)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("NODE_ENV", "production")
        .env("HOST", "127.0.0.1")
        .env("PORT", port.to_string())
        .env("AGENT_COORD_STATE_ROOT", root)
        .env("DASHBOARD_SETTINGS_PATH", home.join("settings.json"))
        .env("TARGET_REPOS", repos)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("node starts (is node installed?)");
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            spawned.elapsed() < Duration::from_secs(60),
            "the Node dashboard did not listen within 60 s"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let listening = spawned.elapsed();
    let (first, bytes) = get(&format!("http://127.0.0.1:{port}/api/dashboard"));
    stop_group(&mut child);
    Start {
        listening,
        first,
        bytes,
    }
}

/// min / median / max of the first requests, and the medians of listening and bytes.
fn row(name: &str, starts: &[Start]) -> (String, Duration, Duration) {
    let mut firsts: Vec<Duration> = starts.iter().map(|s| s.first).collect();
    firsts.sort();
    let first = firsts[firsts.len() / 2];
    let listening = median(starts.iter().map(|s| s.listening).collect());
    let total = median(starts.iter().map(|s| s.listening + s.first).collect());
    let mut bytes: Vec<usize> = starts.iter().map(|s| s.bytes).collect();
    bytes.sort_unstable();
    (
        format!(
            "| {name} | {} / **{}** / {} | {} | {} | {} |",
            ms(firsts[0]),
            ms(first),
            ms(firsts[firsts.len() - 1]),
            ms(listening),
            ms(total),
            bytes[bytes.len() / 2],
        ),
        first,
        total,
    )
}

pub fn bench_first_request(scale: usize, runs: usize) {
    let (fx, records, _) = fixture(scale);
    let model_file = crate::dashboard::saved_model_file(&fx);
    let node_app = std::env::var_os("AGENT_COORD_NODE_DASHBOARD").map(PathBuf::from);
    let root = fx.dir.join("legacy");
    let home = fx.dir.join("node-home");
    std::fs::create_dir_all(&home).expect("node home");
    // Every repository the generated fleet names: the Node dashboard skips the others.
    let repos = (0..10)
        .map(|n| format!("acme/repo{n}"))
        .collect::<Vec<_>>()
        .join(",");
    let (mut cold, mut saved, mut predecessor) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs.max(1) {
        cold.push(ours(&fx, &model_file, false));
        saved.push(ours(&fx, &model_file, true));
        if let Some(app) = &node_app {
            predecessor.push(node(app, &root, &home, &repos));
        }
    }
    println!(
        "\n## The first `GET /api/dashboard` of a server just started, scale {scale} ({records} records), {runs} interleaved rounds\n"
    );
    println!("| server | first request min / **median** / max | spawn → listening | spawn → answered | body bytes |");
    println!("|---|---|---|---|---|");
    let (line, cold_first, cold_total) = row("ours, no saved model", &cold);
    println!("{line}");
    let (line, saved_first, saved_total) = row("ours, the model the last run saved", &saved);
    println!("{line}");
    if predecessor.is_empty() {
        println!("\n(set AGENT_COORD_NODE_DASHBOARD to a checkout of the Node dashboard, `npm ci` done, to compare)");
        return;
    }
    let (line, node_first, node_total) = row("predecessor (Node, real clock)", &predecessor);
    println!("{line}");
    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64();
    println!(
        "\nNode / ours, first request: {:.0}× with no saved model, {:.0}× with the saved one (goal 150×); spawn → answered: {:.0}× and {:.0}×",
        ratio(node_first, cold_first),
        ratio(node_first, saved_first),
        ratio(node_total, cold_total),
        ratio(node_total, saved_total),
    );
}
