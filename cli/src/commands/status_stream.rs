//! Writes unscoped `status --json` while the state streams past, byte-for-byte the same
//! document `serde_json::to_writer_pretty` would print for the collected report, without
//! ever holding every row (a large fleet's report is many megabytes).

use std::io::Write;

use agent_coord_shared::coordinator::spend::CostTotals;
use agent_coord_shared::output::status::StatusHead;
use agent_coord_shared::output::sync::SyncInfo;
use agent_coord_shared::record::Record;
use agent_coord_shared::rules::status::Part;
use serde::Serialize;

/// The array sections of the document, in output order.
const SECTIONS: [&str; 5] = ["claims", "heartbeats", "batches", "events", "archive"];

/// A sink for [`Part`]s that writes the pretty JSON document to `out`.
pub(crate) struct JsonStream<W: Write> {
    out: W,
    version: &'static str,
    with_archive: bool,
    /// Index into SECTIONS of the open section (`None` before the head).
    open: Option<usize>,
    rows_in_open: usize,
    events: Vec<((String, String), Vec<u8>)>,
    /// The `sync` summary of the head, when there is a default remote.
    sync: Option<SyncInfo>,
    /// The coordinator's lane spend, when the state holds coordinator tasks.
    costs: Option<CostTotals>,
    error: Option<std::io::Error>,
}

/// Renders one projected row as it appears inside a section array (run on the worker
/// threads that read the records).
pub(crate) fn render_row(row: Record) -> Vec<u8> {
    pretty_at(&row, 4)
}

/// serde_json's pretty layout (two-space indent), starting `level` levels deep, so a value
/// nested in the document is written in place rather than re-indented afterwards.
struct NestedPretty {
    level: usize,
    has_value: bool,
    /// Leaves the outermost object open, for the document's head: its rows follow.
    leave_open: bool,
}

impl NestedPretty {
    fn indent<W: ?Sized + Write>(&self, w: &mut W) -> std::io::Result<()> {
        for _ in 0..self.level {
            w.write_all(b"  ")?;
        }
        Ok(())
    }

    /// Opens an array or object.
    fn open<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    /// Closes an array or object, on its own line when it had members.
    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> std::io::Result<()> {
        self.level -= 1;
        if self.level == 0 && self.leave_open {
            return Ok(());
        }
        if self.has_value {
            w.write_all(b"\n")?;
            self.indent(w)?;
        }
        w.write_all(bracket)
    }

    /// Starts an array element or object key on a new line.
    fn member<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> std::io::Result<()> {
        w.write_all(if first { b"\n" } else { b",\n" })?;
        self.indent(w)
    }
}

impl serde_json::ser::Formatter for NestedPretty {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"[")
    }
    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"]")
    }
    fn begin_array_value<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.member(w, first)
    }
    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.open(w, b"{")
    }
    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        self.close(w, b"}")
    }
    fn begin_object_key<W: ?Sized + Write>(
        &mut self,
        w: &mut W,
        first: bool,
    ) -> std::io::Result<()> {
        self.member(w, first)
    }
    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> std::io::Result<()> {
        w.write_all(b": ")
    }
    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> std::io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Returns `v` pretty-printed as it appears `indent / 2` levels deep in the document.
fn pretty_at(v: &impl Serialize, indent: usize) -> Vec<u8> {
    pretty(v, indent / 2, false)
}

/// Returns `v` pretty-printed from `level`, its outermost object left open when `leave_open`.
fn pretty(v: &impl Serialize, level: usize, leave_open: bool) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    let formatter = NestedPretty {
        level,
        has_value: false,
        leave_open,
    };
    let mut ser = serde_json::Serializer::with_formatter(&mut out, formatter);
    // Records and output types have string keys and derived impls: writing them into
    // memory cannot fail.
    let _ = v.serialize(&mut ser);
    out
}

