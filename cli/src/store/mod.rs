//! The git store: the coordination state as commits on a branch, written with gix.
//!
//! The state branch's tip tree is the current state and its history the audit log; each
//! machine's heartbeats live on their own parentless-commit ref. Writes never touch a
//! working tree or index and never spawn `git`.

use std::path::Path;
use std::path::PathBuf;

use agent_coord_shared::ids::MachineId;
use agent_coord_shared::serde_name::serde_name;
use agent_coord_shared::snapshot::ReadError;

mod cas;
mod fence;
pub(crate) mod history;
mod hook;
mod loose;
mod machine;
pub(crate) mod maintain;
mod parallel;
pub(crate) mod read;
pub(crate) mod settings;
pub(crate) mod tree;
pub(crate) mod write;

pub(crate) use read::TipSnapshot;

/// The default state branch.
pub(crate) const DEFAULT_REF: &str = "refs/heads/agent-coord";
/// Where machines' heartbeat refs live.
pub(crate) const HEARTBEAT_PREFIX: &str = "refs/agent-coord/heartbeats/";
/// Where fetched copies of a remote's refs live (`<remote>/state`, `<remote>/heartbeats/<m>`).
pub(crate) const REMOTES_PREFIX: &str = "refs/agent-coord/remotes/";

/// Returns the ref-safe name under which a remote's refs are tracked: a configured remote
/// name as is, a URL or path as `url-<16 hex>` of a stable hash (FNV-1a) of it.
pub(crate) fn tracking_name(remote: &str) -> String {
    let plain = !remote.is_empty()
        && remote
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'))
        && !remote.ends_with(".lock");
    if plain {
        return remote.to_owned();
    }
    let hash = remote.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("url-{hash:016x}")
}

/// Returns the tracking ref of a remote's state branch.
pub(crate) fn tracking_state_ref(remote: &str) -> String {
    format!("{REMOTES_PREFIX}{}/state", tracking_name(remote))
}

/// Returns the tracking-ref prefix of a remote's heartbeat refs.
pub(crate) fn tracking_heartbeat_prefix(remote: &str) -> String {
    format!("{REMOTES_PREFIX}{}/heartbeats/", tracking_name(remote))
}

/// The error behind a [`StoreError`]: gix's, the file system's, or a sentence of ours.
pub(crate) type Cause = Box<dyn std::error::Error + Send + Sync>;

/// Why the store could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StoreError {
    /// The repository could not be opened or created.
    #[error("cannot open coordination repository at {path}: {source}")]
    Open {
        /// The repository path.
        path: PathBuf,
        /// What gix (or the file system) said.
        #[source]
        source: Cause,
    },
    /// A git object or ref operation failed.
    #[error("git store error: {source}")]
    Git {
        /// What gix said (or what we found wrong).
        #[source]
        source: Cause,
    },
    /// The CAS kept failing because other writers kept moving the refs.
    #[error("write contention: the state changed {attempts} times while writing; nothing was written, try again")]
    Contention {
        /// How many attempts were made.
        attempts: u32,
    },
    /// A record could not be read.
    #[error(transparent)]
    Unreadable(#[from] ReadError),
    /// A ref stayed locked: another writer is stuck, or a killed one left its lock behind.
    #[error("the state is locked by {} (held too long); if no agent-coord or git process is writing, remove it", locks.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    Locked {
        /// The lock files.
        locks: Vec<PathBuf>,
    },
    /// A write would put a file where the state tree has a folder, or a folder where it
    /// has a file; gix's tree editor would silently delete what is there.
    #[error("cannot write {path}: the state tree has a {found} at {at} where a {wanted} belongs; nothing was written and the {found} is kept (move it aside to continue)")]
    Shape {
        /// The path the write was for.
        path: String,
        /// The path of the entry in the way.
        at: String,
        /// What is there: `file` or `folder`.
        found: &'static str,
        /// What the write needs there.
        wanted: &'static str,
    },
    /// The ref name or machine id is unusable.
    #[error("{0}")]
    Config(String),
    /// The file system holding the repository is full.
    #[error("no space left on the disk holding the coordination repository ({detail}); nothing was written: free some space and run the command again")]
    DiskFull {
        /// What failed.
        detail: String,
    },
    /// The repository cannot be written from here.
    #[error("the coordination repository cannot be written here ({detail}); nothing was written: make it writable, or use another --repo-dir")]
    ReadOnly {
        /// What failed.
        detail: String,
    },
}

