//! `coordinate --follow --listen ADDR --webhook-secret-env VAR`: a signed GitHub delivery
//! wakes its task at once (an authorized reply resumes a waiting task within 2 s of the
//! delivery, with `poll_seconds` at 600), a badly signed or unsigned delivery is refused
//! with 401 and a log line without the body, a replayed delivery id wakes nothing, and an
//! assignment's delivery admits the issue without waiting for the poll, and a check run on
//! the task's head (not another commit's) wakes its CI phase. The listener binds 127.0.0.1
//! only.

use std::io::BufRead as _;
use std::io::BufReader;
use std::net::TcpListener;
use std::process::Child;
use std::process::Stdio;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use std::time::Instant;

use agent_coord_shared::coordinator::webhook::signature;
use agent_coord_tests::coord::Coord;
use agent_coord_tests::coord::HUMAN;
use agent_coord_tests::coord::REPO;
use agent_coord_tests::coord::WORKER;
use serde_json::json;

const SECRET: &str = "test-webhook-secret-0123456789abcdef";

/// A `coordinate --follow --listen` process whose stdout and stderr lines are collected as
/// they come; SIGTERM and a wait when dropped.
struct Follow {
    child: Child,
    port: u16,
    stdout: Arc<Mutex<Vec<String>>>,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Follow {
    /// Starts the follow loop with a webhook listener on a free loopback port and an hourly
    /// poll, and waits until it listens.
    fn start(c: &Coord) -> Follow {
        let mut config = c.config_value(30);
        config["workers"]["w1"]["poll_seconds"] = json!(600);
        c.write_config(&config);
        let port = free_port();
        let mut child = c
            .command(&[
                "--follow",
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--webhook-secret-env",
                "HOOK_SECRET",
            ])
            .env("HOOK_SECRET", SECRET)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = collect(child.stdout.take().unwrap());
        let stderr = collect(child.stderr.take().unwrap());
        let follow = Follow {
            child,
            port,
            stdout,
            stderr,
        };
        wait_until("the listener", Duration::from_secs(60), || {
            follow.said_err(&format!("listening on http://127.0.0.1:{port}/webhook"))
        });
        follow
    }

    fn said(&self, text: &str) -> bool {
        self.stdout.lock().unwrap().iter().any(|l| l.contains(text))
    }

    fn said_err(&self, text: &str) -> bool {
        self.stderr.lock().unwrap().iter().any(|l| l.contains(text))
    }

    fn stderr(&self) -> String {
        self.stderr.lock().unwrap().join("\n")
    }

    /// Posts a delivery to the listener: its status and answer.
    fn post(&self, event: &str, id: &str, body: &[u8], sig: Option<String>) -> (u16, String) {
        let agent = ureq::AgentBuilder::new()
            .timeout(Duration::from_secs(20))
            .build();
        let mut req = agent
            .post(&format!("http://127.0.0.1:{}/webhook", self.port))
            .set("Content-Type", "application/json")
            .set("X-GitHub-Event", event)
            .set("X-GitHub-Delivery", id)
            .set("User-Agent", "GitHub-Hookshot/test");
        if let Some(sig) = sig {
            req = req.set("X-Hub-Signature-256", &sig);
        }
        match req.send_bytes(body) {
            Ok(resp) => (resp.status(), resp.into_string().unwrap()),
            Err(ureq::Error::Status(code, resp)) => (code, resp.into_string().unwrap()),
            Err(e) => panic!("the listener did not answer: {e}"),
        }
    }

    /// Stops the loop (SIGTERM) and returns its exit code.
    fn stop(mut self) -> Option<i32> {
        self.terminate()
    }

    fn terminate(&mut self) -> Option<i32> {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        );
        self.child.wait().unwrap().code()
    }
}

impl Drop for Follow {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.terminate();
        }
    }
}

