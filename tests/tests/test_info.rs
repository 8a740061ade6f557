//! `version`, `config`, `--help`, `doctor`, `demo` and the zero-config default repository.

use agent_coord_tests::call::Call;
use agent_coord_tests::env::TestEnv;
use serde_json::json;

#[test]
fn version_and_config() {
    let env = TestEnv::new();
    let v = env.run(["version", "--json"]).success().json();
    assert_eq!(v["schema_version"], json!(1));
    assert_eq!(v["lane_closed_schema_version"], json!(2));
    assert_eq!(v["default_ref"], json!("refs/heads/agent-coord"));
    let text = env.run(["version"]).success().stdout;
    assert!(text.starts_with("version: "), "{text}");
    let c = env.run(["config", "show", "--json"]).success().json();
    assert_eq!(c["default_claim_ttl_seconds"], json!(14400));
    assert_eq!(c["default_heartbeat_ttl_seconds"], json!(900));
    assert_eq!(
        c["exit_codes"],
        json!({"usage": 1, "stack_usage": 64, "operational": 2, "claim_refused": 3})
    );
    assert_eq!(
        c["heartbeat_status_vocabulary"]["aliases"]["completed"],
        json!("done")
    );
    assert_eq!(
        env.run(["config", "--json"]).success().json(),
        c,
        "`config` alone shows"
    );
}

