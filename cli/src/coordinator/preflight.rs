//! The preflight a tick runs before it accepts any work (spec "Assumptions"), and that
//! `coordinate --check-config` prints alone: both accounts authenticate as their configured
//! logins, the logins differ, the six lane slots and the trusted argv are executable, the git
//! identity has a usable signing key, the workspace root is writable.
//!
//! A failed check starts nothing; each says exactly what is missing. A token's account never
//! changes, so a `--follow` loop asks GitHub who a token is once ([`Verified`]), not on every
//! tick: an idle tick's requests are then only its own polls.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::path::PathBuf;
use std::time::Duration;
use std::time::Instant;

use agent_coord_shared::coordinator::config::CoordinatorConfig;
use agent_coord_shared::coordinator::config::GitIdentity;
use agent_coord_shared::coordinator::config::GithubAccount;
use agent_coord_shared::coordinator::config::LaneSpec;
use agent_coord_shared::coordinator::config::SigningFormat;
use agent_coord_shared::coordinator::config::WorkerConfig;
use agent_coord_shared::coordinator::lane::Vendor;
use agent_coord_shared::output::coordinate::PreflightCheck;
use agent_coord_shared::serde_name::WireName;

use super::accounts;
use super::accounts::Secrets;
use crate::github::EtagCache;
use crate::github::GhError;
use crate::github::GitHub;
use crate::process;
use crate::process::token::Token;

/// One check's verdict.
#[derive(Debug, Clone)]
pub(crate) struct Check {
    pub(crate) name: String,
    pub(crate) ok: bool,
    pub(crate) detail: String,
}

impl Check {
    /// Returns the check as `--json` documents show it (`check`, `ok`, `detail`).
    pub(crate) fn to_output(&self) -> PreflightCheck {
        PreflightCheck {
            check: self.name.clone(),
            ok: self.ok,
            detail: self.detail.clone(),
        }
    }

    fn new(name: impl Into<String>, result: Result<String, CheckError>) -> Check {
        let (ok, detail) = match result {
            Ok(d) => (true, d),
            Err(e) => (false, e.to_string()),
        };
        Check {
            name: name.into(),
            ok,
            detail,
        }
    }
}

