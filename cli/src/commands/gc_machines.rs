//! `agent-coord gc --machines --older-than <duration>`: prune the heartbeat refs of machines
//! silent longer than a retention period — locally and, with a remote, on the remote —
//! so decommissioned machines stop showing up and stop costing a fetch. A dry run unless
//! `--apply`; never this machine's own ref. The selection is shared's
//! [`gc::machines::select`]; this file reads the refs and deletes them, each with a lease
//! on the value it judged.

use agent_coord_shared::output::gc::MachinesReport;
use agent_coord_shared::output::gc::PrunedMachine;
use agent_coord_shared::record::from_bytes;
use agent_coord_shared::rules::gc;
use agent_coord_shared::rules::gc::machines::MachineRef;
use agent_coord_shared::rules::gc::machines::Silent;
use agent_coord_shared::rules::liveness;
use agent_coord_shared::rules::RuleError;
use agent_coord_shared::time;
use gix::ObjectId;

use crate::command_error::CommandError;
use crate::context::Context;
use crate::git_subprocess::Git;
use crate::git_subprocess::GitError;
use crate::git_subprocess::PushUpdate;
use crate::output::Report;
use crate::progress;
use crate::store::ref_target;
use crate::store::tracking_heartbeat_prefix;
use crate::store::Store;
use crate::store::HEARTBEAT_PREFIX;
use crate::sync::default_remote;

/// What `gc --machines` was asked.
pub(crate) struct MachinesRequest<'a> {
    pub(crate) older_than: &'a str,
    pub(crate) apply: bool,
    pub(crate) json: bool,
}

/// What became of one silent machine.
struct Pruned {
    silent: Silent,
    /// The remote's ref, when the remote has one.
    remote_ref: Option<String>,
    /// `None`: pruned (or would be, in a dry run); else why it was kept.
    kept: Option<String>,
}

pub(crate) fn cmd_gc_machines(
    cx: &Context,
    req: &MachinesRequest<'_>,
) -> Result<Report, CommandError> {
    let older_than = gc::machines::parse_older_than(req.older_than).map_err(RuleError::from)?;
    let (store, notices) = cx.open_store(false)?;
    let remote = store.has_remote().then(|| default_remote(&store));
    let git = Git::new(store.repo.git_dir());
    let op = |e: GitError| CommandError::operational(e.to_string());
    if let Some(r) = &remote {
        // Judge the remote's heartbeat refs as they are now (vanished ones are pruned here).
        let spec = format!("+{HEARTBEAT_PREFIX}*:{}*", tracking_heartbeat_prefix(r));
        git.fetch(r, &[spec]).map_err(op)?;
    }
    let now = cx.now();
    let own = store.machine.as_str().to_owned();
    let (copies, ids) = machine_refs(&store)?;
    let silent = gc::machines::select(&copies, &own, older_than, now);
    let mut done = Vec::with_capacity(silent.len());
    let pruning = if req.apply {
        progress::bar("gc: pruning machines", silent.len() as u64, req.json)
    } else {
        indicatif::ProgressBar::hidden()
    };
    for s in silent {
        // The remote has the machine's ref when its fetched copy is here.
        let tracking = remote.as_ref().and_then(|r| {
            let tracking = format!("{}{}", tracking_heartbeat_prefix(r), s.machine);
            s.refs.contains(&tracking).then_some(tracking)
        });
        let kept = if req.apply {
            prune(
                &store,
                &git,
                remote.as_deref(),
                tracking.as_deref(),
                &s,
                &ids,
            )?
        } else {
            None
        };
        done.push(Pruned {
            remote_ref: tracking.map(|_| format!("{HEARTBEAT_PREFIX}{}", s.machine)),
            silent: s,
            kept,
        });
        pruning.inc(1);
    }
    pruning.finish();
    let mode = if req.apply { "apply" } else { "dry-run" };
    let report = if req.json {
        Report::json(&MachinesReport {
            mode,
            older_than: req.older_than.trim(),
            own_machine: &own,
            remote: remote.as_deref(),
            machines: done
                .iter()
                .map(|p| {
                    PrunedMachine::new(&p.silent, now, p.remote_ref.as_deref(), p.kept.as_deref())
                })
                .collect(),
        })
    } else {
        Report::text(text(&done, mode, req.older_than.trim(), remote.as_deref()))
    };
    Ok(report.with_stderr(notices))
}

