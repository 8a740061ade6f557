//! `agent-coord gc`: retention — archive finished records, compact finished event trails,
//! delete expired archives — planned on one snapshot and committed as one commit.

use std::collections::BTreeSet;

use agent_coord_shared::output::gc::GcReport;
use agent_coord_shared::rules::gc;
use agent_coord_shared::rules::gc::GcOutcome;
use agent_coord_shared::rules::gc::Policy;
use agent_coord_shared::rules::Plan;
use agent_coord_shared::rules::RuleError;
use agent_coord_shared::snapshot::ReadError;

use crate::command_error::CommandError;
use crate::context::Context;
use crate::output::Report;
use crate::progress;
use crate::store::Store;
use crate::store::TipSnapshot;
use crate::store::HEARTBEAT_PREFIX;
use crate::sync::default_remote;
use crate::sync::run_sync;
use crate::transact::write;
use crate::transact::Written;

/// Apply retention: archive finished records, compact event trails, delete old archives
///
/// Released claims, terminal or dead heartbeats (this machine's only) and completed batches
/// move under archive/ after --hot-days; a lane's events are compacted into one archive
/// record once its lane_closed is that old; archives go after --archive-days. Synthetic
/// records use --synthetic-hot-days. Everything happens in one commit. With --machines,
/// prunes the heartbeat refs of machines silent longer than --older-than instead.
#[derive(clap::Args, Debug)]
pub(crate) struct GcArgs {
    /// Show what would happen; change nothing
    #[arg(long)]
    dry_run: bool,
    /// Apply the plan
    #[arg(long)]
    execute: bool,
    /// Days a finished record stays hot
    #[arg(
        long,
        value_name = "N",
        default_value_t = 7,
        allow_negative_numbers = true
    )]
    hot_days: i64,
    /// Days an archive is kept
    #[arg(
        long,
        value_name = "N",
        default_value_t = 30,
        allow_negative_numbers = true
    )]
    archive_days: i64,
    /// Days a finished synthetic record stays hot
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1,
        allow_negative_numbers = true
    )]
    synthetic_hot_days: i64,
    /// Limit to these families (repeatable): claims, heartbeats, batches, events, annotations
    #[arg(long, value_name = "FAMILY")]
    prefix: Vec<String>,
    /// After --execute, start a new epoch: the branch restarts from one commit holding the
    /// current state, so old history can be garbage-collected (other machines follow on sync)
    #[arg(long, requires = "execute")]
    new_epoch: bool,
    /// Prune the heartbeat refs of machines silent longer than --older-than (locally and on
    /// the remote; never this machine's own); a dry run unless --apply
    #[arg(long, requires = "older_than", conflicts_with_all = ["dry_run", "execute", "new_epoch", "prefix"])]
    machines: bool,
    /// With --machines: how long a machine must have been silent, as 30d, 12h, 90m or 2w
    #[arg(long, value_name = "DURATION", requires = "machines")]
    older_than: Option<String>,
    /// With --machines: delete the refs (without it, only print what would go)
    #[arg(long, requires = "machines")]
    apply: bool,
    /// Print the plan as JSON
    #[arg(long)]
    json: bool,
}

/// Returns the agents whose heartbeats are on this machine's own ref.
fn own_heartbeats(snap: &TipSnapshot<'_>, machine: &str) -> Result<BTreeSet<String>, ReadError> {
    let own_ref = format!("{HEARTBEAT_PREFIX}{machine}");
    let Some(hb) = snap.heartbeats().iter().find(|h| h.name == own_ref) else {
        return Ok(BTreeSet::new());
    };
    Ok(snap
        .blobs_below(hb.tree, "heartbeats")?
        .into_iter()
        .filter_map(|(p, _)| {
            p.strip_prefix("heartbeats/")?
                .strip_suffix(".json")
                .map(str::to_owned)
        })
        .collect())
}

