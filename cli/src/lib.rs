//! The `agent-coord` command line: parses arguments, opens the git store, runs the pure
//! rules from `agent-coord-shared` and prints their outcome.
#![forbid(unsafe_code)]

mod command_error;
mod commands;
mod context;
mod coordinator;
mod demo;
mod git_subprocess;
mod github;
mod lanes;
mod logging;
mod output;
mod past;
mod phase;
mod process;
mod progress;
mod serve;
mod store;
mod sync;
mod transact;

use std::ffi::OsString;
use std::process::ExitCode;

/// Runs the CLI with `args` (including the program name) and returns the exit code.
pub fn run(args: impl IntoIterator<Item = OsString>) -> ExitCode {
    phase::start();
    output::finish(commands::dispatch(args))
}
