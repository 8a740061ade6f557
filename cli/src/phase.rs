//! Where a command's time goes: with `AGENT_COORD_PHASES=1` in the environment the process
//! notes the wall-clock moment each phase of its work ends (parse, open, read, write, …) and
//! prints them on one stderr line as it exits, for `bench` to set beside the whole process's
//! time (the difference is process start and exit). Unset, a mark costs one atomic load.

use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::SystemTime;

/// The variable that turns the marks on.
const VARIABLE: &str = "AGENT_COORD_PHASES";

static ON: AtomicBool = AtomicBool::new(false);
static MARKS: Mutex<Vec<(&'static str, SystemTime)>> = Mutex::new(Vec::new());

/// Starts noting phases if the environment asks for it; the first mark is `main`.
pub(crate) fn start() {
    if std::env::var_os(VARIABLE).is_some_and(|v| v == "1") {
        ON.store(true, Ordering::Relaxed);
        mark("main");
    }
}

/// Notes that the phase `name` ended now.
pub(crate) fn mark(name: &'static str) {
    if !ON.load(Ordering::Relaxed) {
        return;
    }
    if let Ok(mut marks) = MARKS.lock() {
        marks.push((name, SystemTime::now()));
    }
}

/// Returns the line to print at exit: `agent-coord phases: main=<µs since the epoch>
/// parse=<µs> open=<µs> …`, each phase's end in microseconds since the Unix epoch; `None`
/// when phases are off.
pub(crate) fn line() -> Option<String> {
    if !ON.load(Ordering::Relaxed) {
        return None;
    }
    let marks = MARKS.lock().ok()?;
    let micros = |t: &SystemTime| {
        t.duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros())
    };
    let fields: Vec<String> = marks
        .iter()
        .map(|(name, t)| format!("{name}={}", micros(t)))
        .collect();
    Some(format!("agent-coord phases: {}", fields.join(" ")))
}
