//! Fuzz invariants for stored records and the identifiers that name their paths.

use std::str::FromStr;

use serde_json::Value;

use crate::dashboard::inputs::records::parse_record;
use crate::ids::is_repo_part;
use crate::ids::is_segment;
use crate::ids::paths;
use crate::ids::AgentId;
use crate::ids::BatchId;
use crate::ids::EventId;
use crate::ids::RepoSlug;
use crate::ids::Target;
use crate::record::from_bytes;
use crate::record::to_bytes;
use crate::record::Archive;
use crate::record::Claim;
use crate::record::Event;
use crate::record::Heartbeat;
use crate::record::Lane;
use crate::record::LaneClosed;
use crate::record::Manifest;
use crate::record::Record;

/// Top folders the selector byte chooses from (the last ones are not record folders).
const PATHS: [&str; 8] = [
    "claims/acme/app/7.json",
    "heartbeats/w1.json",
    "batches/b1.json",
    "events/b1/e1.json",
    "archive/events/b1/e1.json",
    "coordinator/tasks/acme/app/7.json",
    "events/b1.jsonl/000001.json",
    "history/b1.json",
];

/// Every record parser the dashboard and the rules use must accept any bytes without a
/// panic, and the typed accessors must read whatever parsed.
pub fn record_parse(data: &[u8]) {
    let (sel, _) = super::split(data);
    let bytes = data.get(1..).unwrap_or_default();
    let _ = parse_record(PATHS[usize::from(sel) % PATHS.len()], bytes);
    let Ok(record) = from_bytes(bytes) else {
        return;
    };
    let claim = Claim::from(record.clone());
    let _ = (claim.active_holder(), claim.expires_at(), claim.terminal());
    let beat = Heartbeat::from(record.clone());
    let _ = (beat.updated_at(), beat.expires_at());
    let manifest = Manifest::from(record.clone());
    for lane in manifest.lanes() {
        if let Value::Object(lane) = lane {
            let _ = Lane::is_closed(lane);
        }
    }
    let event = Event::from(record.clone());
    let _ = (event.known_kind(), event.at(), event.payload());
    let _ = LaneClosed::semantics(&record);
    let _ = LaneClosed::from(record.clone());
    let _ = Archive::from(record);
}

/// Parse → serialise → parse is stable for every kind, and an unknown field added to any
/// record survives every kind's round trip in place.
pub fn record_round_trip(data: &[u8]) {
    let Ok(mut record) = from_bytes(data) else {
        return;
    };
    let unknown = "x_fuzz_unknown_field";
    if !record.contains_key(unknown) {
        record.insert(
            unknown.to_owned(),
            Value::from(vec![Value::from(1), Value::Null]),
        );
    }
    let stored = to_bytes(&record);
    let again = from_bytes(&stored).expect("stored bytes parse again");
    assert_eq!(
        again, record,
        "parse → serialise → parse changed the record"
    );
    assert_eq!(
        to_bytes(&again),
        stored,
        "serialising twice is not byte-stable"
    );
    fn kind<T: serde::de::DeserializeOwned + serde::Serialize + Into<Record>>(stored: &[u8]) {
        let parsed: T = serde_json::from_slice(stored).expect("a record parses as every kind");
        let mut out = serde_json::to_vec_pretty(&parsed).expect("a kind serialises");
        out.push(b'\n');
        assert_eq!(out, stored, "a kind's round trip is not byte-identical");
        let record: Record = parsed.into();
        assert!(
            record.contains_key("x_fuzz_unknown_field"),
            "unknown field lost"
        );
    }
    kind::<Claim>(&stored);
    kind::<Heartbeat>(&stored);
    kind::<Manifest>(&stored);
    kind::<Event>(&stored);
    kind::<LaneClosed>(&stored);
    kind::<Archive>(&stored);
    // Building an ordinary event keeps every field and its value.
    let ordered = Event::ordered(record.clone());
    assert_eq!(
        ordered.len(),
        record.len(),
        "Event::ordered dropped a field"
    );
    for (k, v) in &record {
        assert_eq!(ordered.get(k), Some(v), "Event::ordered changed {k}");
    }
}

/// Asserts that `path` is relative, has only normal segments, and has `n` segments.
fn assert_contained(path: &str, n: usize) {
    let segments: Vec<&str> = path.split('/').collect();
    assert_eq!(segments.len(), n, "{path:?} has an unexpected depth");
    for s in segments {
        assert!(
            !s.is_empty() && s != "." && s != "..",
            "{path:?} has an unsafe segment {s:?}"
        );
        assert!(
            !s.contains(['\\', '\0']) && !s.chars().any(char::is_control),
            "{path:?} has an unsafe character"
        );
        // git itself (fsck `hasDotgit`, core.protectNTFS) treats `.git` with trailing dots
        // or spaces as `.git`: such a tree entry aliases the repository's own folder.
        let trimmed = s.trim_end_matches(['.', ' ']);
        assert!(!trimmed.eq_ignore_ascii_case(".git"), "{path:?} names .git");
    }
    let p = std::path::Path::new(path);
    assert!(
        p.components()
            .all(|c| matches!(c, std::path::Component::Normal(_))),
        "{path:?} is not a plain relative path"
    );
}

