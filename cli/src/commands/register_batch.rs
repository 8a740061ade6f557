//! `agent-coord register-batch`: store a batch manifest (lanes, owners, targets, deps).

use std::io::Read;
use std::path::PathBuf;

use agent_coord_shared::output::writes::BatchAnswer;
use agent_coord_shared::rules::batch;
use agent_coord_shared::rules::batch::RegisterRequest;
use agent_coord_shared::rules::RuleError;

use crate::command_error::CommandError;
use crate::context::Context;
use crate::output::Report;
use crate::sync::SyncFlags;
use crate::transact::stderr_lines;
use crate::transact::write_synced;
use crate::transact::Written;

/// Register (or update) a batch manifest from a JSON file
///
/// The manifest needs a batch_id (or --batch-id) and non-empty lanes, each with a name,
/// an owner and targets. Re-registering keeps lane terminal stamps and batch completion.
///
/// With --sync (or agent-coord.sync=true) the manifest is written locally first and then
/// published (sync merges lane terminal stamps); if the remote stays busy or unreachable
/// it is kept and a notice says the next sync publishes it (exit 0; with an explicit
/// --sync, exit 2).
#[derive(clap::Args, Debug)]
pub(crate) struct RegisterBatchArgs {
    /// The manifest JSON file
    #[arg(long, value_name = "PATH")]
    file: PathBuf,
    /// The exact $pr-batch launch prompt, from a file or - for stdin (overrides the manifest's)
    #[arg(long, value_name = "PATH|-")]
    launch_prompt: Option<PathBuf>,
    /// Batch id, when the manifest has none (must match when it has one)
    #[arg(long, value_name = "ID")]
    batch_id: Option<String>,
    /// Mark the batch as synthetic
    #[arg(long)]
    synthetic: bool,
    /// Kind of synthetic batch
    #[arg(long, value_name = "KIND")]
    synthetic_kind: Option<String>,
    /// Print the result as JSON
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    sync: SyncFlags,
}

pub(crate) fn cmd_register_batch(
    cx: &Context,
    args: &RegisterBatchArgs,
) -> Result<Report, CommandError> {
    let bytes = std::fs::read(&args.file).map_err(|e| {
        CommandError::operational(format!(
            "batch manifest unreadable: {}: {e}",
            args.file.display()
        ))
    })?;
    let manifest: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|e| CommandError::usage(format!("batch manifest JSON invalid: {e}")))?;
    let launch_prompt = args.launch_prompt.as_ref().map(read_prompt).transpose()?;
    let request = RegisterRequest {
        manifest,
        batch_id: args.batch_id.clone(),
        launch_prompt,
        synthetic: args.synthetic,
        synthetic_kind: args.synthetic_kind.clone(),
    };
    // Validate before opening the store so bad input never creates anything.
    batch::validate(&request.manifest, request.batch_id.as_deref()).map_err(RuleError::from)?;
    let Written { done, notices, .. } =
        write_synced(cx, &args.sync.for_appending(), |snap, ctx| {
            batch::register(snap, &request, ctx)
        })?;
    let outcome = &done.plan.outcome;
    let report = if args.json {
        Report::json(&BatchAnswer {
            result: if outcome.replaced {
                "updated"
            } else {
                "registered"
            },
            batch_id: outcome.batch.as_str(),
            batch: &outcome.record,
        })
    } else {
        Report::line(format!("registered batch {}", outcome.batch))
    };
    Ok(report.with_stderr(stderr_lines(notices, &done.plan)))
}

fn read_prompt(path: &PathBuf) -> Result<String, CommandError> {
    let mut bytes = Vec::new();
    let read = if path.as_os_str() == "-" {
        std::io::stdin().read_to_end(&mut bytes).map(|_| ())
    } else {
        std::fs::read(path).map(|b| bytes = b)
    };
    read.map_err(|e| CommandError::operational(format!("launch prompt unreadable: {e}")))?;
    String::from_utf8(bytes).map_err(|_| CommandError::usage("launch prompt must be valid UTF-8"))
}
