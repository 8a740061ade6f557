//! `fake-github --root DIR [--port N]`: runs the tests' fake GitHub on 127.0.0.1 until Ctrl-C,
//! printing its API base URL first. Drive it with the control API described in
//! `agent_coord_tests::fake_github`.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

use agent_coord_tests::fake_github;

const USAGE: &str = "usage: fake-github --root DIR [--port N]";

/// Returns the root directory and port from the command line, or a message.
fn parse_args(mut args: impl Iterator<Item = String>) -> Result<(PathBuf, u16), String> {
    let mut root = None;
    let mut port = 0;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--root" => root = Some(PathBuf::from(args.next().ok_or("--root needs a value")?)),
            "--port" => {
                let value = args.next().ok_or("--port needs a value")?;
                port = value.parse().map_err(|_| format!("bad port {value:?}"))?;
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unexpected argument {other:?}")),
        }
    }
    Ok((root.ok_or("--root is required")?, port))
}

fn main() -> ExitCode {
    let (root, port) = match parse_args(std::env::args().skip(1)) {
        Ok(parsed) => parsed,
        Err(message) if message.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("error: {message}\n{USAGE}");
            return ExitCode::from(1);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: tokio runtime: {e}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(async move {
        let listening = match fake_github::bind(&root, port).await {
            Ok(listening) => listening,
            Err(e) => {
                eprintln!(
                    "error: cannot serve from {} on port {port}: {e}",
                    root.display()
                );
                return ExitCode::from(2);
            }
        };
        println!("{}", listening.url());
        tokio::select! {
            () = listening.serve() => ExitCode::SUCCESS,
            _ = tokio::signal::ctrl_c() => ExitCode::SUCCESS,
        }
    })
}
