//! Sync: share the state branch and heartbeat refs through a git remote.
//!
//! One round: ask the remote for its refs, fetch them into private tracking refs, bring
//! the local branch level with the remote (fast-forward, or a record-level merge commit
//! whose first parent is the remote tip), then push the branch and this machine's
//! heartbeat ref in one atomic push, each with a lease on the value just fetched. A
//! rejected push means someone else published first: fetch and go again. The push the
//! remote accepts is the linearisation point.

use std::collections::BTreeMap;

use agent_coord_shared::rules::reconcile::Conflict;
use agent_coord_shared::rules::reconcile::LostClaim;
use agent_coord_shared::rules::Ctx;
use agent_coord_shared::serde_name::serde_name;
use gix::ObjectId;

use crate::git_subprocess::Git;
use crate::git_subprocess::GitError;
use crate::git_subprocess::PushUpdate;
use crate::store::ref_target;
use crate::store::tracking_heartbeat_prefix;
use crate::store::tracking_state_ref;
use crate::store::Store;
use crate::store::StoreError;
use crate::store::HEARTBEAT_PREFIX;

pub(crate) mod epoch;
mod flags;
mod merge;
mod patience;
mod publish;
mod stamp;

pub(crate) use flags::default_remote;
pub(crate) use flags::run_sync;
pub(crate) use flags::run_sync_within;
pub(crate) use flags::Publishing;
pub(crate) use flags::SyncFlags;
pub(crate) use patience::Patience;
pub(crate) use publish::publish_heartbeat;
pub(crate) use stamp::last_synced;

use merge::merge;

/// How many times leveling re-merges because local writers keep committing.
const LEVEL_ATTEMPTS: u32 = 20;

/// Returns the ref recording the last remote tip this clone's branch fully contains.
fn integrated_ref(remote: &str) -> String {
    format!(
        "{}{}/integrated",
        crate::store::REMOTES_PREFIX,
        crate::store::tracking_name(remote)
    )
}

/// Why a sync failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SyncError {
    /// The remote could not be reached or refused us.
    #[error("cannot sync with remote {remote}: {source}")]
    Remote {
        /// The remote name or URL.
        remote: String,
        /// What git said.
        source: GitError,
    },
    /// Other machines kept publishing first for the whole time budget.
    #[error("sync contention: the remote {remote} moved {rounds} times in {secs} s while pushing; nothing was lost locally, try again")]
    Contention {
        /// The remote.
        remote: String,
        /// Rounds tried.
        rounds: u32,
        /// Seconds spent.
        secs: u64,
    },
    /// A local store failure.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// How the state branch ended up relative to the remote (its name: `sync --json`'s `result`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum BranchOutcome {
    /// Neither side has a state branch yet.
    Empty,
    /// Both sides were already equal.
    UpToDate,
    /// The local branch caught up with the remote.
    FastForward,
    /// The remote caught up with the local branch.
    Pushed,
    /// Both sides had changes; a merge commit joined them and was pushed.
    Merged,
}

impl BranchOutcome {
    pub(crate) fn as_str(self) -> &'static str {
        serde_name(&self)
    }
}

/// What a sync did.
#[derive(Debug, Clone)]
pub(crate) struct SyncReport {
    pub(crate) remote: String,
    pub(crate) outcome: BranchOutcome,
    pub(crate) tip: Option<ObjectId>,
    pub(crate) local_changes: usize,
    pub(crate) remote_changes: usize,
    pub(crate) lost_claims: Vec<LostClaim>,
    pub(crate) conflicts: Vec<Conflict>,
    pub(crate) heartbeat_pushed: bool,
    pub(crate) rounds: u32,
}

/// Returns the line that tells a local holder its claim was lost to the remote's holder.
pub(crate) fn lost_claim_line(lost: &LostClaim) -> String {
    let winner = lost
        .remote_holder
        .as_deref()
        .unwrap_or("nobody (released on the remote)");
    format!(
        "lost claim {}: {} no longer holds it; holder on the remote: {winner}",
        lost.label, lost.local_holder
    )
}