impl StoreError {
    /// Returns a git error caused by `e` (an error, kept as the source, or a sentence); a
    /// full or read-only file system anywhere in its causes gets its own sentence.
    pub(crate) fn git(e: impl Into<Cause>) -> Self {
        let source = e.into();
        match io_cause(source.as_ref()) {
            Some(IoCause::Full) => StoreError::DiskFull {
                detail: source.to_string(),
            },
            Some(IoCause::ReadOnly) => StoreError::ReadOnly {
                detail: source.to_string(),
            },
            None => StoreError::Git { source },
        }
    }
}

/// A file-system condition a user must fix, found among an error's causes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IoCause {
    Full,
    ReadOnly,
}

/// `ENOSPC`/`EDQUOT` and `EROFS`/`EACCES`, by OS error number, across the cause chain.
fn io_cause(e: &(dyn std::error::Error + 'static)) -> Option<IoCause> {
    let mut current = Some(e);
    while let Some(err) = current {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            match io.raw_os_error() {
                Some(code) if code == nix::libc::ENOSPC || code == nix::libc::EDQUOT => {
                    return Some(IoCause::Full)
                }
                Some(code) if code == nix::libc::EROFS || code == nix::libc::EACCES => {
                    return Some(IoCause::ReadOnly)
                }
                _ => {}
            }
            match io.kind() {
                std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded => {
                    return Some(IoCause::Full)
                }
                std::io::ErrorKind::ReadOnlyFilesystem | std::io::ErrorKind::PermissionDenied => {
                    return Some(IoCause::ReadOnly)
                }
                _ => {}
            }
        }
        current = err.source();
    }
    None
}

/// An open coordination repository.
pub(crate) struct Store {
    pub(crate) repo: gix::Repository,
    pub(crate) state_ref: String,
    pub(crate) machine: MachineId,
    pub(crate) machine_source: MachineSource,
    pub(crate) path: PathBuf,
    warnings: std::cell::RefCell<Vec<String>>,
    /// Counts the blobs tree writes write (hidden unless a long command shows it).
    written: indicatif::ProgressBar,
    /// The commit time in Unix seconds when the clock is pinned (`AGENT_COORD_NOW`), so a
    /// replayed scenario's history carries the scenario's times; `None`: the system clock.
    pub(crate) clock: Option<i64>,
}

/// An open repository that threads share; each thread works on its own [`Store`] from
/// [`SharedStore::local`], which costs no reopening.
pub(crate) struct SharedStore {
    repo: gix::ThreadSafeRepository,
    state_ref: String,
    machine: MachineId,
    machine_source: MachineSource,
    path: PathBuf,
    clock: Option<i64>,
}

impl SharedStore {
    /// Returns a store for this thread on the shared repository.
    pub(crate) fn local(&self) -> Store {
        Store {
            repo: self.repo.to_thread_local(),
            state_ref: self.state_ref.clone(),
            machine: self.machine.clone(),
            machine_source: self.machine_source,
            path: self.path.clone(),
            warnings: Default::default(),
            written: indicatif::ProgressBar::hidden(),
            clock: self.clock,
        }
    }
}

/// Options for opening the store.
pub(crate) struct OpenOptions<'a> {
    /// The repository to open (created if it is the zero-config default and missing).
    pub(crate) path: &'a Path,
    /// Whether a missing repository may be created (bare).
    pub(crate) create: bool,
    /// The state ref (full name).
    pub(crate) state_ref: String,
    /// A machine id from the environment, overriding the stored one.
    pub(crate) machine_override: Option<String>,
    /// Whether a missing machine id may be generated (writes do; reads stay read-only).
    pub(crate) generate_machine: bool,
}