impl<W: Write> JsonStream<W> {
    /// A stream printed by `version`, listing the archive when `with_archive`, whose head
    /// carries `sync` when there is one.
    pub(crate) fn new(
        out: W,
        version: &'static str,
        with_archive: bool,
        sync: Option<SyncInfo>,
    ) -> Self {
        JsonStream {
            out,
            version,
            with_archive,
            open: None,
            rows_in_open: 0,
            events: Vec::new(),
            sync,
            costs: None,
            error: None,
        }
    }

    /// The stream with `costs` in its head.
    pub(crate) fn with_costs(mut self, costs: Option<CostTotals>) -> Self {
        self.costs = costs;
        self
    }

    fn write(&mut self, bytes: &[u8]) {
        if self.error.is_none() {
            if let Err(e) = self.out.write_all(bytes) {
                self.error = Some(e);
            }
        }
    }

    fn last_section(&self) -> usize {
        if self.with_archive {
            4
        } else {
            3
        }
    }

    /// Closes sections until `target` is the open one (opening each on the way).
    fn advance_to(&mut self, target: usize) {
        while self.open.is_none_or(|o| o < target) {
            if let Some(o) = self.open {
                if o == 3 {
                    self.flush_events();
                }
                let close: &[u8] = if self.rows_in_open > 0 {
                    b"\n  ]"
                } else {
                    b"]"
                };
                self.write(close);
            }
            let next = self.open.map_or(0, |o| o + 1);
            self.write(format!(",\n  \"{}\": [", SECTIONS[next]).as_bytes());
            self.open = Some(next);
            self.rows_in_open = 0;
        }
    }

    fn row_bytes(&mut self, bytes: &[u8]) {
        let sep: &[u8] = if self.rows_in_open == 0 {
            b"\n    "
        } else {
            b",\n    "
        };
        self.write(sep);
        self.write(bytes);
        self.rows_in_open += 1;
    }

    fn flush_events(&mut self) {
        let mut events = std::mem::take(&mut self.events);
        events.sort_by(|(a, _), (b, _)| a.cmp(b));
        for (_, bytes) in events {
            self.row_bytes(&bytes);
        }
    }

    /// Accepts one part of the stream.
    pub(crate) fn part(&mut self, part: Part<Vec<u8>>) {
        match part {
            Part::Head(head) => {
                let mut head = StatusHead::new(&head, self.version, self.sync.as_ref());
                head.costs = self.costs.as_ref();
                // The head's object stays open: the sections follow as its next keys.
                let bytes = pretty(&head, 0, true);
                self.write(&bytes);
            }
            Part::Row(section, row) => {
                let target = SECTIONS.iter().position(|s| *s == section).unwrap_or(4);
                self.advance_to(target);
                self.row_bytes(&row);
            }
            Part::Event(key, row) => {
                self.advance_to(3);
                self.events.push((key, row));
            }
        }
    }

    /// Closes the document and returns the writer (or the first write error).
    pub(crate) fn finish(mut self) -> Result<W, std::io::Error> {
        let last = self.last_section();
        self.advance_to(last);
        if self.open == Some(3) {
            self.flush_events();
        }
        let close: &[u8] = if self.rows_in_open > 0 {
            b"\n  ]\n}\n"
        } else {
            b"]\n}\n"
        };
        self.write(close);
        match self.error.take() {
            Some(e) => Err(e),
            None => Ok(self.out),
        }
    }
}

#[cfg(test)]
mod tests {
    use agent_coord_shared::output::status::StatusDocument;
    use agent_coord_shared::rules::status;
    use agent_coord_shared::rules::status::Scope;
    use agent_coord_shared::snapshot::MemorySnapshot;
    use serde_json::json;

    use super::*;

    fn now() -> agent_coord_shared::time::Instant {
        agent_coord_shared::time::parse("2026-06-13T12:00:00Z").unwrap()
    }

    fn streamed(snap: &MemorySnapshot, archive: bool) -> String {
        streamed_with(snap, archive, None)
    }

