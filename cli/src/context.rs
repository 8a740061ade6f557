//! What every command runs with: the global options, the environment as read once at
//! start-up, the clock, and the (lazily opened) store.

use std::path::PathBuf;

use agent_coord_shared::record::Identity;
use agent_coord_shared::rules::Ctx;
use agent_coord_shared::time;
use agent_coord_shared::time::Instant;

use crate::command_error::CommandError;
use crate::store::OpenOptions;
use crate::store::Store;
use crate::store::DEFAULT_REF;

/// Options that apply to every command.
#[derive(clap::Args, Debug, Clone, Default)]
pub(crate) struct GlobalArgs {
    /// Coordination repository to use: any clone or bare repository [default: a bare
    /// repository under $XDG_STATE_HOME/agent-coord/state.git, created on first use]
    #[arg(
        long,
        global = true,
        env = "AGENT_COORD_GIT_DIR",
        hide_env_values = true,
        value_name = "PATH"
    )]
    pub(crate) repo_dir: Option<PathBuf>,
    /// State branch to read and write (a short name means refs/heads/NAME)
    #[arg(
        long = "ref",
        global = true,
        env = "AGENT_COORD_REF",
        hide_env_values = true,
        value_name = "REF"
    )]
    pub(crate) state_ref: Option<String>,
}

/// The environment variables the CLI reads, captured once.
#[derive(Debug, Clone, Default)]
pub(crate) struct Env {
    pub(crate) machine_id: Option<String>,
    session_id: Option<String>,
    codex_thread_id: Option<String>,
    pub(crate) now: Option<String>,
    xdg_state_home: Option<String>,
    home: Option<String>,
}

fn var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

impl Env {
    /// Returns an environment with a pinned clock and machine (for the demo).
    pub(crate) fn pinned(now: &str, machine: &str) -> Self {
        Env {
            now: Some(now.to_owned()),
            machine_id: Some(machine.to_owned()),
            ..Env::default()
        }
    }

    pub(crate) fn from_process() -> Self {
        Env {
            machine_id: var("AGENT_COORD_MACHINE_ID"),
            session_id: var("AGENT_COORD_SESSION_ID"),
            codex_thread_id: var("CODEX_THREAD_ID"),
            now: var("AGENT_COORD_NOW"),
            xdg_state_home: var("XDG_STATE_HOME"),
            home: var("HOME"),
        }
    }
}

/// A command's context.
pub(crate) struct Context {
    pub(crate) globals: GlobalArgs,
    /// Whether --repo-dir was given on the command line (not from the environment).
    pub(crate) direct_repo_dir: bool,
    pub(crate) env: Env,
    now: Instant,
    /// The bar every store this context opens counts its object writes on (hidden unless a
    /// long command asked for one with [`Context::show_writes`]).
    writes: std::sync::OnceLock<indicatif::ProgressBar>,
}

impl Context {
    pub(crate) fn new(globals: GlobalArgs, env: Env) -> Result<Self, CommandError> {
        // AGENT_COORD_NOW pins the clock: for tests, demos and replaying a scenario.
        let now = match &env.now {
            Some(raw) => time::parse(raw).ok_or_else(|| {
                CommandError::usage(format!(
                    "AGENT_COORD_NOW must be an RFC 3339 timestamp: {raw}"
                ))
            })?,
            None => chrono::Utc::now(),
        };
        if !time::is_writable(now) {
            // Every write stamps the clock; a year past 9999 would be a timestamp no reader accepts.
            return Err(CommandError::operational(format!(
                "the clock reads {now}, outside the years 0000 to 9999 a record can hold; set the system clock"
            )));
        }
        Ok(Context {
            globals,
            direct_repo_dir: false,
            env,
            now,
            writes: std::sync::OnceLock::new(),
        })
    }

