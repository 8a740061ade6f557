//! Execution identity pinning: the part of the configuration a task's execution depends on,
//! recorded when the task starts and compared on every later tick. Anything else (other
//! repositories, workers or sessions, poll intervals, timeouts, token sources) may change
//! freely.
//!
//! The pin is replicated with the task checkpoint, so it never holds the signing key's path
//! or the allowed-signers path (spec "Evidence hygiene"): each is pinned as a digest of its
//! configured value, which still tells a changed identity from an unchanged one. Checkpoints
//! written before that still hold both paths; [`upgrade_stored`] turns them into the same
//! digests when such a checkpoint is read, so an unchanged configuration still matches, and
//! the paths leave the checkpoint with its next save (older commits of the state branch keep
//! them: history is not rewritten).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::Serialize;
use serde_json::Value;
use sha2::Digest;
use sha2::Sha256;

use super::CoordinatorConfig;
use super::GitIdentity;
use super::LaneSlot;
use super::LaneSpec;
use super::SigningFormat;
use crate::ids::RepoSlug;

/// Everything a task's execution depends on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinnedIdentity {
    /// The worker session id.
    pub worker: String,
    /// The target repository, `OWNER/REPO`.
    pub repo: String,
    /// The base branch.
    pub base: String,
    /// The repository the branch is pushed to.
    pub publication_repo: String,
    /// The trusted check argv.
    pub check_argv: Vec<String>,
    /// The trusted readiness argv.
    pub readiness_argv: Vec<String>,
    /// The session that formally approves.
    pub review_session: String,
    /// The worker's GitHub login.
    pub worker_login: String,
    /// The review session's GitHub login.
    pub review_login: String,
    /// The worker's six lane argv.
    pub lanes: BTreeMap<LaneSlot, LaneSpec>,
    /// The git identity that signs the task's commits.
    pub git: PinnedGit,
}

/// The pinned git identity: who signs in the clear (both are in every commit anyway), and
/// digests of where the key and the allowed signers are configured, never the paths.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PinnedGit {
    /// `user.name`.
    pub name: String,
    /// `user.email`.
    pub email: String,
    /// `gpg.format`.
    pub signing_format: SigningFormat,
    /// [`digest`] of the configured `signing_key`.
    pub signing_key_digest: String,
    /// [`digest`] of the configured `allowed_signers`, when one is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_signers_digest: Option<String>,
}

impl PinnedGit {
    /// Returns the pin of `git`.
    pub fn of(git: &GitIdentity) -> PinnedGit {
        PinnedGit {
            name: git.name.clone(),
            email: git.email.clone(),
            signing_format: git.signing_format,
            signing_key_digest: digest("signing_key", &git.signing_key),
            allowed_signers_digest: git
                .allowed_signers
                .as_ref()
                .map(|p| digest("allowed_signers", &p.to_string_lossy())),
        }
    }
}

/// Returns `sha256:<hex>` of a configured value, bound to its key so that one value under
/// two keys digests differently.
pub fn digest(key: &str, value: &str) -> String {
    let mut hasher = Sha256::new();
    hasher.update(b"agent-coord pinned identity v1\0");
    hasher.update(key.as_bytes());
    hasher.update(b"\0");
    hasher.update(value.as_bytes());
    let hex: String = hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// Replaces the `git.signing_key` and `git.allowed_signers` paths of a stored pin (written
/// before paths were digested) by their digests, in place; returns whether it changed. A
/// path that is not a string digests as empty: it matches no configuration, so the task
/// stops on a changed-identity blocker instead of running unchecked.
pub fn upgrade_stored(pinned: &mut Value) -> bool {
    let Some(git) = pinned.get_mut("git").and_then(Value::as_object_mut) else {
        return false;
    };
    let key = git.remove("signing_key");
    let allowed = git.remove("allowed_signers");
    if key.is_none() && allowed.is_none() {
        return false;
    }
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    if let Some(key) = key {
        let d = digest("signing_key", &text(&key));
        git.insert("signing_key_digest".into(), Value::String(d));
    }
    if let Some(allowed) = allowed.filter(|v| !v.is_null()) {
        let d = digest("allowed_signers", &text(&allowed));
        git.insert("allowed_signers_digest".into(), Value::String(d));
    }
    true
}

impl PinnedIdentity {
    /// Reads a checkpoint's stored pin, old checkpoints with signing paths included
    /// ([`upgrade_stored`]); `None` when it is not a pin at all.
    pub fn from_stored(stored: &Value) -> Option<PinnedIdentity> {
        let mut value = stored.clone();
        upgrade_stored(&mut value);
        serde_json::from_value(value).ok()
    }
}

/// Returns the pinned identity of `worker` serving `repo`, or `None` when the configuration
/// does not (or no longer) serves that pair.
pub fn pin(config: &CoordinatorConfig, worker: &str, repo: &RepoSlug) -> Option<PinnedIdentity> {
    let worker_config = config.workers.get(worker)?;
    let entry = worker_config.repositories.get(repo)?;
    let own = config.sessions.get(worker)?;
    let review = config.sessions.get(&worker_config.review_session)?;
    Some(PinnedIdentity {
        worker: worker.to_owned(),
        repo: repo.to_string(),
        base: entry.base.clone(),
        publication_repo: entry.publication_repo.to_string(),
        check_argv: entry.check_argv.clone(),
        readiness_argv: entry.readiness_argv.clone(),
        review_session: worker_config.review_session.clone(),
        worker_login: own.github.login.clone(),
        review_login: review.github.login.clone(),
        lanes: own.lanes.clone(),
        git: PinnedGit::of(own.git.as_ref()?),
    })
}

impl PinnedIdentity {
    /// Returns the dotted keys whose values differ in `current`; empty when unchanged.
    pub fn changes(&self, current: &PinnedIdentity) -> Vec<String> {
        // Destructured without `..`, so a new field cannot be forgotten here.
        let Self {
            worker,
            repo,
            base,
            publication_repo,
            check_argv,
            readiness_argv,
            review_session,
            worker_login,
            review_login,
            lanes,
            git,
        } = self;
        let mut out = Vec::new();
        let mut diff = |key: &str, changed: bool| {
            if changed {
                out.push(key.to_owned());
            }
        };
        diff("worker", *worker != current.worker);
        diff("repo", *repo != current.repo);
        diff("base", *base != current.base);
        diff(
            "publication_repo",
            *publication_repo != current.publication_repo,
        );
        diff("check_argv", *check_argv != current.check_argv);
        diff("readiness_argv", *readiness_argv != current.readiness_argv);
        diff("review_session", *review_session != current.review_session);
        diff("worker_login", *worker_login != current.worker_login);
        diff("review_login", *review_login != current.review_login);
        for slot in LaneSlot::ALL {
            diff(
                &format!("lanes.{slot}"),
                lanes.get(&slot) != current.lanes.get(&slot),
            );
        }
        let PinnedGit {
            name,
            email,
            signing_format,
            signing_key_digest,
            allowed_signers_digest,
        } = git;
        diff("git.name", *name != current.git.name);
        diff("git.email", *email != current.git.email);
        diff(
            "git.signing_format",
            *signing_format != current.git.signing_format,
        );
        diff(
            "git.signing_key",
            *signing_key_digest != current.git.signing_key_digest,
        );
        diff(
            "git.allowed_signers",
            *allowed_signers_digest != current.git.allowed_signers_digest,
        );
        out
    }
}
