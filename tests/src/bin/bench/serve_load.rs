//! The dashboard server under sustained load on a generated fleet: `serve-memory` (cycles
//! of one claim and one `GET /api/dashboard`, the server's RSS before and after) and
//! `serve-load` (concurrent dashboard clients and open event streams while the CLI writes:
//! errors, latency percentiles, the server's memory). A small raw HTTP/1.1 client on tokio
//! keeps hundreds of connections cheap on two cores.

use std::sync::atomic::AtomicBool;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use std::time::Instant;

use agent_coord_tests::server::Server;
use tokio::io::AsyncBufReadExt;
use tokio::io::AsyncReadExt;
use tokio::io::AsyncWriteExt;
use tokio::io::BufReader;
use tokio::net::TcpStream;

use crate::cli::cli;
use crate::cli::fixture;
use crate::cli::ms;
use crate::cli::run_ok;

/// A field of `/proc/<pid>/status` (such as `VmRSS`), in MiB.
fn proc_mib(pid: u32, field: &str) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kib| kib / 1024.0)
}

/// Starts `serve` on a scale-`scale` fleet; returns the fixture, the server and its port.
fn serve_fleet(scale: usize) -> (crate::cli::Fixture, Server, u16) {
    let (fx, _, _) = fixture(scale);
    let server = Server::spawn(cli(&fx, &["serve", "--host", "127.0.0.1", "--port", "0"]));
    let port = server.port();
    (fx, server, port)
}

/// `GET path` over a fresh connection; returns the status and the body's length.
async fn get(port: u16, path: &str) -> std::io::Result<(u16, usize)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).await?;
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    s.write_all(request.as_bytes()).await?;
    let mut reader = BufReader::new(s);
    let mut line = String::new();
    reader.read_line(&mut line).await?;
    let status = line
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let mut body = Vec::new();
    reader.read_to_end(&mut body).await?;
    Ok((status, body.len()))
}

