//! One output stream of a child read on its own thread: the first bytes up to a bound are
//! kept, the rest is drained (so the child never blocks on a full pipe) and counted.

use std::io::Read;
use std::sync::mpsc;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Instant;

/// When a child last wrote to any of its captured streams (shared by them): what stall
/// detection watches.
#[derive(Clone)]
pub(crate) struct Activity(Arc<Mutex<Instant>>);

impl Activity {
    /// Starts the clock now.
    pub(crate) fn start() -> Activity {
        Activity(Arc::new(Mutex::new(Instant::now())))
    }

    /// Records output now.
    pub(crate) fn touch(&self) {
        *self.0.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
    }

    /// When the child last wrote anything (or started).
    pub(crate) fn last(&self) -> Instant {
        *self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A stream being read: [`Capture::finish`] returns what was kept.
pub(crate) struct Capture {
    state: Arc<Mutex<Captured>>,
    done: mpsc::Receiver<()>,
}

#[derive(Default)]
struct Captured {
    kept: Vec<u8>,
    total: usize,
}

impl Capture {
    /// Starts reading `pipe`, keeping its first `max` bytes; every read touches `activity`.
    pub(crate) fn start(
        mut pipe: impl Read + Send + 'static,
        max: usize,
        activity: Activity,
    ) -> Self {
        let state = Arc::new(Mutex::new(Captured::default()));
        let (tx, done) = mpsc::channel();
        let shared = Arc::clone(&state);
        std::thread::spawn(move || {
            let mut buf = [0u8; 16 * 1024];
            loop {
                match pipe.read(&mut buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        activity.touch();
                        let mut s = shared.lock().unwrap_or_else(|e| e.into_inner());
                        let room = max.saturating_sub(s.kept.len()).min(n);
                        s.kept.extend_from_slice(&buf[..room]);
                        s.total = s.total.saturating_add(n);
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                }
            }
            let _ = tx.send(());
        });
        Capture { state, done }
    }

    /// Returns what was kept (lossy UTF-8) and whether anything was dropped, waiting for the
    /// stream to close until `deadline` at most.
    pub(crate) fn finish(self, deadline: Instant) -> (String, bool) {
        let _ = self
            .done
            .recv_timeout(deadline.saturating_duration_since(Instant::now()));
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        (
            String::from_utf8_lossy(&s.kept).into_owned(),
            s.total > s.kept.len(),
        )
    }
}
