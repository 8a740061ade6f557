//! `coordinator-demo --exit-when-done`, the driver behind `make demo-coordinator`, run to its
//! end: the real coordinator and dashboard against the fake GitHub bring all three scripted
//! issues to a signed draft pull request with passing checks, and the demo exits 0.

use std::io::Read;
use std::process::Command;
use std::process::Stdio;
use std::time::Duration;
use std::time::Instant;

#[test]
fn the_coordinator_demo_brings_every_issue_to_a_draft_pull_request() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_coordinator-demo"))
        .args(["--port", "0", "--delay", "0", "--exit-when-done"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        stdout.read_to_string(&mut s).unwrap();
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        stderr.read_to_string(&mut s).unwrap();
        s
    });
    let deadline = Instant::now() + Duration::from_secs(90);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the demo did not finish within 90 s:\n{}\n{}",
                out.join().unwrap(),
                err.join().unwrap()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
    let all = format!("{stdout}\n------- stderr -------\n{stderr}");
    assert_eq!(status.code(), Some(0), "{all}");

    // Both servers were on loopback.
    assert!(stdout.contains("dashboard:    http://127.0.0.1:"), "{all}");
    assert!(stdout.contains("fake GitHub:  http://127.0.0.1:"), "{all}");

    // Three pull requests to main, one per issue: made ready by the coordinator, merged by
    // the human.
    let pulls: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("  pull request #"))
        .collect();
    assert_eq!(pulls.len(), 3, "{all}");
    for pr in &pulls {
        assert!(
            pr.contains(": ready, merged, agent-coord/acme.widget."),
            "{pr}"
        );
        assert!(pr.contains(" -> main, head "), "{pr}");
    }
    assert!(
        stdout.contains("Merge calls on the fake GitHub: 0"),
        "{all}"
    );

    // Each issue got the acknowledgement after the verified human merge.
    assert_eq!(
        stdout.matches("was merged by @alice as").count(),
        3,
        "{all}"
    );
    // Every task is done after the human merge, on the checkpoint and on the dashboard.
    for n in 1..=3 {
        assert!(
            stdout.contains(&format!(
                "task acme.widget.{n}: phase finished, state done, pull request #"
            )),
            "task {n}:\n{all}"
        );
        assert!(
            stdout.contains(&format!("dashboard acme/widget#{n}: status done, ")),
            "dashboard row {n}:\n{all}"
        );
    }

    // The question was asked, the stranger ignored, the human's reply taken.
    assert!(
        stdout.contains("Which file should hold the feature?"),
        "{all}"
    );
    assert!(
        stdout.contains("not among the worker's reply_logins"),
        "{all}"
    );
    assert!(
        stdout.contains("authorized reply by alice: resuming implement"),
        "{all}"
    );
    // The failed check went back to an implementer: two rounds for the third issue.
    assert!(stdout.contains("checks failed on "), "{all}");
    let third = stdout
        .lines()
        .find(|l| l.starts_with("  task acme.widget.3: "))
        .unwrap_or_default();
    assert!(third.contains(", 2 implementer round(s), "), "{all}");
    assert!(
        stdout.contains("the coordinator stopped cleanly (exit 0)"),
        "{all}"
    );
}
