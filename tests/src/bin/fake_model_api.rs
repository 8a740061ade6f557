//! `fake-model-api --log FILE -- COMMAND ARGS...`: starts the scripted fake model API
//! (`agent_coord_tests::fake_model`) on 127.0.0.1 with a free port, runs COMMAND in the current
//! directory with every `{url}` in its arguments and environment values replaced by the fake's
//! URL, writes every request the fake received to FILE (a JSON array) and exits with COMMAND's
//! exit code. Run both under one `unshare -n` so that the CLI and the fake share a
//! loopback-only network namespace (tests/tests/test_vendors_real.rs).
#![forbid(unsafe_code)]

use std::process::Command;
use std::process::ExitCode;

use agent_coord_tests::fake_model::FakeModel;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (log, command) = match args.as_slice() {
        [flag, log, dashes, command @ ..]
            if flag == "--log" && dashes == "--" && !command.is_empty() =>
        {
            (log.clone(), command.to_vec())
        }
        _ => {
            eprintln!("usage: fake-model-api --log FILE -- COMMAND ARGS...");
            return ExitCode::from(1);
        }
    };
    let worktree = match std::env::current_dir() {
        Ok(dir) => dir,
        Err(e) => {
            eprintln!("fake-model-api: cannot read the current directory: {e}");
            return ExitCode::from(2);
        }
    };
    let fake = match FakeModel::start(worktree) {
        Ok(fake) => fake,
        Err(e) => {
            eprintln!("fake-model-api: cannot bind 127.0.0.1: {e}");
            return ExitCode::from(2);
        }
    };
    let url = fake.url().to_owned();
    let subst = |s: &str| s.replace("{url}", &url);
    let mut cmd = Command::new(&command[0]);
    cmd.args(command[1..].iter().map(|a| subst(a)));
    for (name, value) in std::env::vars() {
        if value.contains("{url}") {
            cmd.env(name, subst(&value));
        }
    }
    let status = cmd.status();
    let requests = serde_json::to_string_pretty(&fake.requests()).unwrap_or_default();
    if let Err(e) = std::fs::write(&log, requests) {
        eprintln!("fake-model-api: cannot write {log}: {e}");
        return ExitCode::from(2);
    }
    match status {
        Ok(s) => ExitCode::from(u8::try_from(s.code().unwrap_or(125)).unwrap_or(125)),
        Err(e) => {
            eprintln!("fake-model-api: cannot run {}: {e}", command[0]);
            ExitCode::from(2)
        }
    }
}
