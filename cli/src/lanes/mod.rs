//! What `agent-coord lane` needs besides its pure rules (`agent_coord_shared::coordinator::lane`):
//! a streaming runner for the vendor CLI and the bounded, redacted transcript its events go to.

pub(crate) mod runner;
pub(crate) mod supervisor;
pub(crate) mod transcript;

/// The variable through which the coordinator names a lane's transcript file: `agent-coord
/// lane` writes there when `--transcript` is not given, and the coordinator watches it grow
/// (a lane whose transcript grows is not stalled).
pub(crate) const TRANSCRIPT_ENV: &str = "AGENT_COORD_LANE_TRANSCRIPT";

/// Finds a vendor's CLI: `AGENT_COORD_<VENDOR>_BIN` when set, else the vendor's program on
/// `PATH` (an executable file).
pub(crate) fn find_vendor(
    vendor: agent_coord_shared::coordinator::lane::Vendor,
) -> Option<std::path::PathBuf> {
    if let Some(bin) = std::env::var_os(vendor.bin_variable()).filter(|b| !b.is_empty()) {
        return Some(bin.into());
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(vendor.program()))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &std::path::Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
