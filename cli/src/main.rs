//! The `agent-coord` binary: everything lives in the library; this only runs it.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    agent_coord::run(std::env::args_os())
}
