//! `agent-coord serve` under abuse, over raw TCP: malformed and foreign authorities, slow
//! and idle clients against a server with 256 file descriptors, event-stream clients that
//! never read, and bad bodies on both write routes (each refused, nothing written).

use std::io::Read;
use std::io::Write;
use std::net::Shutdown;
use std::net::TcpStream;
use std::time::Duration;
use std::time::Instant;

use agent_coord_tests::env::binary;
use agent_coord_tests::env::TestEnv;
use agent_coord_tests::server::Server;

/// Connects to the server's port.
fn connect(port: u16) -> TcpStream {
    let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s
}

/// Reads what the server sends until it closes the connection (or the read times out).
fn read_all(mut s: TcpStream) -> String {
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Sends `request` on a fresh connection and returns the response text.
fn raw(port: u16, request: &[u8]) -> String {
    let mut s = connect(port);
    s.write_all(request).unwrap();
    read_all(s)
}

/// The status code of a response text (0 when there is none).
fn status(response: &str) -> u16 {
    response
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0)
}

/// Starts `serve` with at most 256 open files (soft and hard, so it cannot raise them).
fn start_with_256_files(env: &TestEnv) -> Server {
    let script = format!(
        "ulimit -n 256 && exec '{}' serve --host 127.0.0.1 --port 0",
        binary().display()
    );
    Server::spawn(env.shell(&script))
}

