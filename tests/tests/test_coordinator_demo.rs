//! `coordinator-demo --exit-when-done`, the driver behind `make demo-coordinator`, run to its
//! end: the real coordinator and dashboard against the fake GitHub bring all three scripted
//! issues to a signed draft pull request with passing checks, through adapter lanes whose
//! fake vendor CLIs leave lane runs with vendors, tokens, costs and transcripts on disk, and
//! the demo exits 0.

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
    lane_runs_have_vendors_tokens_costs_and_transcripts(&stdout, &all);
}

/// One `  run TASK PHASE round R SLOT: vendor V, model M, verdict X, N tokens, $C (SOURCE),
/// transcript PATH (B bytes, STATE)` line of the demo's report.
#[derive(Debug)]
struct Run<'a> {
    task: &'a str,
    slot: &'a str,
    vendor: &'a str,
    verdict: &'a str,
    tokens: u64,
    cost: f64,
    source: &'a str,
    transcript: &'a str,
}

fn parse_run(line: &str) -> Run<'_> {
    let rest = line.strip_prefix("  run ").expect("a run line");
    let (head, facts) = rest.split_once(": ").expect("head: facts");
    let head: Vec<&str> = head.split(' ').collect();
    let field = |name: &str| {
        facts
            .split(", ")
            .find_map(|f| f.strip_prefix(name))
            .unwrap_or_else(|| panic!("no {name} in {line}"))
    };
    let tokens = facts
        .split(", ")
        .find_map(|f| f.strip_suffix(" tokens"))
        .unwrap_or_else(|| panic!("no tokens in {line}"));
    let (cost, source) = facts
        .split(", ")
        .find_map(|f| f.strip_prefix('$'))
        .and_then(|c| c.split_once(" ("))
        .unwrap_or_else(|| panic!("no cost in {line}"));
    Run {
        task: head[0],
        slot: head[head.len() - 1],
        vendor: field("vendor "),
        verdict: field("verdict "),
        tokens: tokens.parse().unwrap(),
        cost: cost.parse().unwrap(),
        source: source.trim_end_matches(')'),
        transcript: facts
            .split_once("transcript ")
            .map(|(_, t)| t)
            .unwrap_or_else(|| panic!("no transcript in {line}")),
    }
}

/// Every task ended with lane runs of the adapter's vendors as configured, each with tokens,
/// a cost and a transcript the demo found on disk with the recorded size and digest; the
/// spend totals of `coordinate --json` and `status --json` agree.
fn lane_runs_have_vendors_tokens_costs_and_transcripts(stdout: &str, all: &str) {
    let runs: Vec<Run> = stdout
        .lines()
        .filter(|l| l.starts_with("  run "))
        .map(parse_run)
        .collect();
    let expected_vendor = |slot: &str| match slot {
        "grok:implementer" => "claude",
        "grok:reviewer" => "gemini",
        "grok:pr-reviewer-quality" | "grok:pr-reviewer-logic" => "grok",
        "codex:pr-reviewer-quality" | "codex:pr-reviewer-logic" => "codex",
        other => panic!("unknown slot {other}"),
    };
    for n in 1..=3 {
        let task = format!("acme.widget.{n}");
        let of_task: Vec<&Run> = runs.iter().filter(|r| r.task == task).collect();
        // At least: implementer, inner reviewer, four PR gates.
        assert!(of_task.len() >= 6, "task {task}: {of_task:?}\n{all}");
        let mut slots: Vec<&str> = of_task.iter().map(|r| r.slot).collect();
        slots.sort_unstable();
        slots.dedup();
        assert_eq!(
            slots.len(),
            6,
            "task {task} ran every slot: {slots:?}\n{all}"
        );
        for run in &of_task {
            assert_eq!(run.vendor, expected_vendor(run.slot), "{run:?}");
            assert!(run.tokens > 1_000, "{run:?}");
            assert!(run.cost > 0.0, "{run:?}");
            // Claude Code reports its own cost; the others are priced by the table.
            let source = if run.vendor == "claude" {
                "vendor"
            } else {
                "computed"
            };
            assert_eq!(run.source, source, "{run:?}");
            assert!(
                run.transcript
                    .starts_with(&format!(".coordinator-control/{task}/"))
                    && run.transcript.ends_with(" bytes, on disk, sha256 matches)"),
                "{run:?}"
            );
        }
    }
    // The question round and the failed check round are runs too.
    let verdicts = |task: &str| -> Vec<&str> {
        runs.iter()
            .filter(|r| r.task == task && r.slot == "grok:implementer")
            .map(|r| r.verdict)
            .collect()
    };
    assert_eq!(verdicts("acme.widget.2"), ["ask", "done"], "{all}");
    assert_eq!(verdicts("acme.widget.3"), ["done", "done"], "{all}");

    // The totals add up the runs, and both commands report the same.
    let total = stdout
        .lines()
        .find_map(|l| l.strip_prefix("  spend total: "))
        .unwrap_or_else(|| panic!("no spend total:\n{all}"));
    assert!(
        total.starts_with(&format!("{} lane runs, ", runs.len())),
        "{total}\n{all}"
    );
    let tokens: u64 = runs.iter().map(|r| r.tokens).sum();
    assert!(total.contains(&format!(", {tokens} tokens, $")), "{total}");
    assert!(total.ends_with(", 0 of unknown cost"), "{total}");
    assert!(
        stdout.contains(&format!("  status --json costs total: {total}\n")),
        "{all}"
    );
    for group in [
        "tasks acme.widget.1",
        "workers w1",
        "repositories acme/widget",
        "batches coordinator-w1",
        "days ",
    ] {
        assert!(
            stdout.contains(&format!("  spend {group}")),
            "{group}\n{all}"
        );
    }
}