/// Ref names and the commit each was judged at.
type Judged = Vec<(String, ObjectId)>;

/// Every heartbeat ref here, as the rule reads it, and the id each was judged at.
fn machine_refs(store: &Store) -> Result<(Vec<MachineRef>, Judged), CommandError> {
    let snap = store.snapshot()?;
    let mut copies = Vec::with_capacity(snap.heartbeats().len());
    let mut ids = Vec::with_capacity(snap.heartbeats().len());
    for h in snap.heartbeats() {
        let Some(machine) = h.name.rsplit('/').next() else {
            continue;
        };
        let mut last_beat = None;
        for (_, blob) in snap.blobs_below(h.tree, "heartbeats")? {
            let beat = from_bytes(&snap.blob_bytes(blob)?)
                .ok()
                .and_then(|r| liveness::updated_at(&r));
            last_beat = last_beat.max(beat);
        }
        let committed_at = store
            .repo
            .find_commit(h.commit)
            .ok()
            .and_then(|c| c.time().ok())
            .and_then(|t| time::from_unix_millis(t.seconds.saturating_mul(1000)));
        copies.push(MachineRef {
            machine: machine.to_owned(),
            refname: h.name.clone(),
            last_beat,
            committed_at,
        });
        ids.push((h.name.clone(), h.commit));
    }
    Ok((copies, ids))
}

/// Deletes one machine's refs: the remote's first (with a lease on the copy judged), then
/// every local copy (each only if it still holds what was judged). Returns why it was kept,
/// if it was.
fn prune(
    store: &Store,
    git: &Git,
    remote: Option<&str>,
    remote_ref: Option<&str>,
    s: &Silent,
    ids: &[(String, ObjectId)],
) -> Result<Option<String>, CommandError> {
    let judged = |name: &str| ids.iter().find(|(n, _)| n == name).map(|(_, id)| *id);
    if let (Some(r), Some(tracking)) = (remote, remote_ref) {
        let refname = format!("{HEARTBEAT_PREFIX}{}", s.machine);
        let update = PushUpdate {
            refname: refname.clone(),
            new: String::new(),
            expected: judged(tracking).map(|id| id.to_string()),
        };
        let results = git
            .push(r, &[update])
            .map_err(|e| CommandError::operational(e.to_string()))?;
        if let Some(refused) = results.iter().find(|p| !p.accepted()) {
            return Ok(Some(format!(
                "the remote refused to delete {refname} ({}): it beat again or moved",
                refused.summary
            )));
        }
    }
    for name in &s.refs {
        let Some(id) = judged(name) else { continue };
        // A local ref that moved since it was judged beat again: leave it.
        if ref_target(&store.repo, name)? == Some(id) && !store.delete_ref(name, id)? {
            return Ok(Some(format!("{name} moved while it was being pruned")));
        }
    }
    Ok(None)
}

fn text(done: &[Pruned], mode: &str, older_than: &str, remote: Option<&str>) -> String {
    let mut out = format!("gc --machines {mode} older-than={older_than}\n");
    if done.is_empty() {
        out.push_str(&format!(
            "- no machine silent for longer than {older_than}\n"
        ));
    }
    for p in done {
        let verb = match (&p.kept, mode) {
            (Some(_), _) => "kept",
            (None, "apply") => "pruned",
            (None, _) => "would prune",
        };
        let mut refs = p.silent.refs.join(", ");
        if let (Some(name), Some(r)) = (&p.remote_ref, remote) {
            refs.push_str(&format!(", {r}:{name}"));
        }
        out.push_str(&format!(
            "- {verb} machine {} (last seen {}): {refs}\n",
            p.silent.machine,
            time::format(p.silent.last_seen)
        ));
        if let Some(why) = &p.kept {
            out.push_str(&format!("  {why}\n"));
        }
    }
    out
}
