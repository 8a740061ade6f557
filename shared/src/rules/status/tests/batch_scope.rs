//! Unit tests for batch scope (dependencies, precedence, failures), rendering and flags.

use super::*;

#[test]
fn batch_scope_blocked_on_follows_dependency_status() {
    // (dependency heartbeat status, dependency lane terminal, blocked)
    let cases = [
        ("done", None, false),
        ("completed", None, false),
        ("ready_gates_clean", None, false),
        ("in_progress", None, true),
        ("abandoned", None, true),
        ("superseded", None, true),
        ("released", None, true),
        ("in_progress", Some("done"), false),
        ("done", Some("abandoned"), true),
    ];
    for (hb_status, terminal, blocked) in cases {
        let mut snap = MemorySnapshot::default();
        let mut dep_lane = json!({"name": "backend", "owner": "w-dep"});
        if let Some(t) = terminal {
            dep_lane["terminal"] = json!(t);
        }
        snap.put(
            "batches/batch:a.json",
            &json!({"batch_id": "batch:a", "lanes": [dep_lane]}),
        );
        snap.put("batches/b.json", &json!({"batch_id": "b", "lanes": [
            {"name": "docs", "owner": "w-docs", "targets": ["1"], "depends_on": ["batch:a:backend"]}]}));
        snap.put("heartbeats/w-docs.json", &beat("w-docs", "blocked"));
        snap.put("heartbeats/w-dep.json", &beat("w-dep", hb_status));
        let payload = run(&snap, &batch_scope_of("b"));
        let want = if blocked {
            json!(["batch:a:backend"])
        } else {
            json!([])
        };
        assert_eq!(
            lane(&payload, "docs")["blocked_on"],
            want,
            "{hb_status} {terminal:?}"
        );
        assert_eq!(lane(&payload, "docs")["status"], "blocked");
        assert_eq!(
            payload["degraded"],
            json!(["not checked in batch scope"]),
            "{hb_status}"
        );
        let agents: Vec<&str> = payload["heartbeats"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["agent_id"].as_str().unwrap())
            .collect();
        assert_eq!(
            agents,
            ["w-docs", "w-dep"],
            "own owners first, then dependency owners"
        );
    }
}

#[test]
fn batch_scope_lane_status_precedence() {
    let mut snap = MemorySnapshot::default();
    snap.put(
        "batches/b.json",
        &json!({"lanes": [
            {"name": "t", "owner": "w1", "terminal": "superseded", "status": "done"},
            {"name": "h", "owner": "w1", "status": "done"},
            {"name": "s", "owner": "w-none", "status": "merged"},
            {"name": "u", "owner": "w-none"}
        ]}),
    );
    snap.put(
        "heartbeats/w1.json",
        &beat("w1", "waiting_on_checks_or_review"),
    );
    let payload = run(&snap, &batch_scope_of("b"));
    for (name, want) in [
        ("t", "superseded"),
        ("h", "waiting_on_checks_or_review"),
        ("s", "merged"),
        ("u", "unknown"),
    ] {
        assert_eq!(lane(&payload, name)["status"], want, "{name}");
    }
    assert_eq!(
        payload["batches"][0]["batch_id"], "b",
        "batch id falls back to the file name"
    );
}

#[test]
fn batch_scope_fails_on_malformed_manifests_but_not_heartbeats() {
    let mut snap = MemorySnapshot::default();
    snap.put_raw("batches/b.json", b"{");
    assert!(matches!(
        status(&snap, &batch_scope_of("b"), now()),
        Err(ReadError::Malformed { .. })
    ));

    let mut snap = MemorySnapshot::default();
    snap.put(
        "batches/b.json",
        &json!({"lanes": [{"name": "x", "depends_on": "a:y"}]}),
    );
    snap.put_raw("batches/a.json", b"nope");
    let err = status(&snap, &batch_scope_of("b"), now()).unwrap_err();
    assert!(
        matches!(&err, ReadError::Malformed { path, .. } if path == "batches/a.json"),
        "{err:?}"
    );
}

