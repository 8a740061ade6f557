//! What the configuration binds one worker to, as a tick reads it: where each task's
//! worktree and control folder live, a repository's settings and publication target, the
//! execution identity a task pins, the signing identity, the lane argv and the trusted argv's
//! environment. Lookups only: no I/O, no state of the tick.

use std::path::PathBuf;

use agent_coord_shared::coordinator::config;
use agent_coord_shared::coordinator::config::CoordinatorConfig;
use agent_coord_shared::coordinator::config::LaneInvocation;
use agent_coord_shared::coordinator::config::LaneSlot;
use agent_coord_shared::coordinator::config::LaneSpec;
use agent_coord_shared::coordinator::config::PinnedIdentity;
use agent_coord_shared::coordinator::config::SigningFormat;
use agent_coord_shared::coordinator::config::WorkerConfig;
use agent_coord_shared::coordinator::task::Task;
use agent_coord_shared::ids::RepoSlug;

use super::git;
use super::preflight::control_dir;

/// One worker of the configuration.
pub(super) struct Setup<'a> {
    /// The whole configuration (sessions, accounts, the API).
    pub(super) config: &'a CoordinatorConfig,
    /// The worker's session id.
    pub(super) worker_id: String,
    /// The worker's own configuration.
    pub(super) worker: &'a WorkerConfig,
}

impl Setup<'_> {
    /// Returns the task's worktree under the workspace root.
    pub(super) fn worktree(&self, task: &Task) -> PathBuf {
        PathBuf::from(&self.worker.workspace_root).join(&task.task_id)
    }

    /// Returns the task's folder in the control directory (prompts, outputs, diffs).
    pub(super) fn task_control(&self, task: &Task) -> PathBuf {
        control_dir(self.worker).join(&task.task_id)
    }

    /// The configuration of a target repository of this worker.
    pub(super) fn repo_config(&self, repo: &str) -> Option<&'_ config::RepoConfig> {
        let slug: RepoSlug = repo.parse().ok()?;
        self.worker.repositories.get(&slug)
    }

    /// The execution identity a task on `repo` would pin now.
    pub(super) fn pin_of(&self, repo: &str) -> Option<config::PinnedIdentity> {
        let slug: RepoSlug = repo.parse().ok()?;
        config::pin(self.config, &self.worker_id, &slug)
    }

    /// Returns the keys of the pinned identity that changed since acceptance, if any; a
    /// stored pin that cannot be read counts as changed (never as unchecked).
    pub(super) fn pin_changes(&self, task: &Task) -> Option<Vec<String>> {
        let Some(pinned) = PinnedIdentity::from_stored(&task.pinned) else {
            return Some(vec!["pinned".to_owned()]);
        };
        let current = self.pin_of(&task.repo);
        let changes = match current {
            Some(current) => pinned.changes(&current),
            None => vec![format!(
                "workers.{}.repositories.{}",
                self.worker_id, task.repo
            )],
        };
        (!changes.is_empty()).then_some(changes)
    }

    /// Returns the repository the task's pull request is opened on.
    pub(super) fn publication(&self, task: &Task) -> String {
        self.repo_config(&task.repo)
            .map(|r| r.publication_repo.to_string())
            .unwrap_or_else(|| task.repo.clone())
    }

    /// Returns the identity the worker's commits are signed with, if it has one.
    pub(super) fn signer(&self) -> Option<git::Signer> {
        let git = self.config.sessions.get(&self.worker_id)?.git.as_ref()?;
        Some(git::Signer {
            name: git.name.clone(),
            email: git.email.clone(),
            format: match git.signing_format {
                SigningFormat::Ssh => git::SignFormat::Ssh,
                SigningFormat::OpenPgp => git::SignFormat::OpenPgp,
            },
            key: git.signing_key.to_string(),
            allowed_signers: git.allowed_signers.clone(),
        })
    }

    /// Returns how a lane slot is configured, if it is.
    pub(super) fn lane_spec(&self, slot: LaneSlot) -> Option<&LaneSpec> {
        self.config
            .sessions
            .get(&self.worker_id)
            .and_then(|s| s.lanes.get(&slot))
    }

    /// Returns the argv of a lane slot (empty when none is configured): a raw argv as
    /// written, an adapter lane as `agent-coord lane VENDOR --role ROLE …` of this binary.
    pub(super) fn lane_argv(&self, slot: LaneSlot) -> Vec<String> {
        let exe = std::env::current_exe()
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_else(|_| "agent-coord".to_owned());
        let inv = LaneInvocation {
            self_exe: &exe,
            // A little below the coordinator's own limit, so the adapter ends the vendor's
            // process group itself and answers `STATUS: timeout` before it is killed.
            timeout_seconds: self.worker.lane_timeout.saturating_sub(5).max(1),
        };
        self.lane_spec(slot)
            .map(|spec| spec.argv(slot, &inv))
            .unwrap_or_default()
    }

    /// The environment of the trusted `check_argv` and `readiness_argv` (spec
    /// "Assumptions"): the head, the pinned base, the route and the worktree.
    pub(super) fn trusted_env(&self, task: &Task, head: &str) -> Vec<(String, String)> {
        let dir = self.worktree(task);
        vec![
            ("AGENT_COORDINATOR_HEAD".to_owned(), head.to_owned()),
            (
                "AGENT_COORDINATOR_BASE".to_owned(),
                task.base_sha.clone().unwrap_or_default(),
            ),
            ("AGENT_COORDINATOR_REPO".to_owned(), task.repo.clone()),
            (
                "AGENT_COORDINATOR_PR".to_owned(),
                task.pr.map(|p| p.to_string()).unwrap_or_default(),
            ),
            (
                "AGENT_COORDINATOR_SESSION".to_owned(),
                self.worker_id.clone(),
            ),
            (
                "AGENT_COORDINATOR_WORKTREE".to_owned(),
                dir.to_string_lossy().into_owned(),
            ),
        ]
    }
}
