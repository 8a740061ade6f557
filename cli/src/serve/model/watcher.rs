//! The ref watcher behind `/api/stream`: one thread for the server's life that reads the
//! refs every [`POLL`] and publishes their version when it moved; and the refresher, a
//! second one that re-derives a model only the clock made old (`Models::refresh_if_old`),
//! so that derivation never waits inside a request.

use std::time::Duration;

use super::models::Models;
use crate::command_error::CommandError;

/// How often the watcher reads the refs.
const POLL: Duration = Duration::from_millis(250);

/// How often the refresher looks at the model's age.
const REFRESH_POLL: Duration = Duration::from_millis(500);

/// Starts the watcher and the refresher. The repository is kept open on the watcher's thread: a poll is a read of the
/// refs, not a new repository handle and a blocking-pool task each time.
pub(crate) fn spawn(models: Models) -> Result<(), CommandError> {
    std::thread::Builder::new()
        .name("ref-watcher".into())
        .spawn({
            let models = models.clone();
            move || watch(&models)
        })
        .map_err(|e| CommandError::operational(format!("cannot start the ref watcher: {e}")))?;
    std::thread::Builder::new()
        .name("model-refresher".into())
        .spawn(move || loop {
            std::thread::sleep(REFRESH_POLL);
            models.refresh_if_old();
        })
        .map(drop)
        .map_err(|e| CommandError::operational(format!("cannot start the model refresher: {e}")))
}

/// Publishes the refs' version every [`POLL`], through one store opened once (tried again
/// until the repository can be opened).
fn watch(models: &Models) {
    let mut store = None;
    loop {
        if store.is_none() {
            store = models.store().ok();
        }
        if let Some(s) = &store {
            models.publish_version(s);
        }
        std::thread::sleep(POLL);
    }
}