/// Syncs the store with `remote`, trying for as long as `patience` allows; `ctx` gives a
/// fresh rule context (clock, identity).
pub(crate) fn sync(
    store: &Store,
    remote: &str,
    ctx: &dyn Fn() -> Ctx,
    patience: Patience,
) -> Result<SyncReport, SyncError> {
    let git = Git::new(store.repo.git_dir());
    // One sync per repository at a time: concurrent fetches would fight over the tracking
    // refs. The kernel releases the lock if the holder dies; correctness still comes from
    // the leases, so a lock that cannot be taken only means we go without it.
    let _one_at_a_time = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(store.repo.git_dir().join("agent-coord-sync.lock"))
        .ok()
        .filter(|f| f.lock().is_ok());
    let mut report = SyncReport {
        remote: remote.to_owned(),
        outcome: BranchOutcome::Empty,
        tip: None,
        local_changes: 0,
        remote_changes: 0,
        lost_claims: Vec::new(),
        conflicts: Vec::new(),
        heartbeat_pushed: false,
        rounds: 0,
    };
    match rounds(store, remote, ctx, patience, &git, &mut report) {
        Ok(()) => Ok(report),
        Err(e) => {
            // Merges this sync committed locally stay; their lost claims must still reach
            // the holder, whatever went wrong afterwards.
            for lost in &report.lost_claims {
                store.warn(lost_claim_line(lost));
            }
            Err(e)
        }
    }
}

/// Runs fetch-level-push rounds until one publishes, the time budget runs out, or the
/// remote fails; `report` collects what the rounds did.
fn rounds(
    store: &Store,
    remote: &str,
    ctx: &dyn Fn() -> Ctx,
    patience: Patience,
    git: &Git,
    report: &mut SyncReport,
) -> Result<(), SyncError> {
    let remote_err = |source| SyncError::Remote {
        remote: remote.to_owned(),
        source,
    };
    let own_hb = store.heartbeat_ref();
    // Once the remote has the state branch it keeps it: later rounds skip asking, and so
    // does a sync that finds the branch fetched from it before (a `git ls-remote` less).
    // Should the remote have lost it since, that fetch fails and the round asks after all.
    let mut remote_has_branch = ref_target(&store.repo, &tracking_state_ref(remote))?.is_some();
    let mut believed = remote_has_branch;
    let mut round = 0;
    loop {
        round += 1;
        report.rounds = round;
        if !remote_has_branch {
            let advertised: BTreeMap<String, String> = git
                .ls_remote(remote, &[&store.state_ref])
                .map_err(remote_err)?
                .into_iter()
                .collect();
            remote_has_branch = advertised.contains_key(&store.state_ref);
        }
        let mut refspecs = vec![format!(
            "+{HEARTBEAT_PREFIX}*:{}*",
            tracking_heartbeat_prefix(remote)
        )];
        if remote_has_branch {
            refspecs.push(format!(
                "+{}:{}",
                store.state_ref,
                tracking_state_ref(remote)
            ));
        }
        // What this machine last saw of the remote: the base for replaying onto a new epoch
        // whose cut commit never reached us.
        let last_seen = ref_target(&store.repo, &integrated_ref(remote))?;
        match git.fetch(remote, &refspecs) {
            Ok(()) => {}
            Err(_) if believed => {
                believed = false;
                remote_has_branch = false;
                continue;
            }
            Err(e) => return Err(remote_err(e)),
        }
        believed = false;
        record_fetched_beats(store, remote);
        // What was fetched is what the leases expect, even if the remote moved since ls-remote.
        let remote_tip = if remote_has_branch {
            ref_target(&store.repo, &tracking_state_ref(remote))?
        } else {
            None
        };
        let remote_hb = ref_target(
            &store.repo,
            &format!("{}{}", tracking_heartbeat_prefix(remote), store.machine),
        )?;

        let (local_tip, outcome) = level_with_remote(store, remote_tip, last_seen, report, ctx)?;
        if let Some(r) = remote_tip {
            // The local branch now contains everything the remote had: the base for any
            // later replay onto a new epoch whose cut never reaches this machine.
            store.set_ref(&integrated_ref(remote), r, "sync: integrated")?;
        }
        let mut updates = Vec::new();
        if let Some(local) = local_tip.filter(|l| Some(*l) != remote_tip) {
            updates.push(PushUpdate {
                refname: store.state_ref.clone(),
                new: local.to_string(),
                expected: remote_tip.map(|r| r.to_string()),
            });
        }
        let own = ref_target(&store.repo, &own_hb)?;
        if let Some(own) = own.filter(|o| Some(*o) != remote_hb) {
            updates.push(PushUpdate {
                refname: own_hb.clone(),
                new: own.to_string(),
                expected: remote_hb.map(|r| r.to_string()),
            });
        }
        if updates.is_empty() {
            report.outcome = outcome;
            report.tip = local_tip;
            finish(store, remote, git);
            return Ok(());
        }
        let results = git.push(remote, &updates).map_err(remote_err)?;
        if !results.is_empty() && results.iter().all(|r| r.accepted()) {
            for u in &updates {
                let tracking = if u.refname == store.state_ref {
                    tracking_state_ref(remote)
                } else {
                    format!("{}{}", tracking_heartbeat_prefix(remote), store.machine)
                };
                if let Ok(id) = ObjectId::from_hex(u.new.as_bytes()) {
                    store.set_ref(&tracking, id, "sync: pushed")?;
                }
            }
            if let Some(tip) = local_tip {
                store.set_ref(&integrated_ref(remote), tip, "sync: integrated")?;
            }
            report.heartbeat_pushed |= updates.iter().any(|u| u.refname == own_hb);
            report.outcome = match outcome {
                BranchOutcome::Merged => BranchOutcome::Merged,
                _ if updates.iter().any(|u| u.refname == store.state_ref) => BranchOutcome::Pushed,
                other => other,
            };
            report.tip = local_tip;
            finish(store, remote, git);
            return Ok(());
        }
        if let Some(refused) = results.iter().find(|r| !r.accepted() && !r.lost_race()) {
            return Err(SyncError::Remote {
                remote: remote.to_owned(),
                source: GitError::Failed {
                    command: "push".into(),
                    message: format!("{} {}", refused.refname, refused.summary),
                },
            });
        }
        // Someone published first: fetch again and re-level on top of what they pushed.
        if patience.exhausted(round) {
            return Err(SyncError::Contention {
                remote: remote.to_owned(),
                rounds: round,
                secs: patience.elapsed_secs(),
            });
        }
        patience.back_off(round);
    }
}

