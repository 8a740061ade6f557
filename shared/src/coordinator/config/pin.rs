//! Execution identity pinning: the part of the configuration a task's execution depends on,
//! recorded when the task starts and compared on every later tick. Anything else (other
//! repositories, workers or sessions, poll intervals, timeouts, token sources) may change
//! freely.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde::Serialize;

use super::CoordinatorConfig;
use super::GitIdentity;
use super::LaneSlot;
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
    pub lanes: BTreeMap<LaneSlot, Vec<String>>,
    /// The git identity that signs the task's commits.
    pub git: GitIdentity,
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
        git: own.git.clone()?,
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
        let GitIdentity {
            name,
            email,
            signing_format,
            signing_key,
            allowed_signers,
        } = git;
        diff("git.name", *name != current.git.name);
        diff("git.email", *email != current.git.email);
        diff(
            "git.signing_format",
            *signing_format != current.git.signing_format,
        );
        diff("git.signing_key", *signing_key != current.git.signing_key);
        diff(
            "git.allowed_signers",
            *allowed_signers != current.git.allowed_signers,
        );
        out
    }
}
