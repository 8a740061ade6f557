//! Saved target repositories over a real server: `serve --repos` and `PUT /api/settings`
//! scope the dashboard, its item and batch pages to some repositories of a state that
//! holds claims, batches, heartbeats and events of two; the setting is kept in this
//! machine's configuration across restarts; bad values are refused; and the scope is
//! edited in Chromium.

use std::time::Duration;

use agent_coord_tests::env::TestEnv;
use agent_coord_tests::server::Server;
use serde_json::json;
use serde_json::Value;

/// A state with work in `acme/app` and in `gamma/secret`: claims, heartbeats, a batch and
/// events of each, and an `acme/app` claim whose thread names the other repository.
fn two_repositories() -> TestEnv {
    let env = TestEnv::new();
    env.claim("w1", "acme/app", "1")
        .batch("b-app")
        .run()
        .success();
    env.claim("w2", "gamma/secret", "2")
        .batch("b-secret")
        .run()
        .success();
    env.beat("w1")
        .on("acme/app", "1")
        .batch("b-app")
        .status("implementing")
        .run()
        .success();
    env.beat("w2")
        .on("gamma/secret", "2")
        .batch("b-secret")
        .status("implementing")
        .run()
        .success();
    env.event("b-app", "phase.changed")
        .on("acme/app", "1")
        .status("implementing")
        .run()
        .success();
    env.event("b-secret", "phase.changed")
        .on("gamma/secret", "2")
        .message("Secret plan")
        .run()
        .success();
    env.put_state_files(&[
        (
            "batches/b-app.json",
            r#"{"batch_id": "b-app", "repo": "acme/app", "objective": "Ship the app",
                "targets": [{"type": "pull_request", "target": "1"}],
                "lanes": [{"name": "one", "owner": "w1", "targets": ["1"], "status": "in_progress"}]}"#,
        ),
        (
            "batches/b-secret.json",
            r#"{"batch_id": "b-secret", "repo": "gamma/secret", "objective": "Secret plan",
                "targets": [{"type": "issue", "target": "2"}],
                "lanes": [{"name": "two", "owner": "w2", "targets": ["2"], "status": "in_progress"}]}"#,
        ),
        (
            "claims/acme/app/3.json",
            r#"{"repo": "acme/app", "target": "3", "agent_id": "w3", "status": "active",
                "claimed_at": "2026-01-01T00:00:00Z", "thread_handle": "ported from gamma/secret#2",
                "branch": "port-3"}"#,
        ),
    ]);
    env
}

fn model(server: &Server) -> (String, Value) {
    let (code, body) = server.get("/api/dashboard");
    assert_eq!(code, 200, "{body}");
    let model = serde_json::from_str(&body).unwrap();
    (body, model)
}

