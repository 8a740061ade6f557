//! `GET /api/items/{owner}/{repo}/{issue}/lane-runs/{n}/transcript`: one lane run's
//! transcript, rendered as messages and tool calls, for a client on this very host only
//! (loopback: a transcript holds what a model read and wrote).
//!
//! The run's checkpoint names the machine holding the file and its path under the worker's
//! workspace root. Another machine's transcript is a 409 naming it (`heldBy`). The root
//! comes from the coordinator configuration (`serve --coordinator-config`, else
//! `AGENT_COORD_COORDINATOR_CONFIG`, else the default location, as `coordinate` reads it);
//! the path must be a safe relative path ([`TranscriptRef::safe_path`]), and the file,
//! canonicalised, must lie under the canonicalised root: nothing outside it is ever read.
//! At most [`READ_MAX`] bytes are read.

use std::io::Read;
use std::net::SocketAddr;
use std::path::Path;
use std::path::PathBuf;

use agent_coord_shared::coordinator::lane::render::render;
use agent_coord_shared::coordinator::lane::Vendor;
use agent_coord_shared::coordinator::task::TranscriptRef;
use agent_coord_shared::dashboard::derive::task_rules::lane_run_numbered;
use agent_coord_shared::dashboard::model::transcript_elsewhere;
use agent_coord_shared::dashboard::model::LaneTranscript;
use agent_coord_shared::dashboard::model::TranscriptElsewhere;
use axum::extract::ConnectInfo;
use axum::extract::Path as UrlPath;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::response::Response;
use axum::routing::get;
use axum::Extension;
use axum::Json;
use axum::Router;

use super::blocking;
use crate::coordinator::config_file;
use crate::serve::error::ApiError;
use crate::serve::error::ApiResult;
use crate::serve::http::guard;
use crate::serve::state::AppState;

/// The most bytes of a transcript read (the adapter's own bound is 16 MiB).
pub(crate) const READ_MAX: u64 = 16 * 1024 * 1024;

/// The refusal for a peer that is not this host's loopback.
const REMOTE: &str =
    "Lane transcripts can only be read from the machine running the dashboard (loopback).";

/// The transcript route.
pub(crate) fn router() -> Router<AppState> {
    Router::new().route(
        "/api/items/{owner}/{repo}/{issue}/lane-runs/{n}/transcript",
        get(transcripts_show),
    )
}

async fn transcripts_show(
    State(s): State<AppState>,
    peer: Option<Extension<ConnectInfo<SocketAddr>>>,
    UrlPath((owner, repo, issue, n)): UrlPath<(String, String, String, String)>,
) -> ApiResult<Response> {
    let peer = peer
        .map(|c| c.0 .0.ip())
        .ok_or_else(|| ApiError::internal("the connection has no peer address"))?;
    if !guard::canonical(peer).is_loopback() {
        return Err(ApiError::new(StatusCode::FORBIDDEN, REMOTE));
    }
    blocking(move || {
        let slug = format!("{owner}/{repo}");
        let not_found = |what: String| ApiError::new(StatusCode::NOT_FOUND, what);
        if !s.models.scope()?.scope.contains(&slug) {
            return Err(not_found(
                "Work item is not in the saved target repositories.".into(),
            ));
        }
        let (Ok(issue), Ok(n)) = (issue.parse::<u64>(), n.parse::<u64>()) else {
            return Err(not_found(format!("{slug}#{issue} has no lane run {n}.")));
        };
        let built = s.models.built()?;
        let task = built
            .inputs
            .tasks
            .iter()
            .map(|t| &t.task)
            .find(|t| t.repo == slug && t.issue == issue)
            .ok_or_else(|| not_found(format!("{slug}#{issue} has no coordinator task.")))?;
        let run = lane_run_numbered(task, n)
            .ok_or_else(|| not_found(format!("{slug}#{issue} has no lane run {n}.")))?;
        let at = run.transcript.as_ref().ok_or_else(|| {
            not_found(format!(
                "Lane run {n} of {slug}#{issue} wrote no transcript."
            ))
        })?;
        let here = s.models.store()?.machine.to_string();
        if at.machine != here {
            let body = TranscriptElsewhere {
                error: transcript_elsewhere(n, &at.machine),
                held_by: at.machine.clone(),
            };
            return Ok((StatusCode::CONFLICT, Json(body)).into_response());
        }
        let root = workspace_root(s.coordinator_config.as_deref(), &task.worker)?;
        let file = resolve(&root, &at.path)?;
        let (text, unread) = read_bounded(&file, n)?;
        let mut transcript = render(&text, run.vendor.as_deref().and_then(Vendor::parse));
        transcript.unread_bytes = unread;
        Ok(Json(LaneTranscript {
            n,
            slot: run.slot.clone(),
            machine: here,
            transcript,
        })
        .into_response())
    })
    .await
}

/// The workspace root this machine's configuration gives `worker`. A configuration that
/// cannot be found or read is the server's trouble (503, the details in its log), not the
/// request's.
fn workspace_root(config: Option<&Path>, worker: &str) -> ApiResult<PathBuf> {
    let unusable = |e: crate::command_error::CommandError| {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, e.message)
    };
    let at = config_file::config_path(config).map_err(unusable)?;
    let missing = |why: String| ApiError::new(StatusCode::NOT_FOUND, why);
    let config = config_file::load(&at).map_err(unusable)?.ok_or_else(|| {
        missing(format!(
            "No coordinator configuration on this machine ({}): the workspace root of worker {worker} is unknown.",
            at.path.display()
        ))
    })?;
    config
        .workers
        .get(worker)
        .map(|w| w.workspace_root.clone())
        .ok_or_else(|| {
            missing(format!(
                "Worker {worker} is not in this machine's coordinator configuration."
            ))
        })
}

/// The file at `relative` under `root`, refused unless it is a safe relative path whose
/// canonical form (symbolic links resolved) lies under the canonical root.
pub(crate) fn resolve(root: &Path, relative: &str) -> ApiResult<PathBuf> {
    let refused = || {
        ApiError::new(
            StatusCode::FORBIDDEN,
            "The transcript's path leads outside the worker's workspace root; it is not served.",
        )
    };
    if !TranscriptRef::safe_path(relative) {
        return Err(refused());
    }
    let root = root.canonicalize().map_err(|_| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "The worker's workspace root does not exist on this machine.",
        )
    })?;
    let file = root.join(relative).canonicalize().map_err(|_| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "The transcript file is no longer on this machine.",
        )
    })?;
    if !file.starts_with(&root) {
        return Err(refused());
    }
    Ok(file)
}

/// At most [`READ_MAX`] bytes of the regular file `file` (lossy UTF-8), and how many bytes
/// were left unread.
fn read_bounded(file: &Path, n: u64) -> ApiResult<(String, u64)> {
    let gone = || {
        ApiError::new(
            StatusCode::NOT_FOUND,
            format!("The transcript of lane run {n} cannot be read on this machine."),
        )
    };
    let f = std::fs::File::open(file).map_err(|_| gone())?;
    let meta = f.metadata().map_err(|_| gone())?;
    if !meta.is_file() {
        return Err(gone());
    }
    let mut bytes = Vec::new();
    f.take(READ_MAX)
        .read_to_end(&mut bytes)
        .map_err(|_| gone())?;
    let unread = meta.len().saturating_sub(bytes.len() as u64);
    Ok((String::from_utf8_lossy(&bytes).into_owned(), unread))
}