/// Collects the lines of `stream` on a thread of their own.
fn collect(stream: impl std::io::Read + Send + 'static) -> Arc<Mutex<Vec<String>>> {
    let lines = Arc::new(Mutex::new(Vec::new()));
    let sink = lines.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            sink.lock().unwrap().push(line);
        }
    });
    lines
}

/// A port free on 127.0.0.1 just now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Waits (up to `limit`) until `done` holds.
fn wait_until(what: &str, limit: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// An `issue_comment` delivery's payload for `issue` of [`REPO`], as GitHub shapes it
/// (trimmed).
fn comment_payload(issue: u64, text: &str) -> Vec<u8> {
    json!({
        "action": "created",
        "issue": {"number": issue, "title": "Add a feature file", "state": "open",
                  "user": {"login": HUMAN, "type": "User"}},
        "comment": {"id": 1, "body": text, "user": {"login": HUMAN, "type": "User"}},
        "repository": {"full_name": REPO, "name": "widget"},
        "sender": {"login": HUMAN, "type": "User"},
    })
    .to_string()
    .into_bytes()
}

fn signed(body: &[u8]) -> Option<String> {
    Some(signature::sign(SECRET.as_bytes(), body))
}

/// Waits until no GitHub request arrives for a whole second (the loop's ticks ended).
fn quiet(c: &Coord) {
    for _ in 0..60 {
        c.gh.reset_requests();
        std::thread::sleep(Duration::from_secs(1));
        if c.gh.requests().is_empty() {
            return;
        }
    }
    panic!("the coordinator never went quiet");
}

#[test]
fn an_authorized_reply_resumes_its_task_within_two_seconds_of_the_delivery() {
    let c = Coord::new(30);
    c.queue("implementer", &["ask", "done"]);
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(c.task(issue)["state"], "waiting");

    let follow = Follow::start(&c);
    // The first full tick ran and found no reply; the next poll is ten minutes away.
    wait_until("the first tick", Duration::from_secs(60), || {
        follow.said("waiting for an authorized reply")
    });
    let reply = "Use feature.txt at the root.";
    c.reply(issue, reply);
    let body = comment_payload(issue, reply);

    // Badly signed, and unsigned: refused, logged without the body, nothing woken.
    let forged = Some(signature::sign(b"not the secret", &body));
    let (code, text) = follow.post("issue_comment", "bad-delivery-1", &body, forged);
    assert_eq!(code, 401, "{text}");
    let (code, text) = follow.post("issue_comment", "bad-delivery-2", &body, None);
    assert_eq!(code, 401, "{text}");
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        c.task(issue)["state"],
        "waiting",
        "a refused delivery woke the task"
    );
    assert!(
        follow.said_err("webhook: 401 for delivery bad-delivery-1 (issue_comment)"),
        "{}",
        follow.stderr()
    );
    assert!(
        follow.said_err("webhook: 401 for delivery bad-delivery-2"),
        "{}",
        follow.stderr()
    );
    assert!(
        !follow.stderr().contains(reply),
        "a log line carried the body"
    );

    // The signed delivery resumes the task at once.
    let delivered = Instant::now();
    let (code, text) = follow.post("issue_comment", "good-delivery-1", &body, signed(&body));
    assert_eq!(code, 202, "{text}");
    assert_eq!(
        text.trim(),
        format!("accepted: wakes the tasks of {REPO}#{issue}")
    );
    wait_until("the task to resume", Duration::from_secs(30), || {
        c.task(issue)["state"] != "waiting"
    });
    let latency = delivered.elapsed();
    println!("reply delivery -> task resumed: {} ms", latency.as_millis());
    assert!(
        latency < Duration::from_secs(2),
        "resumed {latency:?} after the delivery"
    );
    // The tick prints its observations when it ends.
    wait_until("the woken tick's report", Duration::from_secs(30), || {
        follow.said("woken by a webhook delivery")
            && follow.said(&format!("authorized reply by {HUMAN}: resuming implement"))
    });

    // The resumed implementer ran with the reply, and lanes ending carry the task on.
    wait_until("the task to reach CI", Duration::from_secs(90), || {
        c.task(issue)["phase"] == "ci"
    });
    assert!(c.recorded("implementer.prompt").contains(reply));
    quiet(&c);

    // A replay of the delivery id is answered, and wakes nothing.
    let (code, text) = follow.post("issue_comment", "good-delivery-1", &body, signed(&body));
    assert_eq!(code, 200, "{text}");
    assert!(
        text.starts_with("duplicate delivery good-delivery-1"),
        "{text}"
    );
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(
        c.gh.requests().len(),
        0,
        "a replay made the coordinator read GitHub"
    );

    // The same payload under a new delivery id does wake the task: it reads GitHub again.
    let (code, text) = follow.post("issue_comment", "good-delivery-2", &body, signed(&body));
    assert_eq!(code, 202, "{text}");
    wait_until("a woken tick", Duration::from_secs(5), || {
        !c.gh.requests().is_empty()
    });
    assert_eq!(c.task(issue)["phase"], "ci");
    assert_eq!(c.recorded("implementer.log").lines().count(), 2);
    assert_eq!(follow.stop(), Some(0));
}