/// Opens (creating it) the bare repository `state.git` in `dir` as machine `m1`: the store
/// unit tests work on.
#[cfg(test)]
pub(crate) fn open_for_test(dir: &Path) -> Store {
    Store::open(OpenOptions {
        path: &dir.join("state.git"),
        create: true,
        state_ref: DEFAULT_REF.to_owned(),
        machine_override: Some("m1".to_owned()),
        generate_machine: true,
    })
    .expect("open store")
}

/// Where the machine id came from (its name: `doctor --json`'s `machine_id_source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum MachineSource {
    /// `AGENT_COORD_MACHINE_ID`.
    Env,
    /// The repository's `agent-coord.machineId` config.
    #[serde(rename = "repository_config")]
    Stored,
    /// Not configured yet (a read-only open; the first write generates one).
    Unset,
}

impl MachineSource {
    pub(crate) fn as_str(self) -> &'static str {
        serde_name(&self)
    }
}

impl Store {
    /// Opens (and if allowed creates) the repository and resolves the machine id.
    pub(crate) fn open(opts: OpenOptions<'_>) -> Result<Store, StoreError> {
        let open_err = |e: Cause| StoreError::Open {
            path: opts.path.to_path_buf(),
            source: e,
        };
        if !opts.path.exists() {
            if !opts.create {
                return Err(open_err(
                    "no such repository (pass an existing clone or bare repository)".into(),
                ));
            }
            std::fs::create_dir_all(opts.path).map_err(|e| open_err(e.into()))?;
            gix::init_bare(opts.path).map_err(|e| open_err(e.into()))?;
        }
        let options = gix::open::Options::isolated()
            .config_overrides([
                "user.name=agent-coord",
                "user.email=agent-coord@localhost",
                "core.filesRefLockTimeout=2000",
                // Records are small and deltify well once packed: cache delta bases so a full
                // read inflates each chain once, not once per record.
                "core.deltaBaseCacheLimit=8m",
            ])
            // Room for the packs other processes add while this one runs: every write may pack
            // (`maintain.rs`), each new pack takes an index slot when this process next looks,
            // and gix's default (10 % over the packs present at open) ran out under sixteen
            // concurrent writers ("too few index slots").
            .object_store_slots(gix::odb::store::init::Slots::AsNeededByDiskState {
                multiplier: 2.0,
                minimum: 256,
            });
        let repo = gix::open_opts(opts.path, options).map_err(|e| open_err(e.into()))?;
        gix::refs::FullName::try_from(opts.state_ref.as_str())
            .map_err(|_| StoreError::Config(format!("invalid state ref: {}", opts.state_ref)))?;
        let (machine, machine_source) = match opts.machine_override {
            Some(m) => (
                m.parse()
                    .map_err(|e| StoreError::Config(format!("AGENT_COORD_MACHINE_ID: {e}")))?,
                MachineSource::Env,
            ),
            None => match machine::stored(&repo)? {
                Some(id) => (id, MachineSource::Stored),
                None if opts.generate_machine => {
                    (machine::stored_or_generated(&repo)?, MachineSource::Stored)
                }
                None => (machine::placeholder(), MachineSource::Unset),
            },
        };
        Ok(Store {
            repo,
            state_ref: opts.state_ref,
            machine,
            machine_source,
            path: opts.path.to_path_buf(),
            warnings: Default::default(),
            written: indicatif::ProgressBar::hidden(),
            clock: None,
        })
    }

    /// Returns a handle on this repository that threads can share (the server keeps one
    /// instead of reopening the repository per request).
    pub(crate) fn share(self) -> SharedStore {
        SharedStore {
            repo: self.repo.into_sync(),
            state_ref: self.state_ref,
            machine: self.machine,
            machine_source: self.machine_source,
            path: self.path,
            clock: self.clock,
        }
    }

