//! `fake-vendor claude|codex|gemini|grok --dir DIR --delay SECONDS -- ARGV...`: a stand-in for a
//! vendor CLI that replays the vendor's event stream for a scripted lane
//! (`agent_coord_tests::fake_vendor`); `coordinator-demo` points `AGENT_COORD_<VENDOR>_BIN` at
//! wrappers that run it.
#![forbid(unsafe_code)]

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    ExitCode::from(agent_coord_tests::fake_vendor::main(&args))
}