#[test]
fn an_assignment_delivery_admits_the_issue_without_waiting_for_the_poll() {
    let c = Coord::new(30);
    c.queue("implementer", &["ask"]);
    let follow = Follow::start(&c);
    wait_until("the first tick", Duration::from_secs(60), || {
        follow.said("worker w1: nothing to do")
    });
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    std::thread::sleep(Duration::from_secs(1));
    assert!(
        c.task(issue).is_null(),
        "admitted before any delivery or poll"
    );

    // A delivery for a repository no worker is configured for is taken and ignored.
    let elsewhere = json!({
        "action": "assigned",
        "issue": {"number": issue},
        "assignee": {"login": WORKER},
        "repository": {"full_name": "evil/elsewhere"},
    })
    .to_string()
    .into_bytes();
    let (code, text) = follow.post("issues", "assign-elsewhere", &elsewhere, signed(&elsewhere));
    assert_eq!(code, 202, "{text}");
    assert!(text.starts_with("ignored:"), "{text}");
    // Written before the answer; the test's reader thread may not have it yet.
    wait_until(
        "the ignored delivery's log line",
        Duration::from_secs(10),
        || follow.said_err("evil/elsewhere, which no followed worker is configured for"),
    );

    let ping = br#"{"zen":"Practicality beats purity.","hook_id":1}"#;
    let (code, text) = follow.post("ping", "ping-1", ping, signed(ping));
    assert_eq!((code, text.trim()), (200, "pong"));

    let assigned = json!({
        "action": "assigned",
        "issue": {"number": issue, "assignees": [{"login": WORKER}]},
        "assignee": {"login": WORKER},
        "repository": {"full_name": REPO},
        "sender": {"login": HUMAN},
    })
    .to_string()
    .into_bytes();
    let delivered = Instant::now();
    let (code, text) = follow.post("issues", "assign-1", &assigned, signed(&assigned));
    assert_eq!(code, 202, "{text}");
    wait_until("the issue's admission", Duration::from_secs(30), || {
        !c.task(issue).is_null()
    });
    let latency = delivered.elapsed();
    println!(
        "assignment delivery -> issue admitted: {} ms",
        latency.as_millis()
    );
    assert!(
        latency < Duration::from_secs(5),
        "admitted {latency:?} after the delivery"
    );
    wait_until("the full tick's report", Duration::from_secs(30), || {
        follow.said(&format!("admitted {REPO}#{issue}"))
    });
    assert_eq!(follow.stop(), Some(0));
}