/// A snapshot whose store fails on one path.
struct FailingAt(MemorySnapshot, &'static str);

impl Snapshot for FailingAt {
    fn read(&self, path: &str) -> Result<Option<Record>, ReadError> {
        if path == self.1 {
            return Err(ReadError::Store("disk on fire".to_owned()));
        }
        self.0.read(path)
    }
    fn is_file(&self, path: &str) -> Result<bool, ReadError> {
        self.0.is_file(path)
    }
    fn list(&self, prefix: &str) -> Result<Vec<(String, Record)>, ReadError> {
        self.0.list(prefix)
    }
}

#[test]
fn store_failures_on_owner_heartbeats_propagate() {
    let mut snap = MemorySnapshot::default();
    snap.put("claims/acme/app/7.json", &json!({"agent_id": "w1"}));
    snap.put(
        "batches/b.json",
        &json!({"lanes": [{"name": "x", "owner": "w1"}]}),
    );
    let snap = FailingAt(snap, "heartbeats/w1.json");
    for scope in [target_scope_of("7"), batch_scope_of("b")] {
        assert_eq!(
            status(&snap, &scope, now()).unwrap_err(),
            ReadError::Store("disk on fire".to_owned())
        );
    }
}

#[test]
fn text_rendering() {
    let mut snap = MemorySnapshot::default();
    snap.put(
        "batches/b.json",
        &json!({"batch_id": "b", "lanes": [
            {"name": "docs", "owner": "w-docs", "targets": ["3972", ""], "depends_on": ["b:api"]},
            {"name": "api", "owner": "w-api", "targets": []}
        ]}),
    );
    snap.put(
        "batches/empty.json",
        &json!({"batch_id": "empty", "lanes": []}),
    );
    snap.put(
        "heartbeats/w-docs.json",
        &json!({"agent_id": "w-docs", "status": "done", "repo": "acme/app",
        "target": "3972", "updated_at": at(-1), "expires_at": at(10)}),
    );
    snap.put(
        "events/b/1.json",
        &json!({"batch_id": "b", "type": "phase", "lane": "docs", "phase": "review",
        "agent_id": "w-docs", "message": "looking good", "at": at(-2)}),
    );
    snap.put(
        "events/b/2.json",
        &json!({"batch_id": "b", "type": "note", "status": "blocked", "at": at(-1)}),
    );
    snap.put(
        "events/b/3.json",
        &json!({"batch_id": "b", "type": "ping", "message": "", "at": at(0)}),
    );
    let report = status(&snap, &batch_scope_of("b"), now()).unwrap();
    insta::assert_snapshot!(report.to_text(), @r"
    claims
    - not checked in batch scope
    heartbeats
    - w-docs done live acme/app#3972 updated 2026-06-20T11:59:00Z
    batches
    - b
      - lane docs owner w-docs targets 3972 status done live deps b:api blocked_on b:api
      - lane api owner w-api targets - status unknown no-heartbeat deps - blocked_on -
    events
    - b docs phase review by w-docs at 2026-06-20T11:58:00Z looking good
    - b - note blocked by - at 2026-06-20T11:59:00Z
    - b - ping - by - at 2026-06-20T12:00:00Z
    degraded
    - not checked in batch scope
    - lane-owner heartbeats not found: w-api
    ");

    let mut snap = MemorySnapshot::default();
    snap.put(
        "claims/acme/app/7.json",
        &json!({"repo": "acme/app", "target": "7", "agent_id": "w1",
        "status": "active", "branch": "w1/7", "expires_at": at(60)}),
    );
    snap.put(
        "batches/empty.json",
        &json!({"batch_id": "empty", "lanes": []}),
    );
    let report = status(
        &snap,
        &Scope::All {
            include_archived: false,
        },
        now(),
    )
    .unwrap();
    insta::assert_snapshot!(report.to_text(), @r"
    claims
    - acme/app#7 active w1 branch w1/7 expires 2026-06-20T13:00:00Z
    heartbeats
    - none
    batches
    - empty
      - lanes -
    events
    - none
    ");
}

#[test]
fn json_payload_key_order() {
    let payload = run(&MemorySnapshot::default(), &target_scope_of("7"));
    let keys: Vec<&String> = payload.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        [
            "version",
            "scope",
            "degraded",
            "section_notes",
            "claims",
            "heartbeats",
            "batches",
            "events"
        ]
    );
    let report = status(
        &MemorySnapshot::default(),
        &Scope::All {
            include_archived: true,
        },
        now(),
    )
    .unwrap();
    assert_eq!(document(&report, "v")["archive"], json!([]));
    assert_eq!(
        report.to_text().lines().skip(8).collect::<Vec<_>>(),
        ["archive", "- none"]
    );
}

#[test]
fn scope_from_flags() {
    type Flag = Option<&'static str>;
    type Case = (Flag, Flag, Flag, bool, Result<&'static str, &'static str>);
    let cases: [Case; 11] = [
        (None, None, None, true, Ok("all")),
        (Some("acme/app"), Some("7"), None, false, Ok("target")),
        (None, None, Some("batch:1"), false, Ok("batch")),
        (
            Some("acme/app"),
            None,
            Some("b"),
            false,
            Err("--batch-id cannot be combined with --repo or --target"),
        ),
        (
            None,
            Some("7"),
            Some("b"),
            false,
            Err("--batch-id cannot be combined with --repo or --target"),
        ),
        (
            Some("acme/app"),
            None,
            None,
            false,
            Err("missing required --target"),
        ),
        (None, Some("7"), None, false, Err("missing required --repo")),
        (
            Some(""),
            Some("7"),
            None,
            false,
            Err("missing required --repo"),
        ),
        (
            Some("acme/."),
            Some("7"),
            None,
            false,
            Err("invalid target repo: acme/."),
        ),
        (None, None, Some("a/b"), false, Err("invalid batch-id: a/b")),
        (
            None,
            None,
            Some("b"),
            true,
            Err("--include-archived is only valid for unscoped status"),
        ),
    ];
    for (repo, target, batch, archived, want) in cases {
        let got = Scope::from_flags(repo, target, batch, archived);
        let got = got.map(|s| match s {
            Scope::All { .. } => "all",
            Scope::Target { .. } => "target",
            Scope::Batch { .. } => "batch",
        });
        assert_eq!(
            got.map_err(|e| e.to_string()),
            want.map_err(str::to_owned),
            "{repo:?} {target:?} {batch:?}"
        );
    }
}

#[test]
fn unscoped_read_scales_linearly() {
    let mut snap = MemorySnapshot::default();
    for i in 0..2_000 {
        snap.put(
            &format!("heartbeats/w{i}.json"),
            &beat(&format!("w{i}"), "in_progress"),
        );
        snap.put(
            &format!("claims/acme/app/{i}.json"),
            &json!({"agent_id": format!("w{i}")}),
        );
    }
    for b in 0..500 {
        let lanes: Vec<Value> = (0..4)
            .map(|l| {
                json!({"name": format!("l{l}"), "owner": format!("w{}", b * 4 + l),
                "depends_on": [format!("b{}:l{l}", b.max(1) - 1)]})
            })
            .collect();
        snap.put(
            &format!("batches/b{b}.json"),
            &json!({"batch_id": format!("b{b}"), "lanes": lanes}),
        );
        for e in 0..20 {
            snap.put(
                &format!("events/b{b}/{e}.json"),
                &json!({"type": "phase", "at": at(-e)}),
            );
        }
    }
    let report = status(
        &snap,
        &Scope::All {
            include_archived: false,
        },
        now(),
    )
    .unwrap();
    assert_eq!(
        (
            report.claims.len(),
            report.heartbeats.len(),
            report.batches.len(),
            report.events.len()
        ),
        (2_000, 2_000, 500, 10_000)
    );
    assert_eq!(
        report.batches[1]["lanes"][0]["blocked_on"],
        json!(["b0:l0"])
    );
}