/// Records the sync time and lets git pack loose objects when it is worth it.
fn finish(store: &Store, remote: &str, git: &Git) {
    stamp::record(store, remote);
    if store.gc_may_be_due() {
        git.maintenance_auto();
    }
}

/// Brings the local branch level with (or ahead of) `remote_tip`; returns the local tip.
fn level_with_remote(
    store: &Store,
    remote_tip: Option<ObjectId>,
    last_seen: Option<ObjectId>,
    report: &mut SyncReport,
    ctx: &dyn Fn() -> Ctx,
) -> Result<(Option<ObjectId>, BranchOutcome), StoreError> {
    // What earlier rounds merged and committed stays reported (a claim lost in a round
    // whose push then lost the race is not found again by the next round's merge).
    let kept = (report.lost_claims.len(), report.conflicts.len());
    for _ in 0..LEVEL_ATTEMPTS {
        // A retry recomputes the merge: forget what the abandoned attempt reported.
        report.lost_claims.truncate(kept.0);
        report.conflicts.truncate(kept.1);
        report.local_changes = 0;
        report.remote_changes = 0;
        let local_tip = store.tip()?;
        let (local, remote) = match (local_tip, remote_tip) {
            (None, None) => return Ok((None, BranchOutcome::Empty)),
            (Some(l), None) => return Ok((Some(l), BranchOutcome::Pushed)),
            (None, Some(r)) => {
                if store.move_ref(&store.state_ref, None, r, "sync: fast-forward")? {
                    return Ok((Some(r), BranchOutcome::FastForward));
                }
                continue;
            }
            (Some(l), Some(r)) if l == r => return Ok((Some(l), BranchOutcome::UpToDate)),
            (Some(l), Some(r)) => (l, r),
        };
        let base = store
            .repo
            .merge_base(local, remote)
            .map_err(StoreError::git)?
            .map(|b| b.detach());
        if base == Some(local) {
            if store.move_ref(&store.state_ref, Some(local), remote, "sync: fast-forward")? {
                report.remote_changes += 1;
                return Ok((Some(remote), BranchOutcome::FastForward));
            }
            continue;
        }
        if base == Some(remote) {
            return Ok((Some(local), BranchOutcome::Pushed));
        }
        let merged = if base.is_some() {
            merge(store, base, local, remote, &[remote, local], report, &ctx())?
        } else {
            match across_epochs(store, local, remote, last_seen, report, ctx)? {
                Some(Across::Publish) => return Ok((Some(local), BranchOutcome::Pushed)),
                Some(Across::Replayed(commit)) => commit,
                // Unrelated histories of one epoch (two machines that started separately).
                None => merge(store, None, local, remote, &[remote, local], report, &ctx())?,
            }
        };
        if store.move_ref(&store.state_ref, Some(local), merged, "sync: merge")? {
            let outcome = if merged == remote {
                BranchOutcome::FastForward
            } else {
                BranchOutcome::Merged
            };
            return Ok((Some(merged), outcome));
        }
        // A local writer committed meanwhile: merge again from its new tip.
    }
    Err(StoreError::Contention {
        attempts: LEVEL_ATTEMPTS,
    })
}

/// What to do with histories that a new epoch separated.
enum Across {
    /// The remote is exactly what our new epoch was cut from: push the epoch.
    Publish,
    /// One side's later changes were replayed onto the newer epoch as this commit.
    Replayed(ObjectId),
}

