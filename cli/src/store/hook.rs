//! A test hook that holds a writer at a named point so an end-to-end test can interleave
//! another process there deterministically (no sleeps, no timing).
//!
//! With `AGENT_COORD_TEST_HOLD_AT=<point>` and `AGENT_COORD_TEST_HOLD_DIR=<dir>`, a writer
//! reaching `<point>` creates `<dir>/<point>.held` and waits until `<dir>/<point>.go` exists
//! (at most [`LIMIT`], so a broken test cannot hang a process forever). Points: `decided`
//! (a write's first decision is made, its commit not yet attempted). Unset, it costs one
//! environment lookup.

use std::path::PathBuf;
use std::time::Duration;
use std::time::Instant;

/// The variable naming the point to hold at.
const HOLD_AT: &str = "AGENT_COORD_TEST_HOLD_AT";
/// The variable naming the folder of the `.held` and `.go` files.
const HOLD_DIR: &str = "AGENT_COORD_TEST_HOLD_DIR";
/// The longest a writer waits to be let go.
const LIMIT: Duration = Duration::from_secs(60);

/// Waits here if the test hook names this point.
pub(super) fn hold(point: &str) {
    if std::env::var(HOLD_AT).ok().as_deref() != Some(point) {
        return;
    }
    let Some(dir) = std::env::var_os(HOLD_DIR).map(PathBuf::from) else {
        return;
    };
    if std::fs::write(dir.join(format!("{point}.held")), b"").is_err() {
        return;
    }
    let go = dir.join(format!("{point}.go"));
    let start = Instant::now();
    while !go.exists() && start.elapsed() < LIMIT {
        std::thread::sleep(Duration::from_millis(5));
    }
}
