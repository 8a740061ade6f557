//! The last model a server derived, kept on disk so that the next start has a first view
//! without waiting for a whole derivation (issue 22: at scale 100 reading and deriving take
//! seconds; parsing the saved model takes a fraction of one).
//!
//! The file is `<git dir>/agent-coord-dashboard-model.json`: this machine's, never committed
//! or pushed. It names the format, the binary's version, the state tip and the scope it was
//! derived from. A start uses it only on the same state tip and scope, and only when it was
//! derived at most [`FRESH_ENOUGH`] seconds before (liveness moves with the clock and the
//! heartbeats, so a restored view is at most that far behind). A file another format or
//! binary wrote, or that does not parse, is ignored. A restored model is only a first view: it is marked
//! ([`DashboardModel::restored`]), its version carries [`RESTORED_SUFFIX`] so the page takes
//! the derived one when the server announces it, and the server derives at once.
//!
//! [`DashboardModel::restored`]: agent_coord_shared::dashboard::model::DashboardModel::restored

use std::io::Write as _;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::sync::Mutex;
use std::time::Duration;
use std::time::Instant as StdInstant;

use agent_coord_shared::dashboard::model::DashboardModel;
use agent_coord_shared::time;
use agent_coord_shared::time::Instant;
use gix::ObjectId;
use serde::Deserialize;
use serde::Serialize;

use crate::store::Store;

/// The file, in the repository's common git directory.
const FILE: &str = "agent-coord-dashboard-model.json";
/// Bumped whenever what the file holds changes meaning.
const FORMAT: u32 = 1;
/// How old (seconds) a restored model may be.
const FRESH_ENOUGH: i64 = 120;
/// A model is saved at most this often while the state moves.
const SAVE_EVERY: Duration = Duration::from_secs(60);
/// How long a stop waits for a save already running.
const STOP_WAIT: Duration = Duration::from_secs(10);
/// Appended to a restored model's version: the derived model's differs, so the page loads it.
pub(crate) const RESTORED_SUFFIX: &str = ".restored";

/// The file's content: what it was derived from, and the model.
#[derive(Serialize, Deserialize)]
struct Saved<M> {
    format: u32,
    binary: String,
    state: Option<String>,
    scope: String,
    model: M,
}

/// What a model is derived from, as the file names it.
pub(crate) struct Key<'k> {
    pub(crate) state: Option<ObjectId>,
    pub(crate) scope_id: &'k str,
}

fn path(store: &Store) -> PathBuf {
    store.repo.common_dir().join(FILE)
}

/// Returns the saved model, marked as restored, when this format and binary derived it from
/// `key`'s state tip and scope at most [`FRESH_ENOUGH`] seconds before `now`; else `None`
/// (nothing saved, or not usable).
pub(crate) fn load(store: &Store, key: &Key<'_>, now: Instant) -> Option<DashboardModel> {
    let bytes = std::fs::read(path(store)).ok()?;
    let saved: Saved<DashboardModel> = match serde_json::from_slice(&bytes) {
        Ok(saved) => saved,
        Err(e) => {
            tracing::info!(error = %e, "the saved dashboard model does not parse; deriving");
            return None;
        }
    };
    let age = time::parse(&saved.model.generated_at).map(|t| (now - t).num_seconds());
    let usable = saved.format == FORMAT
        && saved.binary == env!("CARGO_PKG_VERSION")
        && saved.state == key.state.map(|s| s.to_string())
        && saved.scope == key.scope_id
        && age.is_some_and(|a| (0..=FRESH_ENOUGH).contains(&a));
    if !usable {
        return None;
    }
    let mut model = saved.model;
    model.restored = Some(format!(
        "Shown from the model this machine derived at {}; the current one is being derived and replaces it in a moment.",
        model.generated_at
    ));
    model.version.push_str(RESTORED_SUFFIX);
    Some(model)
}

/// Saves `model` (derived from `key`), replacing the file whole: written beside it, then
/// renamed over it.
pub(crate) fn save(store: &Store, key: &Key<'_>, model: &DashboardModel) -> std::io::Result<()> {
    let path = path(store);
    let tmp = path.with_extension(format!("json.{}.tmp", std::process::id()));
    let saved = Saved {
        format: FORMAT,
        binary: env!("CARGO_PKG_VERSION").to_owned(),
        state: key.state.map(|s| s.to_string()),
        scope: key.scope_id.to_owned(),
        model,
    };
    let written = std::fs::File::create(&tmp).and_then(|file| {
        let mut out = std::io::BufWriter::new(file);
        serde_json::to_writer(&mut out, &saved)?;
        out.flush()?;
        out.into_inner().map_err(|e| e.into_error())?.sync_all()
    });
    match written.and_then(|()| std::fs::rename(&tmp, &path)) {
        Ok(()) => Ok(()),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}

/// When a run saves its model: at its first full derivation, then at most every
/// [`SAVE_EVERY`] while the state moves (in the background), and at a graceful stop; one
/// save at a time.
#[derive(Default)]
pub(crate) struct Saver {
    /// When the last save started, and the state tip of the model it saved.
    saved: Mutex<Option<(StdInstant, Option<ObjectId>)>>,
    /// Whether a save is running.
    saving: Arc<AtomicBool>,
}

impl Saver {
    /// Saves `model` (derived from scratch from `state`) on a thread of its own, when none
    /// was saved yet or the state moved at least [`SAVE_EVERY`] after the last save, and no
    /// save is running.
    pub(crate) fn save_if_due(
        &self,
        store: Store,
        state: Option<ObjectId>,
        scope_id: String,
        model: Arc<DashboardModel>,
    ) {
        let Ok(mut saved) = self.saved.lock() else {
            return;
        };
        let due = match *saved {
            None => true,
            Some((at, last)) => last != state && at.elapsed() >= SAVE_EVERY,
        };
        if !due || self.saving.swap(true, Ordering::AcqRel) {
            return;
        }
        *saved = Some((StdInstant::now(), state));
        let saving = self.saving.clone();
        let spawned = std::thread::Builder::new()
            .name("model-save".into())
            .spawn(move || {
                write(&store, state, &scope_id, &model);
                saving.store(false, Ordering::Release);
            });
        if spawned.is_err() {
            self.saving.store(false, Ordering::Release);
        }
    }

    /// Saves `model` now (a graceful stop), unless the model saved last has its state tip;
    /// a save already running finishes first (waited for at most [`STOP_WAIT`]).
    pub(crate) fn save_now(
        &self,
        store: &Store,
        state: Option<ObjectId>,
        scope_id: &str,
        model: &DashboardModel,
    ) {
        let last = self.saved.lock().ok().and_then(|s| s.map(|(_, last)| last));
        if last == Some(state) {
            return;
        }
        let started = StdInstant::now();
        while self.saving.swap(true, Ordering::AcqRel) {
            if started.elapsed() > STOP_WAIT {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        write(store, state, scope_id, model);
        self.saving.store(false, Ordering::Release);
    }
}

/// [`save`], a failure logged (the next start derives instead).
fn write(store: &Store, state: Option<ObjectId>, scope_id: &str, model: &DashboardModel) {
    let key = Key { state, scope_id };
    if let Err(e) = save(store, &key, model) {
        tracing::warn!(error = %e, "cannot save the dashboard model for the next start");
    }
}
