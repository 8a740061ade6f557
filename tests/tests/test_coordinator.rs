//! `agent-coord coordinate` end to end: the real binary against the fake GitHub, real git
//! worktrees and bare repositories, scripted lanes and checks, and SSH-signed commits.

use agent_coord_tests::coord::Coord;
use agent_coord_tests::coord::HUMAN;
use agent_coord_tests::coord::REPO;
use agent_coord_tests::coord::REVIEW_TOKEN;
use agent_coord_tests::coord::STRANGER;
use agent_coord_tests::coord::WORKER;
use agent_coord_tests::coord::WORKER_TOKEN;

fn marker_count(c: &Coord, issue: u64, needle: &str) -> usize {
    c.comments(issue)
        .iter()
        .filter(|(_, body)| body.contains(needle))
        .count()
}

#[test]
fn an_assigned_issue_becomes_a_signed_draft_pull_request_with_passing_checks() {
    let c = Coord::new(30);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("admitted acme/widget#1"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("draft pull request #"),
        "{}",
        out.stdout
    );

    // One acceptance comment by the worker, before anything else.
    let comments = c.comments(issue);
    assert_eq!(comments.len(), 1, "{comments:?}");
    assert_eq!(comments[0].0, WORKER);
    assert!(
        comments[0].1.contains("agent-coord:activity="),
        "{}",
        comments[0].1
    );

    // One draft pull request from the task's branch to main, on a signed head.
    let pulls = c.gh.pulls(REPO);
    assert_eq!(pulls.len(), 1, "{pulls:?}");
    let pr = &pulls[0];
    assert_eq!(pr["draft"], true);
    assert_eq!(pr["base"]["ref"], "main");
    assert_eq!(pr["user"]["login"], WORKER);
    let head = pr["head"]["sha"].as_str().unwrap().to_owned();
    let branch = pr["head"]["ref"].as_str().unwrap().to_owned();
    assert!(branch.starts_with("agent-coord/"), "{branch}");
    let signature = c.bare_git(&["cat-file", "commit", &head]);
    assert!(
        String::from_utf8_lossy(&signature.stdout).contains("-----BEGIN SSH SIGNATURE-----"),
        "the pushed head is not signed"
    );

    // The checkpoint: checks and all four PR gates passed on exactly that head; with no CI
    // reported yet, the task waits at the CI phase.
    let task = c.task(issue);
    assert_eq!(task["phase"], "ci", "{task:#}");
    assert_eq!(task["state"], "active");
    assert_eq!(task["head"], head.as_str());
    assert_eq!(task["evidence"]["checks_passed"], head.as_str());
    assert_eq!(task["pr"], pr["number"]);
    assert_eq!(task["assignment"]["actor"], HUMAN);
    let check_env = c.recorded("check.env");
    assert!(
        check_env.contains(&format!("AGENT_COORDINATOR_HEAD={head}")),
        "{check_env}"
    );
    assert!(check_env.contains("AGENT_COORDINATOR_REPO=acme/widget"));

    // Admission is a claim by the worker; the task is a lane of the worker's batch.
    let claim = c
        .env
        .git(&["show", "refs/heads/agent-coord:claims/acme/widget/1.json"]);
    assert!(claim.contains("\"agent_id\": \"w1\""), "{claim}");
    let manifest = c
        .env
        .git(&["show", "refs/heads/agent-coord:batches/coordinator-w1.json"]);
    assert!(manifest.contains("\"phase\": \"ci\""), "{manifest}");

    // The model never saw a token, and no token is anywhere.
    let lane_env = c.recorded("implementer.env");
    assert!(!lane_env.is_empty());
    for token in [WORKER_TOKEN, REVIEW_TOKEN] {
        assert!(!lane_env.contains(token), "the implementer got a token");
        assert!(
            !c.recorded("check.env").contains(token),
            "the check got a token"
        );
        assert!(!out.stdout.contains(token) && !out.stderr.contains(token));
        let grep = c
            .env
            .git_output(&["grep", "-c", token, "refs/heads/agent-coord"]);
        assert!(
            grep.stdout.is_empty(),
            "a token is in the coordination state"
        );
        for (_, body) in c.comments(issue) {
            assert!(!body.contains(token));
        }
    }
    assert!(!lane_env.contains("GH_TOKEN=") && !lane_env.contains("GITHUB_TOKEN="));
    assert_eq!(c.gh.merge_calls(), 0);

    // A second tick changes nothing on GitHub: no second comment, no second pull request.
    let again = c.tick(&[]);
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    assert_eq!(c.comments(issue).len(), 1);
    assert_eq!(c.gh.pulls(REPO).len(), 1);
    assert_eq!(c.recorded("implementer.log").lines().count(), 1);
}

