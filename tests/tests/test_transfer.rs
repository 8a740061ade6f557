//! `import` / `export`: lossless conversion of a predecessor state root; crash safety.

use std::collections::BTreeMap;
use std::path::Path;

use agent_coord_tests::env::TestEnv;
use agent_coord_tests::fleet;
use serde_json::json;
use serde_json::Value;

fn read_tree(root: &Path) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "json") {
                let rel = path
                    .strip_prefix(root)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                out.insert(
                    rel,
                    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap(),
                );
            }
        }
    }
    out
}

#[test]
fn import_then_export_round_trips_every_value() {
    let env = TestEnv::new();
    let src = env.root().join("legacy");
    let counts = fleet::generate(&src, 1, 1_781_352_000);
    // Predecessor leftovers that are not records.
    std::fs::write(src.join("claims/acme/repo0/1000.json.lock"), "").unwrap();
    std::fs::write(src.join("batches/.batch-00000.json.tmp-1-ab"), "{").unwrap();
    let out = env.import(&src).json().run().success().json();
    assert_eq!(out["records"], json!(counts.total()));
    assert_eq!(out["written"], json!(counts.total()));
    assert_eq!(env.commit_count(), 1, "an import is one commit");

    let dst = env.root().join("exported");
    env.run(["export", "--to", dst.to_str().unwrap()]).success();
    assert_eq!(
        read_tree(&src),
        read_tree(&dst),
        "same JSON values, unknown fields preserved"
    );

    // Importing the same root again changes nothing.
    let again = env.import(&src).json().run().success().json();
    assert_eq!(again["written"], json!(0));
    assert_eq!(env.commit_count(), 1);

    // status reads the imported fleet.
    let status = env.run(["status", "--json"]).success().json();
    assert_eq!(status["claims"].as_array().unwrap().len(), counts.claims);
    assert_eq!(status["events"].as_array().unwrap().len(), counts.events);
    assert_eq!(
        status["heartbeats"].as_array().unwrap().len(),
        counts.heartbeats
    );
}

