//! Everything the CLI prints goes through here: results to stdout, notices and warnings
//! to stderr, and the exit code. A closed stdout (`| head`) is not an error.

use std::io::Write;
use std::process::ExitCode;

use crate::command_error::CommandError;

/// What a successful command produced.
#[derive(Debug, Default)]
pub(crate) struct Report {
    /// Lines for stdout (already rendered: text or JSON).
    pub(crate) stdout: String,
    /// Notices and warnings for stderr, one per entry.
    pub(crate) stderr: Vec<String>,
    /// A JSON document for stdout, serialized straight to it after `stdout` (large
    /// reports are never rendered into an intermediate string).
    pub(crate) json: Option<serde_json::Value>,
    /// The exit code of a verdict command (`batch-audit`, `doctor`); 0 otherwise.
    pub(crate) exit: u8,
}

impl Report {
    /// A report of text as it is (already newline-terminated).
    pub(crate) fn text(stdout: String) -> Self {
        Report {
            stdout,
            ..Default::default()
        }
    }

    /// A report of one line of text.
    pub(crate) fn line(text: impl Into<String>) -> Self {
        let mut stdout = text.into();
        stdout.push('\n');
        Report {
            stdout,
            ..Default::default()
        }
    }

    /// A report of a JSON document (a typed output, or a record), pretty-printed.
    pub(crate) fn json(doc: &impl serde::Serialize) -> Self {
        Self::json_owned(to_json_value(doc))
    }

    /// A report of a JSON value, pretty-printed, without copying it.
    pub(crate) fn json_owned(value: serde_json::Value) -> Self {
        Report {
            json: Some(value),
            ..Default::default()
        }
    }

    /// Adds stderr lines (warnings) to the report.
    pub(crate) fn with_stderr(mut self, lines: impl IntoIterator<Item = String>) -> Self {
        self.stderr.extend(lines);
        self
    }
}

/// Returns an output document as a JSON value.
pub(crate) fn to_json_value(doc: &impl serde::Serialize) -> serde_json::Value {
    // Output types and records have string keys and derived (infallible) impls.
    serde_json::to_value(doc).expect("an output document serialises: string keys, derived impls")
}

/// Prints the outcome and returns the process exit code.
pub(crate) fn finish(result: Result<Report, CommandError>) -> ExitCode {
    match result {
        Ok(report) => {
            let mut err = std::io::stderr().lock();
            for line in &report.stderr {
                let _ = writeln!(err, "{line}");
            }
            let mut out = std::io::BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
            // A reader that went away (broken pipe) is not our failure: exit as planned.
            let _ = out
                .write_all(report.stdout.as_bytes())
                .and_then(|()| match &report.json {
                    Some(v) => serde_json::to_writer_pretty(&mut out, v)
                        .map_err(std::io::Error::from)
                        .and_then(|()| out.write_all(b"\n")),
                    None => Ok(()),
                })
                .and_then(|()| out.flush());
            crate::phase::mark("print");
            if let Some(line) = crate::phase::line() {
                let _ = writeln!(err, "{line}");
            }
            ExitCode::from(report.exit)
        }
        Err(e) => {
            tracing::debug!(kind = ?e.kind, causes = ?e.causes(), "command failed");
            let _ = writeln!(std::io::stderr().lock(), "{}", e.message);
            ExitCode::from(e.kind.exit_code())
        }
    }
}
