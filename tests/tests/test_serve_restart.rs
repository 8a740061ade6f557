//! A restarted server's first view: the model the last run saved
//! (`<git dir>/agent-coord-dashboard-model.json`), marked as restored, while the new run
//! derives its own; never when the state moved, nor from a file that does not parse.

use std::path::PathBuf;
use std::time::Duration;
use std::time::Instant;

use agent_coord_tests::env::git;
use agent_coord_tests::env::TestEnv;
use agent_coord_tests::server::Server;
use serde_json::Value;

fn get(server: &Server, path: &str) -> Value {
    let (code, body) = server.get(path);
    assert_eq!(code, 200, "{path}: {body}");
    serde_json::from_str(&body).expect("JSON")
}

/// The saved model's file.
fn saved_file(env: &TestEnv) -> PathBuf {
    let out = git(&env.repo, &["rev-parse", "--git-common-dir"]);
    let dir = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    env.repo.join(dir).join("agent-coord-dashboard-model.json")
}

/// Waits (at most 20 s) until `ok` holds.
fn wait_until(what: &str, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "timed out: {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The parts of a view that say what the fleet is (not which model run said it).
fn fleet_of(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        o.remove("version");
        o.remove("restored");
    }
    v
}

/// A small fleet, and a server that derived its model and saved it: the saved file, and the
/// server (still running).
fn saved_once(env: &TestEnv) -> (PathBuf, Server) {
    env.at(0);
    env.claim("a", "acme/app", "7").run().success();
    env.beat("a").on("acme/app", "7").run().success();
    env.claim("b", "acme/app", "8").run().success();
    env.at(30);
    let file = saved_file(env);
    let server = Server::start(env, &["--sync-every", "0"]);
    get(&server, "/api/dashboard");
    wait_until("the model is saved", || file.exists());
    (file, server)
}

#[test]
fn a_restart_shows_the_last_runs_model_until_its_own_is_derived() {
    let env = TestEnv::new();
    let (file, first) = saved_once(&env);
    let derived = get(&first, "/api/dashboard?view=overview");
    assert!(derived.get("restored").is_none(), "{derived}");
    drop(first);

    let second = Server::start(&env, &["--sync-every", "0"]);
    let view = get(&second, "/api/dashboard?view=overview");
    assert_eq!(get(&second, "/api/health")["restored_at_start"], true);
    // Either the restored model (marked) or, on a fast machine, the derived one already:
    // both show the same fleet.
    assert_eq!(fleet_of(view.clone()), fleet_of(derived.clone()));
    if let Some(note) = view.get("restored") {
        assert!(note.as_str().unwrap().contains("being derived"), "{note}");
        assert!(view["version"].as_str().unwrap().ends_with(".restored"));
    }
    // The derived model replaces it, announced on the stream.
    wait_until("the derived model", || {
        get(&second, "/api/dashboard?view=overview")
            .get("restored")
            .is_none()
    });
    let now = get(&second, "/api/dashboard?view=overview");
    assert_eq!(now["version"], derived["version"]);
    drop(second);

    // A file that does not parse is ignored: the server derives.
    std::fs::write(&file, b"{not json").unwrap();
    let third = Server::start(&env, &["--sync-every", "0"]);
    assert_eq!(get(&third, "/api/health")["restored_at_start"], false);
    assert!(get(&third, "/api/dashboard").get("restored").is_none());
    wait_until("the model is saved again", || {
        std::fs::read(&file).is_ok_and(|b| b.starts_with(b"{\""))
    });
}

#[test]
fn a_restart_after_the_state_moved_derives_its_first_view() {
    let env = TestEnv::new();
    let (_, first) = saved_once(&env);
    drop(first);
    // The restored view is of the state as it was; once a write moved the state tip, the
    // saved model is not used at all.
    env.release("b", "acme/app", "8").run().success();
    let second = Server::start(&env, &["--sync-every", "0"]);
    assert_eq!(get(&second, "/api/health")["restored_at_start"], false);
    let view = get(&second, "/api/dashboard");
    assert!(view.get("restored").is_none(), "{view}");
    assert_eq!(
        view["rows"].as_array().map(Vec::len),
        Some(1),
        "b's release shows at once"
    );
}

#[test]
fn a_restart_long_after_the_last_derivation_derives_its_first_view() {
    let env = TestEnv::new();
    let (_, first) = saved_once(&env);
    drop(first);
    // Only a heartbeat moved, an hour later: the saved liveness is too old to show.
    env.at(3600);
    env.beat("a").on("acme/app", "7").run().success();
    let second = Server::start(&env, &["--sync-every", "0"]);
    assert_eq!(get(&second, "/api/health")["restored_at_start"], false);
    let view = get(&second, "/api/dashboard");
    assert!(view.get("restored").is_none(), "{view}");
}

/// A graceful stop (Ctrl-C) saves the model shown last, so a restart right after writes
/// still finds the state it left.
#[test]
fn a_graceful_stop_saves_the_model_shown_last() {
    let env = TestEnv::new();
    let (file, first) = saved_once(&env);
    let saved_before = std::fs::read(&file).unwrap();
    // The state moves; the periodic save waits a minute, the stop does not.
    env.claim("c", "acme/app", "9").run().success();
    let shown = get(&first, "/api/dashboard?view=operator");
    let stopped = std::process::Command::new("kill")
        .args(["-INT", &first.pid().to_string()])
        .status()
        .unwrap();
    assert!(stopped.success());
    wait_until("the stop saved the model", || {
        std::fs::read(&file).is_ok_and(|b| b != saved_before && b.ends_with(b"}"))
    });
    drop(first);
    let second = Server::start(&env, &["--sync-every", "0"]);
    assert_eq!(get(&second, "/api/health")["restored_at_start"], true);
    assert_eq!(
        fleet_of(get(&second, "/api/dashboard?view=operator")),
        fleet_of(shown)
    );
}
