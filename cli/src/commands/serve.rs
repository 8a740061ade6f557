//! `agent-coord serve`: the live dashboard over this machine's coordination state (the
//! server itself is `crate::serve`).

use std::time::Duration;

use agent_coord_shared::dashboard::model::ScopeSource;
use agent_coord_shared::dashboard::scope::settings;
use agent_coord_shared::dashboard::scope::Scope;

use super::run_argv;
use crate::command_error::CommandError;
use crate::context::Context;
use crate::demo::fleet;
use crate::output::Report;
use crate::serve::background::enrich;
use crate::serve::http::guard;
use crate::serve::http::limits::Limits;
use crate::serve::model::scope::ScopeInForce;
use crate::serve::start;
use crate::serve::state::AppState;

/// Serve the live dashboard for this machine's coordination state
///
/// A read-only web dashboard (overview, operator rows, batches, machines, health, custody
/// timelines) derived from the state branch and heartbeat refs, updated live as refs move.
/// Writes are accepted only from this machine: importing a batch plan from a pasted
/// `$pr-batch` launch prompt, appending a `batch.stop_requested` event, dismissing or
/// snoozing an item's attention, and saving the target repositories.
#[derive(clap::Args, Debug, Clone)]
#[command(after_help = "Examples:
  agent-coord serve                          # http://127.0.0.1:4319
  agent-coord serve --port 0                 # any free port (the first stdout line is the URL)
  agent-coord serve --demo                   # a simulated fleet in a temporary repository
  agent-coord serve --sync-every 10          # sync with the remote every 10 s (0: never)
  agent-coord serve --host 0.0.0.0 --allowed-hosts box.lan   # LAN viewers, read-only")]
pub(crate) struct ServeArgs {
    /// Address to bind
    #[arg(long, default_value = "127.0.0.1", value_name = "ADDR")]
    host: String,
    /// Port to listen on (0 picks a free one)
    #[arg(long, default_value_t = 4319)]
    port: u16,
    /// Extra Host header values browsers may use (comma-separated); required when --host
    /// binds all interfaces
    #[arg(long, value_name = "HOST,...", value_delimiter = ',')]
    allowed_hosts: Vec<String>,
    /// Serve a simulated, moving fleet in a temporary repository instead of the real state
    #[arg(long)]
    demo: bool,
    /// Sync with the remote (agent-coord.remote, else origin) every SECS seconds, the first
    /// at start, so the page stays current without a cron `agent-coord sync`; 0 never syncs.
    /// Without a remote, the page says so
    #[arg(long, value_name = "SECS", default_value_t = 30)]
    sync_every: u64,
    /// Seconds between GitHub enrichment refreshes (0 switches enrichment off); the token
    /// comes from GH_TOKEN, GITHUB_TOKEN or `gh auth token`
    #[arg(long, value_name = "SECS", default_value_t = enrich::DEFAULT_REFRESH_SECS)]
    github_refresh: u64,
    /// GitHub REST API root, for GitHub Enterprise (`https://HOST/api/v3`)
    #[arg(long, value_name = "URL", default_value = "https://api.github.com")]
    github_api_url: String,
    /// Show only these repositories for this run (comma-separated), instead of the target
    /// repositories saved on this machine [default: the saved ones, else every repository]
    #[arg(long, value_name = "OWNER/REPO,...")]
    repos: Option<String>,
    /// The coordinator configuration whose workers' workspace roots hold the lane
    /// transcripts this machine serves [default: $XDG_CONFIG_HOME/agent-coord/coordinator.json]
    #[arg(long, value_name = "PATH", env = "AGENT_COORD_COORDINATOR_CONFIG")]
    coordinator_config: Option<std::path::PathBuf>,
}

/// Runs `serve`.
pub(crate) fn cmd_serve(cx: &Context, args: &ServeArgs) -> Result<Report, CommandError> {
    let allowed = guard::allowed_hosts(&args.host, &args.allowed_hosts)
        .map_err(|e| CommandError::usage(e.to_string()))?;
    let mut globals = cx.globals.clone();
    let mut env = cx.env.clone();
    let _demo_dir = if args.demo {
        let dir = tempfile::tempdir().map_err(|e| {
            CommandError::operational(format!("cannot create the demo repository: {e}"))
        })?;
        let repo = dir.path().join("state.git");
        fleet::seed(&repo, run_argv)?;
        globals.repo_dir = Some(repo.clone());
        env.machine_id = Some(fleet::MACHINE.into());
        env.now = None;
        std::thread::spawn(move || fleet::run(&repo, run_argv));
        Some(dir)
    } else {
        None
    };
    let limits = Limits::for_fd_limit(start::raise_fd_limit());
    let mut state = AppState::with_limits(globals, env, allowed, limits);
    state.coordinator_config = args.coordinator_config.clone();
    // The demo's repository is temporary and has no remote to sync with.
    let sync_every = if args.demo { 0 } else { args.sync_every };
    if let Some(text) = &args.repos {
        let repos = settings::normalize_text(text)
            .map_err(|e| CommandError::usage(format!("--repos: {e}")))?;
        state
            .models
            .set_scope(ScopeInForce {
                scope: Scope::of(&repos),
                source: ScopeSource::CommandLine,
            })
            .map_err(|e| CommandError::operational(e.message))?;
    }
    let opts = start::Options {
        host: &args.host,
        port: args.port,
        demo: args.demo,
        sync_every: (sync_every > 0).then(|| Duration::from_secs(sync_every)),
        github: enrich::Options {
            // The demo fleet's repositories are made up: nothing to ask GitHub about.
            interval: std::time::Duration::from_secs(if args.demo {
                0
            } else {
                args.github_refresh
            }),
            api_url: args.github_api_url.clone(),
        },
    };
    start::run(state, &opts)?;
    Ok(Report::text(String::new()))
}
