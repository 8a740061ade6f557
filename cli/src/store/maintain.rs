//! Keeping the object store packed: every write adds a few loose objects, and a read that
//! finds its records in thousands of loose files (one open and inflate each) is several
//! times slower than one that finds them in a pack. Writes count the loose objects and,
//! once enough new ones have piled up since the last packing, pack them with the git CLI
//! (`git repack -d`, then `git gc --auto` to consolidate packs), so nobody has to run git
//! by hand; `import` packs at once. A sync asks `git gc --auto` only when git's own
//! thresholds say it would find work ([`Store::gc_may_be_due`]).
//!
//! One packer at a time: packing holds a lock file in the git directory (`flock`, so a
//! killed packer never leaves it held). A write that finds another process packing leaves
//! the work to it and says nothing, and so does one whose `git gc` meets another `git gc`'s
//! lock; only a lock left far too long is worth a warning.

use std::fs::File;
use std::path::PathBuf;
use std::time::Duration;
use std::time::SystemTime;

use nix::fcntl::Flock;
use nix::fcntl::FlockArg;

use super::Store;
use crate::git_subprocess::Git;
use crate::git_subprocess::GitError;

/// New loose objects (about 170 writes' worth) past which a write packs them; the git
/// config key `agent-coord.looseObjectLimit` overrides it.
pub(crate) const DEFAULT_LOOSE_LIMIT: u64 = 1024;

/// The config key that overrides [`DEFAULT_LOOSE_LIMIT`].
const LIMIT_KEY: &str = "agent-coord.looseObjectLimit";

/// The file (in the git directory) holding how many loose objects the last packing left:
/// unreachable ones (replaced heartbeat commits) stay loose until `git gc` prunes them,
/// and must not make every later write pack again.
const BASELINE_FILE: &str = "agent-coord-loose-baseline";

/// The file (in the git directory) whose lock the one packer at a time holds.
const PACK_LOCK_FILE: &str = "agent-coord-pack.lock";

/// The lock `git gc` takes; the message of a gc that found it taken names it.
const GC_LOCK_FILE: &str = "gc.pid.lock";

/// How old a `git gc` lock may be before it counts as left behind (by a killed gc) rather
/// than held by a gc at work.
const GC_LOCK_STALE_AFTER: Duration = Duration::from_secs(3600);

/// Whether this process may pack.
enum PackLock {
    /// It holds the lock until this is dropped.
    Held { _lock: Flock<File> },
    /// Another process holds it: that one packs.
    Busy,
    /// The lock file cannot be used (a read-only git directory): pack unlocked.
    Unavailable,
}

impl Store {
    /// Returns the objects folder (of the common directory, for linked worktrees).
    fn objects_dir(&self) -> PathBuf {
        self.repo.common_dir().join("objects")
    }

    /// Estimates the loose objects, to within about an eighth at `limit`, from the first
    /// fan-out folders (objects spread evenly over all 256): as many folders as hold 64
    /// objects at the limit, all of them (an exact count) for a small limit. Reading all
    /// 256 folders would cost a claim a noticeable part of its few milliseconds.
    pub(crate) fn loose_objects(&self, limit: u64) -> u64 {
        let folders = (64 * 256 / limit.max(1)).clamp(1, 256);
        let objects = self.objects_dir();
        let seen: u64 = (0..folders)
            .filter_map(|b| std::fs::read_dir(objects.join(format!("{b:02x}"))).ok())
            .map(|dir| dir.count() as u64)
            .sum();
        seen * 256 / folders
    }

    /// Creates the 256 fan-out folders of the loose objects again (`git repack -d` removes
    /// the ones it empties). A new folder costs about as much as a new file, and the writes
    /// after a packing would otherwise create them one by one, most of them several per
    /// write; the packing write, already the slow one, creates them all at once instead.
    /// Best effort: a write creates a missing folder itself.
    fn restore_fan_out(&self) {
        let objects = self.objects_dir();
        for b in 0..=255u8 {
            let _ = std::fs::create_dir(objects.join(format!("{b:02x}")));
        }
    }

    /// Returns the configured limit of new loose objects.
    fn loose_limit(&self) -> u64 {
        self.repo
            .config_snapshot()
            .integer(LIMIT_KEY)
            .and_then(|n| u64::try_from(n).ok())
            .unwrap_or(DEFAULT_LOOSE_LIMIT)
    }

    fn baseline_path(&self) -> PathBuf {
        self.repo.common_dir().join(BASELINE_FILE)
    }

    /// Packs loose objects when more than the limit have appeared since the last packing;
    /// a failure is a warning (the write it follows has committed).
    pub(crate) fn keep_packed(&self) {
        let limit = self.loose_limit();
        let baseline = std::fs::read_to_string(self.baseline_path())
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or(0);
        if self.loose_objects(limit) <= baseline.saturating_add(limit) {
            return;
        }
        match self.pack_counting(limit, false) {
            Err(e) if !self.another_gc_runs(&e) => {
                self.warn(format!("warning: could not pack loose objects: {e}"));
            }
            _ => {}
        }
    }

    /// Packs the loose objects the refs reach and records what stays loose, waiting for
    /// another packer to finish first.
    pub(crate) fn pack(&self) -> Result<(), GitError> {
        self.pack_counting(self.loose_limit(), true)
    }

