//! A lane's transcript: JSONL on the machine that ran the lane — a header line, the vendor's
//! events as they arrive, its stderr and the usage document last — every line redacted with
//! the coordinator's redactor and the whole file bounded; past the bound a last marker line
//! says how many bytes were dropped.

use std::fs::File;
use std::io::BufWriter;
use std::io::Write;
use std::path::Path;

use agent_coord_shared::coordinator::lane::usage::LaneUsage;
use agent_coord_shared::coordinator::lane::Role;
use agent_coord_shared::coordinator::lane::Vendor;
use agent_coord_shared::coordinator::redact::redact;
use serde::Serialize;

/// The transcript's bound when none is given, in bytes.
pub(crate) const DEFAULT_MAX_BYTES: u64 = 16 * 1024 * 1024;

/// The first line: which adapter run this is.
#[derive(Serialize)]
struct Header<'a> {
    agent_coord: &'static str,
    vendor: Vendor,
    role: Role,
    argv: &'a [String],
}

/// A line of the adapter's own: the vendor's stderr, the truncation marker.
#[derive(Serialize)]
struct Note<'a> {
    agent_coord: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    dropped_bytes: Option<u64>,
}

/// The last line: the usage document.
#[derive(Serialize)]
struct UsageLine<'a> {
    agent_coord: &'static str,
    #[serde(flatten)]
    usage: &'a LaneUsage,
}

/// An open transcript (or none, when no path was given).
pub(crate) struct Transcript {
    out: Option<BufWriter<File>>,
    secrets: Vec<String>,
    written: u64,
    max: u64,
    dropped: u64,
    failed: Option<std::io::Error>,
}

impl Transcript {
    /// Creates (or truncates) the transcript at `path`, mode 0600.
    pub(crate) fn create(
        path: Option<&Path>,
        secrets: Vec<String>,
        max: u64,
    ) -> std::io::Result<Self> {
        let out = match path {
            None => None,
            Some(path) => {
                use std::os::unix::fs::OpenOptionsExt;
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .mode(0o600)
                    .open(path)?;
                Some(BufWriter::new(file))
            }
        };
        Ok(Transcript {
            out,
            secrets,
            written: 0,
            max,
            dropped: 0,
            failed: None,
        })
    }

    /// Writes the header line.
    pub(crate) fn header(&mut self, vendor: Vendor, role: Role, argv: &[String]) {
        let header = Header {
            agent_coord: "lane",
            vendor,
            role,
            argv,
        };
        self.json(&header);
    }

    /// Writes one vendor event line, redacted.
    pub(crate) fn event(&mut self, line: &str) {
        let secrets: Vec<&str> = self.secrets.iter().map(String::as_str).collect();
        let clean = redact(line, &secrets);
        self.line(&clean);
    }

    /// Writes the vendor's stderr, redacted, as one note line.
    pub(crate) fn stderr(&mut self, text: &str) {
        if text.trim().is_empty() {
            return;
        }
        let secrets: Vec<&str> = self.secrets.iter().map(String::as_str).collect();
        let clean = redact(text, &secrets);
        self.json(&Note {
            agent_coord: "stderr",
            text: Some(&clean),
            dropped_bytes: None,
        });
    }

    /// Writes the usage line and the truncation marker, flushes, and reports whether anything
    /// was dropped and whether writing failed.
    pub(crate) fn finish(mut self, usage: &LaneUsage) -> (u64, Option<std::io::Error>) {
        self.json(&UsageLine {
            agent_coord: "usage",
            usage,
        });
        if self.dropped > 0 {
            let marker = Note {
                agent_coord: "truncated",
                text: None,
                dropped_bytes: Some(self.dropped),
            };
            // The marker is written past the bound: it is what says the bound was hit.
            if let (Some(out), Ok(text)) = (self.out.as_mut(), serde_json::to_string(&marker)) {
                if let Err(e) = writeln!(out, "{text}") {
                    self.failed.get_or_insert(e);
                }
            }
        }
        if let Some(out) = self.out.as_mut() {
            if let Err(e) = out.flush() {
                self.failed.get_or_insert(e);
            }
        }
        (self.dropped, self.failed)
    }

    fn json(&mut self, value: &impl Serialize) {
        if let Ok(text) = serde_json::to_string(value) {
            let secrets: Vec<&str> = self.secrets.iter().map(String::as_str).collect();
            let clean = redact(&text, &secrets);
            self.line(&clean);
        }
    }

    fn line(&mut self, text: &str) {
        let Some(out) = self.out.as_mut() else {
            return;
        };
        let len = text.len() as u64 + 1;
        if self.dropped > 0 || self.written + len > self.max {
            self.dropped += len;
            return;
        }
        match writeln!(out, "{text}").and_then(|()| out.flush()) {
            Ok(()) => self.written += len,
            Err(e) => {
                self.failed.get_or_insert(e);
                self.out = None;
            }
        }
    }
}