#[test]
fn help_tree() {
    let env = TestEnv::new();
    let top = env.run(["--help"]).success().stdout;
    insta::assert_snapshot!(top);
    let bare = env.run(Vec::<&str>::new());
    assert_eq!(bare.code, 0, "no arguments prints help");
    assert!(bare.stdout.contains("Usage: agent-coord"), "{bare}");
    let mut all = String::new();
    for cmd in [
        "claim",
        "release",
        "heartbeat",
        "register-batch",
        "record-event",
        "status",
        "batch-audit",
        "version",
        "config",
        "doctor",
        "demo",
        "import",
        "export",
        "sync",
        "init",
        "gc",
        "completions",
    ] {
        let out = env.run([cmd, "--help"]).success();
        all.push_str(&format!("===== agent-coord {cmd} --help\n{}\n", out.stdout));
    }
    insta::assert_snapshot!(all);
    insta::assert_snapshot!(env.run(["bogus"]), @r"
    ------- stderr -------
    unknown command: bogus (see --help)
    [exit status: 1]
    ");
}

#[test]
fn doctor_light_deep_and_stack() {
    let env = TestEnv::new();
    env.claim("a", "acme/app", "7").run().success();
    let d = env.run(["doctor", "--json"]).success().json();
    assert_eq!(d["status"], json!("ok"));
    assert_eq!(d["mode"], json!("local"));
    assert_eq!(d["machine_id"], json!("box-1"));
    assert_eq!(d["deep"], json!(false));
    env.run(["doctor", "--deep"]).success();
    let lock = env.repo.join("refs/heads/agent-coord.lock");
    std::fs::write(&lock, "").unwrap();
    let d = env.run(["doctor", "--json"]).success().json();
    assert!(
        d["warnings"][0]
            .as_str()
            .unwrap()
            .starts_with("lock file present for"),
        "{d}"
    );
    std::fs::remove_file(&lock).unwrap();

    let repo = env.repo.to_str().unwrap().to_owned();
    let s = env.run(["doctor", "--stack-json", "--repo-dir", &repo]);
    assert_eq!(s.code, 0, "{s}");
    let ids: Vec<_> = s.json()["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].clone())
        .collect();
    assert_eq!(
        ids,
        [
            json!("cli.version"),
            json!("backend.readability"),
            json!("resources.deep"),
            json!("identity.machine")
        ]
    );
    assert_eq!(s.json()["status"], json!("healthy"));

    // Environment variables do not count as a selector; usage errors exit 64 with no JSON.
    insta::assert_snapshot!(env.run(["doctor", "--stack-json"]), @r"
    ------- stderr -------
    doctor --stack-json requires exactly one of --repo-dir
    [exit status: 64]
    ");
    env.run(["doctor", "--stack-json", "--json", "--repo-dir", &repo])
        .code(64);

    // Strictly read-only: a missing repository is a failed check, never created.
    let missing = env.root().join("nope.git");
    let s = env
        .run([
            "doctor",
            "--stack-json",
            "--repo-dir",
            missing.to_str().unwrap(),
        ])
        .code(2);
    assert_eq!(s.json()["status"], json!("failed"));
    assert!(!missing.exists());
}

#[test]
fn demo_is_deterministic_and_isolated() {
    let env = TestEnv::new();
    let first = env.run(["demo"]).success();
    let second = env.run(["demo"]).success();
    assert_eq!(first.stdout, second.stdout);
    assert_eq!(first.stderr, "");
    insta::assert_snapshot!(first.stdout, @r"
    agent-coord demo: isolated temporary repository, clock starts 2026-01-01T12:00:00Z
    +0s    demo-alpha: claimed demo/example#1 by demo-alpha until 2026-01-01T13:00:00Z
    +0s    demo-alpha: heartbeat demo-alpha 2026-01-01T12:00:00Z
    +30s   demo-beta: CLAIM_REFUSED: active claim for demo/example#1 held by demo-alpha; heartbeat live
    +120s  status: heartbeat demo-alpha is stale
    +300s  status: heartbeat demo-alpha is dead
    +300s  demo-beta: claimed demo/example#1 by demo-beta until 2026-01-01T16:05:00Z
    takeover succeeded; holder is demo-beta
    demo complete; temporary state removed
    ");
    assert_eq!(env.state_tip(), None, "the user's repository is untouched");
    env.run(["demo", "extra"]).code(1);
}

#[test]
fn zero_config_default_repository() {
    let env = TestEnv::new();
    let state = env.root().join("xdg");
    let run = |call: Call| {
        let out = call
            .command()
            .env_remove("AGENT_COORD_GIT_DIR")
            .env("XDG_STATE_HOME", &state)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, _, stderr) = run(env.claim("a", "acme/app", "7"));
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("notice: local mode — single-machine only; state repository:"),
        "{stderr}"
    );
    assert!(
        state.join("agent-coord/state.git/HEAD").exists(),
        "a bare repository was created"
    );
    let (code, stdout, _) = run(env.status());
    assert_eq!(code, Some(0));
    assert!(stdout.contains("acme/app#7 active a"), "{stdout}");

    // Without AGENT_COORD_MACHINE_ID a machine id is generated once and kept in git config.
    env.set_machine(None);
    run(env.beat("a"));
    run(env.beat("b"));
    let refs = std::process::Command::new("git")
        .args([
            "--git-dir",
            state.join("agent-coord/state.git").to_str().unwrap(),
            "for-each-ref",
            "--format=%(refname)",
            "refs/agent-coord/heartbeats/",
        ])
        .output()
        .unwrap();
    let refs = String::from_utf8_lossy(&refs.stdout);
    assert_eq!(refs.lines().count(), 1, "{refs}");
}

#[test]
fn doctor_deep_finds_unreadable_records_and_a_custom_ref_is_separate_state() {
    let env = TestEnv::new();
    env.claim("a", "acme/app", "7")
        .opt("--ref", "fleet-b")
        .run()
        .success();
    assert!(env.tip("refs/heads/fleet-b").is_some());
    assert!(env.state_tip().is_none(), "the default branch is untouched");
    let other = env
        .run(["status", "--json", "--ref", "refs/heads/fleet-b"])
        .success()
        .json();
    assert_eq!(other["claims"][0]["agent_id"], json!("a"));

    // Corrupt one event with plain git and check that only --deep notices.
    env.force_state_file("events/b1/x.json", "{oops");
    env.run(["doctor"]).success();
    let out = env.run(["doctor", "--deep", "--json"]).code(2);
    assert_eq!(out.json()["status"], json!("error"));
    assert!(
        out.stderr
            .trim()
            .starts_with("state unreadable: events/b1/x.json:"),
        "{out}"
    );
}

#[test]
fn completions_name_every_command() {
    let env = TestEnv::new();
    for shell in ["bash", "zsh", "fish"] {
        let script = env.run(["completions", shell]).success().stdout;
        assert!(!script.trim().is_empty(), "{shell}: empty script");
        for cmd in [
            "claim",
            "heartbeat",
            "register-batch",
            "serve",
            "completions",
        ] {
            assert!(script.contains(cmd), "{shell}: {cmd} missing");
        }
    }
    let out = env.run(["completions", "tcsh"]).code(1);
    assert!(out.stderr.contains("tcsh"), "{out}");
}

#[test]
fn man_page_renders_from_the_command_definitions() {
    let env = TestEnv::new();
    let page = env.run(["man"]).success().stdout;
    assert!(page.starts_with(".ie") || page.starts_with(".TH"), "{page}");
    assert!(page.contains(".TH agent-coord 1"), "{page}");
    assert!(page.contains("claim"), "{page}");
    assert!(
        !env.run(["--help"]).success().stdout.contains(" man "),
        "the man subcommand stays hidden"
    );
}