    /// Makes the stores this context opens count the blobs they write on `bar` (once per
    /// command: a later call is ignored).
    pub(crate) fn show_writes(&self, bar: &indicatif::ProgressBar) {
        let _ = self.writes.set(bar.clone());
    }

    /// Returns the clock reading for this command.
    pub(crate) fn now(&self) -> Instant {
        self.now
    }

    /// Returns the full name of the state ref.
    pub(crate) fn state_ref(&self) -> String {
        match self.globals.state_ref.as_deref() {
            Some(r) if r.starts_with("refs/") => r.to_owned(),
            Some(r) => format!("refs/heads/{r}"),
            None => DEFAULT_REF.to_owned(),
        }
    }

    /// Returns the repository path, and whether it is the zero-config default.
    pub(crate) fn repo_path(&self) -> Result<(PathBuf, bool), CommandError> {
        if let Some(p) = &self.globals.repo_dir {
            return Ok((p.clone(), false));
        }
        let base = match (&self.env.xdg_state_home, &self.env.home) {
            (Some(x), _) if PathBuf::from(x).is_absolute() => PathBuf::from(x),
            (_, Some(h)) if PathBuf::from(h).is_absolute() => PathBuf::from(h).join(".local/state"),
            _ => return Err(CommandError::operational(
                "cannot determine the coordination repository; set XDG_STATE_HOME or HOME to an \
                     absolute path, or pass --repo-dir",
            )),
        };
        Ok((base.join("agent-coord").join("state.git"), true))
    }

    /// Opens the store; the zero-config default is created on first use.
    ///
    /// Returns the store and the notices to print (local single-machine mode).
    pub(crate) fn open_store(&self, write: bool) -> Result<(Store, Vec<String>), CommandError> {
        let (path, implicit) = self.repo_path()?;
        let mut store = Store::open(OpenOptions {
            path: &path,
            create: implicit,
            state_ref: self.state_ref(),
            machine_override: self.env.machine_id.clone(),
            generate_machine: write,
        })?;
        if let Some(bar) = self.writes.get() {
            store.show_writes(bar.clone());
        }
        if self.env.now.is_some() {
            store.clock = Some(self.now.timestamp());
        }
        crate::phase::mark("open");
        let mut notices = Vec::new();
        if implicit && !store.has_remote() {
            notices.push(format!(
                "notice: local mode — single-machine only; state repository: {}",
                path.display()
            ));
        }
        Ok((store, notices))
    }

    /// Returns `AGENT_COORD_MACHINE_ID`, if set.
    pub(crate) fn machine_override(&self) -> Option<String> {
        self.env.machine_id.clone()
    }

    /// Returns the attribution stamped on writes from this machine.
    pub(crate) fn identity(&self, store: &Store) -> Identity {
        let session = self.session_source();
        Identity {
            machine_id: Some(store.machine.to_string()),
            session_id: session.map(|(id, _)| id.to_owned()),
            session_source: session.map(|(_, source)| source.to_owned()),
        }
    }

    /// Returns the session id and its source, or `unset`.
    pub(crate) fn session(&self) -> (String, String) {
        match self.session_source() {
            Some((id, source)) => (id.to_owned(), source.to_owned()),
            None => ("unset".into(), "unset".into()),
        }
    }

    /// Returns the session id and where it came from: `AGENT_COORD_SESSION_ID`, else
    /// `CODEX_THREAD_ID`.
    fn session_source(&self) -> Option<(&str, &'static str)> {
        match (&self.env.session_id, &self.env.codex_thread_id) {
            (Some(s), _) => Some((s, "agent_coord_session_id")),
            (None, Some(s)) => Some((s, "codex_thread_id")),
            (None, None) => None,
        }
    }

    /// Returns a rule context for one write attempt (fresh random bits each time).
    pub(crate) fn rule_ctx(&self, store: &Store) -> Ctx {
        Ctx {
            now: self.now,
            nonce: fastrand::u32(..),
            identity: self.identity(store),
        }
    }
}