#[test]
fn failing_checks_go_back_to_a_fresh_implementer_with_the_output() {
    let c = Coord::new(30);
    c.queue("check", &["fail", "pass"]);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(c.recorded("implementer.log").lines().count(), 2);
    assert!(
        c.recorded("implementer.prompt")
            .contains("test feature::header FAILED"),
        "the second implementer did not get the failed check output"
    );
    let task = c.task(issue);
    assert_eq!(task["phase"], "ci");
    assert_eq!(task["rounds"], 2);
    // Still one pull request, now on the second signed head.
    let pulls = c.gh.pulls(REPO);
    assert_eq!(pulls.len(), 1);
    assert_eq!(pulls[0]["head"]["sha"], task["head"]);
}

#[test]
fn a_question_waits_for_an_authorized_reply_and_ignores_others() {
    let c = Coord::new(30);
    c.queue("implementer", &["ask", "done"]);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let task = c.task(issue);
    assert_eq!(task["state"], "waiting", "{task:#}");
    assert_eq!(task["resume_phase"], "implement");
    assert!(task["question_activity_id"].is_string());
    assert_eq!(
        marker_count(&c, issue, "Which file should hold the feature?"),
        1
    );

    // A stranger's answer is ignored, and said so.
    c.gh.comment(REPO, issue, STRANGER, "Put it anywhere.");
    let out = c.tick(&[]);
    assert!(
        out.stdout.contains("not among the worker's reply_logins"),
        "{}",
        out.stdout
    );
    assert_eq!(c.task(issue)["state"], "waiting");
    assert_eq!(c.recorded("implementer.log").lines().count(), 1);

    // The authorized human's answer resumes implement, and the implementer gets it.
    c.gh.comment(REPO, issue, HUMAN, "Use feature.txt at the root.");
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(c
        .recorded("implementer.prompt")
        .contains("Use feature.txt at the root."));
    assert!(!c
        .recorded("implementer.prompt")
        .contains("Put it anywhere."));
    assert_eq!(c.task(issue)["phase"], "ci");
}

#[test]
fn blocked_fails_the_task_for_good() {
    let c = Coord::new(30);
    c.queue("implementer", &["blocked"]);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let task = c.task(issue);
    assert_eq!(task["state"], "failed", "{task:#}");
    assert!(task.get("resume_phase").is_none());
    assert_eq!(marker_count(&c, issue, "private service"), 1);
    // A reply does not revive it; later ticks start no model and post nothing.
    c.gh.comment(REPO, issue, HUMAN, "Try again please.");
    let out = c.tick(&[]);
    assert!(out.stdout.contains("not reopened"), "{}", out.stdout);
    assert_eq!(c.recorded("implementer.log").lines().count(), 1);
    assert_eq!(c.comments(issue).len(), 3);
    assert!(c.gh.pulls(REPO).is_empty());
}

#[test]
fn invalid_lane_output_is_a_resumable_blocker() {
    let c = Coord::new(30);
    c.queue("implementer", &["invalid", "done"]);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    c.tick(&[]);
    let task = c.task(issue);
    assert_eq!(task["state"], "waiting", "{task:#}");
    assert_eq!(task["resume_phase"], "implement");
    assert!(c.gh.pulls(REPO).is_empty());
    c.gh.comment(REPO, issue, HUMAN, "Please retry.");
    c.tick(&[]);
    assert_eq!(c.task(issue)["phase"], "ci");
}

