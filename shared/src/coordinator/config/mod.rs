//! The coordinator's configuration file (DESIGN §6 "Configuration"): the spec's `workers`
//! schema verbatim, plus the explicit per-session bindings (GitHub account, git identity, the
//! six AI lane slots), the GitHub API URL and the authorized publication routes.
//!
//! [`parse`] validates everything it can without I/O and names the dotted key of the first
//! problem; an empty file enables no worker. [`pin`] extracts what a task's execution depends
//! on, so a changed configuration blocks that task instead of silently changing it.

mod lanes;
mod pin;
mod read;

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;

pub use self::lanes::AdapterLane;
pub use self::lanes::LaneInvocation;
pub use self::lanes::LaneSpec;
pub use self::pin::pin;
pub use self::pin::upgrade_stored;
pub use self::pin::PinnedGit;
pub use self::pin::PinnedIdentity;
use self::read::entries;
use self::read::err;
use self::read::join;
use self::read::Obj;
use crate::coordinator::lane::usage::Price;
use crate::coordinator::lane::usage::PriceTable;
use crate::coordinator::lane::usage::Rates;
use crate::coordinator::lane::Vendor;
use crate::coordinator::naming::is_valid_branch_name;
use crate::ids::is_segment;
use crate::ids::RepoSlug;
use crate::serde_name::WireName;

/// The API URL used when the file names none.
pub const DEFAULT_API_URL: &str = "https://api.github.com";

/// Why the configuration file was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct ConfigError {
    /// The dotted path of the offending key, e.g. `workers.w1.repositories.a/b.check_argv`.
    pub key: String,
    /// What is wrong with it, as a lowercase sentence.
    pub message: String,
}

/// The whole configuration file.
#[derive(Debug, Clone, PartialEq)]
pub struct CoordinatorConfig {
    /// The GitHub REST API base URL.
    pub api_url: String,
    /// The configured workers by worker session id.
    pub workers: BTreeMap<String, WorkerConfig>,
    /// The explicit account bindings by session id.
    pub sessions: BTreeMap<String, SessionBinding>,
    /// For each target repository, the other repositories its branches may be pushed to.
    pub authorized_publication: BTreeMap<RepoSlug, Vec<RepoSlug>>,
    /// The price table for computed lane costs: the defaults (`lane::usage::DEFAULT_PRICES`)
    /// with the `prices` entries in place of the same prefix.
    pub prices: PriceTable,
    /// How many lanes every worker of this machine may run at once (`None`: no cap).
    pub machine_max_lanes: Option<u64>,
    /// How many lanes may run at once on a target repository across the whole fleet, held
    /// as leases in the coordination state (see `coordinator::leases`).
    pub repo_max_lanes: BTreeMap<RepoSlug, u64>,
}

/// One worker, keyed by its session id (the spec's schema verbatim).
#[derive(Debug, Clone, PartialEq)]
pub struct WorkerConfig {
    /// The session that gives the formal pull request approval.
    pub review_session: String,
    /// The directory under which task worktrees and control files live.
    pub workspace_root: PathBuf,
    /// The repositories whose assigned issues this worker takes.
    pub repositories: BTreeMap<RepoSlug, RepoConfig>,
    /// The logins whose replies may answer questions and resume blockers.
    pub reply_logins: Vec<String>,
    /// Seconds between ticks under `--follow`.
    pub poll_seconds: u64,
    /// Seconds a lane may run before it is killed.
    pub lane_timeout: u64,
    /// Seconds a lane may print nothing (stdout or stderr) before it is killed like a
    /// timeout; `None`: only `lane_timeout` bounds it.
    pub lane_stall_seconds: Option<u64>,
    /// Seconds `check_argv` and `readiness_argv` may run before they are killed.
    pub check_timeout: u64,
    /// A per-task budget (opt-in): reaching it asks a human whether to go on.
    pub budget: Option<Budget>,
    /// How many lanes of this worker may run at once (`None`: no cap).
    pub max_lanes: Option<u64>,
    /// How many lanes of one vendor (an adapter lane's vendor) this worker may run at once.
    pub max_vendor_lanes: BTreeMap<String, u64>,
    /// An issue label to its priority, lower first (see `coordinator::priority`).
    pub priority_labels: BTreeMap<String, u64>,
    /// Seconds a done, failed or cancelled task's worktree and control folder stay on disk
    /// after it ended ([`DEFAULT_WORKTREE_TTL`] unless set).
    pub worktree_ttl: u64,
    /// Seconds its lane transcripts stay after it ended ([`DEFAULT_TRANSCRIPT_TTL`] unless
    /// set; never less than `worktree_ttl`'s removal of the rest).
    pub transcript_ttl: u64,
    /// A trusted argv run with one JSON document on stdin when a task needs a human, becomes
    /// Ready, is done, fails or is cancelled (see `coordinator::notify`).
    pub notify_argv: Option<Vec<String>>,
}

