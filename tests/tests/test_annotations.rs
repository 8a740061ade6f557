//! Annotations over a real server and real git: a dismissal and a snooze are commits on the
//! state branch that hide their item from the attention queue, a second clone sees them
//! after sync, clearing brings the item back, and bad requests are 400s that write nothing.

use agent_coord_tests::env::TestEnv;
use agent_coord_tests::remote::Fleet;
use agent_coord_tests::server::Server;
use serde_json::json;
use serde_json::Value;

/// Two holders that went silent an hour ago (#3, #4): both need attention.
fn seed_dead_holders(env: &TestEnv) {
    env.at(-3600);
    for (agent, target) in [("w3", "3"), ("w4", "4")] {
        env.claim(agent, "acme/app", target).run().success();
        env.beat(agent)
            .on("acme/app", target)
            .status("implementing")
            .ttl(60)
            .run()
            .success();
    }
    env.at(0);
}

fn model(server: &Server) -> Value {
    let (code, body) = server.get("/api/dashboard");
    assert_eq!(code, 200, "{body}");
    serde_json::from_str(&body).unwrap()
}

fn queue(model: &Value) -> Vec<String> {
    model["attention"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["rowId"].as_str().unwrap().to_owned())
        .collect()
}

/// The server's clock plus `secs`, as the page computes a snooze's end.
fn later(model: &Value, secs: i64) -> String {
    let now = chrono::DateTime::parse_from_rfc3339(model["generatedAt"].as_str().unwrap()).unwrap();
    (now + chrono::Duration::seconds(secs))
        .to_utc()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

#[test]
fn dismiss_and_snooze_are_commits_that_hide_attention_until_cleared() {
    let env = TestEnv::new();
    seed_dead_holders(&env);
    let server = Server::start(&env, &[]);
    let m = model(&server);
    assert_eq!(queue(&m), ["target:acme/app#3", "target:acme/app#4"]);

    let tip = env.state_tip();
    let (code, body) = server.post_json(
        "/api/annotations",
        &json!({"repo": "acme/app", "target": "3", "kind": "dismiss", "note": " handled by hand "}),
    );
    assert_eq!(code, 201, "{body}");
    let saved: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(saved["kind"], json!("dismiss"));
    assert_eq!(saved["active"], json!(true));
    assert_ne!(env.state_tip(), tip, "one commit");
    let subject = env.git(&["log", "-1", "--format=%s", "refs/heads/agent-coord"]);
    assert_eq!(subject.trim(), "dashboard: dismiss acme/app#3");
    let stored = env.record("annotations/acme/app/3.json").expect("stored");
    assert_eq!(stored["note"], json!("handled by hand"));
    assert_eq!(stored["machine_id"], json!("box-1"));

    let until = later(&m, 3600);
    let (code, body) = server.post_json(
        "/api/annotations",
        &json!({"repo": "acme/app", "target": "4", "kind": "snooze", "until": until}),
    );
    assert_eq!(code, 201, "{body}");
    let m = model(&server);
    assert!(queue(&m).is_empty(), "{:?}", queue(&m));
    assert_eq!(m["counts"]["needsAttention"], json!(0));
    assert_eq!(m["annotations"].as_array().unwrap().len(), 2);
    // The rows themselves are unchanged: still dead, only no longer asking.
    let states: Vec<&str> = m["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["state"].as_str().unwrap())
        .collect();
    assert_eq!(states, ["dead", "dead"]);
    // The CLI's own reads are not disturbed by the new folder.
    env.run(["status", "--json"]).success();
    env.run(["doctor"]).success();

    let (code, body) = server.delete_json(
        "/api/annotations",
        &json!({"repo": "acme/app", "target": "3"}),
    );
    assert_eq!((code, body.as_str()), (204, ""));
    assert!(env.record("annotations/acme/app/3.json").is_none());
    assert_eq!(queue(&model(&server)), ["target:acme/app#3"]);
    // Clearing what is not there writes nothing.
    let tip = env.state_tip();
    let (code, _) = server.delete_json(
        "/api/annotations",
        &json!({"repo": "acme/app", "target": "3"}),
    );
    assert_eq!(code, 204);
    assert_eq!(env.state_tip(), tip);
}

#[test]
fn bad_annotations_are_400s_that_write_nothing() {
    let env = TestEnv::new();
    seed_dead_holders(&env);
    let server = Server::start(&env, &[]);
    let past = later(&model(&server), -60);
    let tip = env.state_tip();
    for (body, message) in [
        (
            json!({"repo": "../etc", "target": "3", "kind": "dismiss"}),
            "annotation requires a valid owner/repo and numeric target",
        ),
        (
            json!({"repo": "acme/app", "target": "3/../../x", "kind": "dismiss"}),
            "annotation requires a valid owner/repo and numeric target",
        ),
        (
            json!({"repo": "acme/app", "target": "3", "kind": "hide"}),
            "annotation kind must be dismiss or snooze",
        ),
        (
            json!({"repo": "acme/app", "target": "3", "kind": "snooze", "until": past}),
            "snooze until must be a future timestamp",
        ),
        (
            json!({"repo": "acme/app", "target": "3", "kind": "dismiss", "note": "n".repeat(501)}),
            "annotation note is too long",
        ),
    ] {
        let (code, text) = server.post_json("/api/annotations", &body);
        assert_eq!(code, 400, "{body}: {text}");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["error"], json!(message));
    }
    let (code, _) = server.delete_json("/api/annotations", &json!({"repo": "acme", "target": "3"}));
    assert_eq!(code, 400);
    assert_eq!(env.state_tip(), tip, "nothing was written");
}

#[test]
fn a_malformed_annotation_is_a_warning_not_a_broken_page() {
    let env = TestEnv::new();
    seed_dead_holders(&env);
    env.put_state_files(&[("annotations/acme/app/3.json", "{ not json")]);
    let server = Server::start(&env, &[]);
    let m = model(&server);
    let warnings = m["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("annotations/acme/app/3.json")),
        "{warnings:?}"
    );
    assert_eq!(queue(&m), ["target:acme/app#3", "target:acme/app#4"]);
    // It can still be cleared.
    let (code, _) = server.delete_json(
        "/api/annotations",
        &json!({"repo": "acme/app", "target": "3"}),
    );
    assert_eq!(code, 204);
    assert!(model(&server)["warnings"].as_array().unwrap().is_empty());
}

#[test]
fn a_second_machine_sees_an_annotation_after_sync() {
    let fleet = Fleet::new(2);
    let (a, b) = (&fleet.machines[0], &fleet.machines[1]);
    seed_dead_holders(a);
    a.run(["sync"]).success();
    b.run(["sync"]).success();
    let server_a = Server::start(a, &[]);
    let (code, body) = server_a.post_json(
        "/api/annotations",
        &json!({"repo": "acme/app", "target": "4", "kind": "dismiss"}),
    );
    assert_eq!(code, 201, "{body}");
    drop(server_a);
    a.run(["sync"]).success();
    b.run(["sync"]).success();
    assert_eq!(
        b.record("annotations/acme/app/4.json").unwrap()["kind"],
        json!("dismiss")
    );
    let server_b = Server::start(b, &[]);
    assert_eq!(queue(&model(&server_b)), ["target:acme/app#3"]);
}