#[test]
fn a_lane_timeout_kills_its_whole_process_group() {
    let c = Coord::new(2);
    c.queue("implementer", &["hang"]);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let pid: i32 = c.recorded("grandchild.pid").trim().parse().unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Gone, or a zombie waiting for a reaper (PID 1 in a container may not reap).
    assert!(
        stat.is_empty() || stat.split_whitespace().nth(2) == Some("Z"),
        "the lane's grandchild survived the timeout: {stat}"
    );
    let task = c.task(issue);
    assert_eq!(task["state"], "waiting");
    assert_eq!(task["resume_phase"], "implement");
}

#[test]
fn a_silent_lane_is_killed_at_lane_stall_seconds_like_a_timeout() {
    // The lane may run 5 minutes, but it may not be silent for 2 s.
    let c = Coord::new(300);
    let mut config = c.config_value(300);
    config["workers"]["w1"]["lane_stall_seconds"] = serde_json::json!(2);
    c.write_config(&config);
    c.queue("implementer", &["hang"]);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("was killed: no output for 2 s (lane_stall_seconds)"),
        "{}",
        out.stdout
    );
    let pid: i32 = c.recorded("grandchild.pid").trim().parse().unwrap();
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    assert!(
        stat.is_empty() || stat.split_whitespace().nth(2) == Some("Z"),
        "the lane's grandchild survived the stall: {stat}"
    );
    // Handled as the spec handles a timeout: a blocker a reply resumes at implement.
    let task = c.task(issue);
    assert_eq!(task["state"], "waiting", "{task:#}");
    assert_eq!(task["resume_phase"], "implement");
}

/// A fake Claude Code that prints nothing but its stream-json events, one a second for 3 s,
/// editing the feature file on the way (the adapter keeps the lane's stdout quiet until the
/// model's final answer).
const SLOW_CLAUDE: &str = r#"#!/bin/sh
cat > /dev/null
printf '%s\n' '{"type":"system","subtype":"init","session_id":"s-9","model":"claude-sonnet-4-5"}'
sleep 1
printf '%s\n' '{"type":"assistant","message":{"content":[{"type":"text","text":"working"}]},"session_id":"s-9"}'
echo "change 1" > "feature-$(basename "$PWD").txt"
sleep 1
printf '%s\n' '{"type":"assistant","message":{"content":[{"type":"text","text":"still working"}]},"session_id":"s-9"}'
sleep 1
printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"num_turns":2,"result":"STATUS: complete\nRESULT: done\nSUMMARY_EN: Adds the feature file.\nSUMMARY_DE: Fügt die Feature-Datei hinzu.\nDetails follow.","session_id":"s-9","total_cost_usd":0.5,"usage":{"input_tokens":10,"output_tokens":5}}'
"#;