#[test]
fn import_refuses_conflicts_and_malformed_files() {
    let env = TestEnv::new();
    env.claim("a", "acme/app", "7").run().success();
    let tip = env.state_tip();
    let src = env.root().join("legacy");
    std::fs::create_dir_all(src.join("claims/acme/app")).unwrap();
    std::fs::write(
        src.join("claims/acme/app/7.json"),
        r#"{"agent_id": "z", "status": "active"}"#,
    )
    .unwrap();
    insta::assert_snapshot!(env.import(&src).run(), @r"
    ------- stderr -------
    import would replace 1 existing records with different content (first: claims/acme/app/7.json); pass --overwrite to replace them
    [exit status: 1]
    ");
    assert_eq!(env.state_tip(), tip);

    std::fs::write(src.join("claims/acme/app/8.json"), "{broken").unwrap();
    insta::assert_snapshot!(env.import(&src).arg("--overwrite").run(), @r"
    ------- stderr -------
    import: claims/acme/app/8.json is not a JSON object record: key must be a string at line 1 column 2
    [exit status: 1]
    ");
    assert_eq!(env.state_tip(), tip);

    std::fs::remove_file(src.join("claims/acme/app/8.json")).unwrap();
    env.import(&src).arg("--overwrite").run().success();
    assert_eq!(env.holder("acme/app", "7").as_deref(), Some("z"));

    let dst = env.write_file("full/x.txt", "x");
    let out = env.run(["export", "--to", dst.parent().unwrap().to_str().unwrap()]);
    insta::assert_snapshot!(out, @r"
    ------- stderr -------
    export destination is not empty: [ROOT]/full
    [exit status: 1]
    ");
}

#[test]
fn killed_writers_leave_a_consistent_repository() {
    use nix::sys::signal::kill;
    use nix::sys::signal::Signal;
    use nix::unistd::Pid;

    let env = TestEnv::new();
    let src = env.root().join("legacy");
    fleet::generate(&src, 2, 1_781_352_000);
    // Kill imports (long writers) and claims at staggered moments.
    for (i, delay_ms) in [5u64, 20, 40, 80, 120, 200].iter().enumerate() {
        let mut import = env
            .import(&src)
            .arg("--overwrite")
            .command()
            .spawn()
            .unwrap();
        let mut claims: Vec<_> = (0..4)
            .map(|t| {
                env.claim(&format!("k{i}"), "acme/app", i * 10 + t)
                    .command()
                    .spawn()
                    .unwrap()
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(*delay_ms));
        for child in std::iter::once(&mut import).chain(claims.iter_mut()) {
            let _ = kill(Pid::from_raw(child.id() as i32), Signal::SIGKILL);
        }
        for child in std::iter::once(&mut import).chain(claims.iter_mut()) {
            let _ = child.wait();
        }
        let fsck = env.git_output(&["fsck", "--no-dangling"]);
        assert!(
            fsck.status.success(),
            "fsck failed: {}",
            String::from_utf8_lossy(&fsck.stderr)
        );
        if let Some(tip) = env.state_tip() {
            assert_eq!(env.git(&["cat-file", "-t", &tip]), "commit");
            // The tip's whole tree is readable.
            let listing = env.git_output(&["ls-tree", "-r", &tip]);
            assert!(listing.status.success());
        }
    }
    // A killed writer may leave a ref lock behind; once it is old it is recognised as
    // abandoned and removed, so the store works afterwards.
    let lock = env.repo.join("refs/heads/agent-coord.lock");
    if !lock.exists() {
        std::fs::write(&lock, "").unwrap();
    }
    let aged = std::process::Command::new("touch")
        .args(["-d", "1 minute ago"])
        .arg(&lock)
        .status()
        .unwrap();
    assert!(aged.success());
    let out = env.claim("after", "acme/app", "999").run().success();
    assert!(
        out.stderr.contains("warning: removed abandoned lock"),
        "{out}"
    );
    assert!(!lock.exists());
    env.run(["status", "--json"]).success();
}

#[test]
fn imported_half_finished_closeout_is_repaired_idempotently() {
    // A predecessor state where the lane_closed reservation exists but the batch was never
    // stamped (its non-atomic closeout stopped half-way).
    let env = TestEnv::new();
    let src = env.root().join("legacy");
    let write = |path: &str, v: serde_json::Value| {
        let p = src.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    };
    write(
        "batches/b2.json",
        json!({"schema_version": 1, "batch_id": "b2", "repo": "acme/app",
        "lanes": [{"name": "code", "owner": "worker-a", "targets": ["50"]}]}),
    );
    write(
        "events/b2/lane_closed-5694d08a2e53ffca.json",
        json!({"schema_version": 2,
        "event_id": "lane_closed-5694d08a2e53ffca", "batch_id": "b2", "lane": "code", "type": "lane_closed",
        "repo": "acme/app", "target": "50", "terminal": "done", "workspace": "default",
        "closed_by": {"agent_id": "worker-a", "machine": "old-box"}, "at": "2026-06-13T11:00:00Z"}),
    );
    env.import(&src).run().success();
    let close = env
        .event("b2", "lane_closed")
        .opt("--terminal", "done")
        .agent("worker-a")
        .on("acme/app", "50");
    insta::assert_snapshot!(close.run(), @r"
    ------- stdout -------
    reconciled terminal closeout for acme/app#50
    [exit status: 0]
    ");
    let batch = env.record("batches/b2.json").unwrap();
    assert_eq!(batch["lanes"][0]["terminal"], json!("done"));
    assert_eq!(
        batch["lanes"][0]["closed_by"]["machine"],
        json!("old-box"),
        "the first closeout is authoritative"
    );
    assert_eq!(batch["status"], json!("completed"));
    insta::assert_snapshot!(close.run(), @r"
    ------- stdout -------
    lane already closed for acme/app#50
    [exit status: 0]
    ");
}

/// Every file form the telemetry contract names, as the predecessors write them.
fn contract_root(src: &Path) -> Vec<(&'static str, String)> {
    let pretty =
        |v: Value| String::from_utf8(serde_json::to_vec_pretty(&v).unwrap()).unwrap() + "\n";
    let stop = |at: &str| {
        json!({"schema_version": 1, "event_id": format!("b1:stop-requested:{at}"),
               "type": "batch.stop_requested", "batch_id": "b1", "repo": "acme/app",
               "status": "stop_requested", "timestamp": at, "machine_id": "box",
               "message": "Stop requested from dashboard so this batch can be restarted."})
        .to_string()
    };
    let event = |ty: &str, at: &str| {
        json!({"schema_version": 1, "event_id": format!("b1:lane-a:{ty}:{at}"), "type": ty,
               "batch_id": "b1", "lane": "lane-a", "agent_id": "worker-a", "repo": "acme/app",
               "target": "7", "at": at, "x_future": {"kept": [1, "two"]}})
    };
    let files = vec![
        (
            "claims/acme/app/7.json",
            pretty(json!({"schema_version": 1, "repo": "acme/app",
            "target": "7", "agent_id": "worker-a", "status": "active", "x_future": true})),
        ),
        (
            "heartbeats/worker-a.json",
            pretty(json!({"schema_version": 1, "agent_id": "worker-a",
            "machine_id": "box", "status": "in_progress", "updated_at": "2026-06-19T20:00:00Z"})),
        ),
        (
            "batches/b1.json",
            pretty(json!({"schema_version": 1, "batch_id": "b1",
            "repo": "acme/app", "lanes": [{"name": "lane-a", "owner": "worker-a", "targets": ["7"]}]})),
        ),
        // One object per file, in the batch's folder (agent-coord's own form).
        (
            "events/b1/e1.json",
            pretty(event("lane.started", "2026-06-19T19:00:00Z")),
        ),
        // An array-valued event file, and one with a single element.
        (
            "events/b1/pair.json",
            pretty(json!([
                event("blocked", "2026-06-19T19:10:00Z"),
                event("continued", "2026-06-19T19:20:00Z")
            ])),
        ),
        (
            "events/one.json",
            pretty(json!([event("ready", "2026-06-19T19:30:00Z")])),
        ),
        // The dashboard's stop requests: appended compact lines (a blank line kept in place).
        (
            "events/batches/b1.jsonl",
            format!(
                "{}\n\n{}\n",
                stop("2026-06-19T20:05:00Z"),
                stop("2026-06-19T20:06:00Z")
            ),
        ),
        (
            "events/b1-history.jsonl",
            format!("{}\n", event("done", "2026-06-19T21:00:00Z")),
        ),
        // history/: JSONL, single objects and arrays.
        (
            "history/b1.jsonl",
            format!(
                "{}\n{}\n",
                event("token_limit_pause", "2026-06-19T18:00:00Z"),
                event("continued", "2026-06-19T18:30:00Z")
            ),
        ),
        (
            "history/b1/qa.json",
            pretty(event("qa.validation_passed", "2026-06-19T22:00:00Z")),
        ),
        (
            "history/all.json",
            pretty(json!([event("heartbeat", "2026-06-19T18:10:00Z")])),
        ),
        (
            "archive/events/b0/old.json",
            pretty(event("done", "2026-06-01T00:00:00Z")),
        ),
    ];
    for (path, text) in &files {
        let p = src.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    files
}

#[test]
fn import_then_export_round_trips_every_contract_file_form() {
    let env = TestEnv::new();
    let src = env.root().join("legacy");
    let files = contract_root(&src);
    let out = env.import(&src).json().run().success().json();
    // 3 + 1 + 2 + 1 + 2 + 1 + 2 + 1 + 1 + 1 records; nothing skipped.
    assert_eq!(out["records"], json!(15), "{out}");
    assert_eq!(out["skipped_files"], json!(0), "{out}");
    assert_eq!(out["families"]["history"], json!(4), "{out}");
    assert_eq!(env.commit_count(), 1, "an import is one commit");
    let again = env.import(&src).json().run().success().json();
    assert_eq!(again["written"], json!(0), "re-import is a no-op: {again}");

    let dst = env.root().join("exported");
    let out = env
        .run(["export", "--to", dst.to_str().unwrap(), "--json"])
        .success()
        .json();
    assert_eq!(out["files"], json!(files.len()), "{out}");
    for (path, text) in &files {
        let back = std::fs::read_to_string(dst.join(path))
            .unwrap_or_else(|e| panic!("{path} not exported: {e}"));
        if path.ends_with(".jsonl") {
            // Byte for byte: the same lines at the same line numbers (the dashboard's
            // `<path>:<line>` identities).
            assert_eq!(&back, text, "{path}");
        } else {
            let a: Value = serde_json::from_str(text).unwrap();
            let b: Value = serde_json::from_str(&back).unwrap();
            assert_eq!(a, b, "{path}: same JSON value, same form");
        }
    }
    let exported: Vec<String> = walk(&dst);
    let mut expected: Vec<String> = files.iter().map(|(p, _)| p.to_string()).collect();
    expected.sort();
    assert_eq!(exported, expected, "exactly the source files");

    // The export imports again into an identical state (a second machine migrating).
    let env2 = TestEnv::new();
    env2.import(&dst).run().success();
    let dst2 = env2.root().join("exported");
    env2.run(["export", "--to", dst2.to_str().unwrap()])
        .success();
    for path in &expected {
        assert_eq!(
            std::fs::read(dst.join(path)).unwrap(),
            std::fs::read(dst2.join(path)).unwrap(),
            "{path} is stable across a second round trip"
        );
    }
}

fn walk(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(
                    path.strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
    }
    out.sort();
    out
}

#[test]
fn import_names_the_line_of_a_malformed_jsonl_record() {
    let env = TestEnv::new();
    let src = env.root().join("legacy");
    std::fs::create_dir_all(src.join("events/batches")).unwrap();
    std::fs::write(
        src.join("events/batches/b1.jsonl"),
        "{\"type\":\"a\"}\n\n{broken\n",
    )
    .unwrap();
    insta::assert_snapshot!(env.import(&src).run(), @r"
    ------- stderr -------
    import: events/batches/b1.jsonl:3 is not a JSON object record: key must be a string at line 1 column 2
    [exit status: 1]
    ");
    std::fs::write(src.join("events/batches/b1.jsonl"), "").unwrap();
    std::fs::write(src.join("events/arr.json"), "[{\"type\":\"a\"}, 7]").unwrap();
    insta::assert_snapshot!(env.import(&src).run(), @r"
    ------- stderr -------
    import: events/arr.json element 2 is not a JSON object
    [exit status: 1]
    ");
    assert_eq!(env.state_tip(), None, "nothing written");
}

/// `import` stored the lines of `events/<batch>.jsonl` under `events/<batch>.jsonl/<n>.json`,
/// where no batch scope looks: `status --batch-id` showed none of them. Each line belongs to
/// the batch its own `batch_id` names (whichever file it is in), and export writes every
/// file back as it was.
#[test]
fn regression_imported_jsonl_lines_lose_their_batch() {
    let env = TestEnv::new();
    let src = env.root().join("legacy");
    let line = |batch: &str, ty: &str, at: &str| {
        json!({"schema_version": 1, "type": ty, "batch_id": batch, "repo": "acme/app",
               "target": "7", "at": at})
        .to_string()
    };
    let files = [
        (
            "events/b1.jsonl",
            format!(
                "{}\n{}\n",
                line("b1", "lane.started", "2026-06-19T19:00:00Z"),
                line("b1", "blocked", "2026-06-19T19:10:00Z")
            ),
        ),
        (
            "events/batches.jsonl",
            format!(
                "{}\n\n{}\n{{\"type\":\"note\"}}\n",
                line("b2", "batch.created", "2026-06-19T18:00:00Z"),
                line("b1", "continued", "2026-06-19T19:20:00Z")
            ),
        ),
        (
            "history/b2.jsonl",
            format!("{}\n", line("b2", "done", "2026-06-19T21:00:00Z")),
        ),
    ];
    for (path, text) in &files {
        let p = src.join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let out = env.import(&src).json().run().success().json();
    assert_eq!(out["records"], json!(6), "{out}");
    let types = |batch: &str| -> Vec<String> {
        let status = env
            .run(["status", "--batch-id", batch, "--json"])
            .success()
            .json();
        let mut types: Vec<String> = status["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["type"].as_str().unwrap().to_owned())
            .collect();
        types.sort();
        types
    };
    assert_eq!(types("b1"), ["blocked", "continued", "lane.started"]);
    assert_eq!(types("b2"), ["batch.created", "done"]);

    let dst = env.root().join("exported");
    env.run(["export", "--to", dst.to_str().unwrap()]).success();
    assert_eq!(
        walk(&dst),
        [
            "events/b1.jsonl",
            "events/batches.jsonl",
            "history/b2.jsonl"
        ]
    );
    for (path, text) in &files {
        assert_eq!(
            &std::fs::read_to_string(dst.join(path)).unwrap(),
            text,
            "{path}"
        );
    }
}

/// Annotations (an operator's dismissals and snoozes) are records of the state branch like
/// any other, but `import` skipped the folder, so an export → import round trip lost them.
#[test]
fn regression_annotations_missing_from_export() {
    let env = TestEnv::new();
    env.claim("a", "acme/app", "3").run().success();
    let dismissal = json!({"schema_version": 1, "repo": "acme/app", "target": "3",
                           "kind": "dismiss", "note": "handled by hand",
                           "updated_at": "2026-06-13T12:00:00Z", "machine_id": "box-1"});
    let text = serde_json::to_string_pretty(&dismissal).unwrap() + "\n";
    env.put_state_files(&[("annotations/acme/app/3.json", &text)]);
    let dst = env.root().join("exported");
    let out = env
        .run(["export", "--to", dst.to_str().unwrap(), "--json"])
        .success()
        .json();
    assert_eq!(out["records"], json!(2), "{out}");
    assert_eq!(
        std::fs::read_to_string(dst.join("annotations/acme/app/3.json")).unwrap(),
        text
    );
    let env2 = TestEnv::new();
    let out = env2.import(&dst).json().run().success().json();
    assert_eq!(out["records"], json!(2), "{out}");
    assert_eq!(out["skipped_files"], json!(0), "{out}");
    assert_eq!(out["families"]["annotations"], json!(1), "{out}");
    assert_eq!(env2.record("annotations/acme/app/3.json"), Some(dismissal));
}
