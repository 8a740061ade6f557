//! A real `agent-coord serve` process on a free loopback port, stopped on drop.

use std::io::BufRead;
use std::io::BufReader;
use std::process::Child;
use std::process::Command;
use std::process::Stdio;

use crate::env::TestEnv;

/// A running dashboard server.
pub struct Server {
    child: Child,
    /// Everything the server printed to stderr so far.
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
    /// `http://127.0.0.1:<port>` (no trailing slash).
    pub url: String,
}

impl Server {
    /// Starts `agent-coord serve --port 0 <extra>` in `env` and waits for its URL line.
    pub fn start(env: &TestEnv, extra: &[&str]) -> Server {
        let mut args = vec!["serve", "--host", "127.0.0.1", "--port", "0"];
        args.extend_from_slice(extra);
        Server::spawn(env.command(&args))
    }

    /// Spawns a prepared `agent-coord serve …` command and waits for its URL line.
    pub fn spawn(mut command: Command) -> Server {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn serve");
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let mut err = BufReader::new(child.stderr.take().expect("stderr"));
        let sink = stderr.clone();
        std::thread::spawn(move || {
            let mut line = String::new();
            while err.read_line(&mut line).is_ok_and(|n| n > 0) {
                if let Ok(mut s) = sink.lock() {
                    s.push_str(&line);
                }
                line.clear();
            }
        });
        let stdout = child.stdout.take().expect("stdout");
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        reader.read_line(&mut line).expect("url line");
        // Keep reading whatever else the server prints, as a terminal would.
        std::thread::spawn(move || std::io::copy(&mut reader, &mut std::io::sink()));
        let url = line
            .trim()
            .rsplit(' ')
            .next()
            .expect("url")
            .trim_end_matches('/')
            .to_owned();
        assert!(
            url.starts_with("http://127.0.0.1:"),
            "unexpected first line: {line:?}"
        );
        Server { child, stderr, url }
    }

    /// Returns what the server printed to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().map(|s| s.clone()).unwrap_or_default()
    }

    /// The port the server listens on.
    pub fn port(&self) -> u16 {
        self.url
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("port")
    }

    /// The server's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `GET path` with `Host: 127.0.0.1`; returns status and body text.
    pub fn get(&self, path: &str) -> (u16, String) {
        Self::answer(ureq::get(&format!("{}{path}", self.url)).call())
    }

    /// `GET path`; returns status, body text and the `Server-Timing` header, if any.
    pub fn get_timed(&self, path: &str) -> (u16, String, Option<String>) {
        match ureq::get(&format!("{}{path}", self.url)).call() {
            Ok(resp) => {
                let timing = resp.header("server-timing").map(str::to_owned);
                (
                    resp.status(),
                    resp.into_string().unwrap_or_default(),
                    timing,
                )
            }
            Err(ureq::Error::Status(code, resp)) => {
                (code, resp.into_string().unwrap_or_default(), None)
            }
            Err(e) => panic!("request failed: {e}"),
        }
    }

    /// `GET path` with a chosen Host header.
    pub fn get_with_host(&self, path: &str, host: &str) -> (u16, String) {
        Self::answer(
            ureq::get(&format!("{}{path}", self.url))
                .set("Host", host)
                .call(),
        )
    }

    /// `POST path` with a JSON body.
    pub fn post_json(&self, path: &str, body: &serde_json::Value) -> (u16, String) {
        Self::answer(
            ureq::post(&format!("{}{path}", self.url))
                .set("Content-Type", "application/json")
                .send_string(&body.to_string()),
        )
    }

    /// `PUT path` with a JSON body.
    pub fn put_json(&self, path: &str, body: &serde_json::Value) -> (u16, String) {
        Self::answer(
            ureq::put(&format!("{}{path}", self.url))
                .set("Content-Type", "application/json")
                .send_string(&body.to_string()),
        )
    }

    /// `DELETE path` with a JSON body.
    pub fn delete_json(&self, path: &str, body: &serde_json::Value) -> (u16, String) {
        Self::answer(
            ureq::delete(&format!("{}{path}", self.url))
                .set("Content-Type", "application/json")
                .send_string(&body.to_string()),
        )
    }

    fn answer(r: Result<ureq::Response, ureq::Error>) -> (u16, String) {
        match r {
            Ok(resp) => (resp.status(), resp.into_string().unwrap_or_default()),
            Err(ureq::Error::Status(code, resp)) => (code, resp.into_string().unwrap_or_default()),
            Err(e) => panic!("request failed: {e}"),
        }
    }

    /// Opens `/api/stream` and returns a receiver of the announced versions.
    pub fn versions(&self) -> std::sync::mpsc::Receiver<String> {
        let (tx, rx) = std::sync::mpsc::channel();
        let url = format!("{}/api/stream", self.url);
        std::thread::spawn(move || {
            let Ok(resp) = ureq::get(&url).call() else {
                return;
            };
            // Only `version` events: the stream also carries `sync` events.
            let mut event = String::new();
            for line in BufReader::new(resp.into_reader()).lines() {
                let Ok(line) = line else { return };
                if let Some(name) = line.strip_prefix("event: ") {
                    name.clone_into(&mut event);
                } else if let Some(v) = line.strip_prefix("data: ") {
                    if event == "version" && tx.send(v.to_owned()).is_err() {
                        return;
                    }
                } else if line.is_empty() {
                    event.clear();
                }
            }
        });
        rx
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