/// How long an ended task's worktree stays, unless `worktree_ttl` says otherwise: 7 days.
pub const DEFAULT_WORKTREE_TTL: u64 = 7 * 24 * 3600;
/// How long an ended task's transcripts stay, unless `transcript_ttl` says otherwise: 30 days.
pub const DEFAULT_TRANSCRIPT_TTL: u64 = 30 * 24 * 3600;

/// A per-task budget: lane spend since acceptance (or the last reply to a budget question)
/// that, once reached, publishes a question checkpoint; it never fails the task.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Budget {
    /// US dollars of known lane cost.
    pub max_cost_usd: Option<f64>,
    /// Tokens of every kind.
    pub max_tokens: Option<u64>,
}

/// One repository a worker serves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoConfig {
    /// The base branch pull requests target.
    pub base: String,
    /// The repository the feature branch is pushed to.
    pub publication_repo: RepoSlug,
    /// The trusted argv that runs the repository's required checks.
    pub check_argv: Vec<String>,
    /// The trusted argv that prints the readiness JSON contract.
    pub readiness_argv: Vec<String>,
}

/// The explicit bindings of one session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionBinding {
    /// The GitHub account the session acts as.
    pub github: GithubAccount,
    /// The git identity that signs commits (required for workers).
    pub git: Option<GitIdentity>,
    /// How each AI slot runs (all six required for workers).
    pub lanes: BTreeMap<LaneSlot, LaneSpec>,
}

/// A GitHub account and where its token comes from (never the token itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GithubAccount {
    /// The account's login.
    pub login: String,
    /// Where the token comes from.
    pub token: TokenSource,
}

/// Where a GitHub token comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// An environment variable of the coordinator's process.
    Env {
        /// The variable's name.
        token_env: String,
    },
    /// The stdout of a trusted argv such as `gh auth token`.
    Argv {
        /// The argv to run.
        token_argv: Vec<String>,
        /// The `GH_CONFIG_DIR` to run it with.
        gh_config_dir: Option<PathBuf>,
    },
}

/// The git identity that authors and signs a worker's commits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GitIdentity {
    /// `user.name`.
    pub name: String,
    /// `user.email`.
    pub email: String,
    /// `gpg.format`.
    pub signing_format: SigningFormat,
    /// `user.signingKey`: an absolute key path for SSH, a key id for OpenPGP.
    pub signing_key: String,
    /// `gpg.ssh.allowedSignersFile` used by `git verify-commit` (required for SSH).
    pub allowed_signers: Option<PathBuf>,
}

/// How commits are signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SigningFormat {
    /// SSH signatures (`gpg.format = ssh`).
    Ssh,
    /// OpenPGP signatures (`gpg.format = openpgp`).
    OpenPgp,
}

/// One of the six AI lane slots a worker session binds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum LaneSlot {
    /// `grok:implementer`.
    #[serde(rename = "grok:implementer")]
    GrokImplementer,
    /// `grok:reviewer`: the inner review of each round.
    #[serde(rename = "grok:reviewer")]
    GrokReviewer,
    /// `grok:pr-reviewer-quality`.
    #[serde(rename = "grok:pr-reviewer-quality")]
    GrokPrReviewerQuality,
    /// `grok:pr-reviewer-logic`.
    #[serde(rename = "grok:pr-reviewer-logic")]
    GrokPrReviewerLogic,
    /// `codex:pr-reviewer-quality`.
    #[serde(rename = "codex:pr-reviewer-quality")]
    CodexPrReviewerQuality,
    /// `codex:pr-reviewer-logic`.
    #[serde(rename = "codex:pr-reviewer-logic")]
    CodexPrReviewerLogic,
}

impl LaneSlot {
    /// Every slot, in the spec's order.
    pub const ALL: [Self; 6] = [
        Self::GrokImplementer,
        Self::GrokReviewer,
        Self::GrokPrReviewerQuality,
        Self::GrokPrReviewerLogic,
        Self::CodexPrReviewerQuality,
        Self::CodexPrReviewerLogic,
    ];
}

