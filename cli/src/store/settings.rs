//! The dashboard's saved target repositories, kept with this machine's other settings in
//! the coordination repository's git config (`agent-coord.targetRepos`, one comma-separated
//! value, as `agent-coord.machineId` and `agent-coord.remote` are kept there).
//!
//! Read fresh from the file (an open repository's config snapshot would not see a later
//! write) and written under git's own lock, like the machine id.

use agent_coord_shared::dashboard::scope::settings;

use super::Store;
use super::StoreError;

const SECTION: &str = "agent-coord";
const KEY: &str = "targetRepos";

/// Returns the saved target repositories (`None` when nothing is saved); an unusable value
/// is an error naming the key and how to repair it, never an empty scope.
pub(crate) fn saved_target_repos(store: &Store) -> Result<Option<Vec<String>>, StoreError> {
    let path = store.repo.git_dir().join("config");
    let file = gix::config::File::from_path_no_includes(path.clone(), gix::config::Source::Local)
        .map_err(|e| StoreError::Config(format!("cannot read {}: {e}", path.display())))?;
    let Some(raw) = file.string(format!("{SECTION}.{KEY}").as_str()) else {
        return Ok(None);
    };
    let raw = raw.to_string();
    settings::normalize_text(&raw).map(Some).map_err(|e| {
        StoreError::Config(format!(
            "Could not read dashboard settings at {} ({SECTION}.{KEY} = {raw:?}): {e} \
             Set it with `git config {SECTION}.{KEY} owner/repo,...` or remove it.",
            path.display()
        ))
    })
}

/// Saves `repos` (already normalised) as the target repositories.
pub(crate) fn save_target_repos(store: &Store, repos: &[String]) -> Result<(), StoreError> {
    let path = store.repo.git_dir().join("config");
    let mut lock = gix::lock::File::acquire_to_update_resource(
        &path,
        gix::lock::acquire::Fail::AfterDurationWithBackoff(std::time::Duration::from_secs(5)),
        None,
        0o644,
    )
    .map_err(|e| StoreError::Config(format!("cannot lock {}: {e}", path.display())))?;
    let mut file =
        gix::config::File::from_path_no_includes(path.clone(), gix::config::Source::Local)
            .map_err(|e| StoreError::Config(format!("cannot read {}: {e}", path.display())))?;
    file.set_raw_value_by(SECTION, None, KEY, repos.join(",").as_str())
        .map_err(|e| StoreError::Config(format!("cannot set {SECTION}.{KEY}: {e}")))?;
    file.write_to(&mut lock)
        .map_err(|e| StoreError::Config(format!("cannot write {}: {e}", path.display())))?;
    lock.commit()
        .map_err(|e| StoreError::Config(format!("cannot write {}: {e}", path.display())))?;
    Ok(())
}
