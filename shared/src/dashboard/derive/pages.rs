//! The batch page and the item page: holder, row, custody timeline (derived by
//! [`super::custody`], reference §1.11) and coordinator task.

use super::assemble::event_view;
use super::custody;
use super::handoff;
use super::task_rules;
use crate::dashboard::inputs::records::EventIn;
use crate::dashboard::inputs::records::HeartbeatIn;
use crate::dashboard::inputs::records::Inputs;
use crate::dashboard::model::BatchDetail;
use crate::dashboard::model::DashboardModel;
use crate::dashboard::model::ItemDetail;
use crate::rules::liveness::Liveness;
use crate::time::Instant;

/// The batch page: the batch, its events newest first, its rows and health items.
pub fn batch_detail(inputs: &Inputs, model: &DashboardModel, id: &str) -> Option<BatchDetail> {
    let batch = model.batches.iter().find(|b| b.id == id)?.clone();
    let mut events: Vec<&EventIn> = inputs
        .events
        .iter()
        .map(AsRef::as_ref)
        .filter(|e| e.batch_id.as_deref() == Some(id))
        .collect();
    events.sort_by(|a, b| b.at.cmp(&a.at).then_with(|| b.path.cmp(&a.path)));
    Some(BatchDetail {
        events: events.into_iter().map(event_view).collect(),
        rows: model
            .rows
            .iter()
            .filter(|r| r.batch_id.as_deref() == Some(id))
            .cloned()
            .collect(),
        health: model
            .health
            .iter()
            .filter(|h| h.batch_id.as_deref() == Some(id))
            .cloned()
            .collect(),
        version: model.version.clone(),
        omitted_events: 0,
        history_notice: None,
        batch,
    })
}

/// The item page: holder, row, custody chain (oldest first) and the coordinator's task for
/// the issue, if any.
pub fn item_detail(
    inputs: &Inputs,
    model: &DashboardModel,
    repo: &str,
    target: &str,
    now: Instant,
) -> ItemDetail {
    let row = model
        .rows
        .iter()
        .find(|r| r.repo == repo && r.target == target)
        .cloned();
    let mut events: Vec<&EventIn> = inputs
        .events
        .iter()
        .map(AsRef::as_ref)
        .filter(|e| e.repo.as_deref() == Some(repo) && e.target.as_deref() == Some(target))
        .collect();
    events.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.path.cmp(&b.path)));

    // The current claim snapshot closes the chain.
    let claim = inputs
        .claims
        .iter()
        .map(AsRef::as_ref)
        .find(|c| c.repo == repo && c.target == target);
    let heartbeats: Vec<&HeartbeatIn> = inputs
        .heartbeats
        .iter()
        .map(AsRef::as_ref)
        .filter(|h| h.repo.as_deref() == Some(repo) && h.target.as_deref() == Some(target))
        .collect();
    let timeline = custody::timeline(claim, &events, &heartbeats, now);
    let done = row.as_ref().is_some_and(|r| r.state.is_terminal());
    let holder = if done {
        None
    } else {
        claim
            .filter(|c| c.status == "active")
            .map(|c| c.agent.clone())
            .or_else(|| {
                heartbeats
                    .iter()
                    .find(|h| matches!(h.liveness(now), Liveness::Live | Liveness::Stale))
                    .map(|h| h.agent.clone())
            })
    };
    let (coordinator, coordinator_warning) =
        task_rules::item_section(&inputs.tasks, &inputs.malformed, repo, target);
    let resume_prompt = row.as_ref().and_then(|r| handoff::resume_for(model, r));
    let takeover_command = row.as_ref().and_then(|r| handoff::takeover_for(model, r));
    ItemDetail {
        repo: repo.to_owned(),
        target: target.to_owned(),
        resume_prompt,
        takeover_command,
        row,
        holder,
        timeline,
        coordinator,
        coordinator_warning,
        version: model.version.clone(),
    }
}