/// The slot's name, e.g. `grok:implementer`.
impl WireName for LaneSlot {}

/// A lane slot name that is not one of the six.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown lane slot {0} (expected one of: grok:implementer, grok:reviewer, grok:pr-reviewer-quality, grok:pr-reviewer-logic, codex:pr-reviewer-quality, codex:pr-reviewer-logic)")]
pub struct UnknownLaneSlot(pub String);

impl FromStr for LaneSlot {
    type Err = UnknownLaneSlot;
    fn from_str(s: &str) -> Result<Self, UnknownLaneSlot> {
        Self::ALL
            .into_iter()
            .find(|slot| slot.wire_name() == s)
            .ok_or_else(|| UnknownLaneSlot(s.to_owned()))
    }
}

impl fmt::Display for LaneSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.wire_name())
    }
}

impl CoordinatorConfig {
    /// Returns the repository entry of `worker` for `repo`, if configured.
    pub fn repository(&self, worker: &str, repo: &RepoSlug) -> Option<&RepoConfig> {
        self.workers.get(worker)?.repositories.get(repo)
    }
}

/// Parses and validates the configuration file's text; empty text, `null`, `{}` and an empty
/// or `null` `workers` section are a valid configuration with no worker.
pub fn parse(text: &str) -> Result<CoordinatorConfig, ConfigError> {
    if text.trim().is_empty() {
        return Ok(empty());
    }
    let value: Value =
        serde_json::from_str(text).map_err(|e| err(ROOT, format!("invalid json: {e}")))?;
    if value.is_null() {
        return Ok(empty());
    }
    let root = Obj::new(
        "",
        &value,
        &[
            "api_url",
            "workers",
            "sessions",
            "authorized_publication",
            "prices",
            "machine_max_lanes",
            "repo_max_lanes",
        ],
    )
    .map_err(|e| {
        if e.key.is_empty() {
            err(ROOT, e.message)
        } else {
            e
        }
    })?;
    let api_url = match root.opt_string("api_url")? {
        Some(url) => api_url(url)?,
        None => DEFAULT_API_URL.to_owned(),
    };
    let authorized_publication = authorized_publication(root.get("authorized_publication"))?;
    let mut sessions = BTreeMap::new();
    for (id, value) in entries("sessions", root.get("sessions"))? {
        let key = join("sessions", id);
        if !is_segment(id) {
            return Err(err(key, "session id must be a safe path segment"));
        }
        sessions.insert(id.clone(), session(&key, value)?);
    }
    let mut config = CoordinatorConfig {
        api_url,
        workers: BTreeMap::new(),
        sessions,
        authorized_publication,
        prices: prices(root.get("prices"))?,
        machine_max_lanes: root.opt_count("machine_max_lanes")?,
        repo_max_lanes: repo_lanes(root.get("repo_max_lanes"))?,
    };
    for (id, value) in entries("workers", root.get("workers"))? {
        let worker = worker(&config, id, value)?;
        config.workers.insert(id.clone(), worker);
    }
    Ok(config)
}

/// The key named by errors about the file as a whole.
const ROOT: &str = "config";

fn empty() -> CoordinatorConfig {
    CoordinatorConfig {
        api_url: DEFAULT_API_URL.to_owned(),
        workers: BTreeMap::new(),
        sessions: BTreeMap::new(),
        authorized_publication: BTreeMap::new(),
        prices: PriceTable::default(),
        machine_max_lanes: None,
        repo_max_lanes: BTreeMap::new(),
    }
}

/// Reads `prices`: `{"<model prefix>": {"input": …, "output": …, "cache_read": …,
/// "cache_write": …}}` in US dollars per million tokens.
fn prices(value: Option<&Value>) -> Result<PriceTable, ConfigError> {
    let mut overrides = Vec::new();
    for (prefix, value) in entries("prices", value)? {
        let key = join("prices", prefix);
        if prefix.trim().is_empty() {
            return Err(err(key, "a model prefix must not be empty"));
        }
        let obj = Obj::new(
            &key,
            value,
            &["input", "output", "cache_read", "cache_write"],
        )?;
        let rate =
            |k: &str| -> Result<f64, ConfigError> { read::amount(&obj.key(k), obj.required(k)?) };
        overrides.push(Price {
            prefix: prefix.clone(),
            rates: Rates {
                input: rate("input")?,
                output: rate("output")?,
                cache_read: rate("cache_read")?,
                cache_write: rate("cache_write")?,
            },
        });
    }
    Ok(PriceTable::with(overrides))
}

