//! The dashboard server on a generated fleet: cold, warm and incremental model builds.

use std::time::Duration;
use std::time::Instant;

use agent_coord_tests::server::Server;

use crate::cli::cli;
use crate::cli::fixture;
use crate::cli::median;
use crate::cli::ms;
use crate::cli::run_ok;

/// The dashboard server on a generated fleet: cold model build (first request), warm
/// (cached by tip ids), after one new event (incremental rebuild), and peak RSS.
pub fn bench_dashboard(scale: usize) {
    use std::io::Read;
    let (fx, records, _) = fixture(scale);
    let server = Server::spawn(cli(&fx, &["serve", "--host", "127.0.0.1", "--port", "0"]));
    let url = format!("{}/api/dashboard", server.url);
    // (request time, body size, the server's own model-derivation time when it derived one)
    let fetch = || {
        let start = Instant::now();
        let mut body = Vec::new();
        let resp = ureq::get(&url).call().expect("dashboard answers");
        let model_ms = resp.header("server-timing").and_then(|t| {
            let dur = t.split("model;dur=").nth(1)?.split(';').next()?;
            dur.parse::<f64>().ok()
        });
        resp.into_reader().read_to_end(&mut body).expect("body");
        (start.elapsed(), body.len(), model_ms)
    };
    let (cold, bytes, cold_model) = fetch();
    let warm = median((0..15).map(|_| fetch().0).collect());
    let mut after = Vec::new();
    let mut after_model = Vec::new();
    for i in 0..5 {
        run_ok(
            &fx,
            &[
                "record-event",
                "--batch-id",
                "batch-00000",
                "--type",
                "note",
                "--message",
                &format!("bench {i}"),
            ],
        );
        let (took, _, model) = fetch();
        after.push(took);
        after_model.push(Duration::from_secs_f64(model.unwrap_or(f64::NAN) / 1e3));
    }
    let status =
        std::fs::read_to_string(format!("/proc/{}/status", server.pid())).unwrap_or_default();
    let hwm = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .map(|v| v.trim().to_owned())
        .unwrap_or_else(|| "unknown".into());
    drop(server);
    println!(
        "\n## dashboard, scale {scale}: {records} records, model {:.1} MB JSON\n\
         | GET /api/dashboard cold (read + parse + derive + serialise + transfer) | {} (model {:.1} ms) |\n\
         | warm (cached by tip ids), median of 15 | {} |\n\
         | after one new event, median of 5 | {} (model update {}) |\n\
         | server peak RSS | {hwm} |",
        bytes as f64 / 1e6,
        ms(cold),
        cold_model.unwrap_or(f64::NAN),
        ms(warm),
        ms(median(after)),
        ms(median(after_model)),
    );
}