#[test]
fn an_adapter_lane_whose_transcript_grows_is_not_stalled() {
    let c = Coord::new(300);
    let claude = c.dir.join("slow-claude");
    std::fs::write(&claude, SLOW_CLAUDE).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&claude, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut config = c.config_value(300);
    config["workers"]["w1"]["lane_stall_seconds"] = serde_json::json!(2);
    let agent_coord = agent_coord_tests::env::binary();
    config["sessions"]["w1"]["lanes"]["grok:implementer"] = serde_json::json!([
        agent_coord.to_str().unwrap(),
        "lane",
        "claude",
        "--role",
        "implementer"
    ]);
    c.write_config(&config);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let out = c
        .command(&["--wait"])
        .env("AGENT_COORD_CLAUDE_BIN", &claude)
        .output()
        .unwrap();
    let out = agent_coord_tests::env::CommandOutput::new(out, c.env.root());
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    // Its stdout was silent for 3 s, but its transcript grew every second.
    assert!(!out.stdout.contains("was killed"), "{}", out.stdout);
    assert_eq!(c.task(issue)["phase"], "ci", "{}", out.stdout);
    // The coordinator named the transcript; the adapter wrote the vendor's events there.
    let control = c.dir.join("ws").join(".coordinator-control");
    let transcript = walk(&control)
        .into_iter()
        .find(|p| {
            p.to_string_lossy()
                .ends_with("grok-implementer.transcript.jsonl")
        })
        .unwrap_or_else(|| panic!("no transcript under {}", control.display()));
    let text = std::fs::read_to_string(transcript).unwrap();
    assert!(text.contains("still working"), "{text}");
    assert!(text.contains(r#""agent_coord":"usage""#), "{text}");
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[test]
fn an_assignment_by_a_bot_is_not_evidence() {
    let c = Coord::new(30);
    let issue = c.assigned_issue("Add a feature file", "helper-bot");
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert!(out.stdout.contains("not admitted"), "{}", out.stdout);
    assert!(c.task(issue).is_null());
    assert!(c.comments(issue).is_empty());
}

#[test]
fn an_issue_claimed_by_another_agent_is_skipped() {
    let c = Coord::new(30);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    c.env.claim("human-agent", REPO, issue).run().success();
    c.env.beat("human-agent").run().success();
    let out = c.tick(&[]);
    assert!(
        out.stdout.contains("skipped: claimed by human-agent"),
        "{}",
        out.stdout
    );
    assert!(c.task(issue).is_null());
    assert!(c.comments(issue).is_empty());
}

#[test]
fn an_unknown_delivery_is_discovered_not_repeated() {
    use agent_coord_tests::fake_github::Fault;
    use agent_coord_tests::fake_github::FaultMode;
    let c = Coord::new(30);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    c.gh.fault(Fault {
        method: "POST".into(),
        path: "/comments".into(),
        mode: FaultMode::DropAfterApply,
    });
    let out = c.tick(&[]);
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(c.comments(issue).len(), 1, "the comment landed");
    assert_eq!(c.task(issue)["phase"], "accept");
    assert!(
        c.recorded("implementer.log").is_empty(),
        "no model before acceptance"
    );
    c.gh.fault(Fault {
        method: "POST".into(),
        path: "/pulls".into(),
        mode: FaultMode::DropAfterApply,
    });
    let out = c.tick(&[]);
    assert_eq!(out.code, 2, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(c.gh.pulls(REPO).len(), 1, "the pull request landed");
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(c.comments(issue).len(), 1, "exactly one acceptance comment");
    assert_eq!(c.gh.pulls(REPO).len(), 1, "exactly one pull request");
    assert_eq!(
        c.recorded("implementer.log").lines().count(),
        1,
        "one implementer"
    );
    assert_eq!(c.task(issue)["phase"], "ci");
}

#[test]
fn a_changed_pinned_configuration_blocks_the_task() {
    let c = Coord::new(30);
    c.queue("implementer", &["ask"]);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    c.tick(&[]);
    let mut config = c.config_value(30);
    config["workers"]["w1"]["repositories"][REPO]["check_argv"] =
        serde_json::json!([c.dir.join("true.sh").to_string_lossy()]);
    c.write_config(&config);
    c.gh.comment(REPO, issue, HUMAN, "Use feature.txt.");
    c.tick(&[]);
    let task = c.task(issue);
    assert_eq!(task["state"], "waiting", "{task:#}");
    assert!(
        task["blocker"]
            .as_str()
            .unwrap_or_default()
            .contains("check_argv"),
        "{task:#}"
    );
    assert!(c.gh.pulls(REPO).is_empty());
}

#[test]
fn configuration_errors_name_the_key_and_a_missing_named_config_is_an_error() {
    let c = Coord::new(30);
    let mut config = c.config_value(30);
    config["workers"]["w1"]["workspace_root"] = serde_json::json!("relative/ws");
    c.write_config(&config);
    let out = c.tick(&[]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("workers.w1.workspace_root"),
        "{}",
        out.stderr
    );

    // Named by --config, a missing file is an error (only the default location may be
    // absent: see test_coordinator_regressions).
    std::fs::remove_file(&c.config).unwrap();
    let out = c.tick(&[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("coordinator.json"), "{}", out.stderr);
    assert!(out.stdout.is_empty(), "{}", out.stdout);
}

#[test]
fn check_config_prints_every_check_and_fails_on_a_wrong_token() {
    let c = Coord::new(30);
    let out = c.tick(&["--check-config"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    for needle in [
        "workspace root",
        "lane grok:implementer",
        "signing key",
        "distinct logins",
    ] {
        assert!(
            out.stdout.contains(needle),
            "{needle} missing:\n{}",
            out.stdout
        );
    }
    let bad = c
        .env
        .command([
            "coordinate",
            "--check-config",
            "--worker",
            "w1",
            "--config",
            c.config.to_str().unwrap(),
        ])
        .env("W1_TOKEN", REVIEW_TOKEN)
        .env("R1_TOKEN", REVIEW_TOKEN)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let text = String::from_utf8_lossy(&bad.stdout);
    assert!(
        text.contains("not the configured login bot-worker"),
        "{text}"
    );
    assert!(!text.contains(REVIEW_TOKEN));
}

#[test]
fn the_task_shows_on_the_dashboard_as_a_lane_with_its_pull_request() {
    let c = Coord::new(30);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let pr_url = c.task(issue)["pr_url"].as_str().unwrap().to_owned();
    let server = agent_coord_tests::server::Server::start(&c.env, &[]);
    let (status, body) = server.get("/api/dashboard");
    assert_eq!(status, 200);
    assert!(
        body.contains("coordinator-w1"),
        "the worker's batch is missing"
    );
    assert!(
        body.contains(&pr_url),
        "the lane's pull request link is missing"
    );
    for token in [WORKER_TOKEN, REVIEW_TOKEN] {
        assert!(!body.contains(token));
    }
    // The issue's row is live (the task's own heartbeat), not an issue nobody beats for.
    let model: serde_json::Value = serde_json::from_str(&body).unwrap();
    let row = model["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == "target:acme/widget#1")
        .expect("the issue's row");
    assert_eq!(row["state"], "running", "{row:#}");
    assert_eq!(row["repo"], REPO);
    let lane = &model["batches"][0]["lanes"][0];
    assert_eq!(lane["rowId"], "target:acme/widget#1", "{lane:#}");
}

#[test]
fn every_page_of_a_long_list_goes_out_with_the_token() {
    let c = Coord::new(30);
    c.queue("implementer", &["ask", "done"]);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    c.tick(&[]);
    // 130 chatty comments push the authorized reply onto the second page (100 per page).
    for i in 0..130 {
        c.gh.comment(REPO, issue, STRANGER, &format!("noise {i}"));
    }
    c.gh.comment(REPO, issue, HUMAN, "Use feature.txt.");
    c.gh.reset_requests();
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(c.task(issue)["phase"], "ci");
    let requests = c.gh.requests();
    let paged = requests
        .iter()
        .filter(|r| r.query.as_deref().is_some_and(|q| q.contains("page=2")))
        .count();
    assert!(paged >= 1, "the comments were not paginated: {requests:?}");
    let anonymous: Vec<_> = requests.iter().filter(|r| r.login.is_none()).collect();
    assert!(
        anonymous.is_empty(),
        "requests without the token: {anonymous:?}"
    );
}

#[test]
fn json_output_is_one_document_per_tick_and_all_ticks_every_worker() {
    let c = Coord::new(30);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let out = c.tick(&["--json"]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    let doc: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(doc["worker"], "w1");
    assert_eq!(doc["preflight"], "ok");
    let messages: Vec<&str> = doc["observations"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|o| o["message"].as_str())
        .collect();
    assert!(
        messages.iter().any(|m| m.contains("admitted")),
        "{messages:?}"
    );
    assert!(doc["github_requests"].as_u64().unwrap() > 0);

    let all = c
        .env
        .command([
            "coordinate",
            "--all",
            "--json",
            "--config",
            c.config.to_str().unwrap(),
        ])
        .env("W1_TOKEN", WORKER_TOKEN)
        .env("R1_TOKEN", REVIEW_TOKEN)
        .output()
        .unwrap();
    assert_eq!(all.status.code(), Some(0));
    let doc: serde_json::Value = serde_json::from_slice(&all.stdout).unwrap();
    assert_eq!(doc["worker"], "w1");
    assert_eq!(c.comments(issue).len(), 1);

    let neither = c
        .env
        .command(["coordinate", "--config", c.config.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(neither.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&neither.stderr).contains("--worker ID or --all"));
}
