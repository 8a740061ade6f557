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
use std::time::Duration;
use std::time::Instant;

use agent_coord_shared::coordinator::config::CoordinatorConfig;
use agent_coord_shared::coordinator::config::GitIdentity;
use agent_coord_shared::coordinator::config::SigningFormat;
use agent_coord_shared::coordinator::config::WorkerConfig;
use serde_json::json;
use serde_json::Value;

use super::accounts;
use super::accounts::Secrets;
use crate::github::EtagCache;
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
    fn new(name: impl Into<String>, result: Result<String, String>) -> Check {
        let (ok, detail) = match result {
            Ok(d) => (true, d),
            Err(d) => (false, d),
        };
        Check {
            name: name.into(),
            ok,
            detail,
        }
    }

    pub(crate) fn to_json(&self) -> Value {
        json!({"check": self.name, "ok": self.ok, "detail": self.detail})
    }
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
    let mut checks = Vec::new();
    let mut secrets = Secrets::from_config(config);
    let Some(worker) = config.workers.get(worker_id) else {
        checks.push(Check::new(
            "worker",
            Err(format!("no worker {worker_id} in the configuration")),
        ));
        return Outcome {
            checks,
            ready: None,
        };
    };
    checks.push(Check::new("workspace root", workspace_writable(worker)));
    let binding = config.sessions.get(worker_id);
    let review = config.sessions.get(&worker.review_session);
    for (slot, argv) in binding.map(|b| b.lanes.iter()).into_iter().flatten() {
        checks.push(Check::new(
            format!("lane {}", slot.as_str()),
            executable(argv),
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
    let signing_started = Instant::now();
    match binding.and_then(|b| b.git.as_ref()) {
        Some(git) => checks.push(Check::new("signing key", signing_usable(git))),
        None => checks.push(Check::new(
            "signing key",
            Err(format!("session {worker_id} has no git identity")),
        )),
    }
    let signing_took = signing_started.elapsed();
    let accounts_started = Instant::now();
    let control = control_dir(worker);
    let mut login_of =
        |session: &str, checks: &mut Vec<Check>| -> Option<(GitHub, String, Token)> {
            let binding = config.sessions.get(session)?;
            let name = format!("github account of {session}");
            let token = match accounts::resolve(session, &binding.github) {
                Ok(t) => t,
                Err(e) => {
                    checks.push(Check::new(name, Err(e)));
                    return None;
                }
            };
            secrets.add(&token);
            let cache = EtagCache::load(&control.join(format!("github-cache-{session}.json")));
            let mut gh = match GitHub::new(&config.api_url, token.expose(), cache) {
                Ok(gh) => gh,
                Err(e) => {
                    checks.push(Check::new(name, Err(e.to_string())));
                    return None;
                }
            };
            if let Some(login) = verified.login(session, &token) {
                if login.eq_ignore_ascii_case(&binding.github.login) {
                    let login = login.to_owned();
                    checks.push(Check::new(
                        name,
                        Ok(format!(
                            "authenticated as {login} (earlier in this process)"
                        )),
                    ));
                    return Some((gh, login, token));
                }
            }
            let user = gh.user();
            // Persist at once: the worker's client saves again after its tick, but the review
            // account's client ends here, and without its ETag the next /user costs rate limit.
            let _ = gh.cache().save();
            match user {
                Ok(user) if user.login.eq_ignore_ascii_case(&binding.github.login) => {
                    checks.push(Check::new(
                        name,
                        Ok(format!("authenticated as {}", user.login)),
                    ));
                    verified.remember(session, &token, &user.login);
                    Some((gh, user.login, token))
                }
                Ok(user) => {
                    checks.push(Check::new(
                        name,
                        Err(format!(
                            "the token authenticates as {}, not the configured login {}",
                            user.login, binding.github.login
                        )),
                    ));
                    None
                }
                Err(e) => {
                    checks.push(Check::new(name, Err(format!("cannot authenticate: {e}"))));
                    None
                }
            }
        };
    let worker_account = login_of(worker_id, &mut checks);
    let review_account = match review {
        Some(_) => login_of(&worker.review_session, &mut checks),
        None => None,
    };
    if let (Some((_, w, _)), Some((_, r, _))) = (&worker_account, &review_account) {
        checks.push(Check::new(
            "distinct logins",
            if w.eq_ignore_ascii_case(r) {
                Err(format!(
                    "worker and review session both authenticate as {w}"
                ))
            } else {
                Ok(format!("{w} writes, {r} reviews"))
            },
        ));
    }
    tracing::debug!(
        signing_ms = signing_took.as_secs_f64() * 1e3,
        accounts_ms = accounts_started.elapsed().as_secs_f64() * 1e3,
        "preflight timings"
    );
    let all_ok = checks.iter().all(|c| c.ok);
    let ready = match (all_ok, worker_account, review_account) {
        (true, Some((gh, login, token)), Some((review_gh, review_login, _))) => Some(Ready {
            worker_gh: gh,
            worker_login: login,
            worker_token: token,
            review_gh,
            review_login,
            secrets,
        }),
        _ => None,
    };
    Outcome { checks, ready }
}

fn workspace_writable(worker: &WorkerConfig) -> Result<String, String> {
    let root = Path::new(&worker.workspace_root);
    let control = control_dir(worker);
    std::fs::create_dir_all(&control)
        .map_err(|e| format!("cannot create {}: {e}", control.display()))?;
    let probe = control.join(".write-probe");
    std::fs::write(&probe, b"ok")
        .map_err(|e| format!("{} is not writable: {e}", root.display()))?;
    let _ = std::fs::remove_file(probe);
    Ok(format!("{} is writable", root.display()))
}

fn executable(argv: &[String]) -> Result<String, String> {
    let Some(program) = argv.first() else {
        return Err("the argv is empty".into());
    };
    let meta = std::fs::metadata(program).map_err(|_| format!("{program} does not exist"))?;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return Err(format!("{program} is not an executable file"));
    }
    Ok(format!("{program} is executable"))
}

/// Signs a probe with the configured key and verifies it against the allowed signers: the
/// key must be present, usable without a passphrase prompt, and trusted.
fn signing_usable(git: &GitIdentity) -> Result<String, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("cannot create a temporary dir: {e}"))?;
    let run = |argv: Vec<String>, stdin: Option<Vec<u8>>| {
        process::run(&process::Spec {
            argv: &argv,
            cwd: dir.path(),
            env: Vec::new(),
            remove_env: Vec::new(),
            stdin,
            timeout: Duration::from_secs(30),
            max_output: 4096,
            gh_config_dir: None,
        })
        .map_err(|e| e.to_string())
    };
    match git.signing_format {
        SigningFormat::Ssh => {
            let key = Path::new(&git.signing_key);
            if !key.is_file() {
                return Err("the ssh signing key file does not exist".into());
            }
            let Some(allowed) = &git.allowed_signers else {
                return Err("ssh signing needs an allowed_signers file".into());
            };
            if !Path::new(allowed).is_file() {
                return Err("the allowed_signers file does not exist".into());
            }
            let probe = dir.path().join("probe");
            std::fs::write(&probe, b"agent-coord preflight\n")
                .map_err(|e| format!("cannot write a probe: {e}"))?;
            let signed = run(
                vec![
                    "ssh-keygen".into(),
                    "-Y".into(),
                    "sign".into(),
                    "-f".into(),
                    git.signing_key.to_string(),
                    "-n".into(),
                    "git".into(),
                    probe.to_string_lossy().into_owned(),
                ],
                None,
            )?;
            if !signed.success() {
                return Err("the ssh signing key cannot sign (is it passphrase-protected?)".into());
            }
            let verified = run(
                vec![
                    "ssh-keygen".into(),
                    "-Y".into(),
                    "verify".into(),
                    "-f".into(),
                    allowed.to_string_lossy().into_owned(),
                    "-I".into(),
                    git.email.clone(),
                    "-n".into(),
                    "git".into(),
                    "-s".into(),
                    format!("{}.sig", probe.to_string_lossy()),
                ],
                std::fs::read(&probe).ok(),
            )?;
            if !verified.success() {
                return Err(format!(
                    "a signature by the signing key does not verify for {} against the allowed signers",
                    git.email
                ));
            }
            Ok(format!("ssh key signs and verifies for {}", git.email))
        }
        SigningFormat::OpenPgp => {
            let signed = run(
                vec![
                    "gpg".into(),
                    "--batch".into(),
                    "--yes".into(),
                    "--local-user".into(),
                    git.signing_key.to_string(),
                    "--output".into(),
                    "/dev/null".into(),
                    "--sign".into(),
                ],
                Some(b"agent-coord preflight\n".to_vec()),
            )?;
            if !signed.success() {
                return Err("the openpgp signing key cannot sign".into());
            }
            Ok(format!("openpgp key signs for {}", git.email))
        }
    }
}