fn row_repos(model: &Value) -> Vec<String> {
    let mut repos: Vec<String> = model["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["repo"].as_str().unwrap_or_default().to_owned())
        .collect();
    repos.dedup();
    repos
}

#[test]
fn serve_with_repos_shows_only_those_repositories() {
    let env = two_repositories();
    // Unscoped, both repositories show.
    let server = Server::start(&env, &[]);
    let (body, all) = model(&server);
    assert_eq!(row_repos(&all), ["acme/app", "gamma/secret"]);
    assert!(body.contains("Secret plan") && all.get("notices").is_none());
    drop(server);

    let server = Server::start(&env, &["--repos", "ACME/app"]);
    let (body, scoped) = model(&server);
    assert_eq!(row_repos(&scoped), ["acme/app"]);
    // The doctor (this machine) reports the scope in force and where it came from.
    let (code, doctor) = server.get("/api/doctor");
    assert_eq!(code, 200, "{doctor}");
    let doctor: serde_json::Value = serde_json::from_str(&doctor).expect("JSON");
    assert_eq!(
        doctor["scope"]["targetRepos"],
        json!(["acme/app"]),
        "{doctor}"
    );
    assert_eq!(doctor["scope"]["source"], "command_line", "{doctor}");
    assert!(!body.contains("gamma"), "{body}");
    assert!(!body.contains("Secret plan"), "{body}");
    // Every event of the other repository's batch (the claim's own and the recorded one).
    let history = env.paths("events/b-secret/").len();
    assert!(history >= 2, "{history}");
    let notice = |n: usize, kind: &str| {
        json!(format!(
            "Skipped {n} {kind} records outside saved target repositories."
        ))
    };
    assert_eq!(
        scoped["notices"],
        json!([
            notice(1, "claim"),
            notice(1, "heartbeat"),
            notice(1, "batch"),
            notice(history, "batch history")
        ])
    );
    // The acme/app claim stays, without the thread that names the other repository.
    let row = scoped["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == json!("target:acme/app#3"))
        .unwrap();
    assert_eq!(
        (row["thread"].clone(), row["branch"].clone()),
        (Value::Null, json!("port-3"))
    );

    let (code, body) = server.get("/api/items/gamma/secret/2");
    assert_eq!(
        (code, body.as_str()),
        (
            404,
            r#"{"error":"Work item is not in the saved target repositories."}"#
        )
    );
    let (code, body) = server.get("/api/items/acme/app/1");
    assert_eq!(code, 200, "{body}");
    assert!(!body.contains("gamma"), "{body}");
    assert_eq!(server.get("/api/batches/b-secret").0, 404);
    assert_eq!(server.get("/api/batches/b-app").0, 200);
    let settings: Value = serde_json::from_str(&server.get("/api/settings").1).unwrap();
    assert_eq!(settings["targetRepos"], json!(["acme/app"]));
    assert_eq!(settings["source"], json!("command_line"));
    assert_eq!(settings["refreshIntervalMs"], json!(0));
    // Writes are scoped too: a plan or a stop naming the other repository is refused.
    let prompt = "Repository: gamma/secret\nBatch id: b-new\nBatch objective: Leak it.\nItems:\n- PR #9\nSuggested lanes:\n- one (owner: w9): PR #9\n";
    let (code, body) = server.post_json("/api/batches/import", &json!({"launch_prompt": prompt}));
    assert_eq!(
        (code, body.as_str()),
        (
            400,
            r#"{"error":"Batch plan repos outside saved target repositories: gamma/secret."}"#
        )
    );
    assert!(env.record("batches/b-new.json").is_none());
    let (code, body) = server.post_json(
        "/api/batches/stop",
        &json!({"batch_id": "b-app", "repo": "gamma/secret"}),
    );
    assert_eq!(
        (code, body.as_str()),
        (
            400,
            r#"{"error":"Batch stop repo is outside saved target repositories: gamma/secret."}"#
        )
    );
    let (code, body) = server.post_json("/api/batches/stop", &json!({"batch_id": "b-secret"}));
    assert_eq!(
        (code, body.as_str()),
        (
            404,
            r#"{"error":"Batch b-secret is not in the saved target repositories."}"#
        )
    );
    assert_eq!(
        env.paths("events/b-secret/").len(),
        history,
        "nothing was written"
    );
    let (code, body) = server.post_json("/api/batches/stop", &json!({"batch_id": "b-app"}));
    assert_eq!(code, 201, "{body}");
    // --repos is for this run only: nothing was saved.
    assert_eq!(env.git(&["config", "agent-coord.targetRepos"]), "");
}

#[test]
fn settings_round_trip_and_persist_across_a_restart() {
    let env = two_repositories();
    let server = Server::start(&env, &[]);
    let settings: Value = serde_json::from_str(&server.get("/api/settings").1).unwrap();
    assert_eq!(
        (settings["targetRepos"].clone(), settings["source"].clone()),
        (json!([]), json!("unset"))
    );
    let versions = server.versions();
    let first = versions
        .recv_timeout(Duration::from_secs(10))
        .expect("a version");

    for (body, message) in [
        (json!({"targetRepos": ""}), "At least one owner/repo target is required."),
        (json!({"targetRepos": []}), "At least one owner/repo target is required."),
        (json!({}), "At least one owner/repo target is required."),
        (
            json!({"targetRepos": ["acme/app", "./app"]}),
            "Target repository \"./app\" is not owner/repo (two segments of letters, digits, '.', '_' or '-', neither only dots).",
        ),
        (
            json!({"targetRepos": 7}),
            "targetRepos must be a list of owner/repo strings or one comma-separated string.",
        ),
    ] {
        let (code, answer) = server.put_json("/api/settings", &body);
        assert_eq!(code, 400, "{body}: {answer}");
        assert_eq!(serde_json::from_str::<Value>(&answer).unwrap()["error"], json!(message));
    }
    assert_eq!(
        model(&server).1["counts"]["rows"],
        json!(3),
        "a refused change changes nothing"
    );

    let (code, answer) = server.put_json(
        "/api/settings",
        &json!({"targetRepos": "Acme/App, acme/app"}),
    );
    assert_eq!(code, 200, "{answer}");
    let saved: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(saved["targetRepos"], json!(["acme/app"]));
    assert_eq!(saved["source"], json!("saved"));
    assert_eq!(saved["scopeId"].as_str().unwrap().len(), 64);
    // Open pages learn of the new scope from the stream, and the next model is scoped.
    let next = versions
        .recv_timeout(Duration::from_secs(10))
        .expect("a version after the change");
    assert_ne!(next, first);
    let (body, scoped) = model(&server);
    assert_eq!(scoped["version"], json!(next));
    assert_eq!(row_repos(&scoped), ["acme/app"]);
    assert!(!body.contains("gamma"));
    assert_eq!(server.get("/api/items/gamma/secret/2").0, 404);
    assert_eq!(env.git(&["config", "agent-coord.targetRepos"]), "acme/app");
    drop(server);

    // Kept in this machine's configuration: a restart is scoped the same way.
    let server = Server::start(&env, &[]);
    let settings: Value = serde_json::from_str(&server.get("/api/settings").1).unwrap();
    assert_eq!(settings["targetRepos"], json!(["acme/app"]));
    assert_eq!(settings["source"], json!("saved"));
    assert_eq!(settings["scopeId"], saved["scopeId"]);
    assert_eq!(row_repos(&model(&server).1), ["acme/app"]);
    drop(server);

    // --repos wins over the saved setting for its run.
    let server = Server::start(&env, &["--repos", "gamma/secret"]);
    assert_eq!(row_repos(&model(&server).1), ["gamma/secret"]);
    drop(server);

    // A saved value nobody can use is an error, never an empty scope.
    env.git(&["config", "agent-coord.targetRepos", "not a repo"]);
    let server = Server::start(&env, &[]);
    let (code, body) = server.get("/api/dashboard");
    assert_eq!(code, 500, "{body}");
    assert!(!body.contains("acme"), "{body}");
    // A change from this machine repairs it.
    let (code, _) = server.put_json("/api/settings", &json!({"targetRepos": ["acme/app"]}));
    assert_eq!(code, 200);
    assert_eq!(row_repos(&model(&server).1), ["acme/app"]);
}

#[test]
fn the_scope_is_edited_in_a_real_browser_and_the_rows_follow() {
    let env = two_repositories();
    crate::test_browser::run_script(&env, "scope.mjs", "scope.png");
    assert_eq!(env.git(&["config", "agent-coord.targetRepos"]), "acme/app");
}

#[test]
fn a_bad_repos_flag_is_a_usage_error() {
    let env = TestEnv::new();
    let out = env.run(["serve", "--port", "0", "--repos", "acme/app,../x"]);
    let out = out.code(1);
    assert!(
        out.stderr
            .contains("--repos: Target repository \"../x\" is not owner/repo"),
        "{}",
        out.stderr
    );
}