    /// Makes tree writes count the blobs they write on `bar`.
    pub(crate) fn show_writes(&mut self, bar: indicatif::ProgressBar) {
        self.written = bar;
    }

    /// Records a warning for stderr (the operation still succeeds).
    pub(crate) fn warn(&self, message: String) {
        self.warnings.borrow_mut().push(message);
    }

    /// Takes the warnings recorded so far.
    pub(crate) fn take_warnings(&self) -> Vec<String> {
        self.warnings.take()
    }

    /// Returns this machine's heartbeat ref name.
    pub(crate) fn heartbeat_ref(&self) -> String {
        format!("{HEARTBEAT_PREFIX}{}", self.machine)
    }

    /// Returns the state branch tip, if the branch exists.
    pub(crate) fn tip(&self) -> Result<Option<gix::ObjectId>, StoreError> {
        ref_target(&self.repo, &self.state_ref)
    }

    /// Returns every heartbeat ref with its tip, sorted by name: this machine's and other
    /// machines' local refs, and the copies fetched from remotes.
    pub(crate) fn heartbeat_refs(&self) -> Result<Vec<(String, gix::ObjectId)>, StoreError> {
        let mut out = self.refs_with_prefix(HEARTBEAT_PREFIX)?;
        out.extend(
            self.refs_with_prefix(REMOTES_PREFIX)?
                .into_iter()
                // refs/agent-coord/remotes/<remote>/heartbeats/<machine>, by position, so a
                // remote named "heartbeats" is no confusion.
                .filter(|(name, _)| {
                    name.strip_prefix(REMOTES_PREFIX)
                        .and_then(|rest| rest.split_once('/'))
                        .is_some_and(|(_, tail)| tail.starts_with("heartbeats/"))
                }),
        );
        out.sort();
        Ok(out)
    }

    /// Returns the refs below `prefix` with the ids they name (peeled only when symbolic).
    pub(crate) fn refs_with_prefix(
        &self,
        prefix: &str,
    ) -> Result<Vec<(String, gix::ObjectId)>, StoreError> {
        let platform = self.repo.references().map_err(StoreError::git)?;
        let iter = platform.prefixed(prefix).map_err(StoreError::git)?;
        let mut out = Vec::new();
        for r in iter {
            let mut r = r.map_err(StoreError::git)?;
            // As in `ref_target`: a ref that names an object needs no object read (peeling
            // inflates the commit to look for a tag: most of a claim's read, once).
            let id = match r.target().try_id() {
                Some(id) => id.to_owned(),
                None => r.peel_to_id().map_err(StoreError::git)?.detach(),
            };
            out.push((r.name().as_bstr().to_string(), id));
        }
        Ok(out)
    }

    /// Returns whether the repository has any remote configured.
    pub(crate) fn has_remote(&self) -> bool {
        !self.repo.remote_names().is_empty()
    }

    /// Returns the time commits are stamped with, in Unix seconds.
    pub(crate) fn commit_seconds(&self) -> i64 {
        self.clock.unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs() as i64)
        })
    }

    /// Takes a snapshot of the current tips.
    pub(crate) fn snapshot(&self) -> Result<TipSnapshot<'_>, StoreError> {
        TipSnapshot::new(self, self.tip()?, self.heartbeat_refs()?)
    }
}

/// Returns the object a ref points at (peeled when it is symbolic), or `None` if it does
/// not exist.
pub(crate) fn ref_target(
    repo: &gix::Repository,
    name: &str,
) -> Result<Option<gix::ObjectId>, StoreError> {
    match repo.try_find_reference(name).map_err(StoreError::git)? {
        // Our refs point straight at commits: their id needs no object read (peeling reads
        // the object to look for a tag, and failed when another process's packing moved it
        // from a loose file into a new pack at that moment).
        Some(r) => match r.target().try_id() {
            Some(id) => Ok(Some(id.to_owned())),
            None => {
                let mut r = r;
                Ok(Some(r.peel_to_id().map_err(StoreError::git)?.detach()))
            }
        },
        None => Ok(None),
    }
}