/// Reads a worker's `budget`: `max_cost_usd` and/or `max_tokens`.
fn budget(key: &str, value: &Value) -> Result<Budget, ConfigError> {
    let obj = Obj::new(key, value, &["max_cost_usd", "max_tokens"])?;
    let budget = Budget {
        max_cost_usd: obj.opt_amount("max_cost_usd")?,
        max_tokens: obj.opt_count("max_tokens")?,
    };
    if budget.max_cost_usd.is_none() && budget.max_tokens.is_none() {
        return Err(err(key, "give max_cost_usd, max_tokens or both"));
    }
    Ok(budget)
}

fn api_url(url: String) -> Result<String, ConfigError> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    match rest {
        Some(host) if !host.is_empty() && !host.contains(char::is_whitespace) => Ok(url),
        _ => Err(err("api_url", "must be an http:// or https:// url")),
    }
}

fn slug(key: &str, value: &str) -> Result<RepoSlug, ConfigError> {
    RepoSlug::parse_as(value, "repository")
        .map_err(|_| err(key, format!("{value} is not a repository slug OWNER/REPO")))
}

fn authorized_publication(
    value: Option<&Value>,
) -> Result<BTreeMap<RepoSlug, Vec<RepoSlug>>, ConfigError> {
    let mut out = BTreeMap::new();
    for (target, routes) in entries("authorized_publication", value)? {
        let key = join("authorized_publication", target);
        let target = slug(&key, target)?;
        let routes = read::strings(&key, routes)?
            .iter()
            .enumerate()
            .map(|(i, route)| slug(&format!("{key}[{i}]"), route))
            .collect::<Result<_, _>>()?;
        out.insert(target, routes);
    }
    Ok(out)
}

fn session(key: &str, value: &Value) -> Result<SessionBinding, ConfigError> {
    let obj = Obj::new(key, value, &["github", "git", "lanes"])?;
    let github = github(&obj.key("github"), obj.required("github")?)?;
    let git = obj
        .get("git")
        .map(|v| git_identity(&obj.key("git"), v))
        .transpose()?;
    let mut lanes = BTreeMap::new();
    for (slot, argv) in entries(&obj.key("lanes"), obj.get("lanes"))? {
        let lane_key = join(&obj.key("lanes"), slot);
        let slot: LaneSlot = slot
            .parse()
            .map_err(|e: UnknownLaneSlot| err(&lane_key, e.to_string()))?;
        lanes.insert(slot, self::lanes::lane_spec(&lane_key, argv)?);
    }
    Ok(SessionBinding { github, git, lanes })
}

fn github(key: &str, value: &Value) -> Result<GithubAccount, ConfigError> {
    let obj = Obj::new(
        key,
        value,
        &["login", "token_env", "token_argv", "gh_config_dir"],
    )?;
    let login = obj.string("login")?;
    if !is_login(&login) {
        return Err(err(obj.key("login"), "must be a github login"));
    }
    let token = match (obj.get("token_env"), obj.get("token_argv")) {
        (Some(_), Some(_)) => {
            return Err(err(
                obj.key("token_argv"),
                "give token_env or token_argv, not both",
            ))
        }
        (None, None) => {
            return Err(err(
                obj.key("token_env"),
                "missing required key (or token_argv)",
            ))
        }
        (Some(_), None) => {
            if obj.get("gh_config_dir").is_some() {
                return Err(err(obj.key("gh_config_dir"), "applies only to token_argv"));
            }
            let token_env = obj.string("token_env")?;
            if !is_env_name(&token_env) {
                return Err(err(
                    obj.key("token_env"),
                    "must be an environment variable name",
                ));
            }
            TokenSource::Env { token_env }
        }
        (None, Some(_)) => TokenSource::Argv {
            token_argv: obj.argv("token_argv")?,
            gh_config_dir: obj.opt_abs_path("gh_config_dir")?,
        },
    };
    Ok(GithubAccount { login, token })
}

