//! The machine id: configured by the environment, or generated once per repository and
//! kept in its git config (`agent-coord.machineId`).

use std::str::FromStr;

use agent_coord_shared::ids::MachineId;

use super::StoreError;

const SECTION: &str = "agent-coord";
const KEY: &str = "machineId";

fn read(repo: &gix::Repository) -> Option<String> {
    let path = repo.git_dir().join("config");
    let file = gix::config::File::from_path_no_includes(path, gix::config::Source::Local).ok()?;
    file.string(format!("{SECTION}.{KEY}").as_str())
        .map(|v| v.to_string())
}

/// Returns the stored machine id, generating and storing one on first use.
///
/// The config file is rewritten under git's own lock (`config.lock`), re-read inside the
/// lock, so two processes starting at once agree on one id.
pub(super) fn stored_or_generated(repo: &gix::Repository) -> Result<MachineId, StoreError> {
    if let Some(id) = read(repo) {
        return parse(&id);
    }
    let path = repo.git_dir().join("config");
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
    if let Some(id) = file.string(format!("{SECTION}.{KEY}").as_str()) {
        return parse(&id.to_string());
    }
    let id = generate();
    file.set_raw_value_by(SECTION, None, KEY, id.as_str())
        .map_err(|e| StoreError::Config(format!("cannot set machine id: {e}")))?;
    file.write_to(&mut lock)
        .map_err(|e| StoreError::Config(format!("cannot write {}: {e}", path.display())))?;
    lock.commit()
        .map_err(|e| StoreError::Config(format!("cannot write {}: {e}", path.display())))?;
    parse(&id)
}

/// Returns the stored machine id, if any.
pub(super) fn stored(repo: &gix::Repository) -> Result<Option<MachineId>, StoreError> {
    read(repo).map(|id| parse(&id)).transpose()
}

/// Returns the id shown by read-only commands before any write generated one.
pub(super) fn placeholder() -> MachineId {
    MachineId::from_str("unset").unwrap_or_else(|_| unreachable!("'unset' is a valid machine id"))
}

fn parse(id: &str) -> Result<MachineId, StoreError> {
    id.parse()
        .map_err(|e| StoreError::Config(format!("stored agent-coord.machineId is unusable: {e}")))
}

/// Returns `<hostname>-<6 hex>`: recognisable, and unique per clone even on one host.
fn generate() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .unwrap_or_default();
    let host: String = host
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .take(24)
        .collect();
    let host = host.trim_matches('-');
    let host = if host.is_empty() { "machine" } else { host };
    format!("{host}-{:06x}", fastrand::u32(..0x100_0000))
}
