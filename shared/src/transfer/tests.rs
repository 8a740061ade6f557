use serde_json::json;

use super::*;

fn blobs(records: Vec<(String, Record)>) -> Vec<(String, Vec<u8>)> {
    records
        .into_iter()
        .map(|(p, r)| (p, crate::record::to_bytes(&r)))
        .collect()
}

#[test]
fn jsonl_lines_keep_their_line_numbers() {
    let text = "{\"type\":\"batch.stop_requested\",\"batch_id\":\"b1\"}\n\n  \n{\"type\":\"batch.stopped\"}\n";
    let split = split_file("events/batches/b1.jsonl", text.as_bytes()).unwrap();
    let paths: Vec<&str> = split.iter().map(|(p, _)| p.as_str()).collect();
    // A line naming its batch is stored in that batch's folder, one without in the file's.
    assert_eq!(
        paths,
        [
            "events/b1/events:batches:b1.jsonl:000001.json",
            "events/batches/b1.jsonl/000004.json"
        ]
    );
    let joined = join_files(blobs(split)).unwrap();
    assert_eq!(joined.len(), 1);
    assert_eq!(joined[0].0, "events/batches/b1.jsonl");
    // Compact lines (as the predecessor dashboard writes them) come back byte for byte;
    // blank lines come back empty so every line keeps its number.
    assert_eq!(
        String::from_utf8(joined[0].1.clone()).unwrap(),
        "{\"type\":\"batch.stop_requested\",\"batch_id\":\"b1\"}\n\n\n{\"type\":\"batch.stopped\"}\n"
    );
}

#[test]
fn arrays_split_into_elements_and_join_in_order() {
    let v = json!([{"type": "a", "z": 1, "a": 2}, {"type": "b"}]);
    let bytes = serde_json::to_vec_pretty(&v).unwrap();
    let split = split_file("history/h.json", &bytes).unwrap();
    assert_eq!(split[0].0, "history/h.json/000001.json");
    let joined = join_files(blobs(split)).unwrap();
    assert_eq!(joined[0].0, "history/h.json");
    let back: serde_json::Value = serde_json::from_slice(&joined[0].1).unwrap();
    assert_eq!(back, v);
    // A one-element array stays an array.
    let one = split_file("events/o.json", b"[{\"type\":\"x\"}]").unwrap();
    assert_eq!(
        join_files(blobs(one)).unwrap()[0].1,
        b"[\n  {\n    \"type\": \"x\"\n  }\n]\n"
    );
}

#[test]
fn errors_name_the_file_and_line() {
    let err = split_file("events/b.jsonl", b"{}\n{broken\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "events/b.jsonl:2 is not a JSON object record: key must be a string at line 1 column 2"
    );
    let err = split_file("events/b.jsonl", b"{}\n[1]\n").unwrap_err();
    assert_eq!(
        err.to_string(),
        "events/b.jsonl:2 is not a JSON object record: record is not a JSON object"
    );
    let err = split_file("history/a.json", b"[{}, 3]").unwrap_err();
    assert_eq!(
        err.to_string(),
        "history/a.json element 2 is not a JSON object"
    );
    // Arrays and JSONL are event forms only.
    assert!(split_file("claims/a/b/1.json", b"[{}]").is_err());
    assert!(split_file("events/b/e.json", b"{}").is_ok());
}

#[test]
fn ordinary_records_are_not_containers() {
    let blobs = vec![
        (
            "events/b1/20260712T010700.000000Z-0000abcd.json".to_owned(),
            b"{}\n".to_vec(),
        ),
        ("claims/a.json/b/000001.json".to_owned(), b"{}\n".to_vec()),
        ("events/b1.json/1.json".to_owned(), b"{}\n".to_vec()),
    ];
    assert_eq!(join_files(blobs.clone()).unwrap(), {
        let mut b = blobs;
        b.sort();
        b
    });
}

/// Import stored JSONL lines under `events/<file>.jsonl/<n>.json`, where no batch scope
/// (`status --batch-id`, batch-audit) looks: a line belongs to the batch its own
/// `batch_id` names, in that batch's events folder, and export still writes the file back.
#[test]
fn regression_jsonl_lines_lose_their_batch() {
    let text = concat!(
        "{\"type\":\"lane.started\",\"batch_id\":\"b1\"}\n",
        "{\"type\":\"batch.stop_requested\",\"batch_id\":\"b2\"}\n",
        "\n",
        "{\"type\":\"note\"}\n",
        "{\"type\":\"done\",\"batch_id\":\"../x\"}\n",
    );
    let split = split_file("events/batches.jsonl", text.as_bytes()).unwrap();
    let paths: Vec<&str> = split.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "events/b1/events:batches.jsonl:000001.json",
            "events/b2/events:batches.jsonl:000002.json",
            // No batch, or one that cannot name a folder: kept in the file's own folder.
            "events/batches.jsonl/000004.json",
            "events/batches.jsonl/000005.json",
        ]
    );
    let history = split_file("history/h.jsonl", text.as_bytes()).unwrap();
    assert_eq!(history[0].0, "events/b1/history:h.jsonl:000001.json");
    let mut stored = blobs(split);
    stored.extend(blobs(history));
    let joined = join_files(stored).unwrap();
    let files: Vec<(&str, &str)> = joined
        .iter()
        .map(|(p, b)| (p.as_str(), std::str::from_utf8(b).unwrap()))
        .collect();
    assert_eq!(
        files,
        [("events/batches.jsonl", text), ("history/h.jsonl", text)],
        "every line back in its file at its line"
    );
    // Arrays of events follow the same rule.
    let array = split_file("events/all.json", b"[{\"batch_id\":\"b1\"},{}]").unwrap();
    assert_eq!(array[0].0, "events/b1/events:all.json:000001.json");
    assert_eq!(array[1].0, "events/all.json/000002.json");
    let joined = join_files(blobs(array)).unwrap();
    assert_eq!(joined.len(), 1);
    assert_eq!(joined[0].0, "events/all.json");
}