/// Why a check failed, worded as the check's detail says it.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CheckError {
    /// The worker is not in the configuration.
    #[error("no worker {worker} in the configuration")]
    NoWorker {
        /// The worker asked for.
        worker: String,
    },
    /// The control directory could not be created.
    #[error("cannot create {}: {source}", dir.display())]
    ControlDir {
        /// The control directory.
        dir: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A probe could not be written into the workspace root's control directory.
    #[error("{} is not writable: {source}", root.display())]
    NotWritable {
        /// The workspace root.
        root: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A configured argv is empty.
    #[error("the argv is empty")]
    EmptyArgv,
    /// A configured program does not exist.
    #[error("{program} does not exist")]
    Missing {
        /// `argv[0]`.
        program: String,
    },
    /// An adapter lane's vendor CLI is neither named by its variable nor on `PATH`.
    #[error("the {vendor} CLI is not on PATH and {variable} is not set")]
    VendorMissing {
        /// The vendor.
        vendor: String,
        /// Its `AGENT_COORD_<VENDOR>_BIN` variable.
        variable: &'static str,
    },
    /// A configured program is not an executable file.
    #[error("{program} is not an executable file")]
    NotExecutable {
        /// `argv[0]`.
        program: String,
    },
    /// The worker's session has no git identity to sign with.
    #[error("session {session} has no git identity")]
    NoGitIdentity {
        /// The worker's session.
        session: String,
    },
    /// The signing probe's temporary directory could not be created.
    #[error("cannot create a temporary dir: {0}")]
    TempDir(#[source] std::io::Error),
    /// The ssh signing key file is missing.
    #[error("the ssh signing key file does not exist")]
    NoSshKey,
    /// ssh signing is configured without an allowed-signers file.
    #[error("ssh signing needs an allowed_signers file")]
    NoAllowedSigners,
    /// The configured allowed-signers file is missing.
    #[error("the allowed_signers file does not exist")]
    AllowedSignersMissing,
    /// The probe to sign could not be written.
    #[error("cannot write a probe: {0}")]
    Probe(#[source] std::io::Error),
    /// A signing tool could not be run.
    #[error(transparent)]
    ProbeRun(process::RunError),
    /// The ssh key does not sign without a prompt.
    #[error("the ssh signing key cannot sign (is it passphrase-protected?)")]
    SshCannotSign,
    /// A signature by the key does not verify against the allowed signers.
    #[error(
        "a signature by the signing key does not verify for {email} against the allowed signers"
    )]
    SshUntrusted {
        /// The identity's email.
        email: String,
    },
    /// The openpgp key does not sign without a prompt.
    #[error("the openpgp signing key cannot sign")]
    OpenPgpCannotSign,
    /// The session's token could not be read.
    #[error(transparent)]
    Token(#[from] accounts::AccountError),
    /// No GitHub client could be built with the token.
    #[error(transparent)]
    Client(GhError),
    /// GitHub did not say who the token is.
    #[error("cannot authenticate: {source}")]
    Unauthenticated {
        /// GitHub's answer.
        #[source]
        source: GhError,
    },
    /// The token is another user's than the configured login.
    #[error("the token authenticates as {actual}, not the configured login {configured}")]
    WrongLogin {
        /// Who the token is.
        actual: String,
        /// Who the configuration says it is.
        configured: String,
    },
    /// The worker and its review session are one GitHub user.
    #[error("worker and review session both authenticate as {login}")]
    SameLogin {
        /// Their one login.
        login: String,
    },
}

/// What a passed preflight hands the tick.
pub(crate) struct Ready {
    pub(crate) worker_gh: GitHub,
    pub(crate) worker_login: String,
    pub(crate) worker_token: Token,
    /// The review account's client: it posts only the formal approval.
    pub(crate) review_gh: GitHub,
    pub(crate) review_login: String,
    pub(crate) secrets: Secrets,
}

/// The preflight's result: every check, and the clients when all passed.
pub(crate) struct Outcome {
    pub(crate) checks: Vec<Check>,
    pub(crate) ready: Option<Ready>,
}

/// The tokens this process has already seen authenticate, with their logins: a `--follow`
/// loop keeps it across ticks (and forgets it after a failed tick), `--check-config` and a
/// single tick start empty. Memory only, like the tokens themselves.
#[derive(Default)]
pub(crate) struct Verified {
    accounts: Vec<(String, Token, String)>,
}

impl Verified {
    /// Returns the login `token` authenticated as for `session`, if verified in this process.
    fn login(&self, session: &str, token: &Token) -> Option<&str> {
        self.accounts
            .iter()
            .find(|(s, t, _)| s == session && t.expose() == token.expose())
            .map(|(_, _, login)| login.as_str())
    }

    fn remember(&mut self, session: &str, token: &Token, login: &str) {
        self.accounts.retain(|(s, _, _)| s != session);
        self.accounts
            .push((session.to_owned(), token.clone(), login.to_owned()));
    }

    /// Forgets every verification (the next preflight asks GitHub again).
    pub(crate) fn forget(&mut self) {
        self.accounts.clear();
    }
}

/// Returns the control directory of a worker (outside every worktree).
pub(crate) fn control_dir(worker: &WorkerConfig) -> std::path::PathBuf {
    Path::new(&worker.workspace_root).join(".coordinator-control")
}

/// Runs every check for `worker_id`; an account whose token is in `verified` is not asked
/// again who it is.
pub(crate) fn run(config: &CoordinatorConfig, worker_id: &str, verified: &mut Verified) -> Outcome {
    let mut secrets = Secrets::from_config(config);
    let Some(worker) = config.workers.get(worker_id) else {
        return Outcome {
            checks: vec![Check::new(
                "worker",
                Err(CheckError::NoWorker {
                    worker: worker_id.to_owned(),
                }),
            )],
            ready: None,
        };
    };
    let mut checks = local_checks(config, worker_id, worker);
    let signing_started = Instant::now();
    checks.push(signing_check(config, worker_id));
    let signing_took = signing_started.elapsed();
    let accounts_started = Instant::now();
    let mut accounts = Accounts {
        config,
        control: control_dir(worker),
        secrets: &mut secrets,
        verified,
    };
    let worker_account = accounts.check(worker_id, &mut checks);
    let review_account = accounts.check(&worker.review_session, &mut checks);
    if let (Some(w), Some(r)) = (&worker_account, &review_account) {
        checks.push(distinct_logins(&w.login, &r.login));
    }
    tracing::debug!(
        signing_ms = signing_took.as_secs_f64() * 1e3,
        accounts_ms = accounts_started.elapsed().as_secs_f64() * 1e3,
        "preflight timings"
    );
    let all_ok = checks.iter().all(|c| c.ok);
    let ready = match (all_ok, worker_account, review_account) {
        (true, Some(worker), Some(review)) => Some(Ready {
            worker_gh: worker.gh,
            worker_login: worker.login,
            worker_token: worker.token,
            review_gh: review.gh,
            review_login: review.login,
            secrets,
        }),
        _ => None,
    };
    Outcome { checks, ready }
}

/// The checks of the worker's machine: the workspace root, every lane slot and trusted argv.
fn local_checks(config: &CoordinatorConfig, worker_id: &str, worker: &WorkerConfig) -> Vec<Check> {
    let mut checks = vec![Check::new("workspace root", workspace_writable(worker))];
    let binding = config.sessions.get(worker_id);
    for (slot, spec) in binding.map(|b| b.lanes.iter()).into_iter().flatten() {
        checks.push(Check::new(
            format!("lane {}", slot.wire_name()),
            match spec {
                LaneSpec::Argv(argv) => executable(argv),
                LaneSpec::Adapter(a) => vendor_found(a.adapter),
            },
        ));
    }
    for (repo, rc) in &worker.repositories {
        checks.push(Check::new(
            format!("check_argv of {repo}"),
            executable(&rc.check_argv),
        ));
        checks.push(Check::new(
            format!("readiness_argv of {repo}"),
            executable(&rc.readiness_argv),
        ));
    }
    checks
}

/// The check that the worker's signing key signs (and, for ssh, verifies).
fn signing_check(config: &CoordinatorConfig, worker_id: &str) -> Check {
    let git = config.sessions.get(worker_id).and_then(|b| b.git.as_ref());
    let signing = match git {
        Some(git) => signing_usable(git),
        None => Err(CheckError::NoGitIdentity {
            session: worker_id.to_owned(),
        }),
    };
    Check::new("signing key", signing)
}

/// The worker and review sessions' accounts as one preflight checks them.
struct Accounts<'a> {
    config: &'a CoordinatorConfig,
    /// Where each session's GitHub cache is kept.
    control: PathBuf,
    /// Every token read is added here, so no text shows it.
    secrets: &'a mut Secrets,
    verified: &'a mut Verified,
}

/// An account that authenticated as its configured login.
struct Account {
    gh: GitHub,
    login: String,
    token: Token,
}

impl Accounts<'_> {
    /// Checks `session`'s account (no check when the session is not configured: the
    /// configuration's validation reports that) and returns it when it authenticated.
    fn check(&mut self, session: &str, checks: &mut Vec<Check>) -> Option<Account> {
        let config = self.config;
        let binding = config.sessions.get(session)?;
        let name = format!("github account of {session}");
        match self.authenticate(session, &binding.github) {
            Ok((account, detail)) => {
                checks.push(Check::new(name, Ok(detail)));
                Some(account)
            }
            Err(why) => {
                checks.push(Check::new(name, Err(why)));
                None
            }
        }
    }

    /// Reads the session's token and makes sure it authenticates as the configured login,
    /// asking GitHub only for a token not verified earlier in this process.
    fn authenticate(
        &mut self,
        session: &str,
        github: &GithubAccount,
    ) -> Result<(Account, String), CheckError> {
        let token = accounts::resolve(session, github)?;
        self.secrets.add(&token);
        let cache = EtagCache::load(&self.control.join(format!("github-cache-{session}.json")));
        let mut gh =
            GitHub::new(&self.config.api_url, token.expose(), cache).map_err(CheckError::Client)?;
        if let Some(login) = self.verified.login(session, &token) {
            if login.eq_ignore_ascii_case(&github.login) {
                let login = login.to_owned();
                let detail = format!("authenticated as {login} (earlier in this process)");
                return Ok((Account { gh, login, token }, detail));
            }
        }
        let user = gh.user();
        // Persist at once: the worker's client saves again after its tick, but the review
        // account's client ends here, and without its ETag the next /user costs rate limit.
        let _ = gh.cache().save();
        match user {
            Ok(user) if user.login.eq_ignore_ascii_case(&github.login) => {
                self.verified.remember(session, &token, &user.login);
                let detail = format!("authenticated as {}", user.login);
                let login = user.login;
                Ok((Account { gh, login, token }, detail))
            }
            Ok(user) => Err(CheckError::WrongLogin {
                actual: user.login,
                configured: github.login.clone(),
            }),
            Err(source) => Err(CheckError::Unauthenticated { source }),
        }
    }
}

