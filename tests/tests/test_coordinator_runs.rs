//! `agent-coord coordinate` across processes and time: two machines racing for an issue, a
//! crash at every effect boundary, `--follow` with Ctrl-C, and what idle ticks
//! cost on GitHub and in the state branch.

use agent_coord_tests::coord::Coord;
use agent_coord_tests::coord::HUMAN;
use agent_coord_tests::coord::REPO;
use agent_coord_tests::coord::WORKER;
use agent_coord_tests::coord::WORKER_TOKEN;

#[test]
fn two_workers_on_two_machines_race_for_one_issue_and_one_wins() {
    use agent_coord_tests::remote::Fleet;
    let mut fleet = Fleet::new(2);
    let second = fleet.machines.pop().unwrap();
    let first = fleet.machines.pop().unwrap();
    let c = Coord::with_env(first, 30);
    let other_token = "ghp_otherTOKEN0123456789abcdefghijkl";
    c.gh.add_user(
        "bot-other",
        agent_coord_tests::fake_github::UserKind::User,
        other_token,
    );
    let issue =
        c.gh.open_issue(REPO, HUMAN, "Add a feature file", "Please.");
    c.gh.assign(REPO, issue, WORKER, HUMAN);
    c.gh.assign(REPO, issue, "bot-other", HUMAN);
    let other_config = c.dir.join("other.json");
    std::fs::write(
        &other_config,
        serde_json::to_vec(&c.other_worker_config("w2", "bot-other", "W2_TOKEN")).unwrap(),
    )
    .unwrap();
    let mut one = c.coordinate_on(&c.env, "w1", &c.config, &[("W1_TOKEN", WORKER_TOKEN)]);
    let mut two = c.coordinate_on(&second, "w2", &other_config, &[("W2_TOKEN", other_token)]);
    one.arg("--wait");
    two.arg("--wait");
    let (ra, rb) = std::thread::scope(|s| {
        let ha = s.spawn(|| one.output().unwrap());
        let hb = s.spawn(|| two.output().unwrap());
        (ha.join().unwrap(), hb.join().unwrap())
    });
    let text = |o: &std::process::Output| {
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    };
    // Both converge: one more tick each publishes and settles.
    c.coordinate_on(&c.env, "w1", &c.config, &[("W1_TOKEN", WORKER_TOKEN)])
        .arg("--wait")
        .output()
        .unwrap();
    c.coordinate_on(&second, "w2", &other_config, &[("W2_TOKEN", other_token)])
        .arg("--wait")
        .output()
        .unwrap();
    let accepts = c
        .comments(issue)
        .iter()
        .filter(|(_, b)| b.contains("agent-coord:activity=") && b.contains("ccept"))
        .count();
    assert_eq!(
        accepts,
        1,
        "{}\n---\n{}\n{:?}",
        text(&ra),
        text(&rb),
        c.comments(issue)
    );
    assert_eq!(
        c.gh.pulls(REPO).len(),
        1,
        "{}\n---\n{}",
        text(&ra),
        text(&rb)
    );
}