    /// Takes the packer's lock: waits for it when `wait`, else reports it busy.
    fn pack_lock(&self, wait: bool) -> PackLock {
        let path = self.repo.common_dir().join(PACK_LOCK_FILE);
        let Ok(file) = File::options().create(true).append(true).open(path) else {
            return PackLock::Unavailable;
        };
        let arg = if wait {
            FlockArg::LockExclusive
        } else {
            FlockArg::LockExclusiveNonblock
        };
        match Flock::lock(file, arg) {
            Ok(lock) => PackLock::Held { _lock: lock },
            Err((_, nix::errno::Errno::EWOULDBLOCK)) => PackLock::Busy,
            Err(_) => PackLock::Unavailable,
        }
    }

    /// Reports whether `e` says another `git gc` is at work (its lock is taken, and not
    /// so long ago that a killed gc must have left it).
    fn another_gc_runs(&self, e: &GitError) -> bool {
        let GitError::Failed { message, .. } = e else {
            return false;
        };
        if !message.contains(GC_LOCK_FILE) && !message.contains("already running") {
            return false;
        }
        let age = std::fs::metadata(self.repo.common_dir().join(GC_LOCK_FILE))
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok());
        // Gone by now (its gc finished), or recent: another packer, not a problem.
        age.is_none_or(|age| age < GC_LOCK_STALE_AFTER)
    }

    fn pack_counting(&self, limit: u64, wait: bool) -> Result<(), GitError> {
        let lock = self.pack_lock(wait);
        if matches!(lock, PackLock::Busy) {
            return Ok(());
        }
        Git::new(self.repo.git_dir()).pack_loose()?;
        self.restore_fan_out();
        // Best effort: without the file the next write simply checks against zero.
        let left = self.loose_objects(limit);
        let _ = std::fs::write(self.baseline_path(), format!("{left}\n"));
        drop(lock);
        Ok(())
    }
}

impl Store {
    /// Reports whether `git gc --auto` could find work, by git's own two tests: more loose
    /// objects than `gc.auto` (estimated from the files in `objects/17`, as git does) or more
    /// packs than `gc.autoPackLimit`. Most syncs find neither, and spare the process; an
    /// unreadable folder counts as due, so git decides.
    pub(crate) fn gc_may_be_due(&self) -> bool {
        let config = self.repo.config_snapshot();
        let auto = config.integer("gc.auto").unwrap_or(6700);
        let pack_limit = config.integer("gc.autoPackLimit").unwrap_or(50);
        if auto <= 0 {
            return false;
        }
        let objects = self.objects_dir();
        // A missing folder holds none; an unreadable one leaves the decision to git.
        let count =
            |dir: std::path::PathBuf, keep: &dyn Fn(&str) -> bool| match std::fs::read_dir(dir) {
                Ok(entries) => Some(
                    entries
                        .flatten()
                        .filter(|e| e.file_name().to_str().is_some_and(keep))
                        .count() as i64,
                ),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some(0),
                Err(_) => None,
            };
        let loose = count(objects.join("17"), &|name| {
            name.len() == 38 && name.bytes().all(|b| b.is_ascii_hexdigit())
        });
        let packs = count(objects.join("pack"), &|name| name.ends_with(".pack"));
        match (loose, packs) {
            (Some(loose), Some(packs)) => {
                loose > (auto + 255) / 256 || (pack_limit > 0 && packs > pack_limit)
            }
            _ => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open(dir: &std::path::Path) -> Store {
        super::super::open_for_test(dir)
    }

    fn set(dir: &std::path::Path, key: &str, value: &str) {
        let ok = std::process::Command::new("git")
            .arg("--git-dir")
            .arg(dir.join("state.git"))
            .args(["config", key, value])
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .status()
            .expect("git runs")
            .success();
        assert!(ok, "git config {key} {value}");
    }

    /// `git gc --auto` is spawned only when git's own tests could find work: loose objects
    /// past `gc.auto` (estimated from `objects/17`) or packs past `gc.autoPackLimit`.
    #[test]
    fn gc_is_asked_only_when_git_would_find_work() {
        let dir = tempfile::tempdir().expect("tempdir");
        let objects = dir.path().join("state.git/objects");
        assert!(!open(dir.path()).gc_may_be_due(), "a fresh repository");
        // The default gc.auto (6700) allows 27 loose objects in objects/17.
        std::fs::create_dir_all(objects.join("17")).expect("mkdir");
        for n in 0..27 {
            std::fs::write(objects.join("17").join(format!("{n:038x}")), b"").expect("write");
        }
        std::fs::write(objects.join("17").join("not-an-object"), b"").expect("write");
        assert!(!open(dir.path()).gc_may_be_due(), "27 loose objects");
        std::fs::write(objects.join("17").join(format!("{:038x}", 99)), b"").expect("write");
        assert!(open(dir.path()).gc_may_be_due(), "28 loose objects");
        set(dir.path(), "gc.auto", "0");
        assert!(!open(dir.path()).gc_may_be_due(), "gc.auto 0 turns it off");
        set(dir.path(), "gc.auto", "100000");
        set(dir.path(), "gc.autoPackLimit", "2");
        for n in 0..2 {
            std::fs::write(objects.join("pack").join(format!("pack-{n}.pack")), b"")
                .expect("write");
        }
        assert!(!open(dir.path()).gc_may_be_due(), "two packs");
        std::fs::write(objects.join("pack").join("pack-2.pack"), b"").expect("write");
        assert!(open(dir.path()).gc_may_be_due(), "three packs");
    }
}