/// The check that the worker and its review session are two different GitHub users.
fn distinct_logins(worker: &str, review: &str) -> Check {
    Check::new(
        "distinct logins",
        if worker.eq_ignore_ascii_case(review) {
            Err(CheckError::SameLogin {
                login: worker.to_owned(),
            })
        } else {
            Ok(format!("{worker} writes, {review} reviews"))
        },
    )
}

fn workspace_writable(worker: &WorkerConfig) -> Result<String, CheckError> {
    let root = Path::new(&worker.workspace_root);
    let control = control_dir(worker);
    std::fs::create_dir_all(&control).map_err(|source| CheckError::ControlDir {
        dir: control.clone(),
        source,
    })?;
    let probe = control.join(".write-probe");
    std::fs::write(&probe, b"ok").map_err(|source| CheckError::NotWritable {
        root: root.to_path_buf(),
        source,
    })?;
    let _ = std::fs::remove_file(probe);
    Ok(format!("{} is writable", root.display()))
}

fn executable(argv: &[String]) -> Result<String, CheckError> {
    let Some(program) = argv.first() else {
        return Err(CheckError::EmptyArgv);
    };
    let meta = std::fs::metadata(program).map_err(|_| CheckError::Missing {
        program: program.clone(),
    })?;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return Err(CheckError::NotExecutable {
            program: program.clone(),
        });
    }
    Ok(format!("{program} is executable"))
}

