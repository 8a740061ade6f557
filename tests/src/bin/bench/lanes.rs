//! `bench lanes [RUNS]`: what `agent-coord lane` adds to a lane run, excluding the vendor's
//! own time. A stand-in vendor per CLI replays a short event stream at once; the figure is the
//! median of the whole adapter process (prompt in, transcript written, USAGE out) minus the
//! median of the stand-in run alone, both on the same prompt. Goal: ≤ 20 ms.

use std::io::Write;
use std::process::Command;
use std::process::Stdio;
use std::time::Instant;

use crate::cli::binary;

/// A stand-in vendor for each CLI: reads the prompt, prints its final event stream.
const VENDORS: [(&str, &str); 3] = [
    (
        "claude",
        r#"{"type":"system","subtype":"init","session_id":"s-1","model":"claude-sonnet-4-5"}
{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"STATUS: complete\nRESULT: done\nSUMMARY_EN: a\nSUMMARY_DE: b","session_id":"s-1","total_cost_usd":0.1,"usage":{"input_tokens":10,"output_tokens":5}}"#,
    ),
    (
        "codex",
        r#"{"type":"thread.started","thread_id":"t-1"}
{"type":"item.completed","item":{"id":"i1","type":"agent_message","text":"STATUS: complete\nRESULT: done\nSUMMARY_EN: a\nSUMMARY_DE: b"}}
{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5}}"#,
    ),
    (
        "gemini",
        r#"{"type":"init","session_id":"s-1","model":"gemini-2.5-pro"}
{"type":"message","role":"assistant","content":"STATUS: complete\nRESULT: done\nSUMMARY_EN: a\nSUMMARY_DE: b","delta":true}
{"type":"result","status":"success","stats":{"input_tokens":10,"output_tokens":5}}"#,
    ),
];

pub fn bench_lanes(runs: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    println!(
        "adapter overhead per lane run (median of {runs}, vendor time excluded; goal ≤ 20 ms)"
    );
    for (vendor, events) in VENDORS {
        let fake = dir.path().join(vendor);
        let script = format!("#!/bin/sh\ncat > /dev/null\ncat <<'EOF'\n{events}\nEOF\n");
        std::fs::write(&fake, script).expect("write the stand-in");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755))
            .expect("make it executable");
        let transcript = dir.path().join(format!("{vendor}.jsonl"));
        let mut adapter = Command::new(binary());
        adapter
            .args(["lane", vendor, "--role", "implementer", "--transcript"])
            .arg(&transcript)
            .env(format!("AGENT_COORD_{}_BIN", vendor.to_uppercase()), &fake)
            .current_dir(dir.path());
        let with = median_ms(&mut adapter, runs);
        let alone = median_ms(&mut Command::new(&fake), runs);
        let usage_ok = last_line_is_usage(&mut adapter);
        println!(
            "  {vendor:<7} adapter {with:>6.1} ms   stand-in alone {alone:>5.1} ms   overhead {:>5.1} ms{}",
            with - alone,
            if usage_ok { "" } else { "   (NO USAGE LINE: the run is broken)" }
        );
    }
}

fn median_ms(cmd: &mut Command, runs: usize) -> f64 {
    let mut times: Vec<f64> = (0..runs.max(1))
        .map(|_| {
            let start = Instant::now();
            let _ = feed(cmd);
            start.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn feed(cmd: &mut Command) -> Option<String> {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    child
        .stdin
        .take()?
        .write_all(b"Implement the issue.\n")
        .ok()?;
    let out = child.wait_with_output().ok()?;
    Some(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn last_line_is_usage(cmd: &mut Command) -> bool {
    feed(cmd).is_some_and(|out| {
        out.trim_end()
            .rsplit('\n')
            .next()
            .is_some_and(|l| l.starts_with("USAGE: "))
    })
}