#[test]
fn listen_needs_follow_a_secret_and_an_address_it_can_bind() {
    let c = Coord::new(30);
    let help = c.env.run(["coordinate", "--help"]).success().stdout;
    assert!(help.contains("--listen <ADDR>"), "{help}");
    assert!(help.contains("--webhook-secret-env <VAR>"), "{help}");
    let run = |args: &[&str], secret: Option<&str>| {
        let mut cmd = c.command(args);
        if let Some(s) = secret {
            cmd.env("HOOK_SECRET", s);
        }
        let out = cmd.output().unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (code, err) = run(
        &["--listen", "0", "--webhook-secret-env", "HOOK_SECRET"],
        Some(SECRET),
    );
    assert_eq!(code, Some(1), "--listen without --follow: {err}");
    let (code, err) = run(&["--follow", "--listen", "0"], Some(SECRET));
    assert_eq!(code, Some(1), "--listen without a secret: {err}");
    let (code, err) = run(
        &[
            "--follow",
            "--listen",
            "0",
            "--webhook-secret-env",
            "HOOK_SECRET",
        ],
        None,
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("HOOK_SECRET: the variable is unset or empty"),
        "{err}"
    );
    assert!(!err.contains(SECRET));
    let (code, err) = run(
        &[
            "--follow",
            "--listen",
            "example.com:80",
            "--webhook-secret-env",
            "HOOK_SECRET",
        ],
        Some(SECRET),
    );
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("is not PORT or HOST:PORT"), "{err}");
    // A port already taken fails the command before any tick.
    let taken = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let (code, err) = run(
        &[
            "--follow",
            "--listen",
            &port,
            "--webhook-secret-env",
            "HOOK_SECRET",
        ],
        Some(SECRET),
    );
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains(&format!("cannot listen on 127.0.0.1:{port}")),
        "{err}"
    );
}

#[test]
fn a_check_run_delivery_on_the_tasks_head_wakes_its_ci_phase() {
    let c = Coord::new(30);
    c.gh.ci_plan(REPO, &[], "pending");
    let issue = c.assigned_issue("Add a feature file", HUMAN);
    let out = c.tick(&[]);
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    assert_eq!(c.task(issue)["phase"], "ci");
    let head = c.task(issue)["head"].as_str().unwrap().to_owned();
    let pr = c.pr(issue);

    let follow = Follow::start(&c);
    wait_until("the first tick", Duration::from_secs(60), || {
        follow.said("worker w1:")
    });
    quiet(&c);
    c.gh.set_ci(REPO, &head, "success");
    let check_run = |sha: &str, prs: &[u64]| {
        json!({
            "action": "completed",
            "check_run": {
                "id": 77, "name": "build", "head_sha": sha, "status": "completed",
                "conclusion": "success",
                "pull_requests": prs.iter().map(|n| json!({"number": n})).collect::<Vec<_>>(),
            },
            "repository": {"full_name": REPO},
        })
        .to_string()
        .into_bytes()
    };

    // Another commit's check run wakes no task: CI stays unobserved until the poll.
    let other = check_run("ffffffffffffffffffffffffffffffffffffffff", &[]);
    let (code, text) = follow.post("check_run", "check-other", &other, signed(&other));
    assert_eq!(code, 202, "{text}");
    std::thread::sleep(Duration::from_secs(2));
    assert_eq!(c.task(issue)["phase"], "ci");

    // The head's check run wakes the task, which reads CI on GitHub and goes on.
    let body = check_run(&head, &[pr]);
    let delivered = Instant::now();
    let (code, text) = follow.post("check_run", "check-head", &body, signed(&body));
    assert_eq!(code, 202, "{text}");
    wait_until("the task to leave CI", Duration::from_secs(30), || {
        c.task(issue)["phase"] != "ci"
    });
    let latency = delivered.elapsed();
    println!(
        "check_run delivery -> CI observed green: {} ms",
        latency.as_millis()
    );
    assert!(latency < Duration::from_secs(2), "{latency:?}");
    assert_eq!(c.task(issue)["evidence"]["ci_green"], head.as_str());
    assert_eq!(follow.stop(), Some(0));
}