    fn streamed_with(snap: &MemorySnapshot, archive: bool, sync: Option<SyncInfo>) -> String {
        let mut stream = JsonStream::new(Vec::new(), "9.9.9", archive, sync);
        status::stream_all(snap, archive, now(), &render_row, &mut |p| stream.part(p)).unwrap();
        String::from_utf8(stream.finish().unwrap()).unwrap()
    }

    fn collected(snap: &MemorySnapshot, archive: bool) -> String {
        collected_with(snap, archive, None)
    }

    fn collected_with(snap: &MemorySnapshot, archive: bool, sync: Option<&SyncInfo>) -> String {
        let report = status::status(
            snap,
            &Scope::All {
                include_archived: archive,
            },
            now(),
        )
        .unwrap();
        let doc = StatusDocument::new(&report, "9.9.9", sync);
        let mut s = serde_json::to_string_pretty(&doc).unwrap();
        s.push('\n');
        s
    }

    #[test]
    fn the_sync_summary_follows_the_section_notes() {
        let sync = SyncInfo {
            remote: "origin".to_owned(),
            ahead: Some(1),
            behind: None,
            last_synced: None,
        };
        let empty = MemorySnapshot::default();
        let streamed = streamed_with(&empty, false, Some(sync.clone()));
        assert_eq!(streamed, collected_with(&empty, false, Some(&sync)));
        let expected = r#"{
  "version": "9.9.9",
  "scope": {
    "kind": "all"
  },
  "degraded": [],
  "section_notes": {},
  "sync": {
    "remote": "origin",
    "ahead": 1,
    "behind": null,
    "last_synced": null
  },
  "claims": [],
  "heartbeats": [],
  "batches": [],
  "events": []
}
"#;
        assert_eq!(streamed, expected);
    }

    #[test]
    fn streamed_document_equals_the_pretty_printed_report() {
        let empty = MemorySnapshot::default();
        assert_eq!(streamed(&empty, false), collected(&empty, false));
        assert_eq!(streamed(&empty, true), collected(&empty, true));

        let mut snap = MemorySnapshot::default();
        snap.put("claims/acme/app/7.json", &json!({"repo": "acme/app", "target": "7", "agent_id": "a", "status": "active", "expires_at": "2026-06-13T13:00:00Z", "host": "codex"}));
        snap.put(
            "claims/acme/app/8.json",
            &json!({"repo": "acme/app", "target": "8", "agent_id": "b", "status": "released"}),
        );
        snap.put("heartbeats/a.json", &json!({"agent_id": "a", "status": "in_progress", "updated_at": "2026-06-13T11:59:00Z", "expires_at": "2026-06-13T12:14:00Z"}));
        snap.put(
            "batches/b1.json",
            &json!({"batch_id": "b1", "lanes": [{"name": "x:y", "owner": "a", "targets": ["7"]}]}),
        );
        snap.put("events/b1/2.json", &json!({"type": "phase", "at": "2026-06-13T11:00:00Z", "message": "later path, earlier time"}));
        snap.put(
            "events/b1/1.json",
            &json!({"type": "phase", "at": "2026-06-13T11:30:00Z"}),
        );
        snap.put("events/b1/0.json", &json!({"type": "phase"}));
        snap.put(
            "archive/claims/acme/app/1.json",
            &json!({"record_family": "archived_record", "reason": "terminal_claim"}),
        );
        for archive in [false, true] {
            let (s, c) = (streamed(&snap, archive), collected(&snap, archive));
            assert_eq!(s, c, "archive={archive}");
        }
        // Only events present: the earlier sections are still written, empty.
        let mut only_events = MemorySnapshot::default();
        only_events.put(
            "events/b/1.json",
            &json!({"type": "x", "at": "2026-01-01T00:00:00Z"}),
        );
        assert_eq!(
            streamed(&only_events, false),
            collected(&only_events, false)
        );
    }
}
