//! The lanes this machine's coordinators started and have not collected yet: one file per
//! start (the lanes of one phase) at `<control dir>/running/<nonce>.json`, written after
//! they were launched and removed when their task collects them. It is what the slot caps
//! count, what `--wait` and `--follow` watch for a lane's end, and it never leaves the
//! machine (the task checkpoint's `pending.launch` is the replicated record).

use std::collections::BTreeMap;
use std::collections::BTreeSet;
use std::path::Path;
use std::path::PathBuf;

use agent_coord_shared::coordinator::config::CoordinatorConfig;
use agent_coord_shared::coordinator::slots::InUse;
use serde::Deserialize;
use serde::Serialize;

use super::preflight::control_dir;
use crate::lanes::supervisor;
use crate::lanes::supervisor::LaneState;

/// One start: whose lanes, and where each leaves its result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Entry {
    pub(crate) worker: String,
    pub(crate) task_id: String,
    pub(crate) repo: String,
    pub(crate) issue: u64,
    pub(crate) lanes: Vec<EntryLane>,
}

/// One lane of a start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct EntryLane {
    pub(crate) slot: String,
    /// The adapter's vendor, when the lane is an adapter (what `max_vendor_lanes` counts).
    pub(crate) vendor: Option<String>,
    pub(crate) result: PathBuf,
    pub(crate) pid: PathBuf,
}

impl Entry {
    /// The lanes of this start that have not ended yet.
    fn unfinished(&self) -> impl Iterator<Item = &EntryLane> {
        self.lanes.iter().filter(|l| !l.result.exists())
    }
}

fn dir(control: &Path) -> PathBuf {
    control.join("running")
}

/// Records a start (a failure only loses the caps' count of it until it is collected).
pub(crate) fn record(control: &Path, nonce: &str, entry: &Entry) -> std::io::Result<()> {
    let dir = dir(control);
    std::fs::create_dir_all(&dir)?;
    let text = serde_json::to_vec(entry).unwrap_or_default();
    std::fs::write(dir.join(format!("{nonce}.json")), text)
}

/// Forgets a start once its task collected it.
pub(crate) fn remove(control: &Path, nonce: &str) {
    let _ = std::fs::remove_file(dir(control).join(format!("{nonce}.json")));
}

/// Every start recorded under `control`, by nonce (an unreadable file is skipped).
pub(crate) fn entries(control: &Path) -> Vec<(String, Entry)> {
    let Ok(read) = std::fs::read_dir(dir(control)) else {
        return Vec::new();
    };
    let mut out: Vec<(String, Entry)> = read
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let nonce = name.strip_suffix(".json")?.to_owned();
            let entry = serde_json::from_slice(&std::fs::read(e.path()).ok()?).ok()?;
            Some((nonce, entry))
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The lanes running now that count against `worker_id`'s caps: its own (in all and by
/// vendor) and every configured worker's on this machine.
pub(crate) fn in_use(config: &CoordinatorConfig, worker_id: &str) -> InUse {
    let dirs: BTreeSet<PathBuf> = config.workers.values().map(control_dir).collect();
    let mut in_use = InUse::default();
    let mut vendor: BTreeMap<String, u64> = BTreeMap::new();
    for control in dirs {
        for (_, entry) in entries(&control) {
            let mine = entry.worker == worker_id;
            for lane in entry.unfinished() {
                in_use.machine += 1;
                if mine {
                    in_use.worker += 1;
                    if let Some(v) = &lane.vendor {
                        *vendor.entry(v.clone()).or_default() += 1;
                    }
                }
            }
        }
    }
    in_use.vendor = vendor;
    in_use
}

/// The starts of `worker_id` whose task can be advanced now: every lane ended, or one can
/// no longer be found (the task then records the outcome as unknown).
pub(crate) fn settled(control: &Path, worker_id: &str) -> (Vec<(String, Entry)>, usize) {
    let mut settled = Vec::new();
    let mut running = 0;
    for (nonce, entry) in entries(control) {
        if entry.worker != worker_id {
            continue;
        }
        let still = entry.lanes.iter().any(|l| {
            matches!(
                supervisor::state(&l.result, &l.pid, &nonce),
                LaneState::Running
            )
        });
        if still {
            running += 1;
        } else {
            settled.push((nonce, entry));
        }
    }
    (settled, running)
}

/// Whether a start of `worker_id` under `control` is ready to be collected (what wakes a
/// `--follow` loop before its next poll).
pub(crate) fn any_settled(control: &Path, worker_id: &str) -> bool {
    !settled(control, worker_id).0.is_empty()
}