/// Every identifier the grammar accepts builds a path that stays in its folder, and two
/// different accepted identifiers never build the same path.
pub fn ids_paths(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (a, b) = text.split_once('\n').unwrap_or((&text, ""));
    for s in [a, b] {
        if is_segment(s) {
            assert!(
                is_repo_part(s) || s.contains(':'),
                "segment {s:?} is no repo part"
            );
        }
        if let Ok(agent) = AgentId::from_str(s) {
            assert_eq!(agent.as_str(), s);
            assert_contained(&paths::heartbeat(&agent), 2);
        }
        if let Ok(batch) = BatchId::from_str(s) {
            assert_contained(&paths::batch(&batch), 2);
            assert_contained(&paths::events_dir(&batch), 2);
            if let Ok(event) = EventId::from_str(b) {
                assert_contained(&paths::event(&batch, event.as_str()), 3);
            }
        }
        if let Ok(slug) = RepoSlug::from_str(s) {
            assert_eq!(slug.to_string(), s, "a slug does not round-trip");
            if let Ok(target) = Target::from_str(b) {
                assert_contained(&paths::claim(&slug, &target), 4);
            }
        }
        if let Ok(id) = serde_json::from_value::<BatchId>(Value::from(s)) {
            assert_eq!(id.as_str(), s, "serde and FromStr disagree");
            assert!(is_segment(s), "serde accepted what FromStr rejects");
        }
    }
    // No aliasing: different accepted ids, different paths.
    if let (Ok(x), Ok(y)) = (AgentId::from_str(a), AgentId::from_str(b)) {
        assert_eq!(x == y, paths::heartbeat(&x) == paths::heartbeat(&y));
    }
    if let (Ok(x), Ok(y)) = (BatchId::from_str(a), BatchId::from_str(b)) {
        assert_eq!(x == y, paths::batch(&x) == paths::batch(&y));
        assert_eq!(x == y, paths::events_dir(&x) == paths::events_dir(&y));
    }
    if let (Ok(x), Ok(y)) = (RepoSlug::from_str(a), RepoSlug::from_str(b)) {
        let t = Target::from_str("1").expect("1 is a target");
        assert_eq!(x == y, paths::claim(&x, &t) == paths::claim(&y, &t));
    }
}

/// Root-relative files of a state root the `transfer_files` selector byte chooses from.
const FILES: [&str; 5] = [
    "events/batches/b1.jsonl",
    "history/b1.jsonl",
    "events/b1/pair.json",
    "history/all.json",
    "claims/acme/app/7.json",
];

/// A state-root file that imports comes back from export as the same records at the same
/// stored paths (JSONL lines at their line numbers), and every stored path stays below
/// the file's own path or is an event in a batch's folder (`events/<batch>/<name>.json`,
/// both segments safe).
pub fn transfer_files(data: &[u8]) {
    use crate::transfer::join_files;
    use crate::transfer::split_file;
    let (sel, _) = super::split(data);
    let path = FILES[usize::from(sel) % FILES.len()];
    let Ok(records) = split_file(path, data.get(1..).unwrap_or_default()) else {
        return;
    };
    for (stored, _) in &records {
        let in_batch = stored
            .strip_prefix("events/")
            .and_then(|rest| rest.strip_suffix(".json"))
            .and_then(|rest| rest.split_once('/'))
            .is_some_and(|(batch, name)| is_segment(batch) && is_segment(name));
        if in_batch {
            continue;
        }
        assert!(
            stored == path || stored.starts_with(&format!("{path}/")),
            "{stored} is not below {path}"
        );
        assert!(
            stored.split('/').all(crate::ids::is_repo_part),
            "{stored} has an unsafe segment"
        );
    }
    let blobs: Vec<(String, Vec<u8>)> = records
        .iter()
        .map(|(p, r)| (p.clone(), to_bytes(r)))
        .collect();
    let files = join_files(blobs).expect("stored records export");
    if records.is_empty() {
        assert!(files.is_empty(), "nothing became a file");
        return;
    }
    assert_eq!(files.len(), 1, "one file comes back");
    assert_eq!(files[0].0, path, "the file comes back at its path");
    let again = split_file(path, &files[0].1).expect("an exported file imports");
    assert_eq!(again, records, "export → import changed the records");
}
