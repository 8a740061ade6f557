//! `agent-coord init`: set a repository up for coordination, idempotently.

use agent_coord_shared::output::init::InitAnswer;

use crate::command_error::CommandError;
use crate::context::Context;
use crate::git_subprocess::Git;
use crate::output::Report;
use crate::progress;
use crate::store::tracking_heartbeat_prefix;
use crate::store::tracking_state_ref;
use crate::store::OpenOptions;
use crate::store::Store;
use crate::store::HEARTBEAT_PREFIX;
use crate::sync::default_remote;
use crate::sync::run_sync;

/// Set up a repository for coordination (safe to run again)
///
/// Creates the repository if needed, records the remote, configures fetching of the state
/// branch and heartbeat refs, takes the state branch from the remote when it has one
/// (otherwise creates it), and optionally makes claims publish through the remote.
#[derive(clap::Args, Debug)]
pub(crate) struct InitArgs {
    /// URL (or path) of the shared coordination remote
    #[arg(long, value_name = "URL")]
    remote: Option<String>,
    /// Name of that remote
    #[arg(long, value_name = "NAME", default_value = "origin")]
    remote_name: String,
    /// Make claim, release, heartbeat, record-event and register-batch publish through the remote by default (agent-coord.sync=true)
    #[arg(long)]
    sync_by_default: bool,
    /// Print the result as JSON
    #[arg(long)]
    json: bool,
}

pub(crate) fn cmd_init(cx: &Context, args: &InitArgs) -> Result<Report, CommandError> {
    let (path, _) = cx.repo_path()?;
    let store = Store::open(OpenOptions {
        path: &path,
        create: true,
        state_ref: cx.state_ref(),
        machine_override: cx.machine_override(),
        generate_machine: true,
    })?;
    let git = Git::new(store.repo.git_dir());
    let op = |e: crate::git_subprocess::GitError| CommandError::operational(e.to_string());
    let name = args.remote_name.as_str();
    if let Some(url) = &args.remote {
        let key = format!("remote.{name}.url");
        match git.config_get(&key).map_err(op)? {
            None => git.config_set(&key, url, false).map_err(op)?,
            Some(existing) if existing == *url => {}
            Some(existing) => {
                return Err(CommandError::usage(format!(
                    "remote {name} already points at {existing}; pass --remote-name to add another"
                )))
            }
        }
        let fetch_key = format!("remote.{name}.fetch");
        let have = git.config_get_all(&fetch_key).map_err(op)?;
        for spec in [
            format!("+{}:{}", store.state_ref, tracking_state_ref(name)),
            format!("+{HEARTBEAT_PREFIX}*:{}*", tracking_heartbeat_prefix(name)),
        ] {
            if !have.contains(&spec) {
                git.config_set(&fetch_key, &spec, true).map_err(op)?;
            }
        }
        if name != "origin" {
            git.config_set("agent-coord.remote", name, false)
                .map_err(op)?;
        }
    }
    if args.sync_by_default {
        git.config_set("agent-coord.sync", "true", false)
            .map_err(op)?;
    }
    // Reopen so the configuration written above is seen.
    let store = Store::open(OpenOptions {
        path: &path,
        create: false,
        state_ref: cx.state_ref(),
        machine_override: cx.machine_override(),
        generate_machine: true,
    })?;
    let had_branch = store.tip()?.is_some();
    let remote = store.has_remote().then(|| default_remote(&store));
    if let (false, Some(remote)) = (had_branch, &remote) {
        // Take the fleet's branch if the remote has one, instead of starting a second root.
        let fetching = progress::spinner(format!("init: fetching from {remote}"), args.json);
        let synced = run_sync(cx, &store, remote);
        fetching.finish_and_clear();
        synced?;
    }
    let branch = if had_branch {
        "existing"
    } else if store.tip()?.is_some() {
        "fetched"
    } else {
        // The root commit's tree must exist as an object: git knows the empty tree's id
        // without it, but `git fsck` and a clone's connectivity check do not.
        let empty = store
            .repo
            .write_object(gix::objs::Tree::empty())
            .map_err(crate::store::StoreError::git)?
            .detach();
        let message = format!(
            "init agent-coord state\n\nAgent-Coord-Op: init\nAgent-Coord-Machine: {}\n",
            store.machine
        );
        let commit = store.commit(&message, empty, &[])?;
        // Another process may have created the branch meanwhile: then it exists, and is kept.
        let created = store.move_ref(&store.state_ref, None, commit, "init")?;
        if let Some(remote) = &remote {
            run_sync(cx, &store, remote)?;
        }
        if created {
            "created"
        } else {
            "existing"
        }
    };
    let sync_default = store
        .repo
        .config_snapshot()
        .boolean("agent-coord.sync")
        .unwrap_or(false)
        || args.sync_by_default;
    let url = remote
        .as_ref()
        .and_then(|r| git.config_get(&format!("remote.{r}.url")).ok().flatten());
    Ok(if args.json {
        Report::json(&InitAnswer {
            repository: path.display().to_string(),
            state_ref: &store.state_ref,
            branch,
            machine_id: store.machine.to_string(),
            remote: remote.as_deref(),
            remote_url: url.as_deref(),
            sync_by_default: sync_default,
        })
    } else {
        let remote_line = match (&remote, &url) {
            (Some(r), Some(u)) => format!("remote {r} -> {u}"),
            _ => "no remote: local single-machine mode".to_owned(),
        };
        Report::line(format!(
            "initialized {}\nstate branch {} ({branch})\nmachine {}\n{remote_line}\nclaims publish through the remote by default: {}",
            path.display(),
            store.state_ref,
            store.machine,
            if sync_default { "yes" } else { "no" }
        ))
    })
}