fn git_identity(key: &str, value: &Value) -> Result<GitIdentity, ConfigError> {
    let obj = Obj::new(
        key,
        value,
        &[
            "name",
            "email",
            "signing_format",
            "signing_key",
            "allowed_signers",
        ],
    )?;
    let signing_format = match obj.string("signing_format")?.as_str() {
        "ssh" => SigningFormat::Ssh,
        "openpgp" => SigningFormat::OpenPgp,
        _ => return Err(err(obj.key("signing_format"), "must be ssh or openpgp")),
    };
    let signing_key = obj.string("signing_key")?;
    let allowed_signers = obj.opt_abs_path("allowed_signers")?;
    if signing_format == SigningFormat::Ssh {
        if !read::is_absolute(&signing_key) {
            return Err(err(
                obj.key("signing_key"),
                "must be an absolute path for ssh signing",
            ));
        }
        if allowed_signers.is_none() {
            return Err(err(
                obj.key("allowed_signers"),
                "missing required key (ssh signatures are verified against it)",
            ));
        }
    }
    Ok(GitIdentity {
        name: obj.string("name")?,
        email: obj.string("email")?,
        signing_format,
        signing_key,
        allowed_signers,
    })
}

fn worker(
    config: &CoordinatorConfig,
    id: &str,
    value: &Value,
) -> Result<WorkerConfig, ConfigError> {
    let key = join("workers", id);
    if !is_segment(id) {
        return Err(err(key, "worker id must be a safe path segment"));
    }
    let obj = Obj::new(
        &key,
        value,
        &[
            "review_session",
            "workspace_root",
            "repositories",
            "reply_logins",
            "poll_seconds",
            "lane_timeout",
            "lane_stall_seconds",
            "check_timeout",
            "budget",
            "max_lanes",
            "max_vendor_lanes",
            "priority_labels",
            "worktree_ttl",
            "transcript_ttl",
            "notify_argv",
        ],
    )?;
    let review_session = obj.string("review_session")?;
    let own = worker_binding(config, id, &key)?;
    if review_session == id {
        return Err(err(
            obj.key("review_session"),
            "must differ from the worker session",
        ));
    }
    let Some(review) = config.sessions.get(&review_session) else {
        return Err(err(
            obj.key("review_session"),
            format!("review session {review_session} has no entry in sessions"),
        ));
    };
    if review.github.login.eq_ignore_ascii_case(&own.github.login) {
        return Err(err(
            obj.key("review_session"),
            format!(
                "review session {review_session} is bound to the worker's github login {}",
                own.github.login
            ),
        ));
    }
    let reply_logins = obj.strings("reply_logins")?;
    if let Some(i) = reply_logins.iter().position(|l| !is_login(l)) {
        return Err(err(
            format!("{}[{i}]", obj.key("reply_logins")),
            "must be a github login",
        ));
    }
    let mut repositories = BTreeMap::new();
    for (repo, value) in entries(
        &obj.key("repositories"),
        Some(obj.required("repositories")?),
    )? {
        let repo_key = join(&obj.key("repositories"), repo);
        let target = slug(&repo_key, repo)?;
        let entry = repository(config, &repo_key, &target, value)?;
        repositories.insert(target, entry);
    }
    Ok(WorkerConfig {
        review_session,
        workspace_root: obj.abs_path("workspace_root")?,
        repositories,
        reply_logins,
        poll_seconds: obj.seconds("poll_seconds")?,
        lane_timeout: obj.seconds("lane_timeout")?,
        lane_stall_seconds: obj.opt_seconds("lane_stall_seconds")?,
        check_timeout: obj.seconds("check_timeout")?,
        budget: obj
            .get("budget")
            .map(|v| budget(&obj.key("budget"), v))
            .transpose()?,
        max_lanes: obj.opt_count("max_lanes")?,
        max_vendor_lanes: vendor_lanes(&obj.key("max_vendor_lanes"), obj.get("max_vendor_lanes"))?,
        priority_labels: priority_labels(&obj.key("priority_labels"), obj.get("priority_labels"))?,
        worktree_ttl: obj
            .opt_seconds("worktree_ttl")?
            .unwrap_or(DEFAULT_WORKTREE_TTL),
        transcript_ttl: obj
            .opt_seconds("transcript_ttl")?
            .unwrap_or(DEFAULT_TRANSCRIPT_TTL),
        notify_argv: obj
            .get("notify_argv")
            .map(|v| read::argv(&obj.key("notify_argv"), v))
            .transpose()?,
    })
}

