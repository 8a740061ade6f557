//! Text rendering of a status report: one line per row, sections as in the predecessor.

use std::borrow::Cow;
use std::fmt::Write as _;

use serde_json::Value;

use super::StatusReport;
use crate::record::Record;
use crate::rules::deps::to_text;

impl StatusReport {
    /// Returns the text rendering of `status`, one line per row, ending in a newline.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.section(&mut out, "claims", &self.claims, |out, c| {
            let f = |k| field(c, k);
            let _ = writeln!(
                out,
                "- {}#{} {} {} branch {} expires {}",
                f("repo"),
                f("target"),
                f("status"),
                f("agent_id"),
                f("branch"),
                f("expires_at")
            );
        });
        self.section(&mut out, "heartbeats", &self.heartbeats, |out, h| {
            let f = |k| field(h, k);
            let _ = writeln!(
                out,
                "- {} {} {} {} updated {}",
                f("agent_id"),
                f("status"),
                f("liveness"),
                f("target"),
                f("updated_at")
            );
        });
        self.section(&mut out, "batches", &self.batches, render_batch);
        self.section(&mut out, "events", &self.events, render_event);
        if let Some(archive) = &self.archive {
            out.push_str("archive\n");
            if archive.is_empty() {
                out.push_str("- none\n");
            }
            for row in archive {
                render_archive(&mut out, row);
            }
        }
        let degraded = self.degraded();
        if !degraded.is_empty() {
            out.push_str("degraded\n");
            for note in degraded {
                let _ = writeln!(out, "- {note}");
            }
        }
        out
    }

    fn section(
        &self,
        out: &mut String,
        name: &str,
        rows: &[Record],
        row: impl Fn(&mut String, &Record),
    ) {
        out.push_str(name);
        out.push('\n');
        if rows.is_empty() {
            let _ = writeln!(out, "- {}", self.note(name).unwrap_or("none"));
        }
        for r in rows {
            row(out, r);
        }
    }
}

/// Returns a row's field as text (absent: empty).
fn field<'a>(row: &'a Record, key: &str) -> Cow<'a, str> {
    row.get(key).map_or(Cow::Borrowed(""), to_text)
}

/// Returns a row's field as text, or `default` when absent.
fn field_or<'a>(row: &'a Record, key: &str, default: &'a str) -> Cow<'a, str> {
    row.get(key).map_or(Cow::Borrowed(default), to_text)
}

/// Renders a list field: non-empty items joined by `,`, or `-`.
fn list_text(row: &Record, key: &str) -> String {
    let items: Vec<Cow<'_, str>> = match row.get(key) {
        Some(Value::Array(items)) => items
            .iter()
            .map(to_text)
            .filter(|s| !s.is_empty())
            .collect(),
        Some(one) => Some(to_text(one))
            .filter(|s| !s.is_empty())
            .into_iter()
            .collect(),
        None => Vec::new(),
    };
    if items.is_empty() {
        "-".to_owned()
    } else {
        items.join(",")
    }
}

fn render_batch(out: &mut String, batch: &Record) {
    let _ = writeln!(out, "- {}", field(batch, "batch_id"));
    let lanes = match batch.get("lanes") {
        Some(Value::Array(lanes)) if !lanes.is_empty() => lanes,
        _ => {
            out.push_str("  - lanes -\n");
            return;
        }
    };
    for lane in lanes.iter().filter_map(Value::as_object) {
        let _ = writeln!(
            out,
            "  - lane {} owner {} targets {} status {} {} deps {} blocked_on {}",
            field(lane, "name"),
            field(lane, "owner"),
            list_text(lane, "targets"),
            field(lane, "status"),
            field(lane, "liveness"),
            list_text(lane, "deps"),
            list_text(lane, "blocked_on"),
        );
    }
}

fn render_event(out: &mut String, event: &Record) {
    let phase = event
        .get("phase")
        .or_else(|| event.get("status"))
        .map_or(Cow::Borrowed("-"), to_text);
    let _ = write!(
        out,
        "- {} {} {} {} by {} at {}",
        field(event, "batch_id"),
        field_or(event, "lane", "-"),
        field(event, "type"),
        phase,
        field_or(event, "agent_id", "-"),
        field(event, "at"),
    );
    let message = field(event, "message");
    if !message.is_empty() {
        let _ = write!(out, " {message}");
    }
    out.push('\n');
}

fn render_archive(out: &mut String, row: &Record) {
    let source = match row
        .get("source_path")
        .filter(|v| !matches!(v, Value::Bool(false)))
    {
        Some(path) => to_text(path).into_owned(),
        None => match row.get("source_paths") {
            Some(Value::Array(paths)) => paths.iter().map(to_text).collect::<Vec<_>>().join(","),
            Some(one) => to_text(one).into_owned(),
            None => String::new(),
        },
    };
    let _ = writeln!(
        out,
        "- {} {} source {source} delete_after {}",
        field(row, "path"),
        field(row, "record_family"),
        field(row, "delete_after"),
    );
}