/// Starts a new epoch, publishing through the remote first and after when there is one.
fn start_epoch(cx: &Context, store: &Store) -> Result<String, CommandError> {
    let remote = store.has_remote().then(|| default_remote(store));
    if let Some(remote) = &remote {
        run_sync(cx, store, remote)?;
    }
    let (root, epoch) =
        crate::sync::epoch::start(store, &agent_coord_shared::time::format(cx.now()))?;
    if let Some(remote) = &remote {
        run_sync(cx, store, remote)?;
    }
    Ok(format!(
        "started epoch {} at {}; the old history can now be garbage-collected",
        epoch.number,
        root.to_hex_with_len(7)
    ))
}

pub(crate) fn cmd_gc(cx: &Context, args: &GcArgs) -> Result<Report, CommandError> {
    if args.machines {
        let request = super::gc_machines::MachinesRequest {
            older_than: args.older_than.as_deref().unwrap_or_default(),
            apply: args.apply,
            json: args.json,
        };
        return super::gc_machines::cmd_gc_machines(cx, &request);
    }
    if args.dry_run == args.execute {
        return Err(CommandError::usage(
            "gc requires exactly one of --dry-run or --execute",
        ));
    }
    for (flag, v) in [
        ("--hot-days", args.hot_days),
        ("--archive-days", args.archive_days),
        ("--synthetic-hot-days", args.synthetic_hot_days),
    ] {
        if v < 0 {
            return Err(CommandError::usage(format!(
                "{flag} must be zero or greater"
            )));
        }
    }
    if args
        .prefix
        .iter()
        .any(|p| !gc::FAMILIES.contains(&p.as_str()))
    {
        return Err(CommandError::usage(format!(
            "--prefix must be one of: {}",
            gc::FAMILIES.join(", ")
        )));
    }
    let families: Vec<&str> = if args.prefix.is_empty() {
        gc::FAMILIES.to_vec()
    } else {
        gc::FAMILIES
            .iter()
            .copied()
            .filter(|f| args.prefix.iter().any(|p| p == f))
            .collect()
    };
    let policy = Policy {
        hot_days: args.hot_days,
        archive_days: args.archive_days,
        synthetic_hot_days: args.synthetic_hot_days,
    };
    let now = cx.now();
    let planning = progress::spinner("gc: planning".to_owned(), args.json);
    let decide = |snap: &TipSnapshot<'_>, machine: &str| -> Result<Plan<GcOutcome>, RuleError> {
        let own = own_heartbeats(snap, machine)?;
        let plan = gc::plan(snap, &policy, &families, &own, now);
        planning.finish_and_clear();
        plan
    };

    let (plan, notices, epoch_line) = if args.dry_run {
        let (store, notices) = cx.open_store(false)?;
        let snap = store.snapshot()?;
        (decide(&snap, store.machine.as_str())?, notices, None)
    } else {
        let writing = progress::bar("gc: writing records", 0, args.json);
        cx.show_writes(&writing);
        let Written {
            done,
            notices,
            store,
            ..
        } = write(cx, |snap, ctx| {
            decide(snap, ctx.identity.machine_id.as_deref().unwrap_or_default())
        })?;
        writing.finish();
        let epoch_line = if args.new_epoch {
            Some(start_epoch(cx, &store)?)
        } else {
            None
        };
        (done.plan, notices, epoch_line)
    };
    let mode = if args.dry_run { "dry-run" } else { "execute" };
    let report = if args.json {
        Report::json(&GcReport {
            mode,
            policy: &policy,
            prefixes: &families,
            actions: &plan.outcome.actions,
            epoch: epoch_line,
        })
    } else {
        let mut out = format!(
            "gc {mode} hot={}d archive={}d synthetic_hot={}d\n",
            policy.hot_days, policy.archive_days, policy.synthetic_hot_days
        );
        if plan.outcome.actions.is_empty() {
            out.push_str("- no actions\n");
        }
        for a in &plan.outcome.actions {
            out.push_str(&a.to_line());
            out.push('\n');
        }
        if let Some(line) = &epoch_line {
            out.push_str(line);
            out.push('\n');
        }
        Report::text(out)
    };
    Ok(report.with_stderr(notices))
}