/// `priority_labels`: a non-empty issue label to a whole number (lower goes first).
fn priority_labels(key: &str, value: Option<&Value>) -> Result<BTreeMap<String, u64>, ConfigError> {
    let mut map = BTreeMap::new();
    for (label, n) in entries(key, value)? {
        let entry_key = join(key, label);
        if label.trim().is_empty() {
            return Err(err(entry_key, "a label must not be empty"));
        }
        match n.as_u64() {
            Some(n) => map.insert(label.clone(), n),
            None => return Err(err(entry_key, "expected a whole number (lower goes first)")),
        };
    }
    Ok(map)
}

/// `max_vendor_lanes`: a vendor (`claude`, `codex`, `gemini`, `grok`) to a positive count.
fn vendor_lanes(key: &str, value: Option<&Value>) -> Result<BTreeMap<String, u64>, ConfigError> {
    let mut caps = BTreeMap::new();
    for (vendor, n) in entries(key, value)? {
        let entry_key = join(key, vendor);
        if Vendor::parse(vendor).is_none() {
            return Err(err(
                entry_key,
                "unknown vendor (expected claude, codex, gemini or grok)",
            ));
        }
        match n.as_u64() {
            Some(n) if n > 0 => caps.insert(vendor.clone(), n),
            _ => return Err(err(entry_key, "expected a positive whole number")),
        };
    }
    Ok(caps)
}

/// `repo_max_lanes`: a target repository (`owner/repo`) to a positive whole number.
fn repo_lanes(value: Option<&Value>) -> Result<BTreeMap<RepoSlug, u64>, ConfigError> {
    let key = "repo_max_lanes";
    let mut caps = BTreeMap::new();
    for (repo, n) in entries(key, value)? {
        let entry_key = join(key, repo);
        let target = slug(&entry_key, repo)?;
        match n.as_u64() {
            Some(n) if n > 0 => caps.insert(target, n),
            _ => return Err(err(entry_key, "expected a positive whole number")),
        };
    }
    Ok(caps)
}

/// Returns the worker's own binding, which must sign commits and bind every lane slot.
fn worker_binding<'a>(
    config: &'a CoordinatorConfig,
    id: &str,
    key: &str,
) -> Result<&'a SessionBinding, ConfigError> {
    let Some(own) = config.sessions.get(id) else {
        return Err(err(key, format!("worker {id} has no entry in sessions")));
    };
    let session_key = join("sessions", id);
    if own.git.is_none() {
        return Err(err(
            join(&session_key, "git"),
            "missing required key (a worker session signs commits)",
        ));
    }
    if let Some(slot) = LaneSlot::ALL
        .into_iter()
        .find(|s| !own.lanes.contains_key(s))
    {
        return Err(err(
            join(&join(&session_key, "lanes"), slot.wire_name()),
            "missing lane slot (a worker session binds all six)",
        ));
    }
    Ok(own)
}

fn repository(
    config: &CoordinatorConfig,
    key: &str,
    target: &RepoSlug,
    value: &Value,
) -> Result<RepoConfig, ConfigError> {
    let obj = Obj::new(
        key,
        value,
        &["base", "publication_repo", "check_argv", "readiness_argv"],
    )?;
    let base = obj.string("base")?;
    if !is_valid_branch_name(&base) {
        return Err(err(obj.key("base"), "must be a valid git branch name"));
    }
    let publication = slug(
        &obj.key("publication_repo"),
        &obj.string("publication_repo")?,
    )?;
    if !same_repo(&publication, target) {
        let authorized = config
            .authorized_publication
            .iter()
            .filter(|(t, _)| same_repo(t, target))
            .flat_map(|(_, routes)| routes)
            .any(|route| same_repo(route, &publication));
        if !authorized {
            return Err(err(
                obj.key("publication_repo"),
                format!("publication to {publication} is not listed in authorized_publication for {target}"),
            ));
        }
    }
    Ok(RepoConfig {
        base,
        publication_repo: publication,
        check_argv: obj.argv("check_argv")?,
        readiness_argv: obj.argv("readiness_argv")?,
    })
}

/// Reports whether two slugs name the same GitHub repository (GitHub ignores case).
fn same_repo(a: &RepoSlug, b: &RepoSlug) -> bool {
    a.owner().eq_ignore_ascii_case(b.owner()) && a.name().eq_ignore_ascii_case(b.name())
}

/// Reports whether `s` looks like a GitHub login (`[A-Za-z0-9-]`, or an app's `name[bot]`).
fn is_login(s: &str) -> bool {
    let name = s.strip_suffix("[bot]").unwrap_or(s);
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

fn is_env_name(s: &str) -> bool {
    s.bytes()
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
mod tests;