/// The check of an adapter lane: its vendor CLI can be found as `agent-coord lane` finds it.
fn vendor_found(vendor: Vendor) -> Result<String, CheckError> {
    match crate::lanes::find_vendor(vendor) {
        Some(path) => Ok(format!("the {vendor} CLI is {}", path.display())),
        None => Err(CheckError::VendorMissing {
            vendor: vendor.to_string(),
            variable: vendor.bin_variable(),
        }),
    }
}

/// Signs a probe with the configured key and verifies it against the allowed signers: the
/// key must be present, usable without a passphrase prompt, and trusted.
fn signing_usable(git: &GitIdentity) -> Result<String, CheckError> {
    let dir = tempfile::tempdir().map_err(CheckError::TempDir)?;
    match git.signing_format {
        SigningFormat::Ssh => ssh_signs(git, dir.path()),
        SigningFormat::OpenPgp => openpgp_signs(git, dir.path()),
    }
}

/// The ssh key and the allowed signers exist, the key signs a probe without a prompt, and
/// the signature verifies for the configured email.
fn ssh_signs(git: &GitIdentity, dir: &Path) -> Result<String, CheckError> {
    let key = Path::new(&git.signing_key);
    if !key.is_file() {
        return Err(CheckError::NoSshKey);
    }
    let Some(allowed) = &git.allowed_signers else {
        return Err(CheckError::NoAllowedSigners);
    };
    if !Path::new(allowed).is_file() {
        return Err(CheckError::AllowedSignersMissing);
    }
    let probe = dir.join("probe");
    std::fs::write(&probe, b"agent-coord preflight\n").map_err(CheckError::Probe)?;
    let signed = run_probe(
        dir,
        &[
            "ssh-keygen",
            "-Y",
            "sign",
            "-f",
            &git.signing_key.to_string(),
            "-n",
            "git",
            &probe.to_string_lossy(),
        ],
        None,
    )?;
    if !signed.success() {
        return Err(CheckError::SshCannotSign);
    }
    let verified = run_probe(
        dir,
        &[
            "ssh-keygen",
            "-Y",
            "verify",
            "-f",
            &allowed.to_string_lossy(),
            "-I",
            &git.email,
            "-n",
            "git",
            "-s",
            &format!("{}.sig", probe.to_string_lossy()),
        ],
        std::fs::read(&probe).ok(),
    )?;
    if !verified.success() {
        return Err(CheckError::SshUntrusted {
            email: git.email.clone(),
        });
    }
    Ok(format!("ssh key signs and verifies for {}", git.email))
}

/// The openpgp key signs a probe without a prompt.
fn openpgp_signs(git: &GitIdentity, dir: &Path) -> Result<String, CheckError> {
    let signed = run_probe(
        dir,
        &[
            "gpg",
            "--batch",
            "--yes",
            "--local-user",
            &git.signing_key.to_string(),
            "--output",
            "/dev/null",
            "--sign",
        ],
        Some(b"agent-coord preflight\n".to_vec()),
    )?;
    if !signed.success() {
        return Err(CheckError::OpenPgpCannotSign);
    }
    Ok(format!("openpgp key signs for {}", git.email))
}

/// Runs one signing probe in `dir` through the bounded runner.
fn run_probe(
    dir: &Path,
    argv: &[&str],
    stdin: Option<Vec<u8>>,
) -> Result<process::Finished, CheckError> {
    let argv: Vec<String> = argv.iter().map(|a| (*a).to_owned()).collect();
    process::run(&process::Spec {
        argv: &argv,
        cwd: dir,
        env: Vec::new(),
        remove_env: Vec::new(),
        stdin,
        timeout: Duration::from_secs(30),
        stall: None,
        watch: None,
        max_output: 4096,
        gh_config_dir: None,
    })
    .map_err(CheckError::ProbeRun)
}