#[test]
fn regression_host_guard_passes_suffixed_listed_and_duplicate_hosts() {
    let env = TestEnv::new();
    env.claim("w1", "acme/app", "1").run().success();
    let server = Server::start(&env, &[]);
    let port = server.port();
    let get = |target: &str, headers: &str| {
        let request = format!("GET {target} HTTP/1.1\r\n{headers}Connection: close\r\n\r\n");
        status(&raw(port, request.as_bytes()))
    };
    let own = format!("Host: 127.0.0.1:{port}\r\n");
    assert_eq!(get("/api/dashboard", &own), 200);
    for (headers, want) in [
        (format!("Host: 127.0.0.1:{port}.evil.com\r\n"), 400),
        (format!("Host: 127.0.0.1:{port}, evil.com\r\n"), 400),
        (format!("{own}Host: evil.com\r\n"), 400),
        (format!("{own}{own}"), 400),
        (String::new(), 400),
        ("Host: 127.0.0.1:1\r\n".to_owned(), 403),
        (format!("Host: evil.com:{port}\r\n"), 403),
    ] {
        assert_eq!(get("/api/dashboard", &headers), want, "{headers:?}");
    }
    // An absolute-form target is judged by its own authority, not by the Host header.
    assert_eq!(get("http://evil.com/api/dashboard", &own), 403);
    assert_eq!(
        get(
            &format!("http://127.0.0.1:{port}/api/dashboard"),
            "Host: evil.com\r\n"
        ),
        200
    );
    // A write's Origin must be the request's own origin: scheme, host and port.
    let body = r#"{"batch_id":"no-such-batch"}"#;
    let post = |origin: &str| {
        let request = format!(
            "POST /api/batches/stop HTTP/1.1\r\n{own}Origin: {origin}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        status(&raw(port, request.as_bytes()))
    };
    assert_eq!(post("http://127.0.0.1:9999"), 403);
    assert_eq!(post(&format!("https://127.0.0.1:{port}")), 403);
    assert_eq!(
        post(&format!("http://127.0.0.1:{port}")),
        404,
        "own origin: judged on"
    );
}

#[test]
fn regression_slowloris_takes_the_health_probe_down() {
    let env = TestEnv::new();
    env.claim("w1", "acme/app", "1").run().success();
    let server = start_with_256_files(&env);
    let port = server.port();
    // 300 connections: half idle, half stuck in the middle of their headers.
    let mut held = Vec::new();
    for i in 0..300 {
        let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) else {
            continue;
        };
        if i % 2 == 0 {
            let _ = s.write_all(
                format!("GET /api/health HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nX-Slow: ")
                    .as_bytes(),
            );
        }
        held.push(s);
    }
    assert!(held.len() >= 250, "{} connections opened", held.len());
    let started = Instant::now();
    let (code, body) = server.get("/api/health");
    assert_eq!(code, 200, "{body}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(server.get("/api/dashboard").0, 200);
    assert!(
        server.stderr().contains("notice: connection cap reached"),
        "{}",
        server.stderr()
    );
    // The header-read timeout (10 s) closes whatever is still open of them.
    let deadline = Instant::now() + Duration::from_secs(16);
    for mut s in held {
        let left = deadline.saturating_duration_since(Instant::now());
        s.set_read_timeout(Some(left.max(Duration::from_millis(10))))
            .unwrap();
        let mut buf = Vec::new();
        match s.read_to_end(&mut buf) {
            Ok(_) => {}
            Err(e) => assert_eq!(
                e.kind(),
                std::io::ErrorKind::ConnectionReset,
                "a connection stayed open past the header timeout: {e}"
            ),
        }
    }
}

#[test]
fn never_reading_stream_clients_are_bounded() {
    let env = TestEnv::new();
    env.claim("w1", "acme/app", "1").run().success();
    // 256 files: at most 192 connections, 96 of them event streams.
    let server = start_with_256_files(&env);
    let port = server.port();
    let request = format!("GET /api/stream HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n");
    let mut streams = Vec::new();
    for _ in 0..120 {
        let mut s = connect(port);
        s.write_all(request.as_bytes()).unwrap();
        streams.push(s);
    }
    // Once the cap is taken, another stream is refused with 429 at once.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut s = connect(port);
        s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut head = [0u8; 12];
        let got = s.read(&mut head).unwrap_or(0);
        let code = status(&String::from_utf8_lossy(&head[..got]));
        if code == 429 {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "never refused (last answer {code})"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    // The others still get answers.
    assert_eq!(server.get("/api/health").0, 200);
    assert_eq!(server.get("/api/dashboard").0, 200);
    drop(streams);
}

/// A JSON body with bytes that are not UTF-8 in a string.
const NOT_UTF8: &[u8] = b"{\"batch_id\": \"\xff\xfe\", \"launch_prompt\": \"\xc3\"}";

/// Sends a write with `head_extra` headers and `body`, optionally closing the sending half
/// afterwards, and returns the status.
fn post_raw(port: u16, path: &str, head_extra: &str, body: &[u8], close: bool) -> u16 {
    let mut s = connect(port);
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n{head_extra}Connection: close\r\n\r\n"
    );
    s.write_all(head.as_bytes()).unwrap();
    // The server may answer (and close) before taking the whole body.
    let _ = s.write_all(body);
    if close {
        let _ = s.shutdown(Shutdown::Write);
    }
    status(&read_all(s))
}

#[test]
fn bad_bodies_on_every_write_route_are_refused_and_write_nothing() {
    let env = TestEnv::new();
    env.claim("w1", "acme/app", "1").run().success();
    let server = Server::start(&env, &[]);
    let port = server.port();
    let tip = env.state_tip();
    let big = vec![b' '; 300 * 1024];
    let nested = "[".repeat(100_000);
    let mut chunked = Vec::new();
    for _ in 0..40 {
        chunked.extend_from_slice(format!("{:x}\r\n", 8192).as_bytes());
        chunked.extend_from_slice(&[b' '; 8192]);
        chunked.extend_from_slice(b"\r\n");
    }
    chunked.extend_from_slice(b"0\r\n\r\n");
    std::thread::scope(|scope| {
        for path in ["/api/batches/import", "/api/batches/stop"] {
            let (big, nested, chunked) = (&big, &nested, &chunked);
            scope.spawn(move || {
                let cl = |n: usize| format!("Content-Length: {n}\r\n");
                let cases: Vec<(&str, String, &[u8], bool, u16)> = vec![
                    ("oversized", cl(big.len()), big, false, 413),
                    (
                        "oversized, chunked",
                        "Transfer-Encoding: chunked\r\n".into(),
                        chunked,
                        false,
                        413,
                    ),
                    ("truncated", cl(100), br#"{"batch_id": "#, true, 400),
                    ("not UTF-8", cl(NOT_UTF8.len()), NOT_UTF8, false, 400),
                    (
                        "nested 100,000 deep",
                        cl(nested.len()),
                        nested.as_bytes(),
                        false,
                        400,
                    ),
                    (
                        "never finished (10 s)",
                        cl(100),
                        br#"{"batch_id": "#,
                        false,
                        408,
                    ),
                ];
                for (what, head, body, close, want) in cases {
                    assert_eq!(
                        post_raw(port, path, &head, body, close),
                        want,
                        "{path}: {what}"
                    );
                }
            });
        }
    });
    assert_eq!(env.state_tip(), tip, "nothing was written");
    assert_eq!(server.get("/api/health").0, 200);
}