/// `bench serve-memory CYCLES`: the server's memory across cycles of (one claim, one
/// `GET /api/dashboard`) on a scale-10 fleet.
pub fn bench_serve_memory(cycles: usize) {
    let (fx, server, port) = serve_fleet(10);
    let rt = runtime();
    let fetch = || {
        rt.block_on(get(port, "/api/dashboard"))
            .expect("dashboard answers")
    };
    assert_eq!(fetch().0, 200);
    let before = proc_mib(server.pid(), "VmRSS");
    let started = Instant::now();
    let mut worst = before;
    for i in 0..cycles {
        run_ok(
            &fx,
            &[
                "claim",
                "--agent-id",
                &format!("mem-{i}"),
                "--repo",
                "acme/mem",
                "--target",
                &i.to_string(),
            ],
        );
        assert_eq!(fetch().0, 200);
        if i % 50 == 49 {
            worst = worst.max(proc_mib(server.pid(), "VmRSS"));
        }
    }
    let after = proc_mib(server.pid(), "VmRSS");
    println!(
        "\n## serve memory, scale 10: {cycles} cycles of (claim + GET /api/dashboard) in {:.0} s\n\
         | server RSS before | {before:.0} MiB |\n\
         | server RSS after | {after:.0} MiB (highest sampled {:.0} MiB, peak VmHWM {:.0} MiB) |",
        started.elapsed().as_secs_f64(),
        worst.max(after),
        proc_mib(server.pid(), "VmHWM"),
    );
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

/// The percentile `p` (0–100) of sorted `v`.
fn percentile(v: &[Duration], p: usize) -> Duration {
    v.get((v.len() * p / 100).min(v.len().saturating_sub(1)))
        .copied()
        .unwrap_or_default()
}

/// `bench serve-load [--clients N] [--streams N] [--seconds N]`: `clients` loops of
/// `GET /api/dashboard` and `streams` open event streams against `serve` on a scale-10
/// fleet for `seconds`, while the CLI claims once a second.
pub fn bench_serve_load(clients: usize, streams: usize, seconds: u64) {
    // Hundreds of connections: lift this process's soft limit on open files to the hard one.
    if let Ok((_, hard)) =
        nix::sys::resource::getrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE)
    {
        let _ =
            nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_NOFILE, hard, hard);
    }
    let (fx, server, port) = serve_fleet(10);
    let pid = server.pid();
    let rt = runtime();
    assert_eq!(
        rt.block_on(get(port, "/api/dashboard")).expect("warm").0,
        200
    );
    let rss_before = proc_mib(pid, "VmRSS");
    let stop = Arc::new(AtomicBool::new(false));
    let errors = Arc::new(Mutex::new(Vec::<String>::new()));
    let announced = Arc::new(AtomicUsize::new(0));
    let open_streams = Arc::new(AtomicUsize::new(0));
    // The event streams: each reads (and counts) `version` events until the end.
    let mut tasks = Vec::new();
    for _ in 0..streams {
        let (stop, errors, announced, open) = (
            stop.clone(),
            errors.clone(),
            announced.clone(),
            open_streams.clone(),
        );
        tasks.push(rt.spawn(async move {
            let fail = |e: String| errors.lock().map(|mut v| v.push(e)).ok();
            let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)).await else {
                fail("stream: connect failed".into());
                return;
            };
            let req = format!("GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
            if s.write_all(req.as_bytes()).await.is_err() {
                fail("stream: send failed".into());
                return;
            }
            let mut lines = BufReader::new(s).lines();
            match lines.next_line().await {
                Ok(Some(l)) if l.contains(" 200 ") => {}
                other => {
                    fail(format!("stream: {other:?}"));
                    return;
                }
            }
            open.fetch_add(1, Ordering::SeqCst);
            while !stop.load(Ordering::SeqCst) {
                match tokio::time::timeout(Duration::from_millis(500), lines.next_line()).await {
                    Ok(Ok(Some(l))) if l.starts_with("event: version") => {
                        announced.fetch_add(1, Ordering::SeqCst);
                    }
                    Ok(Ok(Some(_))) | Err(_) => {}
                    Ok(Ok(None)) | Ok(Err(_)) => {
                        fail("stream: closed by the server".into());
                        return;
                    }
                }
            }
        }));
    }
    // The dashboard clients: request after request until the end.
    let latencies = Arc::new(Mutex::new(Vec::<Duration>::new()));
    let bytes = Arc::new(AtomicUsize::new(0));
    for _ in 0..clients {
        let (stop, errors, latencies, bytes) = (
            stop.clone(),
            errors.clone(),
            latencies.clone(),
            bytes.clone(),
        );
        tasks.push(rt.spawn(async move {
            while !stop.load(Ordering::SeqCst) {
                let started = Instant::now();
                match get(port, "/api/dashboard").await {
                    Ok((200, n)) if n > 0 => {
                        bytes.fetch_add(n, Ordering::SeqCst);
                        if let Ok(mut l) = latencies.lock() {
                            l.push(started.elapsed());
                        }
                    }
                    other => {
                        if let Ok(mut e) = errors.lock() {
                            e.push(format!("dashboard: {other:?}"));
                        }
                    }
                }
            }
        }));
    }
    // The CLI writes once a second while the load runs; memory is sampled meanwhile.
    let started = Instant::now();
    let mut writes = 0;
    let mut rss_peak = rss_before;
    while started.elapsed() < Duration::from_secs(seconds) {
        run_ok(
            &fx,
            &[
                "claim",
                "--agent-id",
                &format!("load-{writes}"),
                "--repo",
                "acme/load",
                "--target",
                &writes.to_string(),
            ],
        );
        writes += 1;
        rss_peak = rss_peak.max(proc_mib(pid, "VmRSS"));
        std::thread::sleep(Duration::from_secs(1));
    }
    let streams_open = open_streams.load(Ordering::SeqCst);
    stop.store(true, Ordering::SeqCst);
    let elapsed = started.elapsed();
    rt.block_on(async {
        for t in tasks {
            let _ = t.await;
        }
    });
    let mut lat = latencies.lock().map(|l| l.clone()).unwrap_or_default();
    lat.sort();
    let errors = errors.lock().map(|e| e.clone()).unwrap_or_default();
    println!(
        "\n## serve load, scale 10: {clients} dashboard clients + {streams} event streams for {:.0} s, {writes} CLI claims\n\
         | dashboard requests | {} ({:.0}/s, {:.0} MB/s) |\n\
         | latency p50 / p90 / p99 / max | {} / {} / {} / {} |\n\
         | event streams open at the end | {streams_open} of {streams}; {} version events received |\n\
         | errors | {} {} |\n\
         | server RSS before / peak sampled / VmHWM | {rss_before:.0} / {rss_peak:.0} / {:.0} MiB |",
        elapsed.as_secs_f64(),
        lat.len(),
        lat.len() as f64 / elapsed.as_secs_f64(),
        bytes.load(Ordering::SeqCst) as f64 / 1e6 / elapsed.as_secs_f64(),
        ms(percentile(&lat, 50)),
        ms(percentile(&lat, 90)),
        ms(percentile(&lat, 99)),
        ms(lat.last().copied().unwrap_or_default()),
        announced.load(Ordering::SeqCst),
        errors.len(),
        errors.first().map(|e| format!("(first: {e})")).unwrap_or_default(),
        proc_mib(pid, "VmHWM"),
    );
    drop(server);
}
