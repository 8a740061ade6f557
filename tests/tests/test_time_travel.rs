//! Time travel: `status --at` and `batch-audit --at` show the state as it stood, liveness
//! included (the heartbeat history), equal to what `status` printed at that moment.

use agent_coord_tests::env::TestEnv;
use agent_coord_tests::env::START;

/// The RFC 3339 time `secs` after [`START`].
pub(crate) fn time_at(secs: i64) -> String {
    let start = chrono::DateTime::parse_from_rfc3339(START).unwrap();
    (start + chrono::Duration::seconds(secs))
        .to_utc()
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// A scripted day of writes: a batch, claims, beats, an event, releases.
/// `checkpoint(secs)` runs after each stage, with the clock at `secs`.
pub(crate) fn scripted_day(env: &TestEnv, checkpoint: &mut dyn FnMut(&TestEnv, i64)) {
    let hour = 3600;
    env.at(0);
    let manifest = r#"{"batch_id": "b1", "repo": "acme/app", "objective": "ship",
      "lanes": [{"name": "one", "owner": "a", "targets": ["7"]},
                {"name": "two", "owner": "b", "targets": ["8"]}]}"#;
    env.register("m.json", manifest).run().success();
    env.claim("a", "acme/app", "7").batch("b1").run().success();
    env.beat("a").on("acme/app", "7").run().success();
    checkpoint(env, 60);
    env.at(2 * hour);
    env.claim("b", "acme/app", "8").batch("b1").run().success();
    env.beat("b").on("acme/app", "8").run().success();
    env.beat("a").on("acme/app", "7").run().success();
    checkpoint(env, 2 * hour + 60);
    for h in 3..9 {
        env.at(h * hour);
        env.beat("b").on("acme/app", "8").run().success();
    }
    checkpoint(env, 8 * hour + 60);
    env.at(9 * hour);
    env.release("a", "acme/app", "7").run().success();
    env.event("b1", "note")
        .agent("b")
        .message("half way")
        .run()
        .success();
    checkpoint(env, 9 * hour + 60);
    env.at(20 * hour);
    env.claim("c", "acme/other", "3").run().success();
    checkpoint(env, 20 * hour + 60);
}

/// At each moment of a scripted day the test recorded `status --json` (text too),
/// `batch-audit`, the state tip and the clock; `--at` each moment prints the same.
#[test]
fn status_at_a_past_moment_equals_what_status_printed_then() {
    let env = TestEnv::new();
    let mut seen: Vec<(i64, String, String, String, String)> = Vec::new();
    scripted_day(&env, &mut |env, secs| {
        env.at(secs);
        let json = env.status().json().run().success().stdout;
        let text = env.status().run().success().stdout;
        let audit = env
            .call(["batch-audit", "--batch-id", "b1", "--json"])
            .run()
            .stdout;
        seen.push((secs, env.state_tip().unwrap(), json, text, audit));
    });
    env.at(23 * 3600);
    for (secs, tip, json, text, audit) in &seen {
        let when = time_at(*secs);
        for at in [when.as_str(), tip.as_str()] {
            let past = env.status().json().opt("--at", at).run().success();
            assert!(past.stderr.contains("the past, read-only"), "{past}");
            if at == tip {
                // A commit is read with its own time, not the checkpoint's a minute later.
                continue;
            }
            assert_eq!(&past.stdout, json, "status --json --at {at}");
            let text_then = env.status().opt("--at", at).run().success().stdout;
            assert_eq!(&text_then, text, "status --at {at}");
            let audit_then = env
                .call(["batch-audit", "--batch-id", "b1", "--json", "--at", at])
                .run();
            assert_eq!(&audit_then.stdout, audit, "batch-audit --at {at}");
        }
    }
    // Liveness really moved over the day: the first and third moments differ in who is live.
    assert_ne!(seen[0].2, seen[2].2);
}

#[test]
fn at_before_the_first_commit_or_not_a_commit_is_a_clear_usage_error() {
    let env = TestEnv::new();
    env.at(3600);
    env.claim("a", "acme/app", "7").run().success();
    let before = env.status().opt("--at", time_at(0)).run();
    assert_ne!(before.code, 0, "{before}");
    assert!(before.stderr.contains("no commit at or before"), "{before}");
    let nonsense = env.status().opt("--at", "no-such-commit").run();
    assert_ne!(nonsense.code, 0, "{nonsense}");
    assert!(
        nonsense
            .stderr
            .contains("neither an RFC 3339 time nor a commit"),
        "{nonsense}"
    );
}

#[test]
fn beyond_the_heartbeat_window_liveness_is_said_to_be_unknown() {
    let env = TestEnv::new();
    env.at(0);
    env.claim("a", "acme/app", "7").run().success();
    env.beat("a").on("acme/app", "7").run().success();
    // Beats for three days: the history keeps at most two windows of them.
    for h in 1..=72 {
        env.at(h * 3600);
        env.beat("a").on("acme/app", "7").run().success();
    }
    let early = env.status().opt("--at", time_at(60)).run().success();
    assert!(early.stderr.contains("liveness then is unknown"), "{early}");
    let recent = env
        .status()
        .opt("--at", time_at(71 * 3600 + 60))
        .run()
        .success();
    assert!(!recent.stderr.contains("unknown"), "{recent}");
}

/// Another machine's past beats are known as this machine fetched them: `status --at` on
/// box-0 shows box-1's agent live at a moment after a sync brought its beat, and the
/// history stays local (it is never pushed).
#[test]
fn another_machines_beats_enter_the_history_as_sync_fetches_them() {
    let fleet = agent_coord_tests::remote::Fleet::new(2);
    let (a, b) = (&fleet.machines[0], &fleet.machines[1]);
    a.at(0);
    b.at(0);
    a.claim("a", "acme/app", "7").sync().run().success();
    b.beat("b").on("acme/app", "8").sync().run().success();
    a.at(600);
    a.sync().run().success();
    let then = a.status().json().run().success().stdout;
    assert!(
        then.contains("\"b\""),
        "box-1's agent is seen after the sync:\n{then}"
    );
    a.at(4 * 3600);
    a.sync().run().success();
    let past = a.status().json().opt("--at", time_at(600)).run().success();
    // How the state stands against the remote is a fact of now: the past leaves it out.
    let mut then: serde_json::Value = serde_json::from_str(&then).unwrap();
    then.as_object_mut().unwrap().remove("sync");
    assert_eq!(past.json(), then);
    assert!(!past.stderr.contains("unknown"), "{past}");
    assert_eq!(
        fleet.remote_tip("refs/agent-coord/heartbeat-history/remotes/origin/heartbeats/box-1"),
        None
    );
}