#[test]
fn one_worker_on_two_machines_runs_each_issue_once_on_one_machine() {
    use agent_coord_tests::remote::Fleet;
    let mut fleet = Fleet::new(2);
    let second = fleet.machines.pop().unwrap();
    let first = fleet.machines.pop().unwrap();
    let c = Coord::with_env(first, 30);
    let issues: Vec<u64> = (0..4)
        .map(|i| c.assigned_issue(&format!("Add feature file {i}"), HUMAN))
        .collect();
    // The same worker (id, login, lanes) on another machine, with its own workspace.
    let mut config = c.config_value(30);
    config["workers"]["w1"]["workspace_root"] =
        serde_json::json!(c.dir.join("ws-box-1").to_string_lossy());
    let elsewhere = c.dir.join("elsewhere.json");
    std::fs::write(&elsewhere, serde_json::to_vec(&config).unwrap()).unwrap();
    let tick = |env, config: &std::path::Path| {
        let mut cmd = c.coordinate_on(env, "w1", config, &[("W1_TOKEN", WORKER_TOKEN)]);
        cmd.arg("--wait");
        cmd
    };
    // Both machines tick at once, then once more each to settle.
    for _ in 0..2 {
        let (mut one, mut two) = (tick(&c.env, &c.config), tick(&second, &elsewhere));
        let (a, b) = std::thread::scope(|s| {
            let a = s.spawn(move || one.output().unwrap());
            let b = s.spawn(move || two.output().unwrap());
            (a.join().unwrap(), b.join().unwrap())
        });
        for out in [a, b] {
            assert!(
                out.status.code() == Some(0),
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    tick(&c.env, &c.config).output().unwrap();
    tick(&second, &elsewhere).output().unwrap();
    assert_eq!(
        c.recorded("implementer.log").lines().count(),
        4,
        "one implementer per issue"
    );
    assert_eq!(c.gh.pulls(REPO).len(), 4);
    for issue in issues {
        let accepts = c
            .comments(issue)
            .iter()
            .filter(|(_, b)| b.starts_with("Accepted by the agent-coord coordinator"))
            .count();
        assert_eq!(accepts, 1, "{:?}", c.comments(issue));
        let task = c.task(issue);
        assert_eq!(task["phase"], "ci", "{task:#}");
        let machine = task["machine"].as_str().unwrap_or_default();
        assert!(machine == "box-0" || machine == "box-1", "{task:#}");
    }
}

#[test]
fn a_crash_at_every_effect_boundary_resumes_with_exactly_one_of_each() {
    use std::os::unix::process::ExitStatusExt;
    for point in [
        "intent:accept",
        "posted:accept",
        "committed",
        "pushed",
        "intent:pull_request",
        "posted:pull_request",
    ] {
        let c = Coord::new(30);
        let issue = c.assigned_issue("Add a feature file", HUMAN);
        let crashed = c.crash_at(point);
        assert_eq!(
            crashed.status.signal(),
            Some(9),
            "{point}: the hook did not fire"
        );
        let out = c.tick(&[]);
        assert_eq!(out.code, 0, "{point}: {}\n{}", out.stdout, out.stderr);
        let accepts = c
            .comments(issue)
            .iter()
            .filter(|(_, b)| b.starts_with("Accepted by the agent-coord coordinator"))
            .count();
        assert_eq!(accepts, 1, "{point}: {:?}", c.comments(issue));
        assert_eq!(c.gh.pulls(REPO).len(), 1, "{point}");
        assert_eq!(
            c.recorded("implementer.log").lines().count(),
            1,
            "{point}: one model"
        );
        let task = c.task(issue);
        assert_eq!(task["phase"], "ci", "{point}: {task:#}");
        let branches = c.bare_git(&[
            "for-each-ref",
            "--format=%(refname)",
            "refs/heads/agent-coord",
        ]);
        assert_eq!(
            String::from_utf8_lossy(&branches.stdout).lines().count(),
            1,
            "{point}"
        );
    }
}

#[test]
fn follow_keeps_ticking_and_ctrl_c_exits_zero() {
    let c = Coord::new(30);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let mut child = c
        .coordinate_on(&c.env, "w1", &c.config, &[("W1_TOKEN", WORKER_TOKEN)])
        .arg("--follow")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The first tick takes the task to its draft PR; a second issue shows the loop goes on.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while c.task(issue)["phase"] != "ci" {
        assert!(
            std::time::Instant::now() < deadline,
            "the first tick never finished"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let second = c.assigned_issue("Add another file", HUMAN);
    while c.task(second)["phase"] != "ci" {
        assert!(
            std::time::Instant::now() < deadline,
            "no later tick picked up the second issue"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
}

/// The worker's heartbeat record as its machine's heartbeat ref holds it.
fn worker_heartbeat(c: &Coord) -> serde_json::Value {
    let text = c.env.git(&[
        "show",
        "refs/agent-coord/heartbeats/box-1:heartbeats/w1.json",
    ]);
    serde_json::from_str(&text).unwrap_or(serde_json::Value::Null)
}

#[test]
fn an_idle_tick_is_answered_304_and_costs_no_rate_limit() {
    let c = Coord::new(30);
    c.assigned_issue("Add a feature file", HUMAN);
    c.tick(&[]).success();
    // This tick refreshes the ETags of what the first one changed (the issue list).
    c.tick(&[]).success();
    let before = c.gh.stats().rate_limit_remaining;
    c.gh.reset_requests();
    c.tick(&[]).success();
    let requests = c.gh.requests();
    let routes: Vec<String> = requests
        .iter()
        .map(|r| format!("{} {} {}", r.method, r.path, r.status))
        .collect();
    assert!(
        requests.iter().all(|r| r.status == 304),
        "an idle tick sent a request that was not answered from the cache: {routes:#?}"
    );
    // Both accounts' GET /user (the preflight), the one issue list, the task's pull request
    // (whose head CI is observed for) and its three CI observations (no CI reported yet: it
    // waits at the CI phase).
    assert_eq!(requests.len(), 7, "{routes:#?}");
    assert_eq!(c.gh.stats().rate_limit_remaining, before);
}

#[test]
fn a_follow_loop_asks_github_who_a_token_is_once() {
    use std::io::BufRead;
    let c = Coord::new(30);
    c.assigned_issue("Add a feature file", HUMAN);
    c.tick(&[]).success();
    c.gh.reset_requests();
    let mut child = c
        .command(&["--follow", "--json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut reports = 0;
    for line in stdout.lines() {
        if line.unwrap().starts_with('{') {
            reports += 1;
            if reports == 3 {
                let pid = nix::unistd::Pid::from_raw(child.id() as i32);
                nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
            }
        }
    }
    assert!(child.wait().unwrap().success());
    let users = c.gh.requests().iter().filter(|r| r.path == "/user").count();
    assert_eq!(users, 2, "GET /user once per account, not once per tick");
    assert!(reports >= 3);
}

#[test]
fn an_idle_tick_rewrites_a_fresh_heartbeat_only_after_five_minutes() {
    let c = Coord::new(30);
    c.assigned_issue("Add a feature file", HUMAN);
    c.tick(&[]).success();
    let first = worker_heartbeat(&c);
    assert_eq!(first["updated_at"], "2026-06-13T12:00:00Z", "{first:#}");
    let tip = c.env.tip("refs/agent-coord/heartbeats/box-1");
    c.env.at(299);
    c.tick(&[]).success();
    assert_eq!(
        c.env.tip("refs/agent-coord/heartbeats/box-1"),
        tip,
        "an idle tick rewrote a heartbeat written 299 s before"
    );
    c.env.at(300);
    c.tick(&[]).success();
    let beat = worker_heartbeat(&c);
    assert_eq!(beat["updated_at"], "2026-06-13T12:05:00Z", "{beat:#}");
    assert_eq!(beat["batch_id"], first["batch_id"]);
}