/// Handles a local and a remote tip with no common history when one side started a newer
/// epoch: the other side's changes since the epoch's cut are replayed onto it, with the
/// newer epoch as the only parent, so the old history is never merged back in.
fn across_epochs(
    store: &Store,
    local: ObjectId,
    remote: ObjectId,
    last_seen: Option<ObjectId>,
    report: &mut SyncReport,
    ctx: &dyn Fn() -> Ctx,
) -> Result<Option<Across>, StoreError> {
    let (le, re) = (
        epoch::of_commit(store, local)?,
        epoch::of_commit(store, remote)?,
    );
    if le.number == 0 && re.number == 0 {
        return Ok(None);
    }
    let known = |c: Option<ObjectId>| c.filter(|c| store.repo.find_commit(*c).is_ok());
    if re.number > le.number && re.previous_tip == Some(local) {
        return Ok(Some(Across::Replayed(remote)));
    }
    if le.number > re.number && le.previous_tip == Some(remote) {
        return Ok(Some(Across::Publish));
    }
    // What the local side's changes are relative to: where its history meets the remote's
    // cut (when this clone has it), else the last remote tip it integrated. A local epoch
    // root has no history of its own, so its cut stands in for it.
    let reference = if le.number > re.number {
        Some(remote)
    } else {
        known(re.previous_tip).or(last_seen)
    };
    let meet = |from: ObjectId, to: ObjectId| -> Result<Option<ObjectId>, StoreError> {
        Ok(store
            .repo
            .merge_base(from, to)
            .map_err(StoreError::git)?
            .map(|b| b.detach()))
    };
    let mut base = match reference {
        Some(r) => meet(local, r)?,
        None => None,
    };
    if let (None, Some(cut), Some(r)) = (base, known(le.previous_tip), reference) {
        base = meet(cut, r)?;
    }
    let Some(base) = base else {
        // Merging with no base would bring back every record either side deleted.
        return Err(StoreError::git(format!(
            "cannot place this clone's history relative to the remote's epoch {} (local epoch {}); \
             to take the remote's state, run `git update-ref -d {}` and sync again (unsynced local \
             writes are then dropped)",
            re.number, le.number, store.state_ref
        )));
    };
    let commit = if re.number > le.number {
        // The remote compacted: replay what we wrote since the base onto it.
        if base == local {
            return Ok(Some(Across::Replayed(remote)));
        }
        merge(store, Some(base), local, remote, &[remote], report, &ctx())?
    } else if le.number > re.number {
        // We compacted: the remote still wins clashes (a claim another machine made since
        // our cut stands); only the parent is our epoch.
        merge(store, Some(base), local, remote, &[local], report, &ctx())?
    } else {
        // Two machines cut the same epoch number: join them relative to their cuts.
        merge(
            store,
            Some(base),
            local,
            remote,
            &[remote, local],
            report,
            &ctx(),
        )?
    };
    Ok(Some(Across::Replayed(commit)))
}

/// Counts commits on the local branch not on the remote's tracking ref, and the reverse.
pub(crate) fn ahead_behind(
    store: &Store,
    remote: &str,
) -> Result<Option<(usize, usize)>, StoreError> {
    let (Some(local), Some(tracking)) = (
        store.tip()?,
        ref_target(&store.repo, &tracking_state_ref(remote))?,
    ) else {
        return Ok(None);
    };
    let count = |from: ObjectId, hide: ObjectId| -> Result<usize, StoreError> {
        let walk = store
            .repo
            .rev_walk([from])
            .with_hidden([hide])
            .all()
            .map_err(StoreError::git)?;
        Ok(walk.filter_map(Result::ok).count())
    };
    Ok(Some((count(local, tracking)?, count(tracking, local)?)))
}

/// Adds the heartbeat refs just fetched from `remote` to their history (best effort: a
/// failure costs `--at` that moment, and says so).
fn record_fetched_beats(store: &Store, remote: &str) {
    let prefix = tracking_heartbeat_prefix(remote);
    let fetched = match store.refs_with_prefix(&prefix) {
        Ok(refs) => refs,
        Err(e) => {
            store.warn(format!("warning: heartbeat history not recorded: {e}"));
            return;
        }
    };
    for (name, commit) in fetched {
        let recorded = crate::store::tree::of_commit(&store.repo, commit)
            .map_err(crate::store::StoreError::git)
            .and_then(|tree| crate::store::history::record(store, &name, tree));
        if let Err(e) = recorded {
            store.warn(format!(
                "warning: heartbeat history of {name} not recorded: {e}"
            ));
        }
    }
}
